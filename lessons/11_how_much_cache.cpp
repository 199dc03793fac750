// Lesson 11: how much cache do we need?
//
// Beyond the blog. The H2O paper claims that keeping about 20% of the cache - heavy hitters plus
// recent tokens - keeps a model's quality close to the full cache, while a plain window of the same
// size loses much more. This lesson sweeps the budget from 2% to 100% of a long story for every
// policy the library knows and measures, against the full cache:
//   perplexity    exp(mean -log p(next token)), lower = better (lesson 09)
//   KL            mean KL(full || policy) of the next-token distributions, in nats: how far the
//                 whole prediction moved (0 = the full cache's)
//   top-1 agree   how often the most likely next token is the full cache's
//   name recall   how often the model names a character whose previous mention is more than N
//                 tokens back (name_recall.hpp): the long-range memory H2O is meant to keep
// Two more questions on the same text:
//   which score, which protected tokens? H2O's sums favour old tokens (the handbook's warning); the
//     paper tried averaging instead and reports it did worse. Production code (OpenVINO GenAI)
//     offers both, plus a protected "start area". All three H2O variants run in the sweep.
//   prompt-time or token by token? The paper's code reads a whole prompt with the full cache and
//     cuts it back to the budget once; the decoder here can also evict from the first token on.
//     Both run on prompts of several lengths, and are judged on the rest of the text.
// The new idea written out here is the sweep and reading verdicts off it; teacher forcing, the
// measures, the policies, prompt-time compression and the pictures come from the library.
// --csv PATH writes the sweep's numbers; --pictures DIR draws one chart per measure.
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
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/budget.hpp"
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
// Step 7: a continuation shorter than this (in predictions) is too short to judge a policy by.
constexpr std::size_t kMinContinuation = 16;

struct Measured {  // one policy at one budget
  double perplexity = 0, kl = 0, agreement = 0, recall = 0;
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
  args.add_option("names", "PATH", h2o::default_names_file(), "the character names")
      .add_option("budgets", "LIST", "2,5,10,20,30,50,100", "budgets, percent of the text")
      .add_option("name-gap", "N", "64", "name recall counts names last seen > N tokens back")
      .add_option("prompts", "LIST", "25,50,75", "Step 7's prompt lengths, percent of the text")
      .add_option("prompt-budget", "PERCENT", "10", "Step 7's cache budget, percent of the text")
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
  const std::vector<int> tokens =
      h2o::read_story_tokens(args, tokenizer, 16, weights->config.seq_len);
  const std::size_t n = tokens.size();
  const h2o::NameTokens names =
      h2o::names_as_tokens(tokenizer, h2o::read_names(args.text("names")));
  const std::size_t counted = h2o::long_gap_name_steps(tokens, names, min_gap).size();
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << n << " tokens of " << std::filesystem::path(args.text("text")).filename().string()
            << "; " << counted << " times the next token is a name\n        last seen more than "
            << min_gap << " tokens back (name recall counts those).\n";

  // Step 2: the reference. Its log-probabilities are kept, so that every other run can measure
  // how far its whole next-token distribution moved (KL).
  auto measure = [&](const std::string& policy, const h2o::PolicySettings& settings,
                     const h2o::TeacherForcedRun* reference, bool keep,
                     std::size_t compressed_prompt = 0) {
    h2o::Decoder decoder(weights, h2o::make_policy(policy, settings), n);
    return h2o::read_with_teacher_forcing(decoder, tokens,
                                          {keep, reference, {}, compressed_prompt});
  };
  const h2o::TeacherForcedRun full = measure("full", {}, nullptr, true);
  const double full_recall = h2o::name_recall(tokens, full.top1, names, min_gap).recall();
  std::cout << "Step 2: the full cache: perplexity " << fixed(full.perplexity(), 3)
            << ", name recall "
            << (counted > 0 ? fixed(100 * full_recall, 1) + "%" : "- (no name to count)") << "\n";

