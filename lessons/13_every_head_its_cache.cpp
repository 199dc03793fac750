// Lesson 13: every head its own cache
//
// Beyond the blog. Lessons 09-12 gave every layer and KV head the same budget and the same rule.
// Three papers give them their own: FastGen (Ge et al., ICLR 2024, "Model Tells You What to
// Discard") profiles each KV head while the prompt is read and gives it the cheapest of four
// rules that recovers a target share T of its attention: the last r tokens (window), BOS and the
// last r (sink+window), H2O's heavy hitters and the last r (heavy+window), or every token (full);
// PyramidKV gives deeper layers fewer tokens, Ada-KV lets a layer's heads share its heavy hitters.
// The course's answer comes first (report/course_answer.hpp): where H2O wins on this model,
// where it loses, what budgets and rules per head change, each with its number and 95% interval
// (verdict.hpp), each said only as far as those numbers carry it. Then the steps behind it:
//   Step 1  the model and the stories;
//   Step 2  FastGen's choice written out from each head's profile (its window r sized by the
//           budget) and checked against the library's FastGenPolicy; beside it each head's kind
//           by the one definition every program uses (head_profile.hpp's kKindSizes: a head is
//           local when its last 16 tokens hold at least half its attention and twice what its 16
//           heavy hitters get, over the story's first 256 tokens, as lesson 10 and the explorer);
//   Step 3  PyramidKV's budget per layer written out (a line, rounded to whole tokens) and
//           checked against each layer's PyramidKVPolicy (its keep());
//   Step 4  Ada-KV's budget per KV head written out (floor, most, the layer's total) and checked
//           against AdaKVPolicy and against the heads of a cache that read story 1;
//   Step 5  every policy against the window at the same KV bytes: FastGen's bytes are an outcome
//           of its rules, so the window weighed against it gets, story by story, the tokens
//           FastGen held and its start.
// From the library: the profiles (policy/head_profile.hpp, measure/prompt_profile.hpp), the
// policies (policy/policy_factory.hpp), the runs (measure/policy_sweep.hpp).
//
// Dimension legend: K = stories, L = layers, G = KV heads of a layer, r = recent window,
// m = heavy hitters per layer and KV head on average.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/prompt_profile.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/adakv_policy.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/policy/pyramid_policy.hpp"
#include "h2o/report/course_answer.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;
using h2o::HeadRule;

namespace {
// Step 2: FastGen's choice for one head, written out: the rules cheapest first, the first that
// recovers at least `target` of the head's attention in the profile; full when none does.
HeadRule cheapest_rule_by_hand(const h2o::HeadProfile& profile, double target) {
  for (HeadRule rule : {HeadRule::Window, HeadRule::SinkWindow, HeadRule::HeavyWindow}) {
    if (profile.recovered_by(rule) >= target) return rule;
  }
  return HeadRule::Full;
}

// Step 3: PyramidKV's heavy hitters per layer, written out. A straight line from
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

// Step 5: every run of the lesson, by name.
struct RulesRuns {
  int target = 0;         // T, percent
  h2o::SweepRun fastgen;  // FastGen at T
  h2o::SweepRun window;   // the window at FastGen's bytes, story by story
};
struct Runs {
  h2o::SweepRun h2o, window, pyramid, adakv;  // every policy at the one budget
  h2o::SweepRun h2o_cut, window_cut;          // the same, a prompt cut once
  std::vector<RulesRuns> rules;               // (T,)
};

// One row of step 5: `run` against the window `window` (same bytes), both against `full`.
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
  h2o::ArgParser args("13_every_head_its_cache",
                      "Lesson 13: every head its own cache: FastGen's rules per head, budgets per "
                      "layer and head, and the course's answer.");
  h2o::add_model_options(args);
  h2o::add_stories_options(args, "12")
      .add_option("budget", "PERCENT", "10", "tokens each policy keeps, percent of each story")
      .add_option("targets", "LIST", "50,70,90", "FastGen's targets T, percent of attention");
  h2o::add_names_option(args).add_option("pictures", "DIR", "",
                                         "write perplexity against bytes as SVG into this folder");
  args.parse(argc, argv);
  const std::string pictures = args.text("pictures");
  if (!pictures.empty()) h2o::make_output_folder(pictures, "--pictures");
  const int percent = static_cast<int>(args.integer("budget", 1, 99));
  const std::vector<int> targets = h2o::parse_percent_list("targets", args.text("targets"));
  std::cout << "Lesson 13: every head its own cache (beyond the blog)\n\n";
  std::ostringstream steps;  // printed after the answer

