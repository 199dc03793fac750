// Lesson 11: how much cache do we need?
//
// Beyond the blog. The H2O paper claims that keeping about 20% of the cache - heavy hitters plus
// recent tokens - keeps a model's quality close to the full cache, while a plain window of the same
// size loses much more. This lesson sweeps the budget from 2% to 100% of a long story for every
// policy the library's factory knows (measure/policy_sweep.hpp: teacher forcing, perplexity, bits
// per byte, KL, top-1 agreement, name recall), and reads the answer off the sweep first: the
// smallest budget each policy needs, and whether H2O beats the window by more than noise (a 95%
// interval, measure/verdict.hpp). Then the variants of H2O's score (summed, averaged or decayed,
// a protected start area, a tenth of the budget heavy instead of half; TOVA per KV head), the
// numbers, and prompt-time against token-by-token eviction (the paper's code cuts a whole prompt
// once; the decoder here can also evict from the first token).
// --csv PATH writes the sweep's numbers; --pictures DIR draws one chart per measure.
// A text the model does not know (bits_per_byte.hpp) gets one warning and the numbers, no verdict.
//
// Dimension legend: N = tokens of the text, P = policies, B = budgets.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/policy_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/prompt_time.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/report/sweep_report.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"

using h2o::fixed;

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("11_how_much_cache",
                      "Lesson 11: how much cache do we need? Every policy at budgets from 2% to "
                      "100% of a story.");
  h2o::add_model_options(args);
  h2o::add_text_option(args);
  h2o::add_names_option(args)
      .add_option("budgets", "LIST", "2,5,10,20,30,50,100", "budgets, percent of the text")
      .add_option("name-gap", "N", "64", "name recall counts names last seen > N tokens back")
      .add_option("prompts", "LIST", "25,50,75", "Step 6's prompt lengths, percent of the text")
      .add_option("prompt-budget", "PERCENT", "10", "Step 6's cache budget, percent of the text")
      .add_output("csv", "PATH", "", "write the sweep's numbers as CSV to this file")
      .add_output("pictures", "DIR", "", "write one SVG chart per measure into this folder");
  args.parse(argc, argv);
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  const auto min_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
  const std::vector<int> prompt_percents = h2o::parse_percent_list("prompts", args.text("prompts"));
  const auto prompt_percent = static_cast<int>(args.integer("prompt-budget", 1, 100));
  // The output paths are checked before the work; the files are written only at the end, all
  // or none (base/output_file.hpp), so a run that fails leaves nothing half-written behind.
  const std::string csv_path = args.text("csv"), pictures = args.text("pictures");
  if (!csv_path.empty()) h2o::check_output_path(csv_path, "the CSV file");
  if (!pictures.empty()) h2o::make_output_folder(pictures, "--pictures");
  std::cout << "Lesson 11: how much cache do we need? (beyond the blog)\n\n";

  // Step 1: the model, the story (the first of the file, whole) and its long-gap names.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::Tokenizer tokenizer =
      h2o::Tokenizer::load(files.tokenizer, weights->config.vocab_size);
  const h2o::StoryTokens story = h2o::read_story(args, tokenizer, 16, weights->config.seq_len);
  const h2o::SweepText text = h2o::sweep_text(
      tokenizer, {story.tokens},
      h2o::names_as_tokens(tokenizer, h2o::names_from_options(args, {story.text})), min_gap);
  const std::vector<int>& tokens = story.tokens;
  const std::size_t n = tokens.size();
  const std::vector<h2o::NameMention> long_gap =
      h2o::long_gap_mentions(tokens, text.names, min_gap);
  const std::size_t counted = long_gap.size();
  const std::string file_name = std::filesystem::path(args.text("text")).filename().string();
  std::cout << h2o::reading_summary(file_name, 1, story.stories_in_file, story.paragraphs, n,
                                    counted, min_gap)
            << "\n\nStep 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << n << " tokens of " << file_name << "; " << counted
            << " times the next token is a name\n        last seen more than " << min_gap
            << " tokens back (name recall counts those).\n"
            << h2o::name_use_notes(text.names, {tokens}, "        ");

  // Step 2: the sweep. Every evicting policy of the factory, each with its paper's scoring, and
  // the variants right after their policy: H2O's sums per step in the cache (OpenVINO's
  // normalised sum), decayed every step (A2SF's forgetting factor) and with the first positions
  // protected, and TOVA scoring each KV head alone.
  const std::vector<h2o::SweepPolicy> variants = h2o::score_variants();
  const std::vector<h2o::SweepPolicy> contenders =
      h2o::with_variants(h2o::evicting_policies(), variants);
  h2o::SweepOptions with_kl;
  with_kl.kl = true;  // the full cache keeps its distributions, so every run measures KL
  const h2o::PolicySweep sweep = h2o::sweep_policies(weights, text, contenders, percents, with_kl);
  const h2o::SweepRun& full = sweep.full;
  std::cout << "Step 2: the full cache: perplexity " << fixed(full.perplexity(), 3) << " ("
            << fixed(full.bits_per_byte(), 3) << " bits per byte), name recall "
            << (counted > 0 ? fixed(100 * full.recall(), 1) + "%" : "- (no name to count)") << "\n";
  const bool no_verdict = h2o::beyond_model(full.bits_per_byte());  // meaningless numbers
  if (no_verdict) {
    std::cout << "\n"
              << h2o::beyond_model_warning(full.bits_per_byte())
              << "  Steps 3 and 4 (the verdicts) are left out.\n";
  }
  auto percent_text = [&](std::size_t b) {  // "10%", or "none of these"
    return b < percents.size() ? std::to_string(percents[b]) + "%" : "none of these";
  };
  const std::vector<std::size_t> evicting = sweep.evicting_budgets();  // at 100%: the full cache

  // Step 3: the answer. The budget each policy needs: the smallest from which on its perplexity
  // stays within 5% of the full cache's; then H2O against the window, with a 95% interval.
  if (!no_verdict) {
    std::cout << "\nStep 3: the smallest budget (percent of the " << n
              << " tokens) from which on perplexity stays within 5%\n        of the full cache's"
              << " (each policy in a line: policy/policy_factory.hpp)\n"
              << h2o::policy_lines("    ", /*evicting_only=*/true);
    const double limit = 1.05 * full.perplexity();
    std::cout << h2o::smallest_budget_lines(sweep, limit);
    const std::size_t h2o_needs = h2o::first_good_budget(sweep.of("h2o"), limit);
    const std::size_t window_needs = h2o::first_good_budget(sweep.of("window"), limit);
    auto needs_text = [&](std::size_t b) {
      return b < percents.size() ? percent_text(b)
                                 : "more than " + std::to_string(percents.back()) + "%";
    };
    std::cout << "  The paper's \"20% is enough\": H2O needs " << needs_text(h2o_needs)
              << ", the window " << needs_text(window_needs) << ".\n  H2O against the window "
              << "(the same number of tokens), budget by budget:\n";
    for (std::size_t b : evicting) {
      std::cout << h2o::wrap_words("    " + h2o::pad_right(percent_text(b) + ":", 5) + " " +
                                       h2o::verdict_against(*sweep.find("h2o", b),
                                                            *sweep.find("window", b), "the window"),
                                   100, "          ")
                << "\n";
    }
    const bool enough = h2o_needs < percents.size() && percents[h2o_needs] <= 20;
    const bool beats_window =
        enough &&
        h2o::verdict_of(h2o::difference(*sweep.find("h2o", h2o_needs),
                                        *sweep.find("window", h2o_needs))) == h2o::Verdict::Better;
    std::cout << "  "
              << (!enough        ? "The claim does not hold here: this model needs more cache."
                  : beats_window ? "The claim holds on this model and text."
                                 : "The claim does not hold here: at " + percent_text(h2o_needs) +
                                       " H2O does not beat the window beyond noise.")
              << "\n";

    // Step 4: which score, which protected tokens, which split? Each variant against its paper's
    // policy at every budget below 100%, by the same 95% intervals, and then against the window.
    std::cout << "\nStep 4: which score, which protected tokens, which split? (each variant "
                 "against its\n        paper's policy, then against the window)\n";
    for (const h2o::SweepPolicy& variant : variants) {
      const h2o::BudgetComparison against_paper =
          h2o::compare_over_budgets(sweep.of(variant.label), sweep.of(variant.policy), evicting);
      const std::size_t better = against_paper.count(h2o::Verdict::Better);
      const std::size_t worse = against_paper.count(h2o::Verdict::Worse);
      const std::string indent(16, ' ');
      std::cout << h2o::wrap_words("  " + h2o::pad_right(variant.label, 14) +
                                       h2o::budget_comparison_sentence(against_paper, counted > 0),
                                   100, indent)
                << "\n";
      if (variant.settings.scoring == h2o::ScoringMode::PerHead && worse > better) {
        std::cout << indent << "=> a KV head scored alone keeps only what its own queries look at "
                  << "now;\n"
                  << indent << "   the other heads' next queries find it gone\n";
      }
      if (variant.settings.h2o.score == h2o::H2OScore::NormalisedSum && !evicting.empty()) {
        std::cout << indent << "=> the paper's \"averaging did worse\" "
                  << (worse > better ? "holds here" : "does not hold here") << " (perplexity)\n";
      }
      // And the question of Step 3 for the variant: at which budgets does it beat the window?
      const h2o::BudgetComparison against_window =
          h2o::compare_over_budgets(sweep.of(variant.label), sweep.of("window"), evicting);
      std::vector<std::string> budget_names;
      for (std::size_t b : evicting) budget_names.push_back(percent_text(b));
      const std::string line = indent + "against the window: " +
                               h2o::budgets_by_verdict(against_window, budget_names);
      if (!evicting.empty()) std::cout << h2o::wrap_words(line, 100, indent + "  ") << "\n";
    }
  }

  // Step 5: the numbers behind the verdicts, one table per measure (the others: --csv).
  std::cout << "\nStep 5: the numbers (KL and top-1 agreement: --csv)\n  (KL: how far a run's "
               "next-token probabilities lie from the full cache's; 0 = the same)\n";
  for (const h2o::SweepMeasure& measure : h2o::sweep_measures()) {
    if (measure.in_tables && (counted > 0 || !measure.needs_names)) {
      std::cout << "\n" << h2o::sweep_table(sweep, measure);
    }
  }

  // Step 6: prompt-time or token by token? (measure/prompt_time.hpp) Each cell: evicting token by
  // token | reading the prompt with the full cache and cutting it once; judged on the text after.
  const h2o::PromptTimeComparison prompt_time =
      h2o::compare_prompt_time(weights, text, full, prompt_percent, prompt_percents);
  std::cout << "\nStep 6: prompt-time or token by token? "
            << h2o::prompt_time_report(prompt_time, n, !no_verdict);

  // The files: the sweep's numbers as CSV, and one chart per measure, all or none.
  std::vector<h2o::FileToWrite> outputs;
  if (!csv_path.empty())
    outputs.push_back({csv_path, "the CSV file", h2o::sweep_csv(sweep, min_gap)});
  if (!pictures.empty()) {
    for (h2o::FileToWrite& chart :
         h2o::sweep_charts(sweep, pictures, h2o::command_line(argc, argv),
                           std::filesystem::path(files.model).stem().string() + " reading " +
                               std::to_string(n) + " tokens of " + file_name)) {
      outputs.push_back(std::move(chart));
    }
  }
  h2o::write_output_files(outputs);
  if (!csv_path.empty()) std::cout << "\nEvery number written to " << csv_path << "\n";
  if (!pictures.empty()) std::cout << "Charts written to " << pictures << "\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
