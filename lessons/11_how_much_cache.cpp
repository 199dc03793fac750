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
// The new idea written out here is the sweep and reading a verdict off it; teacher forcing, the
// measures, the policies and the pictures come from the library.
// --csv PATH writes every number; --pictures DIR draws one chart per measure.
//
// Dimension legend: N = tokens of the text, P = policies, B = budgets.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/base/format.hpp"
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
struct Measured {  // one policy at one budget
  double perplexity = 0, kl = 0, agreement = 0, recall = 0;
};
struct Contender {  // one line of every chart: a policy and its settings
  std::string label, policy;
  h2o::PolicySettings settings;
  std::vector<Measured> by_budget;  // (B,)
};
// Small helpers, defined below main.
void write_charts(const std::string& dir, const std::vector<Contender>& contenders,
                  const std::vector<int>& percents, const std::string& about);
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
      .add_option("csv", "PATH", "", "write every number as CSV to this file")
      .add_option("pictures", "DIR", "", "write one SVG chart per measure into this folder");
  if (!args.parse(argc, argv)) return 0;
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  const auto min_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
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
                     const h2o::TeacherForcedRun* reference, bool keep) {
    h2o::Decoder decoder(weights, h2o::make_policy(policy, settings), n);
    return h2o::read_with_teacher_forcing(decoder, tokens, {keep, reference, {}});
  };
  const h2o::TeacherForcedRun full = measure("full", {}, nullptr, true);
  const double full_recall = h2o::name_recall(tokens, full.top1, names, min_gap).recall();
  std::cout << "Step 2: the full cache: perplexity " << fixed(full.perplexity(), 3)
            << ", name recall "
            << (counted > 0 ? fixed(100 * full_recall, 1) + "%" : "- (no name to count)") << "\n";

  // Step 3: the sweep. Every policy of the factory gets the same number of tokens at each budget
  // (settings_for_budget splits it as the policy needs).
  std::vector<Contender> contenders;
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (kind.name != "full") contenders.push_back({kind.name, kind.name, {}, {}});
  }
  for (Contender& c : contenders) {
    for (int percent : percents) {
      const std::size_t budget = h2o::tokens_for_percent(n, percent);
      const h2o::TeacherForcedRun run =
          measure(c.policy, h2o::settings_for_budget(c.policy, budget, c.settings), &full, false);
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
    std::size_t needs = percents.size();
    for (std::size_t b = percents.size(); b-- > 0;) {
      if (c.by_budget[b].perplexity > 1.05 * full.perplexity()) break;
      needs = b;
    }
    if (c.label == "h2o") h2o_needs = needs;
    if (c.label == "window") window_needs = needs;
    std::cout << "  " << h2o::pad_right(c.label, 8)
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

  // The files: every number as CSV, and one chart per measure.
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
    std::ofstream out(args.text("csv"), std::ios::binary);
    if (!(out << csv.csv())) throw std::runtime_error("cannot write '" + args.text("csv") + "'");
    std::cout << "\nEvery number written to " << args.text("csv") << "\n";
  }
  if (!args.text("pictures").empty()) {
    write_charts(args.text("pictures"), contenders, percents,
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
void write_charts(const std::string& dir, const std::vector<Contender>& contenders,
                  const std::vector<int>& percents, const std::string& about) {
  std::filesystem::create_directories(dir);
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
    chart.text = {spec.title, {about}, "build/bin/11_how_much_cache --pictures " + dir};
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