  // Step 1: the model and the stories.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::Tokenizer tokenizer =
      h2o::Tokenizer::load(files.tokenizer, weights->config.vocab_size);
  const h2o::TokenisedStories read =
      h2o::read_stories_options(args, tokenizer, 16, weights->config.seq_len);
  const std::string counted = read.counted();
  const h2o::SweepText text = h2o::sweep_text(  // name recall: names last seen > 64 tokens back
      tokenizer, read.stories,
      h2o::names_as_tokens(tokenizer, h2o::names_from_options(args, read.texts)), 64);
  const std::size_t L = weights->config.n_layers, G = weights->config.n_kv_heads;
  steps << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
        << counted << " of " << std::filesystem::path(args.text("text")).filename().string() << " ("
        << read.total << " tokens);\n        every policy keeps " << percent
        << "% of each story's tokens.\n";

  // Step 2: FastGen reads the first story, profiling every KV head over its first P tokens
  // (its prompt) with its own window r, and then keeps each head's rule. Its profiles, its rules
  // at each target by hand, and each head's kind by the one definition (kKindSizes).
  const std::vector<int>& first = read.stories.front();
  const std::size_t n = first.size();
  const std::size_t budget = h2o::tokens_for_percent(n, percent);
  h2o::PolicySettings settings = h2o::settings_for_budget("fastgen", budget);
  settings.fastgen.target = targets.back() / 100.0;
  h2o::Decoder decoder(weights, h2o::make_policy("fastgen", settings), n);
  for (int token : first) decoder.forward(token);
  // Each layer's FastGen object holds that layer's profiles and rules.
  const auto fastgen_layer = [&](std::size_t l) -> const h2o::FastGenPolicy& {
    return dynamic_cast<const h2o::FastGenPolicy&>(decoder.layer_policy(l));
  };
  const h2o::FastGenPolicy& fastgen = fastgen_layer(0);
  const h2o::HeadProfileOptions& sizes = fastgen.sizes();
  const std::vector<std::vector<h2o::HeadProfile>> kinds =  // (L,) x (G,) as lesson 10's
      h2o::profile_text_heads(weights, first, h2o::kKindSizes);
  steps << "\nStep 2: each KV head's share of attention each rule recovers over the first "
        << fastgen.profile_tokens() << " tokens of story 1\n        (r = " << sizes.recent
        << " recent, k = " << sizes.heavy << " heavy hitters, s = " << sizes.sinks
        << " sink), the cheapest rule that recovers T,\n        and its kind (lesson 10's: "
        << "local when its last " << h2o::kKindSizes.recent << " tokens hold at least half its "
        << "attention\n        and twice what its " << h2o::kKindSizes.heavy
        << " heavy hitters get, over the story's first " << std::min(n, h2o::kProfiledTokens)
        << " tokens):\n";
  std::vector<std::string> titles = {"layer", "KV head", "window", "sink+window", "heavy+window",
                                     "kind"};
  for (int t : targets) titles.push_back("T = " + std::to_string(t) + "%");
  h2o::Table table(titles);
  bool same = true;
  for (std::size_t l = 0; l < L; ++l) {
    for (const h2o::HeadProfile& p : fastgen_layer(l).profiles()) {
      std::vector<std::string> row = {std::to_string(l), std::to_string(p.kv_head)};
      for (HeadRule rule : {HeadRule::Window, HeadRule::SinkWindow, HeadRule::HeavyWindow})
        row.push_back(fixed(100 * p.recovered_by(rule), 1) + "%");
      row.push_back(h2o::to_string(kinds.at(l).at(p.kv_head).kind));
      for (int t : targets) row.push_back(h2o::to_string(cheapest_rule_by_hand(p, t / 100.0)));
      table.add(row);
      same = same && cheapest_rule_by_hand(p, settings.fastgen.target) ==
                         fastgen_layer(l).rules().at(p.kv_head);
    }
  }
  table.print(steps);
  steps << "  FastGenPolicy chose the same rule for every head at T = " << targets.back()
        << "%: " << yes_no(same) << ".\n  Tokens kept: window " << sizes.recent << ", sink+window "
        << sizes.sinks + sizes.recent << ", heavy+window " << sizes.heavy + sizes.recent
        << ", full: all.\n";

