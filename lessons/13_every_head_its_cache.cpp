// Lesson 13: every head its own cache
//
// Beyond the blog. Lessons 09-12 gave every layer and KV head the same budget and the same rule.
// FastGen (Ge et al., ICLR 2024, "Model Tells You What to Discard") profiles each KV head while
// the prompt is read and gives it the cheapest of four rules that recovers a target share T of
// its attention: the last r tokens (window), BOS and the last r (sink+window), H2O's heavy
// hitters and the last r (heavy+window), or every token (full). New here: that choice, written
// out from each head's profile and checked against the library's FastGenPolicy (step 2), and a
// comparison at equal bytes: FastGen's bytes are an outcome of its rules, so the window it is
// weighed against gets, story by story, the tokens FastGen held and its start (step 3). Then the
// course's answer in one paragraph (step 4): where H2O wins on this model, where it loses, what
// budgets and rules per head change, each with its number and 95% interval (verdict.hpp). From the
// library: the profile (policy/head_profile.hpp), the policies (policy/policy_factory.hpp), the
// runs (measure/policy_sweep.hpp).
//
// Dimension legend: K = stories, L = layers, G = KV heads of a layer, r = recent window.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
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
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/report/course_answer.hpp"
#include "h2o/report/table.hpp"
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

// One row of step 4: `run` against the window `window` (same bytes), both against `full`.
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
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << counted << " of " << std::filesystem::path(args.text("text")).filename().string()
            << " (" << read.total << " tokens);\n        every policy keeps " << percent
            << "% of each story's tokens.\n\n";

  // Step 2: FastGen reads the first story, profiling every KV head over its first P tokens
  // (its prompt), and then keeps each head's rule. Its profiles, and its rules at each target.
  const std::vector<int>& first = read.stories.front();
  const std::size_t budget = h2o::tokens_for_percent(first.size(), percent);
  h2o::PolicySettings settings = h2o::settings_for_budget("fastgen", budget);
  settings.fastgen_target = targets.back() / 100.0;
  std::unique_ptr<h2o::CachePolicy> owned = h2o::make_policy("fastgen", settings);
  const auto& fastgen = dynamic_cast<const h2o::FastGenPolicy&>(*owned);
  h2o::Decoder decoder(weights, std::move(owned), first.size());
  for (int token : first) decoder.forward(token);
  const h2o::HeadProfileOptions& sizes = fastgen.sizes();
  std::cout << "Step 2: each KV head's share of attention each rule recovers over the first "
            << fastgen.profile_tokens() << " tokens of story 1\n        (r = " << sizes.recent
            << " recent, k = " << sizes.heavy << " heavy hitters, s = " << sizes.sinks
            << " sink) and the cheapest rule that recovers T:\n";
  std::vector<std::string> titles = {"layer", "KV head", "window", "sink+window", "heavy+window",
                                     "kind"};
  for (int t : targets) titles.push_back("T = " + std::to_string(t) + "%");
  h2o::Table table(titles);
  std::vector<std::vector<h2o::HeadProfile>> profiles;  // (L,) x (G,)
  bool same = true;
  for (std::size_t l = 0; l < weights->config.n_layers; ++l) {
    profiles.push_back(fastgen.profiles(l));
    for (const h2o::HeadProfile& p : profiles.back()) {
      std::vector<std::string> row = {std::to_string(l), std::to_string(p.kv_head)};
      for (HeadRule rule : {HeadRule::Window, HeadRule::SinkWindow, HeadRule::HeavyWindow})
        row.push_back(fixed(100 * p.recovered_by(rule), 1) + "%");
      row.push_back(h2o::to_string(p.kind));
      for (int t : targets) row.push_back(h2o::to_string(cheapest_rule_by_hand(p, t / 100.0)));
      table.add(row);
      same = same && cheapest_rule_by_hand(p, settings.fastgen_target) ==
                         fastgen.rules(l).at(p.kv_head);
    }
  }
  table.print(std::cout);
  std::cout << "  FastGenPolicy chose the same rule for every head at T = " << targets.back()
            << "%: " << (same ? "yes" : "NO") << ".\n  Tokens kept: window " << sizes.recent
            << ", sink+window " << sizes.sinks + sizes.recent << ", heavy+window "
            << sizes.heavy + sizes.recent << ", full: all.\n\n";

  // Step 3: every story, the full cache first (the reference), then one budget for every layer
  // and head (h2o, the window), budgets per layer (pyramid) and per head (adakv), and FastGen.
  const h2o::SweepRun full = h2o::read_full_cache(weights, text);
  if (h2o::beyond_model(full.bits_per_byte())) {
    std::cout << h2o::beyond_model_warning(full.bits_per_byte()) << "  The rest is left out.\n";
    return 0;
  }
  std::vector<h2o::SweepRun> runs;
  for (const char* name : {"h2o", "window", "pyramid", "adakv"}) {
    runs.push_back(h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full));
  }
  // A prompt cut once (lesson 11's step 6): half the shortest story read, then cut.
  h2o::SweepOptions cut;
  cut.compressed_prompt = first.size() / 2;
  for (const auto& story : read.stories)
    cut.compressed_prompt = std::min(cut.compressed_prompt, story.size() / 2);
  for (const char* name : {"h2o", "window"}) {
    runs.push_back(h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full, cut));
  }

  // FastGen at each target, and the window given, story by story, the tokens FastGen held.
  for (int t : targets) {
    h2o::SweepPolicy policy{"fastgen", "fastgen"};
    policy.settings.fastgen_target = t / 100.0;
    runs.push_back(h2o::read_stories(weights, text, policy, {percent, 0}, &full));
    runs.push_back(h2o::read_at_equal_bytes(weights, text, {"window", "window"}, runs.back(),
                                            &full));
  }
  for (const h2o::SweepRun& run : runs)
    if (!run.refused.empty()) throw std::runtime_error(run.refused);
  std::cout << "Step 3: " << counted << " at " << percent << "%, the full cache's perplexity "
            << fixed(full.perplexity(), 3) << ", "
            << (full.name_events == 0 ? std::string("no long-gap name to count")
                                      : "long-gap names " + std::to_string(full.names_correct) +
                                            "/" + std::to_string(full.name_events))
            << ":\n        each policy against the window at the"
            << " same KV bytes (its prompt cut once where\n        it is; at FastGen's bytes, "
               "story by story)\n"
            << (args.given("names") ? "" : h2o::no_capitals_note(read.texts, full.name_events,
                                                                  "        "));
  h2o::Table results({"policy", "KV bytes", "vs full", "vs window", "95% interval", "verdict",
                      "names"});
  add_row(results, "window", runs[1], runs[1], full);
  add_row(results, "h2o", runs[0], runs[1], full);
  add_row(results, "pyramid", runs[2], runs[1], full);
  add_row(results, "adakv", runs[3], runs[1], full);
  add_row(results, "h2o, prompt cut", runs[4], runs[5], full);
  for (std::size_t i = 0; i < targets.size(); ++i) {
    add_row(results, "fastgen T = " + std::to_string(targets[i]) + "%", runs[6 + 2 * i],
            runs[7 + 2 * i], full);
  }
  results.print(std::cout);
  std::cout << "  KV bytes: of the full cache's, at each story's end; names: long-gap names "
               "predicted.\n\n";

  // Step 4: the answer (report/course_answer.hpp), from the runs and the profiles of step 2.
  h2o::CourseAnswer answer;
  answer.stories = counted, answer.percent = percent, answer.full = &full;
  answer.h2o = &runs[0], answer.window = &runs[1], answer.pyramid = &runs[2];
  answer.adakv = &runs[3], answer.h2o_cut = &runs[4], answer.window_cut = &runs[5];
  answer.prompt = cut.compressed_prompt;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    answer.rules.push_back({targets[i] / 100.0, &runs[6 + 2 * i], &runs[7 + 2 * i]});
  }
  answer.profiles = profiles, answer.sizes = sizes;
  answer.old = h2o::old_heavy_hitters(runs[0].kept_at_end, first.size(),
                                      h2o::settings_for_budget("h2o", budget).recent);
  std::cout << "Step 4: the answer\n" << h2o::course_answer_text(answer, 100, "  ");
  if (!pictures.empty()) {
    h2o::write_course_answer_picture(pictures, answer, "13_every_head_its_cache --pictures " +
                                                           pictures);
    std::cout << "\nPictures written to " << pictures << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
