// Lesson 14: rules per head, and the course's answer
//
// Beyond the blog. Lesson 13 moved the budget between layers and heads; every head still kept
// tokens by H2O's rule. FastGen (Ge et al., ICLR 2024, "Model Tells You What to Discard") gives
// each KV head its own rule: it profiles the head while the prompt is read and gives it the
// cheapest of four rules that recovers a target share T of its attention: the last r tokens
// (window), BOS and the last r (sink+window), H2O's heavy hitters and the last r (heavy+window),
// or every token (full). Its bytes are an outcome of its rules, so the window weighed against it
// gets, story by story, the tokens FastGen held and its start.
// The course's answer comes first (report/course_answer.hpp): where H2O wins against the window
// on this model, where it loses and why (each head's kind), what rules per head change, each
// with its number and 95% interval (measure/verdict.hpp) or a pointer to the step that has it.
// Then the steps behind it:
//   Step 1  the model and the stories;
//   Step 2  FastGen's choice written out from each head's profile (its window r sized by the
//           budget) and checked against the library's FastGenPolicy; beside it each head's kind
//           by the one definition every program uses (head_profile.hpp's kKindSizes: a head is
//           local when its last 16 tokens hold at least half its attention and twice what its 16
//           heavy hitters get, over the story's first 256 tokens, as lesson 10 and the explorer);
//   Step 3  FastGen at each target against the window at its bytes, every story.
// From the library: the profiles (policy/head_profile.hpp, measure/prompt_profile.hpp), the
// policies (policy/policy_factory.hpp), the runs (measure/policy_sweep.hpp).
//
// Dimension legend: L = layers, G = KV heads of a layer, T = FastGen's targets.
#include <algorithm>
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
#include "h2o/base/output_file.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/prompt_profile.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/report/course_answer.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"

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