  // Step 3: the sweep. Every policy of the factory gets the same number of tokens at each budget
  // (settings_for_budget splits it as the policy needs), and H2O comes in three variants: the
  // paper's sums, sums per step in the cache, and sums with the first positions protected.
  std::vector<Contender> contenders;
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (kind.name != "full") contenders.push_back({kind.name, kind.name, {}, {}});
  }
  h2o::PolicySettings normalised, start_area;
  normalised.h2o_score = h2o::H2OScore::NormalisedSum;
  start_area.start_area = kStartArea;
  contenders.insert(contenders.begin() + 1,
                    {{"h2o-norm", "h2o", normalised, {}},
                     {"h2o+start" + std::to_string(kStartArea), "h2o", start_area, {}}});
  for (Contender& c : contenders) {
    for (int percent : percents) {
      const std::size_t budget = h2o::tokens_for_percent(n, percent);
      const h2o::PolicySettings settings = h2o::settings_for_budget(c.policy, budget, c.settings);
      const h2o::TeacherForcedRun run = measure(c.policy, settings, &full, false);
      c.by_budget.push_back({run.perplexity(), run.mean_kl(), run.agreement(),
                             h2o::name_recall(tokens, run.top1, names, min_gap).recall()});
    }
  }
  std::vector<std::string> titles = {"policy"};
  for (int percent : percents) titles.push_back(std::to_string(percent) + "%");
  std::cout << "\nStep 3: every policy at every budget (percent of the " << n << " tokens)\n";
  const std::string measures[] = {"perplexity (full " + fixed(full.perplexity(), 3) + ")",
                                  "KL from the full cache, nats",
                                  "top-1 agreement with the full cache",
                                  "name recall (full " + fixed(100 * full_recall, 1) + "%)"};
  for (int m = 0; m < (counted > 0 ? 4 : 3); ++m) {  // name recall needs names to count
    h2o::Table table(titles);
    for (const Contender& c : contenders) {
      std::vector<std::string> row = {c.label};
      for (const Measured& r : c.by_budget) {
        const double value = m == 0   ? r.perplexity
                             : m == 1 ? r.kl
                             : m == 2 ? r.agreement
                                      : r.recall;
        row.push_back(m == 0 ? fixed(value, 3) : m == 1 ? fixed(value, 4) : fixed(100 * value, 1));
      }
      table.add(row);
    }
    std::cout << "\n  " << measures[m] << "\n";
    table.print(std::cout);
  }

  // Step 4: the budget each policy needs: the smallest at which its perplexity stays within 5% of
  // the full cache's (and every larger budget too, so a lucky dip does not count).
  std::cout << "\nStep 4: the smallest budget within 5% of the full cache's perplexity\n";
  std::size_t h2o_needs = percents.size(), window_needs = percents.size();
  for (const Contender& c : contenders) {
    const std::size_t needs = first_good_budget(c, 1.05 * full.perplexity());
    if (c.label == "h2o") h2o_needs = needs;
    if (c.label == "window") window_needs = needs;
    std::cout << "  " << h2o::pad_right(c.label, 12)
              << (needs < percents.size() ? std::to_string(percents[needs]) + "%" : "none of these")
              << "\n";
  }

  // Step 5: the paper's claim, checked against these numbers.
  const auto twenty = std::find(percents.begin(), percents.end(), 20);
  std::cout << "\nStep 5: the paper's \"20% is enough\"\n  ";
  if (twenty == percents.end()) {
    std::cout << "(20% is not among --budgets)\n";
  } else {
    const auto b = static_cast<std::size_t>(twenty - percents.begin());
    const Measured& h = contenders[0].by_budget[b];
    std::cout << "at 20%, H2O's perplexity is "
              << fixed(100.0 * (h.perplexity / full.perplexity() - 1), 1)
              << "% from the full cache's; H2O needs "
              << (h2o_needs < percents.size() ? std::to_string(percents[h2o_needs]) + "%"
                                              : "more than any budget")
              << ", the window "
              << (window_needs < percents.size() ? std::to_string(percents[window_needs]) + "%"
                                                 : "more than any budget")
              << ".\n  "
              << (h2o_needs < percents.size() && percents[h2o_needs] <= 20
                      ? "The claim holds on this model and text."
                      : "The claim does not hold here: this model needs more cache.")
              << "\n";
  }

  // Step 6: which score, which protected tokens? Each variant against the paper's sums, budget by
  // budget below 100% (at 100% nothing is evicted and all three are the full cache).
  std::cout << "\nStep 6: which score, which protected tokens? (against H2O's plain sums)\n";
  const Contender& sums = contenders[0];
  for (std::size_t v = 1; v <= 2; ++v) {
    const Contender& variant = contenders[v];
    std::size_t evicting = 0, worse = 0, better = 0, more_names = 0, fewer_names = 0;
    for (std::size_t b = 0; b < percents.size(); ++b) {
      if (percents[b] >= 100) continue;
      ++evicting;
      worse += variant.by_budget[b].perplexity > sums.by_budget[b].perplexity;
      better += variant.by_budget[b].perplexity < sums.by_budget[b].perplexity;
      more_names += variant.by_budget[b].recall > sums.by_budget[b].recall;
      fewer_names += variant.by_budget[b].recall < sums.by_budget[b].recall;
    }
    if (evicting == 0) {
      std::cout << "  " << h2o::pad_right(variant.label, 11)
                << "(no budget below 100% to compare)\n";
      continue;
    }
    std::cout << "  " << h2o::pad_right(variant.label, 11) << "perplexity worse at " << worse
              << ", better at " << better << " of " << evicting << " budgets";
    if (counted > 0) {
      std::cout << "; name recall lower at " << fewer_names << ", higher at " << more_names;
    }
    std::cout << "\n";
    if (v == 1) {
      std::cout << "  " << std::string(11, ' ') << "=> the paper's \"averaging did worse\" "
                << (worse > better ? "holds here" : "does not hold here") << " (perplexity)\n";
    }
  }

  // Step 7: prompt-time or token by token? The first P tokens are a prompt; a policy either
  // evicts from the first token on (as everywhere above), or reads the whole prompt with the full
  // cache and cuts it to the budget once (read_prompt_compressed). Judged on the continuation:
  // the predictions from the prompt's last token on, against the full cache's.
  const std::size_t budget = h2o::tokens_for_percent(n, prompt_budget_percent);
  const std::vector<std::size_t> name_steps = h2o::long_gap_name_steps(tokens, names, min_gap);
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
    for (std::size_t t : name_steps) {
      if (t < first_step) continue;
      ++c.names;
      c.names_right += run.top1[t] == tokens[t + 1];
    }
    return c;
  };
  std::cout << "\nStep 7: prompt-time or token by token? At a budget of " << prompt_budget_percent
            << "% = " << budget << " tokens, on the text\n        after a prompt of P tokens. "
            << "Each cell: evicting token by token | cutting the prompt once\n";
  h2o::Table prompt_table(
      {"P", "policy", "top-1 agreement %", "perplexity", "long-gap names right"});
  // One policy each (the H2O variants aside); one token-by-token run serves every prompt length.
  std::vector<std::string> policies;
  std::vector<h2o::TeacherForcedRun> per_step;  // one per policy
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (kind.name == "full") continue;
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
                             std::to_string(n - P) + " predictions to judge; its row says little.\n";
    }
    const Continuation reference = continuation(full, P - 1);
    prompt_table.row(std::to_string(P), "full", "100.0", fixed(reference.perplexity, 3),
                     reference.names == 0 ? "-"
                                          : std::to_string(reference.names_right) + " of " +
                                                std::to_string(reference.names));
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
  prompt_table.print(std::cout);
  std::cout << short_continuations << "  Cutting the prompt once agrees more with the full cache in " << once_wins
            << " of " << pairs << " (prompt, policy) pairs,\n  evicting token by token in "
            << step_wins << " (the rest tie).\n";

  // The files: the sweep's numbers as CSV, and one chart per measure.
  if (!args.text("csv").empty()) {
    h2o::Table csv({"policy", "budget_percent", "budget_tokens", "perplexity", "kl_nats",
                    "top1_agreement", "name_recall", "name_gap"});
    for (const Contender& c : contenders) {
      for (std::size_t b = 0; b < percents.size(); ++b) {
        const Measured& r = c.by_budget[b];
        csv.row(c.label, percents[b], h2o::tokens_for_percent(n, percents[b]),
                fixed(r.perplexity, 6), fixed(r.kl, 6), fixed(r.agreement, 6), fixed(r.recall, 6),
                min_gap);
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
