// Lesson 11: how much cache do we need?
//
// Beyond the blog. The H2O paper claims that keeping about 20% of the cache - heavy hitters plus
// recent tokens - keeps a model's quality close to the full cache, while a plain window of the same
// size loses much more. This lesson sweeps the budget from 2% to 100% of a long story for every
// policy the library's factory knows (each as its paper defines it), reads the verdicts off the
// sweep first, then shows the numbers behind them:
//   perplexity    exp(mean -log p(next token)), lower = better (lesson 09)
//   bits per byte the same surprise per byte of text, whatever the tokenizer (bits_per_byte.hpp)
//   name recall   how often the model names a character whose previous mention is more than N
//                 tokens back (name_recall.hpp): the long-range memory H2O is meant to keep
//   (--csv adds KL(full || policy) of the next-token distributions and top-1 agreement)
// Two more questions on the same text:
//   which score, which protected tokens? H2O's sums favour old tokens (the handbook's warning); the
//     paper tried averaging instead and reports it did worse. Production code (OpenVINO GenAI)
//     offers both, plus a protected "start area". TOVA's paper averages over all heads; scoring
//     each KV head on its own is one option away. These variants run in the sweep too.
//   prompt-time or token by token? The paper's code reads a whole prompt with the full cache and
//     cuts it back to the budget once; the decoder here can also evict from the first token on.
//     Both run on prompts of several lengths, and are judged on the rest of the text.
// The new idea written out here is the sweep and reading verdicts off it; teacher forcing, the
// measures, the policies, prompt-time compression and the pictures come from the library.
// --csv PATH writes the sweep's numbers; --pictures DIR draws one chart per measure.
// A text the model does not know (the full cache itself reads it badly, bits_per_byte.hpp) gets
// one warning and the numbers, but no verdict.
//
// Dimension legend: N = tokens of the text, P = policies, B = budgets.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;

namespace {
// Step 6: a continuation shorter than this (in predictions) is too short to judge a policy by.
constexpr std::size_t kMinContinuation = 16;

struct Measured {  // one policy at one budget
  double perplexity = 0, kl = 0, agreement = 0, recall = 0, bits_per_byte = 0;
};
struct Contender {  // one line of every chart: a policy and its settings
  std::string label, policy;
  h2o::PolicySettings settings;
  std::vector<Measured> by_budget;  // (B,)
};
// The first positions "h2o+start" protects (taken from its heavy half, so never more than that).
constexpr std::size_t kStartArea = 4;
// Small helpers, defined below main.
std::string as_percent(double share) { return fixed(100.0 * share, 1); }
std::size_t first_good_budget(const Contender& c, double limit);
void write_charts(const std::string& dir, const std::string& command,
                  const std::vector<Contender>& contenders, const std::vector<int>& percents,
                  const std::string& about);
}  // namespace

