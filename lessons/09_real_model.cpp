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
// Is H2O's lower perplexity more than chance? The verdict gives the difference with a 95% interval
// (measure/verdict.hpp: a bootstrap over blocks of the story). The runs come from the library's
// sweep (measure/policy_sweep.hpp), which also says how much the model uses its cache at all (the
// context gain). Names are weighed only where the full cache itself recalls some: it says first
// how many it does, and when none, that the policies' counts say nothing; then whether it recalls
// names on stories in voices it never saw (data/unseen_stories.txt, the full cache alone): if not,
// what the names show holds only for stories like the one read. Why the verdict at the
// smallest budget goes as it does comes from the run: H2O and the window read the story again,
// traced step by step, and the full cache's attention is split by what each held (app/
// run_reason.hpp). At the end: which words did the smallest H2O cache keep as heavy hitters? The
// answer comes first, then its steps. When the full cache reads the text badly (a text unlike
// anything the model learned), the lesson says so instead of drawing a verdict from noise.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/app/run_reason.hpp"
#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/cache_trace.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/report/sweep_report.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/token_text.hpp"

using h2o::fixed;

namespace {
// For KV head 0 of every layer: how many old tokens (older than the recent window) it kept, the
// character names among them, a word's pieces joined (is_name (N,) marks the positions inside a
// name), and how many sit in the first 10 positions (the old-token bias of accumulated scores).
void print_heavy_hitters(const h2o::SweepRun& run, const h2o::Tokenizer& tokenizer,
                         const std::vector<int>& tokens, std::size_t recent,
                         const std::vector<bool>& is_name) {
  std::cout
      << "        (KV head 0 of each layer; a name's pieces joined, its position in brackets)\n";
  const std::size_t first_recent = tokens.size() - 1 - recent;
  std::size_t heavy_total = 0, heavy_near_start = 0;
  for (std::size_t l = 0; l < run.kept_at_end.size(); ++l) {
    std::size_t in_layer = 0;
    std::map<std::size_t, std::size_t> name_pieces;  // a kept name's first position -> pieces kept
    for (h2o::Position kept : run.kept_at_end[l]) {
      const auto p = static_cast<std::size_t>(kept);
      if (p >= first_recent) continue;  // the recent window, kept for being new
      ++in_layer;
      heavy_near_start += p < 10 ? 1 : 0;
      if (is_name[p]) ++name_pieces[h2o::word_at(tokenizer, tokens, p).begin];
    }
    std::string kept_names;
    for (const auto& [first, pieces] : name_pieces) {
      const h2o::TokenSpan word = h2o::word_at(tokenizer, tokens, first);
      std::size_t length = 0;  // the word's name tokens ("Priya's": those of "Priya")
      for (std::size_t p = word.begin; p < word.end; ++p) length += is_name[p] ? 1 : 0;
      const std::string entry =
          h2o::shown_word(tokenizer, tokens, word) + "[" + std::to_string(first) + "]" +
          (pieces < length ? "(" + std::to_string(pieces) + " of " + std::to_string(length) + ")"
                           : "");
      if (kept_names.size() + entry.size() < 66) kept_names += " " + entry;
    }
    heavy_total += in_layer;
    std::cout << "  layer " << l << ": " << in_layer
              << " old tokens; names:" << (kept_names.empty() ? " none" : kept_names) << "\n";
  }
  std::cout << "  " << heavy_near_start << " of the " << heavy_total
            << " heavy hitters sit in the first 10 positions: early tokens collect\n"
            << "  attention from every later step (a bias the H2O paper notes).\n";
}

// The full cache alone on stories in voices the model never saw (--unseen, by default
// data/unseen_stories.txt: written by hand in many styles, never trained on): does the model copy
// a name from far back on text unlike its training, or only on stories like the one compared?
// Nothing when --unseen is none; a story longer than the model's positions is cut to them.
struct UnseenReading {
  std::string file;         // the file's name
  std::size_t stories = 0;  // stories it holds
  std::size_t tokens = 0;   // their tokens, BOS included
  std::size_t cut = 0;      // stories cut to the model's positions (seq_len tokens)
  h2o::SweepRun full;       // the full cache over all of them
};
std::optional<UnseenReading> read_unseen(const h2o::ArgParser& args,
                                         std::shared_ptr<const h2o::DecoderWeights> weights,
                                         const h2o::Tokenizer& tokenizer, std::size_t min_gap) {
  const std::string path = args.text("unseen");
  if (path == "none") return std::nullopt;
  const std::vector<std::string> texts = h2o::split_stories(
      h2o::read_text_file(path, "unseen stories file '" + path + "'", h2o::kMaxTextBytes));
  if (texts.empty()) throw std::runtime_error("unseen stories file '" + path + "' is empty");
  UnseenReading unseen;
  unseen.file = std::filesystem::path(path).filename().string();
  std::vector<std::vector<int>> stories;  // (stories,) x (N_i,) token ids, BOS first
  for (const std::string& story : texts) {
    stories.push_back(tokenizer.encode(story, true, false));
    if (stories.back().size() > weights->config.seq_len) {  // cut to what the model can read
      stories.back().resize(weights->config.seq_len);
      ++unseen.cut;
    }
    unseen.tokens += stories.back().size();
  }
  unseen.stories = stories.size();
  const std::string names_path = args.given("unseen-names") ? args.text("unseen-names")
                                 : args.given("unseen")     ? ""
                                                            : h2o::data_dir() + "/unseen_names.txt";
  const std::vector<std::string> names =
      names_path.empty() ? h2o::default_names(texts) : h2o::read_names(names_path);
  const h2o::SweepText text =
      h2o::sweep_text(tokenizer, stories, h2o::names_as_tokens(tokenizer, names), min_gap);
  unseen.full = h2o::read_full_cache(weights, text);
  return unseen;
}

// What the unseen stories say of the comparison that follows, from their own counts.
// names_shown: whether the answer below compares the policies' names (names_comparable).
std::string unseen_sentence(const UnseenReading& unseen, const h2o::SweepRun& full,
                            bool names_shown) {
  const h2o::SweepRun& u = unseen.full;
  std::string s = "On " + std::to_string(unseen.stories) +
                  (unseen.stories == 1 ? " story" : " stories") + " in voices it never saw (" +
                  unseen.file + "), the full cache's perplexity is " + fixed(u.perplexity(), 2) +
                  " against " + fixed(full.perplexity(), 2) + " here (" +
                  fixed(u.bits_per_byte(), 3) + " bits per byte against " +
                  fixed(full.bits_per_byte(), 3) + ")";
  if (u.name_events == 0) {
    return s + (unseen.stories == 1 ? "; it has" : "; they have") + " no long-gap names to recall.";
  }
  s += " and it recalls " + std::to_string(u.names_correct) + " of " +
       std::to_string(u.name_events) + " long-gap names: ";
  if (2 * u.names_correct >= u.name_events) {
    return s + "it copies names from far back on text unlike its training too.";
  }
  return s +
         (u.names_correct == 0 ? "it copies a name from far back only in the voice it learned"
                               : "it copies few names from far back on text unlike its "
                                 "training") +
         (names_shown ? ", so what the names below show holds for stories like this one." : ".");
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
  args.add_option("unseen", "PATH", h2o::data_dir() + "/unseen_stories.txt",
                  "stories in unseen voices, full cache only (none: skip)")
      .add_option("unseen-names", "PATH", "",
                  "their names (default: unseen_names.txt, or the text's)");
  args.parse(argc, argv);
  const auto min_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  h2o::PolicySettings base;
  base.scoring = h2o::parse_scoring_mode(args.text("scoring"));

  // Step 1: the model and its tokenizer. Step 2: the story, whole, as token ids (BOS first).
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
  const std::optional<UnseenReading> unseen = read_unseen(args, weights, tokenizer, min_gap);

  // Steps 3 and 4: the full cache first (the reference of every other run), then H2O (heavy =
  // recent = half the budget) and a sliding window holding the same number of tokens.
  const h2o::PolicySweep sweep = h2o::sweep_policies(
      weights, text, {{"H2O", "h2o", base}, {"window", "window", base}}, percents);
  const h2o::SweepRun& full = sweep.full;
  const std::vector<h2o::SweepRun>&with_heavy = sweep.of("H2O"), &window = sweep.of("window");
  const double context_gain = h2o::context_gain(weights, text, full);

  // The answer: H2O against the window at each budget, with a 95% interval, and names.
  std::cout << "Lesson 09: H2O on a real model (beyond the blog)\n\n"
            << h2o::reading_summary(file_name, 1, story.stories_in_file, story.paragraphs, n,
                                    counted, min_gap)
            << "\n\nThe answer (details in steps 1-5 below)\n";
  // Names first: what the full cache itself recalls of them. When it recalls none, the model does
  // not use this story's names, and the policies' counts say nothing of their caches.
  // (A text beyond the model gets its warning instead of any comparison: the count alone.)
  const bool beyond = h2o::beyond_model(full.bits_per_byte());
  std::string full_names = beyond ? h2o::full_cache_count(full.names_correct, counted)
                                  : h2o::full_cache_names(full.names_correct, counted, min_gap);
  full_names[0] = 'T';
  const bool names_count = h2o::names_comparable(full.names_correct, counted);
  std::cout << h2o::wrap_words("  " + full_names + ".", 100, "  ") << "\n";
  if (unseen)
    std::cout << h2o::wrap_words("  " + unseen_sentence(*unseen, full, names_count), 100, "  ")
              << "\n";
  std::cout << "  perplexity: as unsure of each next token as if the model chose among that many "
            << "(lower: surer)\n";
  if (beyond) {  // no verdict from meaningless numbers
    std::cout << h2o::beyond_model_warning(full.bits_per_byte());
  } else {
    h2o::Table verdicts({"tokens kept", "perplexity H2O", "window", "names H2O", "window",
                         "H2O against the window"});
    auto names_of = [&](const h2o::SweepRun& r) {  // "-" where there is no name to count
      return !names_count ? "-"
                          : std::to_string(r.names_correct) + " of " + std::to_string(counted);
    };
    std::string sentences;
    for (std::size_t b = 0; b < percents.size(); ++b) {
      const h2o::PerplexityDifference d = h2o::difference(with_heavy[b], window[b]);
      const bool evicted = with_heavy[b].evicted > 0;
      verdicts.row(std::to_string(with_heavy[b].kept) + " of " + std::to_string(n),
                   fixed(with_heavy[b].perplexity(), 3), fixed(window[b].perplexity(), 3),
                   names_of(with_heavy[b]), names_of(window[b]),
                   evicted ? h2o::verdict_word(h2o::verdict_of(d)) : "same: nothing was evicted");
      if (!evicted) continue;
      // The sentence gives the interval behind the table's verdict (its names are in the table).
      sentences += h2o::wrap_words(
                       "  " + std::to_string(percents[b]) + "%: H2O's " +
                           h2o::verdict_sentence("the window's", d, h2o::difference_units(full, d)),
                       100, "       ") +
                   "\n";
    }
    verdicts.print(std::cout);
    std::cout << sentences;
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
      std::cout << "  Name recall rests on only " << counted
                << " name events (one name = " << fixed(100.0 / static_cast<double>(counted), 1)
                << " points), perplexity on " << n - 1
                << "\n  predictions: a gap of a name or two may be chance; more stories "
                << "would tell.\n";
    }
  }
  std::cout << h2o::wrap_words("  " + h2o::context_gain_sentence(context_gain), 100, "  ")
            << "\n\n";

