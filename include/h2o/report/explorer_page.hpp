// explorer_page.hpp: one self-contained HTML page that replays what cache policies did while a
// model read a text (measure/cache_trace.hpp), step by step, for a classroom or a reader.
//
// The page holds everything: inline CSS and JavaScript, no network, no external script, style or
// font, so it opens from disk in any browser. Its frame, style sheet and script are real files,
// src/report/explorer/page.html, page.css and page.js, built into the library (cmake/
// embed_file.cmake). The C++ run computes every number and writes them as JSON inside the page
// (<script type="application/json">); the script only displays them:
//   the text as words (a word's tokens side by side, decoded: text/token_text.hpp), each token
//   coloured (and styled, for readers who cannot tell the colours apart) by its state at step t
//   in the chosen policy's cache for the chosen layer and KV head: kept as a heavy hitter (or
//   whatever the policy keeps besides its recent window: its kept_label, which the legend names),
//   kept as recent, evicted (and at which step), not yet read; the policy's score as the shade of
//   a kept word, the attention of step t as a bar under each word; two policies side by side; a
//   chart of each policy's agreement with the full cache so far, its legend in each line's
//   colour; each panel's count line also says the key/value bytes the policy's caches hold at
//   step t (all layers, as stored: CacheTrace::kv_bytes) and their share of the float32 full
//   cache's at that step ((t + 1) tokens of full_kv_bytes_per_token). A step slider, previous /
//   next / play, the arrow keys, and a URL fragment
//   (#step=120&layer=0&head=0&policy=h2o&compare=window) set what it shows.
// Every token's <span> carries data-p (its position) and data-state (heavy, recent, evicted,
// unread), and in a passage read twice data-reading (first, second), so a test reading the page's
// DOM sees what a reader sees.
//
// Dimension legend: N = tokens of the text, S = N - 1 steps, L = layers, G = KV heads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "h2o/measure/cache_trace.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/verdict.hpp"

