// Lesson 13: budgets per layer and head
//
// Beyond the blog. Lessons 09-12 gave every layer and KV head the same budget. Two papers keep
// H2O's scores and its total but move the budget: PyramidKV (Cai et al., 2024) gives deeper
// layers fewer heavy hitters, on a straight line; Ada-KV (Feng et al., 2024) lets the KV heads of
// a layer share its heavy-hitter slots, each head a floor and the rest to the best scores of any
// head. Does moving the same bytes help? The answer comes first: each against H2O's one budget,
// with its change and 95% interval (measure/verdict.hpp). Then the steps behind it:
//   Step 1  the model and the stories;
//   Step 2  PyramidKV's budget per layer written out (a line, rounded to whole tokens) and
//           checked against each layer's PyramidKVPolicy (its keep());
//   Step 3  Ada-KV's budget per KV head written out (floor, most, the layer's total) and checked
//           against AdaKVPolicy and against the heads of a cache that read story 1;
//   Step 4  H2O, PyramidKV and Ada-KV against the window at the same KV bytes, every story.
// From the library: the policies (policy/policy_factory.hpp), the runs (measure/policy_sweep.hpp).
// Lesson 14 gives each head its own rule instead.
//
// Dimension legend: L = layers, G = KV heads of a layer, r = recent window, m = heavy hitters per
// layer and KV head on average.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/default_files.hpp"
#include "h2o/app/model_and_stories.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/adakv_policy.hpp"
#include "h2o/policy/pyramid_policy.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"

using h2o::fixed;

namespace {
// Step 2: PyramidKV's heavy hitters per layer, written out. A straight line from
// high = 2m - m / beta in layer 0 down to low = m / beta in layer L - 1 (its top capped at `most`,
// the tokens outside the window, and its bottom raised to keep the total); layer l gets the
// line's sum through l, rounded, minus its sum before l, rounded: the layers keep exactly L m.
struct PyramidLine {
  std::vector<double> line;        // (L,) the line's value in each layer
  std::vector<std::size_t> heavy;  // (L,) heavy hitters each layer keeps
};
PyramidLine pyramid_by_hand(std::size_t m, std::size_t n_layers, double beta, std::size_t most) {
  PyramidLine pyramid;
  if (m >= most) {  // every layer is full: nothing to move
    pyramid.line.assign(n_layers, static_cast<double>(most));
    pyramid.heavy.assign(n_layers, most);
    return pyramid;
  }
  const double mean = static_cast<double>(m);
  double low = mean / beta, high = 2.0 * mean - low;
  if (high > static_cast<double>(most)) high = static_cast<double>(most), low = 2.0 * mean - high;
  const double step = n_layers == 1 ? 0.0 : (high - low) / static_cast<double>(n_layers - 1);
  double before = 0.0;  // the line's sum over the layers before l
  for (std::size_t l = 0; l < n_layers; ++l) {
    const double value = n_layers == 1 ? mean : high - step * static_cast<double>(l);
    pyramid.line.push_back(value);
    pyramid.heavy.push_back(
        static_cast<std::size_t>(std::max(0.0, std::round(before + value) - std::round(before))));
    before += value;
  }
  return pyramid;
}

// One row of step 4: `run` against the window (same bytes), both against `full`.
void add_row(h2o::Table& table, const std::string& label, const h2o::SweepRun& run,
             const h2o::SweepRun& window, const h2o::SweepRun& full) {
  const h2o::PerplexityDifference d = h2o::difference(run, window);
  const bool self = &run == &window;  // the window's own row: nothing to weigh
  table.row(label, fixed(100.0 * run.stories_kv_bytes / full.stories_kv_bytes, 1) + "%",
            h2o::signed_percent(run.perplexity() / full.perplexity() - 1),
            self ? "" : h2o::signed_percent(d.change),
            self ? "" : h2o::signed_percent(d.low) + " to " + h2o::signed_percent(d.high),
            self ? "" : h2o::verdict_word(h2o::verdict_of(d)),
            run.name_events == 0 ? "-" : std::to_string(run.names_correct) + "/" +
                                             std::to_string(run.name_events));
}

std::string yes_no(bool same) { return same ? "yes" : "NO"; }
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("13_budgets_per_layer_and_head",
                      "Lesson 13: budgets per layer (PyramidKV) and per KV head (Ada-KV) against "
                      "H2O's one budget.");
  h2o::add_model_options(args);
  h2o::add_stories_options(args, "12").add_option(
      "budget", "PERCENT", "10", "tokens each policy keeps, percent of each story");
  h2o::add_names_option(args);
  args.parse(argc, argv);
  const int percent = static_cast<int>(args.integer("budget", 1, 99));