// FastGen at one target, and the window at the bytes it held, story by story (step 3).
struct RulesRuns {
  int target = 0;         // T, percent
  h2o::SweepRun fastgen;  // FastGen at T
  h2o::SweepRun window;   // the window at FastGen's bytes
};
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("14_rules_per_head",
                      "Lesson 14: FastGen's rules per head against the window at its bytes, and "
                      "the course's answer.");
  h2o::add_model_options(args);
  h2o::add_stories_options(args, "12")
      .add_option("budget", "PERCENT", "10", "tokens each policy keeps, percent of each story")
      .add_option("targets", "LIST", "50,70,90", "FastGen's targets T, percent of attention");
  h2o::add_names_option(args).add_output("pictures", "DIR", "",
                                         "write perplexity against bytes as SVG into this folder");
  args.parse(argc, argv);
  const std::string pictures = args.text("pictures");
  if (!pictures.empty()) h2o::make_output_folder(pictures, "--pictures");
  const int percent = static_cast<int>(args.integer("budget", 1, 99));
  const std::vector<int> targets = h2o::parse_percent_list("targets", args.text("targets"));

  // The model and the stories.
  const h2o::ModelAndStories loaded = h2o::load_model_and_stories(args);  // names > 64 back
  const h2o::ModelFiles& files = loaded.files;
  const auto& weights = loaded.weights;  // (shared by every run's decoder)
  const h2o::TokenisedStories& read = loaded.read;
  const h2o::SweepText& text = loaded.text;

  // FastGen reads the first story, profiling every KV head over its first tokens (its prompt)
  // with its own window r, then keeps each head's rule (at the last target); each layer's
  // FastGenPolicy holds that layer's profiles and rules. Beside them each head's kind (kKindSizes).
  const std::vector<int>& first = read.stories.front();
  const std::size_t n = first.size();
  const std::size_t budget = h2o::tokens_for_percent(n, percent);
  h2o::PolicySettings settings = h2o::settings_for_budget("fastgen", budget);
  settings.fastgen.target = targets.back() / 100.0;
  h2o::Decoder decoder(weights, h2o::make_policy("fastgen", settings), n);
  for (int token : first) decoder.forward(token);
  const auto fastgen_layer = [&](std::size_t l) -> const h2o::FastGenPolicy& {
    return dynamic_cast<const h2o::FastGenPolicy&>(decoder.layer_policy(l));
  };
  const std::vector<std::vector<h2o::HeadProfile>> kinds =  // (L,) x (G,) as lesson 10's
      h2o::profile_text_heads(weights, first, h2o::kKindSizes);

  // Every story: the full cache first (the reference), H2O and the window at the one budget,
  // and FastGen at each target beside the window given, story by story, the tokens it held.
  const h2o::SweepRun full = h2o::read_full_cache(weights, text);
  const bool beyond = h2o::beyond_model(full.bits_per_byte());  // no verdict from noise
  const auto checked = [](h2o::SweepRun run) {
    if (!run.refused.empty()) throw std::runtime_error(run.refused);
    return run;
  };
  h2o::SweepRun h2o_run, window;
  std::vector<RulesRuns> rules;  // (T,)
  if (!beyond) {
    h2o_run = checked(h2o::read_stories(weights, text, {"h2o", "h2o"}, {percent, 0}, &full));
    window = checked(h2o::read_stories(weights, text, {"window", "window"}, {percent, 0}, &full));
    for (int t : targets) {
      h2o::SweepPolicy policy{"fastgen", "fastgen"};
      policy.settings.fastgen.target = t / 100.0;
      RulesRuns at{t, checked(h2o::read_stories(weights, text, policy, {percent, 0}, &full)), {}};
      at.window = checked(
          h2o::read_at_equal_bytes(weights, text, {"window", "window"}, at.fastgen, &full));
      rules.push_back(std::move(at));
    }
  }

  // The answer (report/course_answer.hpp), from the runs and the heads' kinds.
  std::cout << "Lesson 14: rules per head, and the course's answer (beyond the blog)\n\n";
  if (beyond) {
    std::cout << h2o::beyond_model_warning(full.bits_per_byte()) << "\n";
  } else {
    h2o::CourseAnswer answer;
    answer.stories = read.counted(), answer.percent = percent, answer.full = &full;
    answer.h2o = &h2o_run, answer.window = &window, answer.profiles = kinds;
    for (const RulesRuns& at : rules)
      answer.rules.push_back({at.target / 100.0, &at.fastgen, &at.window});
    answer.old = h2o::old_heavy_hitters(h2o_run.kept_at_end, n,
                                        h2o::settings_for_budget("h2o", budget).recent);
    std::cout << "The answer (details in steps 1-3 below)\n"
              << h2o::course_answer_text(answer, 100, "  ") << "\n";
    if (!pictures.empty()) {
      h2o::write_course_answer_picture(pictures, answer,
                                       "14_rules_per_head --pictures " + pictures);
      std::cout << "Pictures written to " << pictures << "\n\n";
    }
  }

  // Step 1: the model and the stories.
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << read.counted() << " of "
            << std::filesystem::path(args.text("text")).filename().string() << " (" << read.total
            << " tokens);\n        every policy keeps " << percent
            << "% of each story's tokens.\n";

  // Step 2: FastGen's profiles, its rules at each target by hand, and each head's kind.
  const h2o::HeadProfileOptions& sizes = fastgen_layer(0).sizes();
  std::cout << "\nStep 2: each KV head's share of attention each rule recovers over the first "
            << fastgen_layer(0).profile_tokens() << " tokens of story 1\n        (r = "
            << sizes.recent << " recent, k = " << sizes.heavy << " heavy hitters, s = "
            << sizes.sinks << " sink), the cheapest rule that recovers T,\n        and its kind "
            << "(lesson 10's: local when its last " << h2o::kKindSizes.recent
            << " tokens hold at least half its attention\n        and twice what its "
            << h2o::kKindSizes.heavy << " heavy hitters get, over the story's first "
            << std::min(n, h2o::kProfiledTokens) << " tokens):\n";
  std::vector<std::string> titles = {"layer", "KV head", "window", "sink+window", "heavy+window",
                                     "kind"};
  for (int t : targets) titles.push_back("T = " + std::to_string(t) + "%");
  h2o::Table table(titles);
  bool same = true;
  for (std::size_t l = 0; l < weights->config.n_layers; ++l) {
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
  table.print(std::cout);
  std::cout << "  FastGenPolicy chose the same rule for every head at T = " << targets.back()
            << "%: " << (same ? "yes" : "NO") << ".\n  Tokens kept: window " << sizes.recent
            << ", sink+window " << sizes.sinks + sizes.recent << ", heavy+window "
            << sizes.heavy + sizes.recent << ", full: all.\n";
  if (beyond) {
    std::cout << "\nThe rest is left out.\n";
    return 0;
  }

  // Step 3: FastGen at each target against the window at the bytes it held.
  std::cout << "\nStep 3: every story, the full cache's perplexity "
            << fixed(full.perplexity(), 3) << ": FastGen at each target against the window\n"
            << "        at the bytes FastGen held and from its start, story by story\n"
            << (args.given("names") ? ""
                                    : h2o::no_capitals_note(read.texts, full.name_events,
                                                            "        "));
  h2o::Table results({"FastGen", "KV bytes", "vs full", "vs window", "95% interval", "verdict",
                      "names"});
  for (const RulesRuns& at : rules) {
    const h2o::PerplexityDifference d = h2o::difference(at.fastgen, at.window);
    results.row("T = " + std::to_string(at.target) + "%",
                fixed(100.0 * at.fastgen.stories_kv_bytes / full.stories_kv_bytes, 1) + "%",
                h2o::signed_percent(at.fastgen.perplexity() / full.perplexity() - 1),
                h2o::signed_percent(d.change),
                h2o::signed_percent(d.low) + " to " + h2o::signed_percent(d.high),
                h2o::verdict_word(h2o::verdict_of(d)),
                full.name_events == 0 ? "-"
                                      : std::to_string(at.fastgen.names_correct) + " vs " +
                                            std::to_string(at.window.names_correct));
  }
  results.print(std::cout);
  std::cout << "  KV bytes: of the full cache's, at each story's end; names: "
            << (full.name_events == 0 ? "no long-gap name to count.\n"
                                      : "of the " + std::to_string(full.name_events) +
                                            " long-gap names,\n  those FastGen and the window "
                                            "predicted.\n");
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
