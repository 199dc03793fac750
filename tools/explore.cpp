// explore.cpp: writes the explorer page, for watching a KV cache evolve in a classroom.
//
// It reads the first story of a text with the model (teacher forcing, as lesson 09 and
// compare_policies do) once with the full cache, the reference, and once with each of one or two
// policies at one budget, tracing every cache at every step (measure/cache_trace.hpp): which
// positions each layer and KV head keeps, when each was evicted, the policy's scores and the
// step's attention, and whether the step's most likely next token is the full cache's. The page
// (report/explorer_page.hpp) replays it in any browser, from disk, with no network. With two
// policies its header gives the first against the second on this text: what the full cache
// recalls of the long-gap names (--names, or the project's lists and the names the story shows,
// as the other programs count them), lesson 09's verdict, the names each holds beyond a window's
// reach, and the reason from this run: how much of the full cache's attention fell on tokens one
// policy held and the other had evicted, and on which words.
// With --kv-bits 8, 4 or 2 the policies' caches store keys and values quantised (kv_cache.hpp,
// KIVI's layout; the full cache, the reference, keeps float32), and the key/value bytes each
// policy holds (after every step on the page, at the end in the summary) show what that saves;
// the verdict against the window then gives the window the bytes the first policy held.
// With --twice N (--secret N) it reads the story's first N tokens twice in a row (N random pieces
// before the story, or with --secret-at P after its first P tokens, and again after it:
// app/read_twice_options.hpp); the header and summary say how much of the second reading the
// full cache and each policy predict, beside the first, and the page marks both readings.
//
//   bin/explore --out explorer.html         h2o and window at 10% of the held-out story
//   bin/explore --text my_story.txt --policies h2o,sinks --budget 64 --out /tmp/sinks.html
//   bin/explore --kv-bits 4 --out /tmp/h2o_4bit.html
//
// Page size (and, about, memory): two bytes per kept position, step, layer and KV head for a
// policy with scores, one without (for the shipped model, 912 tokens at 10%: about 4 MB); the
// page's size is estimated before the runs (explorer_page_bytes) and refused above
// kMaxExploreBytes, the text above kMaxExploreTokens (app/explore_options.hpp). A policy whose
// rules decide what each head keeps (FastGen, DuoAttention) may keep every token in a head: its
// estimate is only a bound, allowed up to kMaxExploreRunBytes, and the page is weighed again after
// the runs; one too big then is refused with the size each policy alone would make.
//
// Dimension legend: N = tokens in the story (BOS included), S = N - 1 steps, L = layers,
// G = KV heads.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/explore_options.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/app/run_reason.hpp"
#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/cache/window_bytes.hpp"
#include "h2o/measure/cache_trace.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/explorer_page.hpp"
#include "h2o/report/second_reading_report.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o/text/token_text.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

// One policy of the page: how it was built and what its run traced.
struct Explored {
  std::string name;
  h2o::PolicySettings settings;
  std::unique_ptr<h2o::CachePolicy> policy;  // until its run takes it
  h2o::CacheTrace trace;
};

// What each token shows on the page (text/token_text.hpp: a word's pieces joined, characters made
// of several byte tokens decoded), and where words begin. A token that is no text shows its
// piece: BOS as "<s>", the dummy space run.c drops after BOS as a space (when nothing merged with
// it: a text that starts with a control character).
void page_texts(const h2o::Tokenizer& tokenizer, const std::vector<int>& tokens,
                h2o::ExplorerPage& page) {
  page.texts = h2o::token_texts(tokenizer, tokens, 0, tokens.size());
  page.word_starts.assign(tokens.size(), false);
  for (const h2o::TokenSpan& word : h2o::token_words(tokenizer, tokens)) {
    page.word_starts[word.begin] = true;
    if (page.texts[word.begin].empty()) {  // not the later bytes of a character: no text at all
      const int token = tokens[word.begin];
      page.texts[word.begin] =
          token == h2o::Tokenizer::kBos ? "<s>" : h2o::printable(tokenizer.piece(token));
    }
  }
}

// Positions evicted over the run from a layer's KV head.
std::size_t evictions(const h2o::CacheTrace& trace) {
  // On average over every layer and KV head (budgets may differ by layer or head), rounded down.
  std::size_t all = 0, heads = 0;
  for (const auto& layer : trace.heads) {
    for (const h2o::HeadTrace& head : layer) {
      all += static_cast<std::size_t>(
          std::count_if(head.evicted_at.begin(), head.evicted_at.end(),
                        [](std::int32_t t) { return t != h2o::kNeverEvicted; }));
      ++heads;
    }
  }
  return heads == 0 ? 0 : all / heads;
}