int main(int argc, char** argv) try {
  h2o::ArgParser args("11_how_much_cache",
                      "Lesson 11: how much cache do we need? Every policy at budgets from 2% to "
                      "100% of a story.");
  h2o::add_model_options(args);
  h2o::add_text_option(args);
  args.add_option("names", "PATH", h2o::default_names_file(), h2o::names_option_help())
      .add_option("budgets", "LIST", "2,5,10,20,30,50,100", "budgets, percent of the text")
      .add_option("name-gap", "N", "64", "name recall counts names last seen > N tokens back")
      .add_option("prompts", "LIST", "25,50,75", "Step 6's prompt lengths, percent of the text")
      .add_option("prompt-budget", "PERCENT", "10", "Step 6's cache budget, percent of the text")
      .add_option("csv", "PATH", "", "write the sweep's numbers as CSV to this file")
      .add_option("pictures", "DIR", "", "write one SVG chart per measure into this folder");
  if (!args.parse(argc, argv)) return 0;
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  const auto min_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
  const std::vector<int> prompt_percents = h2o::parse_percent_list("prompts", args.text("prompts"));
  const auto prompt_budget_percent = static_cast<int>(args.integer("prompt-budget", 1, 100));
  // The output files are checked before the work; each appears only once complete.
  std::optional<h2o::OutputFile> csv_file;
  if (!args.text("csv").empty()) csv_file.emplace(args.text("csv"), "the CSV file");
  if (!args.text("pictures").empty()) h2o::make_output_folder(args.text("pictures"), "--pictures");
  std::cout << "Lesson 11: how much cache do we need? (beyond the blog)\n\n";

  // Step 1: the model, the story and which of its tokens are character names.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::Tokenizer tokenizer =
      h2o::Tokenizer::load(files.tokenizer, weights->config.vocab_size);
  const h2o::StoryTokens story = h2o::read_story(args, tokenizer, 16, weights->config.seq_len);
  const std::vector<int>& tokens = story.tokens;  // the first story of the file, whole
  const std::size_t n = tokens.size();
  const std::size_t bytes = h2o::predicted_bytes(tokenizer, tokens);
  const h2o::NameTokens names =
      h2o::names_as_tokens(tokenizer, h2o::read_names(args.text("names")));
  const std::vector<h2o::NameMention> long_gap = h2o::long_gap_mentions(tokens, names, min_gap);
  const std::size_t counted = long_gap.size();
  const std::string file_name = std::filesystem::path(args.text("text")).filename().string();
  std::cout << h2o::reading_summary(file_name, 1, story.stories_in_file, story.paragraphs, n,
                                    counted, min_gap)
            << "\n\nStep 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << n << " tokens of " << file_name << "; " << counted
            << " times the next token is a name\n        last seen more than " << min_gap
            << " tokens back (name recall counts those).\n"
            << h2o::name_use_notes(names, {tokens}, "        ");

  // Step 2: the reference. Its log-probabilities are kept, so that every other run can measure
  // how far its whole next-token distribution moved (KL).
  auto measure = [&](const std::string& policy, const h2o::PolicySettings& settings,
                     const h2o::TeacherForcedRun* reference, bool keep,
                     std::size_t compressed_prompt = 0) {
    h2o::Decoder decoder(weights, h2o::make_policy(policy, settings), n);
    return h2o::read_with_teacher_forcing(decoder, tokens,
                                          {keep, reference, {}, compressed_prompt});
  };
  const h2o::TeacherForcedRun full = measure(h2o::reference_policy().name, {}, nullptr, true);
  const double full_recall = h2o::name_recall(tokens, full.top1, names, min_gap).recall();
  const double full_bits = h2o::bits_per_byte(full, bytes);
  std::cout << "Step 2: the full cache: perplexity " << fixed(full.perplexity(), 3) << " ("
            << fixed(full_bits, 3) << " bits per byte), name recall "
            << (counted > 0 ? fixed(100 * full_recall, 1) + "%" : "- (no name to count)") << "\n";
  // A text the model does not know: the numbers below are measured, but no verdict is drawn.
  const bool no_verdict = h2o::beyond_model(full_bits);
  if (no_verdict) {
    std::cout << "\n"
              << h2o::beyond_model_warning(full_bits)
              << "  Steps 3 and 4 (the verdicts) are left out.\n";
  }

  // The sweep. Every policy of the factory that evicts gets the same number of tokens at each
  // budget (settings_for_budget splits it as the policy needs), with its paper's scoring; and the
  // variants: H2O's sums per step in the cache and with the first positions protected, and TOVA
  // scoring each KV head on its own.
  std::vector<Contender> contenders;
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (kind.evicts) contenders.push_back({kind.name, kind.name, {}, {}});
  }
  h2o::PolicySettings normalised, start_area, per_head;
  normalised.h2o_score = h2o::H2OScore::NormalisedSum;
  start_area.start_area = kStartArea;
  per_head.scoring = h2o::ScoringMode::PerHead;
  const std::vector<Contender> variants = {
      {"h2o-norm", "h2o", normalised, {}},
      {"h2o+start" + std::to_string(kStartArea), "h2o", start_area, {}},
      {"tova-per-head", "tova", per_head, {}}};
  for (const Contender& variant : variants) {  // each right after its policy
    const auto after = std::find_if(contenders.rbegin(), contenders.rend(),
                                    [&](const Contender& c) { return c.policy == variant.policy; });
    if (after != contenders.rend()) contenders.insert(after.base(), variant);
  }
  for (Contender& c : contenders) {
    for (int percent : percents) {
      const std::size_t budget = h2o::tokens_for_percent(n, percent);
      const h2o::PolicySettings settings = h2o::settings_for_budget(c.policy, budget, c.settings);
      const h2o::TeacherForcedRun run = measure(c.policy, settings, &full, false);
      c.by_budget.push_back({run.perplexity(), run.mean_kl(), run.agreement(),
                             h2o::name_recall(tokens, run.top1, names, min_gap).recall(),
                             h2o::bits_per_byte(run, bytes)});
    }
  }
  auto by_label = [&](const std::string& label) -> const Contender* {
    for (const Contender& c : contenders) {
      if (c.label == label) return &c;
    }
    return nullptr;
  };
  auto percent_text = [&](std::size_t b) {
    return b < percents.size() ? std::to_string(percents[b]) + "%" : std::string("none of these");
  };
  // The same in a sentence: "10%", or "more than 10%" when no budget tried was enough.
  const int largest_percent = *std::max_element(percents.begin(), percents.end());
  auto needs_text = [&](std::size_t b) {
    return b < percents.size() ? percent_text(b)
                               : "more than " + std::to_string(largest_percent) + "%";
  };

  // Step 3: the answer. The budget each policy needs: the smallest at which its perplexity stays
  // within 5% of the full cache's (and at every larger budget too, so a lucky dip does not count).
  const double limit = 1.05 * full.perplexity();
  if (!no_verdict) {
    std::cout << "\nStep 3: the smallest budget (percent of the " << n
              << " tokens) from which on perplexity stays within 5%\n        of the full cache's\n";
    for (const Contender& c : contenders) {
      const std::size_t needs = first_good_budget(c, limit);
      std::cout << "  " << h2o::pad_right(c.label, 14) << percent_text(needs);
      // 100% (or none) means every budget that evicts anything was too small: say by how much.
      const bool only_full = needs == percents.size() || percents[needs] >= 100;
      std::size_t largest_cut = percents.size();  // the largest budget below 100%
      for (std::size_t b = 0; b < percents.size(); ++b) {
        if (percents[b] < 100) largest_cut = b;
      }
      if (only_full && largest_cut < percents.size()) {
        std::cout << std::string(needs < percents.size() ? 2 : 0, ' ')
                  << "  why: whatever it evicts, later tokens needed; at " << percents[largest_cut]
                  << "% still "
                  << fixed(100.0 * (c.by_budget[largest_cut].perplexity / full.perplexity() - 1), 1)
                  << "% over";
      }
      std::cout << "\n";
    }
    const Contender* h2o_sums = by_label("h2o");
    const Contender* window = by_label("window");
    if (h2o_sums != nullptr && window != nullptr) {
      const std::size_t h2o_needs = first_good_budget(*h2o_sums, limit);
      const std::size_t window_needs = first_good_budget(*window, limit);
      std::cout << "  The paper's \"20% is enough\": H2O needs " << needs_text(h2o_needs)
                << ", the window " << needs_text(window_needs) << ".\n  "
                << (h2o_needs < percents.size() && percents[h2o_needs] <= 20
                        ? "The claim holds on this model and text."
                        : "The claim does not hold here: this model needs more cache.")
                << "\n";
    }

    // Step 4: which score, which protected tokens? Each variant against its policy as the paper
    // has it, budget by budget below 100% (at 100% nothing is evicted and all are the full cache).
    std::cout << "\nStep 4: which score, which protected tokens? (each variant against its paper's "
                 "policy)\n";
    for (const Contender& variant : variants) {
      const Contender* mine = by_label(variant.label);
      const Contender* paper = by_label(variant.policy);
      if (mine == nullptr || paper == nullptr) continue;
      std::size_t evicting = 0, worse = 0, better = 0, more_names = 0, fewer_names = 0;
      for (std::size_t b = 0; b < percents.size(); ++b) {
        if (percents[b] >= 100) continue;
        ++evicting;
        worse += mine->by_budget[b].perplexity > paper->by_budget[b].perplexity;
        better += mine->by_budget[b].perplexity < paper->by_budget[b].perplexity;
        more_names += mine->by_budget[b].recall > paper->by_budget[b].recall;
        fewer_names += mine->by_budget[b].recall < paper->by_budget[b].recall;
      }
      std::cout << "  " << h2o::pad_right(mine->label, 14);
      if (evicting == 0) {
        std::cout << "(no budget below 100% to compare)\n";
        continue;
      }
      std::cout << "perplexity worse at " << worse << ", better at " << better << " of " << evicting
                << " budgets";
      if (counted > 0) {
        std::cout << "; name recall lower at " << fewer_names << ", higher at " << more_names;
      }
      std::cout << "\n";
      // Why scoring per KV head loses, when it does.
      if (mine->settings.scoring == h2o::ScoringMode::PerHead && worse > better) {
        std::cout << "  " << std::string(14, ' ')
                  << "=> a KV head scored alone keeps only what its "
                  << "own queries look at now;\n  " << std::string(14, ' ')
                  << "   the other heads' next queries find it gone\n";
      }
      if (mine->settings.h2o_score == h2o::H2OScore::NormalisedSum) {
        std::cout << "  " << std::string(14, ' ') << "=> the paper's \"averaging did worse\" "
                  << (worse > better ? "holds here" : "does not hold here") << " (perplexity)\n";
      }
    }

  }  // !no_verdict

  // Step 5: the numbers behind the verdicts. Name recall rests on few events, so each one moves
  // it by a large step: say how large.
  std::vector<std::string> titles = {"policy"};
  for (int percent : percents) titles.push_back(std::to_string(percent) + "%");
  std::cout << "\nStep 5: the numbers (KL and top-1 agreement: --csv)\n";
  for (int m = 0; m < (counted > 0 ? 3 : 2); ++m) {  // name recall needs names to count
    h2o::Table table(titles);
    for (const Contender& c : contenders) {
      std::vector<std::string> row = {c.label};
      for (const Measured& r : c.by_budget) {
        row.push_back(m == 0   ? fixed(r.perplexity, 3)
                      : m == 1 ? fixed(r.bits_per_byte, 3)
                               : fixed(100 * r.recall, 1));
      }
      table.add(row);
    }
    std::cout << "\n  "
              << (m == 0   ? "perplexity (full " + fixed(full.perplexity(), 3) + ")"
                  : m == 1 ? "bits per byte (full " + fixed(full_bits, 3) + ")"
                           : "name recall, % (full " + fixed(100 * full_recall, 1) + "%; " +
                                 std::to_string(counted) + " names, one is " +
                                 fixed(100.0 / static_cast<double>(counted), 1) + " points)")
              << "\n";
    table.print(std::cout);
  }

  // Step 6: prompt-time or token by token? The first P tokens are a prompt; a policy either
  // evicts from the first token on (as everywhere above), or reads the whole prompt with the full
  // cache and cuts it to the budget once (read_prompt_compressed). Judged on the continuation:
  // the predictions from the prompt's last token on, against the full cache's.
  const std::size_t budget = h2o::tokens_for_percent(n, prompt_budget_percent);
  struct Continuation {
    double agreement, perplexity;
    std::size_t names_right, names;
  };
  auto continuation = [&](const h2o::TeacherForcedRun& run, std::size_t first_step) {
    Continuation c{0, 0, 0, 0};
    double nll = 0;
    for (std::size_t t = first_step; t < run.steps(); ++t) {
      c.agreement += run.top1[t] == full.top1[t];
      nll += run.token_nll[t];
    }
    const auto steps = static_cast<double>(run.steps() - first_step);
    c.agreement /= steps;
    c.perplexity = std::exp(nll / steps);
    for (const h2o::NameMention& mention : long_gap) {
      if (mention.first - 1 < first_step) continue;  // its first token is still in the prompt
      ++c.names;
      c.names_right += h2o::name_predicted(mention, tokens, run.top1);
    }
    return c;
  };
  h2o::Table prompt_table(
      {"P", "policy", "top-1 agreement %", "perplexity", "long-gap names right"});
  // One policy each (the H2O variants aside); one token-by-token run serves every prompt length.
  std::vector<std::string> policies;
  std::vector<h2o::TeacherForcedRun> per_step;  // one per policy
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (!kind.evicts) continue;
    policies.push_back(kind.name);
    per_step.push_back(
        measure(kind.name, h2o::settings_for_budget(kind.name, budget), nullptr, false));
  }
  std::size_t pairs = 0, once_wins = 0, step_wins = 0;
  std::string short_continuations;  // prompts that leave too little text to judge
  for (int prompt_percent : prompt_percents) {
    const std::size_t P = std::min(h2o::tokens_for_percent(n, prompt_percent), n - 2);
    // The continuation is judged on the predictions from the prompt's last token on: n - P.
    if (n - P < kMinContinuation) {
      short_continuations += "  Note: a prompt of " + std::to_string(P) + " tokens (" +
                             std::to_string(prompt_percent) + "%) leaves only " +
                             std::to_string(n - P) +
                             " predictions to judge; its row says little.\n";
    }
    const Continuation reference = continuation(full, P - 1);
    prompt_table.row(
        std::to_string(P), h2o::reference_policy().name, "100.0", fixed(reference.perplexity, 3),
        reference.names == 0
            ? "-"
            : std::to_string(reference.names_right) + " of " + std::to_string(reference.names));
    for (std::size_t i = 0; i < policies.size(); ++i) {
      const Continuation step = continuation(per_step[i], P - 1);
      const Continuation once = continuation(
          measure(policies[i], h2o::settings_for_budget(policies[i], budget), nullptr, false, P),
          P - 1);
      ++pairs;
      once_wins += once.agreement > step.agreement;
      step_wins += once.agreement < step.agreement;
      prompt_table.row("", policies[i],
                       as_percent(step.agreement) + " | " + as_percent(once.agreement),
                       fixed(step.perplexity, 3) + " | " + fixed(once.perplexity, 3),
                       step.names == 0 ? "-"
                                       : std::to_string(step.names_right) + " | " +
                                             std::to_string(once.names_right) + " of " +
                                             std::to_string(step.names));
    }
  }
  std::cout << "\nStep 6: prompt-time or token by token? At a budget of " << prompt_budget_percent
            << "% = " << budget << " tokens";
  if (no_verdict) {
    std::cout << ".\n        Judged on the text after a prompt of P tokens; each cell: evicting "
              << "token by token | cutting\n        the prompt once\n";
  } else {
    std::cout << ", cutting the prompt\n        once agrees more with the full cache in "
              << once_wins << " of " << pairs << " (prompt, policy) pairs, evicting\n        "
              << "token by token in " << step_wins << " (the rest tie). Judged on the text after "
              << "a prompt of P tokens;\n        each cell: evicting token by token | cutting the "
              << "prompt once\n";
  }
  prompt_table.print(std::cout);
  std::cout << short_continuations;

  // The files: the sweep's numbers as CSV, and one chart per measure.
  if (!args.text("csv").empty()) {
    h2o::Table csv({"policy", "budget_percent", "budget_tokens", "perplexity", "bits_per_byte",
                    "kl_nats", "top1_agreement", "name_recall", "name_gap"});
    for (const Contender& c : contenders) {
      for (std::size_t b = 0; b < percents.size(); ++b) {
        const Measured& r = c.by_budget[b];
        csv.row(c.label, percents[b], h2o::tokens_for_percent(n, percents[b]),
                fixed(r.perplexity, 6), fixed(r.bits_per_byte, 6), fixed(r.kl, 6),
                fixed(r.agreement, 6), fixed(r.recall, 6), min_gap);
      }
    }
    csv_file->stream() << csv.csv();
    csv_file->commit();
    std::cout << "\nEvery number written to " << args.text("csv") << "\n";
  }
  if (!args.text("pictures").empty()) {
    write_charts(args.text("pictures"), h2o::command_line(argc, argv), contenders, percents,
                 std::filesystem::path(files.model).stem().string() + " reading " +
                     std::to_string(n) + " tokens of " +
                     std::filesystem::path(args.text("text")).filename().string());
    std::cout << "Charts written to " << args.text("pictures") << "\n";
  }
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
}