namespace h2o {

struct ExplorerPolicy {
  std::string name;         // as typed: "h2o"
  std::string description;  // the policy's describe()
  // What the page calls kept tokens outside the recent window ("": none), and how many newest
  // positions the policy always keeps (its recent window): PolicyKind::kept_label, recent_window.
  std::string kept_label;
  std::size_t recent = 0;
  const CacheTrace* trace = nullptr;  // (L, G) per-step record, with agreement vs the full cache
};

// The verdict the page's header gives: the first policy against the second on this text, with its
// reason. Every text in it is shown escaped (printable(), then HTML-escaped).
struct ExplorerVerdict {
  std::string subject, against;     // the two policies' names: "h2o", "window"
  PerplexityDifference difference;  // the subject's perplexity against the other's (verdict.hpp)
  std::string units;                // what the interval drew (units_name): "29 blocks of 32 ..."
  // What the full cache recalls of the long-gap names, said first (full_cache_names()).
  std::string full_names;
  // names_against(): "4 against 4 of 10 long-gap names"; "" when there are none, or the full
  // cache recalls none of them (then the comparison means nothing).
  std::string names;
  // How the verdict weighs bytes with quantised caches ("": float32, where equal tokens are equal
  // bytes): e.g. "at 4-bit the same tokens are not the same bytes: h2o held 49664 KV bytes at the
  // end, window 29800; so the verdict gives window 54 tokens, 49600 bytes" (against_at then says
  // "window's at h2o's KV bytes, 54 tokens" in the verdict's sentence).
  std::string bytes;
  std::string against_at;
  // What a window of the budget cannot hold: per policy, the names it holds at the end older
  // than the text's last `budget` positions (names_held_beyond), "h2o: Noufem (16 of 16 caches)".
  std::vector<std::string> held;
  // One sentence from the run itself: the full cache's attention on what one policy held and the
  // other had evicted (report/verdict_reason.hpp's attention_split_reason).
  std::string reason;
};

// A passage read twice (measure/second_reading.hpp's TwoReadings): where each reading starts and
// how many tokens it has. The page marks both in the text; passage == 0: no passage.
struct ExplorerReadings {
  std::size_t first = 0, second = 0, passage = 0;
};

struct ExplorerPage {
  std::string title;                  // one line
  std::vector<std::string> about;     // lines under the title: model, text, budget
  std::string command;                // the command that wrote the page (shown at the bottom)
  // (N,) what each token shows: its share of the text (token_texts(); "" for the later byte tokens
  // of one character, which the page shows as a narrow box), BOS as "<s>".
  std::vector<std::string> texts;
  std::vector<bool> word_starts;      // (N,) true where a word begins (token_words())
  std::size_t budget = 0;             // tokens per layer and KV head
  // Key/value bytes the float32 full cache holds per token read, all layers (> 0).
  std::size_t full_kv_bytes_per_token = 0;
  std::vector<ExplorerPolicy> policies;  // 1 or 2, shown side by side
  ExplorerReadings readings;             // the passage read twice, if any
  bool has_verdict = false;              // show `verdict` in the header
  ExplorerVerdict verdict;
};

// The verdict's sentence as the lessons word it (lesson 09), the full cache's names first: "the
// full cache recalls 5 of 10 long-gap names; h2o's perplexity -0.3% against window's (95% interval
// -6.0% to +6.9%, 29 blocks of 32 predictions): no difference within noise; 4 against 4 of 10
// long-gap names".
std::string verdict_text(const ExplorerVerdict& verdict);

// The verdict block of the page's header, as HTML: <details id="verdict" data-verdict="better">
// (or "worse", "within-noise": verdict_of(difference)), its summary the verdict word, then
// verdict_text, how bytes were weighed, the names held and the reason, all escaped; the page's
// script opens it on a wide screen. "" when the page has no verdict.
std::string verdict_html(const ExplorerPage& page);

// The names `trace` holds after its last step at positions older than the text's last `window`
// (what a window of that many tokens cannot hold), each name once with the number of its L x G
// caches holding a token of one of its mentions: "Noufem (16 of 16 caches)", in order of the
// names' first mentions; `mentions` from find_name_mentions over the trace's text.
std::vector<std::string> names_held_beyond(const CacheTrace& trace,
                                           const std::vector<NameMention>& mentions,
                                           const NameTokens& names, std::size_t window);

// The page, as HTML text. The title, about lines and command are shown as printable() text
// (base/format.hpp: control characters and bytes that are not UTF-8 as \xHH), so a file name
// cannot hide in or upset the page. Throws std::invalid_argument when the policies' traces do not
// match the texts (N) or each other, there are not 1 or 2 policies, full_kv_bytes_per_token is 0,
// or the readings overlap or reach beyond the text.
std::string explorer_page_html(const ExplorerPage& page);

// What the page's size depends on for one policy, known before its run: the most positions its
// cache keeps (the cache holds min(t + 1, max_kept) after step t and one more before the step's
// eviction), and whether it keeps scores (policies that read attention do).
struct ExplorerTraceShape {
  std::size_t max_kept = 0;
  bool has_scores = false;
};

// The bytes explorer_page_html will write for `page` once its policies (whose traces may still be
// missing) have run on a model of `layers` x `kv_heads` caches with these shapes (one per policy):
// exact for the text, levels and evictions, with an average width for the numbers
// (tests/test_explorer_page.cpp checks it against real pages). For refusing a page too big to
// write before computing it.
std::uint64_t explorer_page_bytes(const ExplorerPage& page, std::size_t layers,
                                  std::size_t kv_heads,
                                  const std::vector<ExplorerTraceShape>& shapes);

// `text` as a JSON string literal (quotes included) that is also safe inside an HTML <script>
// element: <, > and & are written as \u escapes (so "</script>" cannot end the element), so are
// U+2028 and U+2029; bytes that are not valid UTF-8 become U+FFFD.
std::string json_string(const std::string& text);

// `text` with &, <, >, " and ' as HTML character references.
std::string html_escape(const std::string& text);

}  // namespace h2o
