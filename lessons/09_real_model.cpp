// Lesson 09: H2O on a real trained language model.
//
// Beyond the blog: lessons 01-08 used made-up numbers. Here the library's decoder loads a real
// Llama-architecture model (llama2.c format) and reads one story, once with a full KV cache and
// then with H2O and with a plain sliding window of the same size at several budgets. Each run is
// "teacher forced": the decoder reads the story's own tokens, and at every position we look at the
// probability it gave the token that really comes next. From those probabilities:
//   perplexity = exp(mean over positions of -log p(next token))     lower = less surprised
//   bits per byte = that surprise per byte of text: unlike perplexity, it compares tokenizers
//   top-1 agreement = how often the most likely next token is the same as with the full cache
//   name recall = how often the model names a character last seen > N tokens back (name_recall.hpp)
// Is H2O's lower perplexity more than chance? The answer comes first: at each budget the
// difference with a 95% interval (measure/verdict.hpp: a bootstrap over blocks of the story), and
// why at the smallest budget, from the run (app/run_reason.hpp: the full cache's attention split
// by what each cache held). Names are weighed only where the full cache itself recalls some, and
// only as far as stories in voices the model never saw say they carry (app/unseen_stories.hpp).
// Then the steps: 1 the model, 2 the text, 3 the full cache (the reference), 4 every run, 5 the
// heavy hitters the smallest H2O cache kept (report/heavy_hitters.hpp). The runs come from the
// library's sweep (measure/policy_sweep.hpp). When the full cache reads the text badly (a text
// unlike anything the model learned), the lesson says so instead of drawing a verdict from noise.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2o/app/default_files.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/app/run_reason.hpp"
#include "h2o/app/unseen_stories.hpp"
#include "h2o/base/format.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/cache_trace.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/report/heavy_hitters.hpp"
#include "h2o/report/sweep_report.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/report/verdict_text.hpp"

using h2o::fixed;