namespace {
// The index of the smallest budget from which on every perplexity is within `limit` (a lucky dip
// below it at a small budget does not count); percents.size() when there is none.
std::size_t first_good_budget(const Contender& c, double limit) {
  std::size_t needs = c.by_budget.size();
  for (std::size_t b = c.by_budget.size(); b-- > 0;) {
    if (c.by_budget[b].perplexity > limit) break;
    needs = b;
  }
  return needs;
}

void write_charts(const std::string& dir, const std::string& command,
                  const std::vector<Contender>& contenders, const std::vector<int>& percents,
                  const std::string& about) {
  const struct {
    const char* file;
    const char* title;
    const char* y_label;
    double Measured::*value;
  } charts[] = {{"budget_perplexity.svg", "Perplexity against cache budget", "perplexity",
                 &Measured::perplexity},
                {"budget_kl.svg", "Divergence from the full cache against budget",
                 "KL(full || policy), nats per token", &Measured::kl},
                {"budget_agreement.svg", "Top-1 agreement with the full cache against budget",
                 "share of steps with the same top token", &Measured::agreement},
                {"budget_name_recall.svg", "Name recall against cache budget",
                 "share of long-gap names predicted", &Measured::recall}};
  for (const auto& spec : charts) {
    h2o::LineChart chart;
    chart.text = {spec.title, {about}, command};
    chart.x_label = "cache budget (% of the text's tokens)";
    chart.y_label = spec.y_label;
    chart.log_x = true;
    for (const Contender& c : contenders) {
      h2o::Series series{c.label, {}, {}, false, true};
      for (std::size_t b = 0; b < percents.size(); ++b) {
        series.x.push_back(percents[b]);
        series.y.push_back(c.by_budget[b].*spec.value);
      }
      chart.series.push_back(series);
    }
    h2o::save_svg(dir + "/" + spec.file, h2o::line_chart_svg(chart));
  }
}
}  // namespace