  // Step 3: PyramidKV's budget per layer for story 1, by hand, beside PyramidKVPolicy's.
  const h2o::PolicySettings even = h2o::settings_for_budget("pyramid", budget);
  const std::size_t m = even.heavy, r = even.recent;
  const double beta = h2o::PyramidKVPolicy::kPaperBeta;
  const PyramidLine line = pyramid_by_hand(m, L, beta, n > r ? n - r : 0);
  steps << "\nStep 3: budgets per layer (PyramidKV) for story 1: every layer keeps the last " << r
        << " tokens and\n        heavy hitters on a line from 2m - m/" << fixed(beta, 0)
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
  layers.print(steps);
  steps << "  Together " << pyramid_total << " tokens per KV head, H2O's " << L << " x "
        << std::min(r + m, n) << " = " << L * std::min(r + m, n)
        << "; the library's budgets the same: " << yes_no(pyramid_same) << ".\n";

  // Step 4: Ada-KV's budget per KV head: each head its window and a floor f of heavy hitters,
  // the layer's other heavy slots to the best scores of any head. Written out, then checked
  // against AdaKVPolicy and against the heads of a cache that read story 1.
  const h2o::PolicySettings shared = h2o::settings_for_budget("adakv", budget);
  const std::size_t f = static_cast<std::size_t>(static_cast<double>(shared.heavy) *
                                                 h2o::AdaKVPolicy::kPaperSafeguard);
  const std::size_t fewest = shared.recent + f;
  const std::size_t most = shared.recent + G * shared.heavy - (G - 1) * f;
  const std::size_t layer_total = G * (shared.recent + shared.heavy);
  h2o::Decoder shared_reader(weights, h2o::make_policy("adakv", shared), n);
  const auto& adakv = dynamic_cast<const h2o::AdaKVPolicy&>(shared_reader.layer_policy(0));
  const bool adakv_same =
      adakv.floor_per_head() == f && adakv.head_capacity() == std::min(most, n);
  for (int token : first) shared_reader.forward(token);
  steps << "\nStep 4: budgets per KV head (Ada-KV) for story 1: each head keeps the last "
        << shared.recent << " and at least\n        f = floor(0.2 x " << shared.heavy << ") = " << f
        << " heavy hitters (" << fewest << " tokens); the layer's other " << G << " x "
        << shared.heavy << " - " << G << " x " << f << "\n        heavy slots go to the best "
        << "scores of any head, so one head holds at most\n        " << shared.recent << " + " << G
        << " x " << shared.heavy << " - " << G - 1 << " x " << f << " = " << most << ", a layer "
        << G << " x " << shared.recent + shared.heavy << " = " << layer_total
        << ". The heads at the end of story 1:\n";
  std::vector<std::string> head_titles = {"layer"};
  for (std::size_t g = 0; g < G; ++g) head_titles.push_back("head " + std::to_string(g));
  head_titles.push_back("layer total");
  h2o::Table heads(head_titles);
  bool heads_within = true;
  for (std::size_t l = 0; l < L; ++l) {
    std::vector<std::string> row = {std::to_string(l)};
    std::size_t total = 0;
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t held = shared_reader.cache(l).size(g);
      heads_within = heads_within && held >= std::min(fewest, n) && held <= std::min(most, n);
      total += held;
      row.push_back(std::to_string(held));
    }
    heads_within = heads_within && total == std::min(layer_total, G * n);
    row.push_back(std::to_string(total));
    heads.add(row);
  }
  heads.print(steps);
  steps << "  AdaKVPolicy's floor and most the same: " << yes_no(adakv_same)
        << "; every head within " << fewest << " to " << most << ", every layer " << layer_total
        << ": " << yes_no(heads_within) << ".\n";

  // Step 5: every story, the full cache first (the reference), then one budget for every layer
  // and head (h2o, the window), budgets per layer (pyramid) and per head (adakv), and FastGen.
  const h2o::SweepRun full = h2o::read_full_cache(weights, text);
  if (h2o::beyond_model(full.bits_per_byte())) {
    std::cout << steps.str() << "\n"
              << h2o::beyond_model_warning(full.bits_per_byte()) << "  The rest is left out.\n";
    return 0;
  }
  const auto one_budget = [&](const char* name, const h2o::SweepOptions& options) {
    return h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full, options);
  };
  // A prompt cut once (lesson 11's step 6): half the shortest story read, then cut.
  h2o::SweepOptions cut;
  cut.compressed_prompt = n / 2;
  for (const auto& story : read.stories)
    cut.compressed_prompt = std::min(cut.compressed_prompt, story.size() / 2);
  Runs runs{one_budget("h2o", {}),
            one_budget("window", {}),
            one_budget("pyramid", {}),
            one_budget("adakv", {}),
            one_budget("h2o", cut),
            one_budget("window", cut),
            {}};
  // FastGen at each target, and the window given, story by story, the tokens FastGen held.
  for (int t : targets) {
    h2o::SweepPolicy policy{"fastgen", "fastgen"};
    policy.settings.fastgen.target = t / 100.0;
    RulesRuns rules{t, h2o::read_stories(weights, text, policy, {percent, 0}, &full), {}};
    rules.window =
        h2o::read_at_equal_bytes(weights, text, {"window", "window"}, rules.fastgen, &full);
    runs.rules.push_back(std::move(rules));
  }
  std::vector<const h2o::SweepRun*> every = {&runs.h2o,   &runs.window,  &runs.pyramid,
                                             &runs.adakv, &runs.h2o_cut, &runs.window_cut};
  for (const RulesRuns& rules : runs.rules) every.push_back(&rules.fastgen);
  for (const RulesRuns& rules : runs.rules) every.push_back(&rules.window);
  for (const h2o::SweepRun* run : every)
    if (!run->refused.empty()) throw std::runtime_error(run->refused);
  steps << "\nStep 5: " << counted << " at " << percent << "%, the full cache's perplexity "
        << fixed(full.perplexity(), 3) << ", "
        << (full.name_events == 0 ? std::string("no long-gap name to count")
                                  : "long-gap names " + std::to_string(full.names_correct) + "/" +
                                        std::to_string(full.name_events))
        << ":\n        each policy against the window at the same KV bytes (its prompt cut once "
           "where\n        it is; at FastGen's bytes, story by story)\n"
        << (args.given("names") ? "" : h2o::no_capitals_note(read.texts, full.name_events,
                                                              "        "));
  h2o::Table results({"policy", "KV bytes", "vs full", "vs window", "95% interval", "verdict",
                      "names"});
  add_row(results, "window", runs.window, runs.window, full);
  add_row(results, "h2o", runs.h2o, runs.window, full);
  add_row(results, "pyramid", runs.pyramid, runs.window, full);
  add_row(results, "adakv", runs.adakv, runs.window, full);
  add_row(results, "h2o, prompt cut", runs.h2o_cut, runs.window_cut, full);
  for (const RulesRuns& rules : runs.rules) {
    add_row(results, "fastgen T = " + std::to_string(rules.target) + "%", rules.fastgen,
            rules.window, full);
  }
  results.print(steps);
  steps << "  KV bytes: of the full cache's, at each story's end; names: long-gap names "
           "predicted.\n";

  // The answer (report/course_answer.hpp), from the runs and the heads' kinds of step 2.
  h2o::CourseAnswer answer;
  answer.stories = counted, answer.percent = percent, answer.full = &full;
  answer.h2o = &runs.h2o, answer.window = &runs.window, answer.pyramid = &runs.pyramid;
  answer.adakv = &runs.adakv, answer.h2o_cut = &runs.h2o_cut;
  answer.window_cut = &runs.window_cut, answer.prompt = cut.compressed_prompt;
  for (const RulesRuns& rules : runs.rules) {
    answer.rules.push_back({rules.target / 100.0, &rules.fastgen, &rules.window});
  }
  answer.profiles = kinds;
  answer.old = h2o::old_heavy_hitters(runs.h2o.kept_at_end, n,
                                      h2o::settings_for_budget("h2o", budget).recent);
  std::cout << "The answer (details in steps 1-5 below)\n"
            << h2o::course_answer_text(answer, 100, "  ") << "\n"
            << steps.str();
  if (!pictures.empty()) {
    h2o::write_course_answer_picture(pictures, answer, "13_every_head_its_cache --pictures " +
                                                           pictures);
    std::cout << "\nPictures written to " << pictures << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