// "h2o's", "sinks'".
std::string possessive_name(const std::string& name) {
  return name + (!name.empty() && name.back() == 's' ? "'" : "'s");
}

// "65536 KV bytes at the end (fp32): 15.1% of the fp32 full cache's 434176", for the summary and
// the page's header.
std::string end_bytes_text(const Explored& e, const h2o::KvFormat& format, std::size_t full_bytes) {
  const std::size_t bytes = e.trace.kv_bytes.back();
  return std::to_string(bytes) + " KV bytes at the end (" + h2o::describe_kv_format(format) +
         "): " +
         h2o::fixed(100.0 * static_cast<double>(bytes) / static_cast<double>(full_bytes), 1) +
         "% of the fp32 full cache's " + std::to_string(full_bytes);
}

// --twice / --secret: how the story was read twice, for the page's header and the summary.
std::string two_readings_about(const h2o::ReadTwiceOptions& options, const h2o::TwoReadings& two) {
  const std::string n = std::to_string(two.passage);
  return (options.twice > 0 ? "read twice: the story's first " + n + " tokens twice in a row"
                            : "read twice: a secret of " + n + " random pieces " +
                                  options.placement("the story") + " and again after it") +
         "; the second reading starts " + std::to_string(two.distance()) +
         " tokens after the first";
}

// How much of each reading the full cache and each policy predict top-1 (each reading's first
// piece not counted): "second reading predicted top-1 (first reading): full 85.9% (78.8%), ...".
std::string second_reading_line(const h2o::TwoReadings& two, const h2o::TeacherForcedRun& full,
                                const std::vector<Explored>& explored) {
  const auto shares = [&](const std::string& name, const std::vector<int>& top1) {
    const h2o::ReadingHits hits = h2o::reading_hits(two, top1);
    const double predictions = static_cast<double>(two.predictions());
    return name + " " + h2o::share_text(hits.second_correct() / predictions) + " (" +
           h2o::share_text(hits.first_correct() / predictions) + ")";
  };
  std::string line = "second reading predicted top-1 (first reading): " + shares("full", full.top1);
  for (const Explored& e : explored) line += ", " + shares(e.name, e.trace.reading.top1);
  return line;
}

// "4.3 MiB".
std::string mebibytes(std::uint64_t bytes) {
  return h2o::fixed(static_cast<double>(bytes) / (1 << 20), 1) + " MiB";
}

// Whether every policy of `names` keeps what its rules decide, not what the budget says.
bool all_decided_by_rules(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (h2o::policy_kind(name).sized_by_budget) return false;
  }
  return true;
}

// The error for a page of `bytes` over the limit, known after the runs (the policies' rules
// decided what they kept), with the setting that makes one that fits: each policy on a page of
// its own when each fits alone (its size computed here), else a shorter text or a smaller budget.
std::string page_too_big(const h2o::ExplorerPage& page, std::size_t bytes) {
  std::string advice;
  if (page.policies.size() == 2) {
    bool each_fits = true;
    for (const h2o::ExplorerPolicy& policy : page.policies) {
      h2o::ExplorerPage alone = page;
      alone.policies = {policy};
      alone.has_verdict = false;
      const std::size_t alone_bytes = h2o::explorer_page_html(alone).size();
      each_fits = each_fits && alone_bytes <= h2o::kMaxExploreBytes;
      advice += (advice.empty() ? "" : ", ") + ("--policies " + policy.name) + " makes " +
                mebibytes(alone_bytes);
    }
    advice = each_fits ? "show one policy a page (" + advice + ")" : "";
  }
  if (advice.empty()) {
    std::vector<std::string> names;
    for (const h2o::ExplorerPolicy& policy : page.policies) names.push_back(policy.name);
    advice = std::string("choose ") +
             (all_decided_by_rules(names) ? "" : "a smaller --budget or ") + "a shorter text";
  }
  return "the page would be " + mebibytes(bytes) + " (at most " +
         h2o::byte_size_text(h2o::kMaxExploreBytes) + "): " + advice;
}