namespace {
// What the unseen stories (step 3) say of the names compared in step 4, from their own counts.
// names_shown: whether step 4's names are worth comparing (names_comparable).
std::string unseen_sentence(const h2o::UnseenReading& unseen, bool names_shown) {
  const h2o::SweepRun& u = unseen.full;
  std::string s = "On the stories in voices it never saw (step 3)";
  if (u.name_events == 0) return s + " there are no long-gap names to recall.";
  s += " it recalls " + std::to_string(u.names_correct) + " of " + std::to_string(u.name_events) +
       ": ";
  if (2 * u.names_correct >= u.name_events) {
    return s + "it copies names from far back on text unlike its training too.";
  }
  return s +
         (u.names_correct == 0 ? "it copies a name from far back only in the voice it learned"
                               : "it copies few names from far back on text unlike its "
                                 "training") +
         (names_shown ? ", so what the names in step 4 show holds for stories like this one." : ".");
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("09_real_model",
                      "Lesson 09: full cache vs H2O vs a sliding window on a real model, reading "
                      "one story.");
  h2o::add_model_options(args);
  h2o::add_text_option(args);
  args.add_option("budgets", "LIST", "10,20,50", "cache budgets, in percent of the text's tokens")
      .add_option("scoring", "MODE", "per-head", "H2O scoring: per-head or shared");
  h2o::add_names_option(args).add_option("name-gap", "N", "64",
                                         "name recall counts names last seen > N tokens back");
  h2o::add_unseen_options(args);
  args.parse(argc, argv);
  const auto min_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  h2o::PolicySettings base;
  base.scoring = h2o::parse_scoring_mode(args.text("scoring"));

  // The model and its tokenizer; the story, whole, as token ids (BOS first); the unseen stories.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);
  const h2o::StoryTokens story = h2o::read_story(args, tokenizer, 3, config.seq_len);
  const std::vector<int>& tokens = story.tokens;
  const std::size_t n = tokens.size();
  const h2o::SweepText text = h2o::sweep_text(
      tokenizer, {tokens},
      h2o::names_as_tokens(tokenizer, h2o::names_from_options(args, {story.text})), min_gap);
  const std::size_t counted = h2o::long_gap_name_steps(tokens, text.names, min_gap).size();
  const std::string file_name = std::filesystem::path(args.text("text")).filename().string();
  const std::optional<h2o::UnseenReading> unseen =
      h2o::read_unseen_option(args, weights, tokenizer, min_gap);

  // Every run: the full cache first (the reference of every other run), then H2O (heavy =
  // recent = half the budget) and a sliding window holding the same number of tokens.
  const h2o::PolicySweep sweep = h2o::sweep_policies(
      weights, text, {{"H2O", "h2o", base}, {"window", "window", base}}, percents);
  const h2o::SweepRun& full = sweep.full;
  const std::vector<h2o::SweepRun>&with_heavy = sweep.of("H2O"), &window = sweep.of("window");
  const double context_gain = h2o::context_gain(weights, text, full);

  // The answer. Names first: what the full cache itself recalls of them. When it recalls none, the
  // model does not use this story's names, and the policies' counts say nothing of their caches.
  // (A text beyond the model gets its warning instead of any comparison: the count alone.)
  std::cout << "Lesson 09: H2O on a real model (beyond the blog)\n\n"
            << h2o::reading_summary(file_name, 1, story.stories_in_file, story.paragraphs, n,
                                    counted, min_gap)
            << "\n\nThe answer (details in steps 1-5 below)\n";
  const bool beyond = h2o::beyond_model(full.bits_per_byte());
  std::string full_names = beyond ? h2o::full_cache_count(full.names_correct, counted)
                                  : h2o::full_cache_names(full.names_correct, counted, min_gap);
  full_names[0] = 'T';
  const bool names_count = h2o::names_comparable(full.names_correct, counted);
  std::cout << h2o::wrap_words("  " + full_names + ".", 100, "  ") << "\n";
  if (unseen)
    std::cout << h2o::wrap_words("  " + unseen_sentence(*unseen, names_count), 100, "  ") << "\n";
  if (beyond) {  // no verdict from meaningless numbers
    std::cout << h2o::beyond_model_warning(full.bits_per_byte());
  } else {
    // H2O against the window at each budget: the change in perplexity, its interval, the verdict.
    h2o::Table verdicts({"budget", "tokens kept", "H2O against the window", "95% interval",
                         "verdict"});
    std::string units;  // the interval's units, the same at every budget that evicts
    for (std::size_t b = 0; b < percents.size(); ++b) {
      const h2o::PerplexityDifference d = h2o::difference(with_heavy[b], window[b]);
      const bool evicted = with_heavy[b].evicted > 0;
      if (evicted) units = h2o::difference_units(full, d);
      verdicts.row(std::to_string(percents[b]) + "%",
                   std::to_string(with_heavy[b].kept) + " of " + std::to_string(n),
                   evicted ? h2o::signed_percent(d.change) : "",
                   evicted ? h2o::signed_percent(d.low) + " to " + h2o::signed_percent(d.high)
                           : "",
                   evicted ? h2o::verdict_word(h2o::verdict_of(d)) : "same: nothing was evicted");
    }
    std::cout << "  Perplexity, H2O against the window of the same size"
              << (units.empty() ? "" : " (intervals over " + units + ")") << ":\n";
    verdicts.print(std::cout);
    // Why, at the smallest budget: H2O and the window read the story again, traced step by step
    // (the sweep keeps only what each held at the end), and the full cache's attention is split
    // by what each held (app/run_reason.hpp, as the explorer page gives it).
    if (with_heavy.front().evicted > 0) {
      auto traced = [&](const std::string& policy) {
        h2o::Decoder decoder(weights,
                             h2o::make_policy(policy, h2o::settings_for_budget(
                                                          policy, with_heavy.front().tokens, base)),
                             n);
        return h2o::trace_cache(decoder, tokens);
      };
      const h2o::CacheTrace heavy_trace = traced("h2o"), window_trace = traced("window");
      std::cout << h2o::wrap_words("  Why at " + std::to_string(percents.front()) + "%: " +
                                       h2o::run_reason(weights, tokenizer, tokens, "H2O",
                                                       heavy_trace, "the window", window_trace) +
                                       ".",
                                   100, "       ")
                << "\n";
    }
    if (names_count) {
      std::cout << "  Name recall (step 4) rests on only " << counted << " name events (one name = "
                << fixed(100.0 / static_cast<double>(counted), 1)
                << " points): a gap of a name or two\n  may be chance; more stories would tell.\n";
    }
  }
  std::cout << h2o::wrap_words("  " + h2o::context_gain_sentence(context_gain), 100, "  ")
            << "\n\n";

  // The steps that led there.
  std::cout << "Step 1: loaded " << std::filesystem::path(files.model).filename().string()
            << "\n        " << config.describe() << "\n"
            << "Step 2: the story is " << text.bytes[0] << " bytes; every run predicts each next "
            << "token from the ones before\n        it (" << n - 1 << " predictions).\n"
            << h2o::name_use_notes(text.names, {tokens}, "        ")
            << "Step 3: the full cache keeps every token: the reference of every run (its row in "
               "step 4).\n";
  if (unseen) {
    const h2o::SweepRun& u = unseen->full;
    std::cout << h2o::wrap_words(
                     "        On " + unseen->file + " (" + std::to_string(unseen->stories) +
                         (unseen->stories == 1 ? " story, " : " stories, ") +
                         std::to_string(unseen->tokens) +
                         " tokens, voices it never saw): perplexity " + fixed(u.perplexity(), 3) +
                         ", " + fixed(u.bits_per_byte(), 3) + " bits per byte" +
                         (unseen->cut == 0 ? std::string()
                                           : " (" + std::to_string(unseen->cut) +
                                                 " cut to their first " +
                                                 std::to_string(unseen->seq_len) + " tokens)") +
                         "; --unseen none skips this reading",
                     100, "        ")
              << "\n";
  }
  std::cout << "\nStep 4: H2O (" << to_string(*base.scoring)
            << " scores) and a plain sliding window of the same size\n"
            << "        (perplexity: as unsure of each next token as if the model chose among that "
               "many;\n        bits per byte: the same surprise per byte of text, whatever the "
               "tokenizer;\n        top = full's: the most likely next token is the full "
               "cache's)\n\n";
  h2o::Table table({"cache", "perplexity", "bits/byte", "vs full", "top = full's", "long-gap names",
                    "KV bytes at end"});
  auto add_row = [&](const std::string& label, const h2o::SweepRun& r) {
    const double change = 100.0 * (r.perplexity() / full.perplexity() - 1.0);
    table.add({label, fixed(r.perplexity(), 3), fixed(r.bits_per_byte(), 3),
               &r == &full ? "" : (change >= 0 ? "+" : "") + fixed(change, 1) + "%",
               fixed(100 * r.agreement(), 1) + "%",
               !names_count || &r == &full  // the full cache's: the answer's first line
                   ? (&r == &full ? "" : "-")
                   : std::to_string(r.names_correct) + " of " + std::to_string(counted),
               std::to_string(r.live_kv_bytes)});
  };
  add_row("full cache", full);
  for (std::size_t b = 0; b < percents.size(); ++b) {
    const h2o::PolicySettings split = h2o::settings_for_budget("h2o", with_heavy[b].tokens, base);
    add_row("H2O " + std::to_string(percents[b]) + "% (" + std::to_string(split.heavy) + "+" +
                std::to_string(split.recent) + ")",
            with_heavy[b]);
    add_row(
        "window " + std::to_string(percents[b]) + "% (" + std::to_string(window[b].tokens) + ")",
        window[b]);
  }
  table.print(std::cout);

  // Step 5: inside the smallest H2O cache at the end: the old tokens it kept (heavy hitters).
  const h2o::SweepRun& smallest = with_heavy.front();  // percents ascend
  std::cout << "\nStep 5: the heavy hitters kept at the end by the smallest H2O cache\n        ("
            << smallest.description << ")\n";
  if (smallest.evicted == 0) {
    std::cout << "        none: that budget holds the whole text, so nothing was evicted\n";
    return 0;
  }
  std::cout << "        (KV head 0 of each layer; a name's pieces joined, its position in "
               "brackets)\n"
            << h2o::heavy_hitters_text(smallest.kept_at_end, tokenizer, tokens,
                                       h2o::settings_for_budget("h2o", smallest.tokens, base).recent,
                                       text.names);
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
