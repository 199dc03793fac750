#include "h2o/measure/policy_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "h2o/cache/budget.hpp"
#include "h2o/cache/window_bytes.hpp"
#include "h2o/measure/bits_per_byte.hpp"

namespace h2o {

SweepText sweep_text(const Tokenizer& tokenizer, std::vector<std::vector<int>> stories,
                     NameTokens names, std::size_t name_gap) {
  SweepText text;
  for (const std::vector<int>& story : stories)
    text.bytes.push_back(predicted_bytes(tokenizer, story));
  text.stories = std::move(stories);
  text.names = std::move(names);
  text.name_gap = name_gap;
  return text;
}

std::vector<SweepPolicy> evicting_policies(const PolicySettings& base, const KvFormat& format) {
  std::vector<SweepPolicy> policies;
  for (const PolicyKind& kind : policy_kinds()) {
    if (kind.evicts && kind.sized_by_budget) {
      policies.push_back({kind.name, kind.name, base, format});
    }
  }
  return policies;
}

std::vector<SweepPolicy> score_variants() {
  std::vector<SweepPolicy> variants = {
      {"h2o-norm", "h2o", {}},
      {"h2o-decay", "h2o", {}},
      {"h2o+start" + std::to_string(kStartArea), "h2o", {}},
      {"h2o-heavy" + std::to_string(kSmallHeavyPercent), "h2o", {}},
      {"tova-per-head", "tova", {}}};
  variants[0].settings.h2o.score = H2OScore::NormalisedSum;
  variants[1].settings.h2o.score = H2OScore::DecayedSum;  // gamma: kDefaultH2ODecay
  variants[2].settings.h2o.start_area = kStartArea;
  variants[3].settings.heavy_percent = kSmallHeavyPercent;
  variants[4].settings.scoring = ScoringMode::PerHead;
  return variants;
}

std::vector<SweepPolicy> with_variants(std::vector<SweepPolicy> policies,
                                       const std::vector<SweepPolicy>& variants) {
  for (const SweepPolicy& variant : variants) {
    const auto after = std::find_if(policies.rbegin(), policies.rend(), [&](const SweepPolicy& p) {
      return p.policy == variant.policy;
    });
    if (after != policies.rend()) policies.insert(after.base(), variant);
  }
  return policies;
}

std::size_t SweepBudget::of(std::size_t n) const {
  return percent > 0 ? tokens_for_percent(n, percent) : tokens;
}

std::vector<std::size_t> equal_bytes_tokens(const SweepRun& run) {
  if (run.slots_per_token == 0 || run.story_held.empty()) {
    throw std::invalid_argument("equal_bytes_tokens: the run '" + run.label + "' read no story");
  }
  std::vector<std::size_t> tokens;
  for (std::size_t held : run.story_held) {
    const std::size_t per_head = (held + run.slots_per_token / 2) / run.slots_per_token;
    tokens.push_back(std::max<std::size_t>(per_head, 2));
  }
  return tokens;
}

double SweepRun::perplexity() const {
  return steps == 0 ? 0.0 : std::exp(nll / static_cast<double>(steps));
}
double SweepRun::bits_per_byte() const { return h2o::bits_per_byte(nll, bytes); }
double SweepRun::mean_kl() const { return steps == 0 ? 0.0 : kl_sum / static_cast<double>(steps); }
double SweepRun::agreement() const {
  return steps == 0 ? 0.0 : static_cast<double>(agreements) / static_cast<double>(steps);
}
double SweepRun::recall() const {
  return name_events == 0 ? 0.0
                          : static_cast<double>(names_correct) / static_cast<double>(name_events);
}
std::vector<std::vector<double>> SweepRun::token_nll() const {
  std::vector<std::vector<double>> nll;
  for (const TeacherForcedRun& reading : readings) nll.push_back(reading.token_nll);
  return nll;
}

SweepRun read_stories(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                      const SweepPolicy& policy, SweepBudget budget, const SweepRun* reference,
                      const SweepOptions& options) {
  SweepRun run;
  run.label = policy.label;
  run.policy = policy.policy;
  try {
    run.kind = &policy_kind(policy.policy);  // the one look-up: the run carries its kind
  } catch (const std::invalid_argument& e) {
    run.refused = e.what();
    return run;
  }
  run.budget = budget;
  for (std::size_t i = 0; i < text.stories.size(); ++i) {
    const std::vector<int>& tokens = text.stories[i];
    const std::size_t tokens_kept = options.story_tokens.empty()
                                        ? budget.of(tokens.size())
                                        : std::min(options.story_tokens.at(i), tokens.size());
    std::unique_ptr<CachePolicy> cache_policy;
    try {
      cache_policy = make_policy(policy.policy,
                                 settings_for_budget(policy.policy, tokens_kept, policy.settings));
    } catch (const std::invalid_argument& e) {
      run.refused = e.what();  // e.g. a policy that needs more tokens than this budget gives
      run.readings.clear();
      return run;
    }
    // A prompt given for the whole text must fit every story (teacher forcing says so); one
    // given story by story (another policy's own) is at most the story less its last token.
    const std::size_t prompt =
        options.story_prompt.empty()
            ? options.compressed_prompt
            : std::min(options.story_prompt.at(i), tokens.empty() ? 0 : tokens.size() - 1);
    run.story_prompt.push_back(std::max(prompt, cache_policy->prompt_tokens()));
    if (i == 0) {
      run.tokens = tokens_kept;
      run.description = cache_policy->describe();
      // A policy holding more or fewer tokens than the budget is no equal comparison: flag it.
      const std::size_t holds = cache_policy->max_tokens(tokens.size());
      // (A policy whose budget is an outcome of its rules, FastGen, holds what they keep.)
      const bool by_budget = cache_policy->kind().sized_by_budget;
      if (tokens_kept > 0 && by_budget && holds != std::min(tokens_kept, tokens.size())) {
        run.description += " [holds " + std::to_string(holds) + " tokens, not " +
                           std::to_string(tokens_kept) + "]";
      }
    }
    Decoder decoder(weights, std::move(cache_policy), tokens.size(), policy.format);
    if (options.story_observer) decoder.set_step_observer(options.story_observer(run, i));
    TeacherForcingOptions forcing;
    forcing.keep_log_probs = reference == nullptr && options.kl;
    if (reference != nullptr) forcing.reference = &reference->readings.at(i);
    forcing.compressed_prompt = prompt;
    TeacherForcedRun reading = read_with_teacher_forcing(decoder, tokens, forcing);
    const NameRecall recall = name_recall(tokens, reading.top1, text.names, text.name_gap);
    run.steps += reading.steps();
    run.nll += reading.mean_nll() * static_cast<double>(reading.steps());
    run.kl_sum += reading.kl_sum;
    run.agreements += reference != nullptr ? reading.agreements : reading.steps();
    run.name_events += recall.steps.size();
    run.names_correct += recall.correct;
    run.bytes += text.bytes.at(i);
    run.stories_kv_bytes += decoder.live_kv_bytes();
    run.story_kv_bytes.push_back(decoder.live_kv_bytes());
    run.slots_per_token = decoder.config().n_layers * decoder.config().n_kv_heads;
    std::size_t story_held = 0;
    for (std::size_t l = 0; l < decoder.config().n_layers; ++l)
      story_held += decoder.cache(l).total_size();
    run.story_held.push_back(story_held);
    if (i == 0) {
      // Per layer and KV head on average: budgets may differ by layer (PyramidKV) or head (Ada-KV).
      std::size_t held = 0;
      for (std::size_t l = 0; l < decoder.config().n_layers; ++l)
        held += decoder.cache(l).total_size();
      run.kept = held / (decoder.config().n_layers * decoder.config().n_kv_heads);
      run.evicted = static_cast<std::size_t>(decoder.position()) - run.kept;
      run.live_kv_bytes = decoder.live_kv_bytes();
      for (std::size_t l = 0; l < decoder.config().n_layers; ++l) {
        run.kept_at_end.push_back(decoder.cache(l).sorted_positions(0));
      }
    }
    if (reference != nullptr) reading.log_probs = Matrix();  // only the reference's are needed
    run.readings.push_back(std::move(reading));
  }
  return run;
}

std::string sweep_refusal(const SweepText& text, const SweepPolicy& policy, SweepBudget budget) {
  for (const std::vector<int>& tokens : text.stories) {
    try {
      make_policy(policy.policy,
                  settings_for_budget(policy.policy, budget.of(tokens.size()), policy.settings));
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
  }
  return "";
}

SweepRun read_at_equal_bytes(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                             const SweepPolicy& policy, const SweepRun& other,
                             const SweepRun* reference, SweepOptions options) {
  options.story_tokens = equal_bytes_tokens(other);
  if (policy.format.quantised()) {
    if (policy.policy != baseline_policy().name) {
      throw std::invalid_argument("read_at_equal_bytes: quantised, only the " +
                                  baseline_policy().name + " can be given another's bytes, not '" +
                                  policy.policy + "'");
    }
    const ModelConfig& config = weights->config;
    for (std::size_t i = 0; i < options.story_tokens.size(); ++i) {
      options.story_tokens[i] = std::max<std::size_t>(
          2, window_tokens_for_bytes(config.n_kv_heads, config.head_dim(), policy.format,
                                     text.stories.at(i).size() - 1,  // the last: predicted
                                     other.story_kv_bytes.at(i) / config.n_layers));
    }
  }
  options.story_prompt = other.story_prompt;
  SweepPolicy labelled = policy;
  labelled.label = policy.label + " at " + other.label + "'s bytes";
  return read_stories(std::move(weights), text, labelled, {}, reference, options);
}

SweepRun read_full_cache(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                         const SweepOptions& options) {
  const std::string& name = reference_policy().name;
  return read_stories(std::move(weights), text, {name, name, {}}, {}, nullptr, options);
}

const SweepRun* PolicySweep::find(const std::string& label, std::size_t b) const {
  for (const std::vector<SweepRun>& by_budget : runs) {
    if (!by_budget.empty() && by_budget.at(b).label == label) return &by_budget[b];
  }
  return nullptr;
}

std::vector<std::size_t> PolicySweep::evicting_budgets() const {
  std::vector<std::size_t> budgets;
  for (std::size_t b = 0; b < percents.size(); ++b) {
    if (percents[b] < 100) budgets.push_back(b);
  }
  return budgets;
}

const std::vector<SweepRun>& PolicySweep::of(const std::string& label) const {
  for (const std::vector<SweepRun>& by_budget : runs) {
    if (!by_budget.empty() && by_budget.front().label == label) return by_budget;
  }
  throw std::invalid_argument("the sweep has no policy labelled '" + label + "'");
}

PolicySweep sweep_policies(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                           const std::vector<SweepPolicy>& policies,
                           const std::vector<int>& percents, const SweepOptions& options) {
  PolicySweep sweep;
  sweep.percents = percents;
  sweep.full = read_full_cache(weights, text, options);
  for (const SweepPolicy& policy : policies) {
    sweep.runs.emplace_back();
    for (int percent : percents) {
      sweep.runs.back().push_back(
          read_stories(weights, text, policy, {percent, 0}, &sweep.full, options));
    }
  }
  return sweep;
}

PerplexityDifference difference(const SweepRun& a, const SweepRun& b) {
  return perplexity_difference(paired_units(a.token_nll(), b.token_nll()));
}

std::size_t first_good_budget(const std::vector<SweepRun>& by_budget, double limit) {
  std::size_t needs = by_budget.size();
  for (std::size_t b = by_budget.size(); b-- > 0 && by_budget[b].perplexity() <= limit;) needs = b;
  return needs;
}

BudgetComparison compare_over_budgets(const std::vector<SweepRun>& a,
                                      const std::vector<SweepRun>& b,
                                      const std::vector<std::size_t>& budgets) {
  BudgetComparison comparison;
  for (std::size_t i : budgets) {
    comparison.verdicts.push_back(verdict_of(difference(a.at(i), b.at(i))));
    comparison.more_names += a[i].names_correct > b[i].names_correct ? 1 : 0;
    comparison.fewer_names += a[i].names_correct < b[i].names_correct ? 1 : 0;
  }
  return comparison;
}

const std::vector<SweepMeasure>& sweep_measures() {
  static const std::vector<SweepMeasure> measures = {
      {"perplexity", "perplexity", true, "budget_perplexity.svg", "Perplexity against cache budget",
       "perplexity", 1.0, 3, false, &SweepRun::perplexity},
      {"bits per byte", "bits_per_byte", true, "", "", "", 1.0, 3, false, &SweepRun::bits_per_byte},
      {"KL", "kl_nats", false, "budget_kl.svg", "Divergence from the full cache against budget",
       "KL(full || policy), nats per token", 1.0, 6, false, &SweepRun::mean_kl},
      {"top-1 agreement", "top1_agreement", false, "budget_agreement.svg",
       "Top-1 agreement with the full cache against budget",
       "share of steps with the same top token", 100.0, 1, false, &SweepRun::agreement},
      {"name recall", "name_recall", true, "budget_name_recall.svg",
       "Name recall against cache budget", "share of long-gap names predicted", 100.0, 1, true,
       &SweepRun::recall}};
  return measures;
}

double context_gain(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                    const SweepRun& full, std::size_t window) {
  const SweepRun windowed =
      read_stories(std::move(weights), text, {"window", "window", {}}, {0, window}, &full);
  return windowed.perplexity() / full.perplexity();
}

}  // namespace h2o