int explore(int argc, char** argv) {
  // Step 1: options, all checked before any file is read; then the output paths, so that a path
  // that cannot be written fails before the runs.
  h2o::ArgParser args = h2o::explore_arguments();
  args.parse(argc, argv);
  const h2o::ExploreOptions options = h2o::explore_options(args);
  h2o::check_output_path(options.out_path, "the page");
  if (!options.kept_path.empty()) h2o::check_output_path(options.kept_path, "the kept positions");
  // --names is read now, with one policy or two (only two use it, in step 5): a file that is
  // missing, empty, too big or not a list of names fails before the runs, as in every program.
  std::optional<std::vector<std::string>> given_names;
  if (args.given("names")) given_names = h2o::read_names(args.text("names"));

  // Step 2: the model and the first story of the text, as token ids (BOS first).
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);
  const std::size_t longest = std::min<std::size_t>(config.seq_len, h2o::kMaxExploreTokens);
  const h2o::StoryTokens story = h2o::read_story(args, tokenizer, 3, longest);
  const std::string text_name = std::filesystem::path(args.text("text")).filename().string();
  // The first story of the file, whole; with --twice or --secret, read twice
  // (app/read_twice_options.hpp, measure/second_reading.hpp).
  std::optional<h2o::TwoReadings> two;
  if (options.read_twice.asked()) {
    two = h2o::two_readings(options.read_twice, {story.text}, tokenizer, longest,
                            h2o::printable(text_name))
              .front();
  }
  const std::vector<int>& tokens = two ? two->tokens : story.tokens;
  const std::size_t n = tokens.size(), steps = n - 1;
  const std::size_t budget = options.budget.for_text(n);

  // Step 3: the policies at the budget, and the page they will fill: refused before the runs
  // when it would be too big to write.
  std::vector<Explored> explored;
  h2o::ExplorerPage page;
  std::vector<h2o::ExplorerTraceShape> shapes;
  for (const std::string& name : options.policies) {
    Explored e;
    e.name = name;
    e.settings = h2o::settings_for_budget(name, budget, options.scoring);
    try {
      e.policy = h2o::make_policy(name, e.settings);
    } catch (const std::invalid_argument& error) {
      throw std::runtime_error("policy '" + name + "' at a budget of " + std::to_string(budget) +
                               " tokens: " + error.what());
    }
    const h2o::PolicyKind& kind = h2o::policy_kind(name);  // its recent window and kept label
    page.policies.push_back(
        {name, e.policy->describe(), kind.kept_label, kind.recent_window(e.settings, n), nullptr});
    shapes.push_back({std::min(e.policy->max_tokens(n), n), kind.uses_attention()});
    explored.push_back(std::move(e));
  }
  page.title = "H2O explorer: which tokens stay in the KV cache";
  const std::string model_name = std::filesystem::path(files.model).filename().string();
  page.about = {model_name + " (" + config.describe() + ") reading " + text_name + ": " +
                    std::to_string(n) + " tokens (BOS included), " + std::to_string(steps) +
                    " steps",
                "budget: " + options.budget.describe(n)};
  if (two) {
    page.about.push_back(two_readings_about(options.read_twice, *two));
    page.readings = {two->first, two->second, two->passage};  // marked in the page's text
  }
  page.command = h2o::command_line(argc, argv);
  page_texts(tokenizer, tokens, page);
  page.budget = budget;
  // Keys and values of every layer, float32: what the full cache's live_kv_bytes() adds a token.
  page.full_kv_bytes_per_token = config.n_layers * 2 * config.kv_dim() * sizeof(float);
  // A policy whose rules decide what each head keeps (FastGen, DuoAttention) may keep every token
  // in every head: the estimate counts that, the most its page could take, and only the run
  // tells what it took. Its page is allowed to that bound up to kMaxExploreRunBytes (memory for
  // the traces) and weighed again, exactly, once the runs are done (step 6).
  bool rules_decide = false;
  for (const std::string& name : options.policies)
    rules_decide = rules_decide || !h2o::policy_kind(name).sized_by_budget;
  const std::uint64_t page_bytes =
      h2o::explorer_page_bytes(page, config.n_layers, config.n_kv_heads, shapes);
  if (page_bytes > (rules_decide ? h2o::kMaxExploreRunBytes : h2o::kMaxExploreBytes)) {
    throw std::runtime_error(
        "the page would be " + std::string(rules_decide ? "up to " : "about ") +
        mebibytes(page_bytes) + " (at most " + h2o::byte_size_text(h2o::kMaxExploreBytes) +
        "): choose " + (all_decided_by_rules(options.policies) ? "" : "a smaller --budget or ") +
        "a shorter text");
  }

  // Step 4: the full cache, the reference, then each policy's traced run.
  if (options.kv_format.quantised())
    h2o::check_kv_group(options.kv_format.group, config.head_dim());
  h2o::Decoder full_decoder(weights, h2o::make_policy("full"), n);
  const h2o::TeacherForcedRun full = h2o::read_with_teacher_forcing(full_decoder, tokens);
  h2o::CacheTrace at_equal_bytes;  // --kv-bits: the window at the first policy's bytes (step 5)
  std::ostringstream kept;  // --kept: "h2o layer 0 head 0 step 12: 0 1 5 ...", from the caches
  for (std::size_t i = 0; i < explored.size(); ++i) {
    Explored& e = explored[i];
    h2o::Decoder decoder(weights, std::move(e.policy), n, options.kv_format);
    std::function<void(std::size_t)> note_kept;
    if (!options.kept_path.empty()) {
      note_kept = [&](std::size_t t) {
        for (std::size_t l = 0; l < config.n_layers; ++l) {
          for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
            kept << e.name << " layer " << l << " head " << g << " step " << t << ":";
            for (h2o::Position p : decoder.cache(l).sorted_positions(g)) kept << " " << p;
            kept << "\n";
          }
        }
      };
    }
    e.trace = h2o::trace_cache(decoder, tokens, &full, note_kept);
    page.policies[i].trace = &e.trace;
  }

  // Step 5: with two policies, the first against the second on this text: what the full cache
  // itself recalls of the long-gap names (a names comparison means nothing when it recalls none),
  // the verdict lesson 09 gives (perplexity with a 95% bootstrap interval over blocks of the story,
  // long-gap names), the names each holds beyond a window's reach, and the reason from this very
  // run: the full cache's attention on what one held and the other had evicted
  // (measure/attention_split.hpp, report/verdict_reason.hpp). Quantised, the same tokens are not
  // the same bytes (scattered tokens pay their key groups' scales alone: cache/window_bytes.hpp):
  // when the second policy is the window, the verdict and the reason weigh the first against a
  // window given the bytes the first held at the end.
  std::size_t names_counted = 0;  // long-gap name events, for step 7's note
  if (explored.size() == 2) {
    const h2o::NameTokens names = h2o::names_as_tokens(
        tokenizer, given_names ? *given_names : h2o::default_names({story.text}));
    const std::vector<h2o::NameMention> mentions = h2o::find_name_mentions(tokens, names).mentions;
    const std::size_t counted = h2o::long_gap_name_steps(tokens, names, h2o::kNameGap).size();
    const std::size_t full_recalled =
        h2o::name_recall(tokens, full.top1, names, h2o::kNameGap).correct;
    names_counted = counted;
    h2o::ExplorerVerdict& verdict = page.verdict;
    page.has_verdict = true;
    verdict.subject = explored[0].name;
    verdict.against = explored[1].name;
    verdict.full_names = h2o::full_cache_names(full_recalled, counted, h2o::kNameGap);
    const h2o::CacheTrace* against = &explored[1].trace;
    if (options.kv_format.quantised()) {
      const std::string bits = std::to_string(options.kv_format.bits) + "-bit";
      const std::size_t first_bytes = explored[0].trace.kv_bytes.back();
      const std::size_t second_bytes = explored[1].trace.kv_bytes.back();
      verdict.bytes = "at " + bits +
                      " the same tokens are not the same bytes: " + explored[0].name + " held " +
                      std::to_string(first_bytes) + " KV bytes at the end, " + explored[1].name +
                      " " + std::to_string(second_bytes);
      if (explored[1].name == h2o::baseline_policy().name) {
        const std::size_t window_tokens = h2o::window_tokens_for_bytes(
            config.n_kv_heads, config.head_dim(), options.kv_format, steps,
            first_bytes / config.n_layers);  // the steps read every token but the last
        h2o::Decoder decoder(weights,
                             h2o::make_policy(explored[1].name, h2o::settings_for_budget(
                                                                    explored[1].name, window_tokens,
                                                                    options.scoring)),
                             n, options.kv_format);
        at_equal_bytes = h2o::trace_cache(decoder, tokens, &full);
        against = &at_equal_bytes;
        verdict.bytes += "; so the verdict and the reason give " + explored[1].name + " " +
                         std::to_string(window_tokens) + " tokens, " +
                         std::to_string(at_equal_bytes.kv_bytes.back()) + " bytes";
        verdict.against_at = possessive_name(explored[1].name) + " at " +
                             possessive_name(explored[0].name) + " KV bytes, " +
                             std::to_string(window_tokens) + " tokens";
      } else {
        verdict.bytes +=
            ": the verdict is at equal tokens, not equal bytes (only a window can "
            "be given another policy's bytes)";
      }
    }
    const std::vector<std::vector<double>> a = {explored[0].trace.reading.token_nll},
                                           b = {against->reading.token_nll};
    verdict.difference = h2o::perplexity_difference(h2o::paired_units(a, b));
    verdict.units = h2o::units_name(a, verdict.difference.units);
    for (const Explored& e : explored) {
      std::string held;
      for (const std::string& name : h2o::names_held_beyond(e.trace, mentions, names, budget))
        held += (held.empty() ? "" : ", ") + name;
      verdict.held.push_back(e.name + " " + (held.empty() ? "none" : held));
    }
    if (h2o::names_comparable(full_recalled, counted)) {
      const auto recalled = [&](const h2o::CacheTrace& trace) {
        return h2o::name_recall(tokens, trace.reading.top1, names, h2o::kNameGap).correct;
      };
      verdict.names = h2o::names_against(recalled(explored[0].trace), recalled(*against), counted);
    }
    verdict.reason = h2o::run_reason(weights, tokenizer, tokens, explored[0].name,
                                     explored[0].trace, explored[1].name, *against);
  }

  // Step 6: the page.
  std::string agreement_line = "agreement with the full cache over all steps (teacher forcing):";
  for (const Explored& e : explored) {
    agreement_line += " " + e.name + " " + h2o::fixed(100.0 * e.trace.reading.agreement(), 1) + "%";
  }
  page.about.push_back(agreement_line);
  if (two) page.about.push_back(second_reading_line(*two, full, explored));
  const std::size_t full_bytes = full_decoder.live_kv_bytes();
  for (const Explored& e : explored) {
    page.about.push_back(e.name + ": " + end_bytes_text(e, options.kv_format, full_bytes));
  }
  const std::string html = h2o::explorer_page_html(page);
  if (html.size() > h2o::kMaxExploreBytes)
    throw std::runtime_error(page_too_big(page, html.size()));
  std::vector<h2o::FileToWrite> outputs = {{options.out_path, "the page", html}};
  if (!options.kept_path.empty())
    outputs.push_back({options.kept_path, "the kept positions", kept.str()});
  h2o::write_output_files(outputs);  // both, or neither

  // Step 7: what was written, in words.
  std::cout << "explore: " << h2o::printable(model_name) << " reading " << h2o::printable(text_name)
            << ", " << n << " tokens;\n  budget " << options.budget.describe(n)
            << (options.scoring.heavy_percent == h2o::kDefaultHeavyPercent
                    ? ""
                    : ", " + std::to_string(options.scoring.heavy_percent) +
                          "% of it outside the recent window (--heavy-share)")
            << "\n"
            // Read twice, the story's own summary (its paragraphs, its tokens) would describe
            // what was not read: the readings say what was.
            << (two ? h2o::wrap_words("  " + two_readings_about(options.read_twice, *two), 100,
                                      "    ")
                    : "  " + h2o::reading_summary(h2o::printable(text_name), 1,
                                                  story.stories_in_file, story.paragraphs, n,
                                                  std::nullopt))
            << "\n";
  std::size_t width = 8;  // the names' column, widened for "pyramid:knorm"
  for (const Explored& e : explored) width = std::max(width, e.name.size() + 1);
  for (const Explored& e : explored) {
    std::cout << "  " << h2o::pad_right(e.name, width) << "agreement with the full cache "
              << h2o::fixed(100.0 * e.trace.reading.agreement(), 1) << "% ("
              << e.trace.reading.agreements << " of " << steps << " steps)\n    "
              << evictions(e.trace) << " evictions per layer and KV head\n    "
              << end_bytes_text(e, options.kv_format, full_bytes) << "\n";
  }
  if (two) {
    std::cout << h2o::wrap_words("  " + second_reading_line(*two, full, explored), 100, "    ")
              << "\n";
  }
  if (page.has_verdict) {
    const h2o::ExplorerVerdict& v = page.verdict;
    std::cout << h2o::wrap_words("  verdict: " + h2o::verdict_text(v), 100, "    ") << "\n"
              << (v.bytes.empty() ? "" : h2o::wrap_words("  bytes: " + v.bytes, 100, "    ") + "\n")
              << h2o::wrap_words("  names held beyond a window's reach at the end: " + v.held[0] +
                                     "; " + v.held[1],
                                 100, "    ")
              << "\n"
              << (args.given("names") ? ""
                                      : h2o::no_capitals_note({story.text}, names_counted, "  "))
              << h2o::wrap_words("  why: " + v.reason, 100, "    ") << "\n";
  }
  std::cout << "page written to " << options.out_path << " (" << h2o::byte_size_text(html.size())
            << ")\n";
  if (!options.kept_path.empty())
    std::cout << "kept positions written to " << options.kept_path << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, explore); }