  // The steps that led there.
  std::cout << "Step 1: loaded " << std::filesystem::path(files.model).filename().string()
            << "\n        " << config.describe() << "\n"
            << "Step 2: the text in " << file_name << " is " << n << " tokens long (BOS included, "
            << text.bytes[0] << " bytes);\n        every run predicts each next token from the "
            << "ones before it (" << n - 1 << " predictions).\n        " << counted
            << " times the next token is a character's name last seen more than " << min_gap
            << " tokens back.\n"
            << h2o::name_use_notes(text.names, {tokens}, "        ")
            << "Step 3: the full cache keeps all " << n - 1 << " tokens; perplexity "
            << fixed(full.perplexity(), 3) << ", " << fixed(full.bits_per_byte(), 3)
            << " bits per byte\n        (bits per byte: the same surprise per byte of text, "
            << "whatever the tokenizer)\n";
  if (unseen) {
    const h2o::SweepRun& u = unseen->full;
    std::cout << h2o::wrap_words(
                     "        On " + unseen->file + " (" + std::to_string(unseen->stories) +
                         (unseen->stories == 1 ? " story, " : " stories, ") +
                         std::to_string(unseen->tokens) +
                         " tokens, voices it never saw): perplexity " + fixed(u.perplexity(), 3) +
                         ", " + fixed(u.bits_per_byte(), 3) + " bits per byte; it recalls " +
                         std::to_string(u.names_correct) + " of " + std::to_string(u.name_events) +
                         " long-gap names" +
                         (unseen->cut == 0
                              ? std::string()
                              : " (" + std::to_string(unseen->cut) + " cut to their first " +
                                    std::to_string(weights->config.seq_len) + " tokens)") +
                         "; --unseen none skips this reading",
                     100, "        ")
              << "\n";
  }
  std::cout << "\nStep 4: H2O (" << to_string(*base.scoring)
            << " scores) and a plain sliding window of the same size\n        (top = full's, "
            << "top-1 agreement: the most likely next token is the full cache's)\n\n";
  h2o::Table table({"cache", "perplexity", "bits/byte", "vs full", "top = full's", "name recall",
                    "KV bytes at end"});
  auto add_row = [&](const std::string& label, const h2o::SweepRun& r) {
    const double change = 100.0 * (r.perplexity() / full.perplexity() - 1.0);
    table.add({label, fixed(r.perplexity(), 3), fixed(r.bits_per_byte(), 3),
               &r == &full ? "" : (change >= 0 ? "+" : "") + fixed(change, 1) + "%",
               fixed(100 * r.agreement(), 1) + "%", fixed(100 * r.recall(), 1) + "%",
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
  std::vector<bool> is_name(n, false);  // (N,) positions inside a name's mention
  for (const h2o::NameMention& m : h2o::find_name_mentions(tokens, text.names).mentions) {
    for (std::size_t p = m.first; p <= m.last; ++p) is_name[p] = true;
  }
  print_heavy_hitters(smallest, tokenizer, tokens,
                      h2o::settings_for_budget("h2o", smallest.tokens, base).recent, is_name);
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