  // The model, the stories, and every run: the full cache first (the reference), then one budget
  // for every layer and head (h2o, the window), budgets per layer (pyramid) and per head (adakv).
  const h2o::ModelAndStories loaded = h2o::load_model_and_stories(args);  // names > 64 back
  const h2o::ModelFiles& files = loaded.files;
  const auto& weights = loaded.weights;  // (shared by every run's decoder)
  const h2o::TokenisedStories& read = loaded.read;
  const h2o::SweepText& text = loaded.text;
  const std::size_t L = weights->config.n_layers, G = weights->config.n_kv_heads;
  const h2o::SweepRun full = h2o::read_full_cache(weights, text);
  const bool beyond = h2o::beyond_model(full.bits_per_byte());  // no verdict from noise
  const auto at_budget = [&](const char* name) {
    if (beyond) return h2o::SweepRun{};
    h2o::SweepRun run = h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full);
    if (!run.refused.empty()) throw std::runtime_error(run.refused);
    return run;
  };
  const h2o::SweepRun h2o_run = at_budget("h2o"), window = at_budget("window"),
                      pyramid = at_budget("pyramid"), adakv = at_budget("adakv");

  // The answer: the same bytes moved between layers, or between heads, against one budget.
  std::cout << "Lesson 13: budgets per layer and head (beyond the blog)\n\n";
  if (beyond) {
    std::cout << h2o::beyond_model_warning(full.bits_per_byte()) << "\n";
  } else {
    std::cout << "The answer (details in steps 1-4 below)\n"
              << h2o::wrap_words("  Over " + read.counted() + " at " + std::to_string(percent) +
                                     "%, the same bytes moved between layers (PyramidKV): " +
                                     h2o::verdict_against(pyramid, h2o_run, "H2O") +
                                     "; between the KV heads of a layer (Ada-KV): " +
                                     h2o::verdict_against(adakv, h2o_run, "H2O") + ".",
                                 100, "  ")
              << "\n\n";
  }

  // Step 1: the model and the stories.
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << read.counted() << " of "
            << std::filesystem::path(args.text("text")).filename().string() << " (" << read.total
            << " tokens);\n        every policy keeps " << percent
            << "% of each story's tokens.\n";

  // Step 2: PyramidKV's budget per layer for story 1, by hand, beside PyramidKVPolicy's.
  const std::vector<int>& first = read.stories.front();
  const std::size_t n = first.size();
  const std::size_t budget = h2o::tokens_for_percent(n, percent);
  const h2o::PolicySettings even = h2o::settings_for_budget("pyramid", budget);
  const std::size_t m = even.heavy, r = even.recent;
  const double beta = h2o::PyramidKVPolicy::kPaperBeta;
  const PyramidLine line = pyramid_by_hand(m, L, beta, n > r ? n - r : 0);
  std::cout << "\nStep 2: budgets per layer (PyramidKV) for story 1: every layer keeps the last "
            << r << " tokens and\n        heavy hitters on a line from 2m - m/" << fixed(beta, 0)
            << " in layer 0 down to m/" << fixed(beta, 0) << " in layer " << L - 1 << " (m = " << m
            << "),\n        each layer the line's sum through it, rounded, less its sum before it, "
               "rounded:\n";
  h2o::Table layers({"layer", "line", "heavy hitters", "tokens", "PyramidKVPolicy"});
  bool pyramid_same = true;
  std::size_t pyramid_total = 0;
  for (std::size_t l = 0; l < L; ++l) {
    const std::size_t tokens = std::min(r + line.heavy[l], n);
    const std::size_t library =
        h2o::PyramidKVPolicy(h2o::CacheBudget{m, r}, h2o::ScoringMode::PerHead, h2o::H2OScore::Sum,
                             h2o::kDefaultH2ODecay, beta, {l, L, G, n})
            .keep();
    pyramid_same = pyramid_same && tokens == library;
    pyramid_total += tokens;
    layers.row(l, fixed(line.line[l], 2), line.heavy[l], tokens, library);
  }
  layers.print(std::cout);
  std::cout << "  Together " << pyramid_total << " tokens per KV head, H2O's " << L << " x "
            << std::min(r + m, n) << " = " << L * std::min(r + m, n)
            << "; the library's budgets the same: " << yes_no(pyramid_same) << ".\n";

  // Step 3: Ada-KV's budget per KV head: each head its window and a floor f of heavy hitters,
  // the layer's other heavy slots to the best scores of any head. Written out, then checked
  // against AdaKVPolicy and against the heads of a cache that read story 1.
  const h2o::PolicySettings shared = h2o::settings_for_budget("adakv", budget);
  const std::size_t f = static_cast<std::size_t>(static_cast<double>(shared.heavy) *
                                                 h2o::AdaKVPolicy::kPaperSafeguard);
  const std::size_t fewest = shared.recent + f;
  const std::size_t most = shared.recent + G * shared.heavy - (G - 1) * f;
  const std::size_t layer_total = G * (shared.recent + shared.heavy);
  h2o::Decoder reader(weights, h2o::make_policy("adakv", shared), n);
  const auto& policy = dynamic_cast<const h2o::AdaKVPolicy&>(reader.layer_policy(0));
  const bool adakv_same =
      policy.floor_per_head() == f && policy.head_capacity() == std::min(most, n);
  for (int token : first) reader.forward(token);
  std::cout << "\nStep 3: budgets per KV head (Ada-KV) for story 1: each head keeps the last "
            << shared.recent << " and at least\n        f = floor(0.2 x " << shared.heavy
            << ") = " << f << " heavy hitters (" << fewest << " tokens); the layer's other " << G
            << " x " << shared.heavy << " - " << G << " x " << f
            << "\n        heavy slots go to the best scores of any head, so one head holds at "
               "most\n        "
            << shared.recent << " + " << G << " x " << shared.heavy << " - " << G - 1 << " x "
            << f << " = " << most << ", a layer " << G << " x " << shared.recent + shared.heavy
            << " = " << layer_total << ". The heads at the end of story 1:\n";
  std::vector<std::string> head_titles = {"layer"};
  for (std::size_t g = 0; g < G; ++g) head_titles.push_back("head " + std::to_string(g));
  head_titles.push_back("layer total");
  h2o::Table heads(head_titles);
  bool heads_within = true;
  for (std::size_t l = 0; l < L; ++l) {
    std::vector<std::string> row = {std::to_string(l)};
    std::size_t total = 0;
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t held = reader.cache(l).size(g);
      heads_within = heads_within && held >= std::min(fewest, n) && held <= std::min(most, n);
      total += held;
      row.push_back(std::to_string(held));
    }
    heads_within = heads_within && total == std::min(layer_total, G * n);
    row.push_back(std::to_string(total));
    heads.add(row);
  }
  heads.print(std::cout);
  std::cout << "  AdaKVPolicy's floor and most the same: " << yes_no(adakv_same)
            << "; every head within " << fewest << " to " << most << ", every layer "
            << layer_total << ": " << yes_no(heads_within) << ".\n";
  if (beyond) {
    std::cout << "\nThe rest is left out.\n";
    return 0;
  }

  // Step 4: every policy against the window at the same bytes, over every story.
  std::cout << "\nStep 4: every story, the full cache's perplexity " << fixed(full.perplexity(), 3)
            << ", "
            << (full.name_events == 0 ? std::string("no long-gap name to count")
                                      : "long-gap names " + std::to_string(full.names_correct) +
                                            "/" + std::to_string(full.name_events))
            << ";\n        each policy against the window at the same KV bytes\n"
            << (args.given("names") ? ""
                                    : h2o::no_capitals_note(read.texts, full.name_events,
                                                            "        "));
  h2o::Table results({"policy", "KV bytes", "vs full", "vs window", "95% interval", "verdict",
                      "names"});
  add_row(results, "window", window, window, full);
  add_row(results, "h2o", h2o_run, window, full);
  add_row(results, "pyramid", pyramid, window, full);
  add_row(results, "adakv", adakv, window, full);
  results.print(std::cout);
  std::cout << "  KV bytes: of the full cache's, at each story's end; names: long-gap names "
               "predicted.\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
