// head_profile.hpp: what each KV head of one layer looks at while it reads a prompt, and which
// cache rule would serve it - FastGen's profile (Ge et al., ICLR 2024, "Model Tells You What to
// Discard").
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), T = tokens of the prompt
// (row t is the query at position t; its keys are positions 0..t), r = recent window, k = heavy
// hitters, s = sink tokens.
//
// Every policy of this project gives every head the same rule. FastGen's observation is that heads
// differ: some look only at the last few tokens (local), some at the first token whatever it says
// (a sink, as StreamingLLM found in large models), some at a few tokens anywhere (heavy hitters),
// some everywhere. Read off a full cache's attention over the prompt, for each KV head (its query
// group's rows averaged, as the per-head scores of head_scores.hpp add them):
//   sink share     mean weight on the first s tokens, beside the uniform share s / (t + 1) the
//                  same tokens would get from a row that spread its attention evenly;
//   local share    mean weight on the last r tokens (the query itself included);
//   heavy share    mean weight on the k tokens outside the window with the most attention summed
//                  over the rows before t - the heavy hitters an H2O cache that had evicted
//                  nothing would hold at that step (ties: the earlier position first). At the
//                  prompt's last row they are FastGen's "frequent" tokens of the whole prompt;
//   recovery       for each candidate rule, the mean share of a row's attention on the tokens the
//                  rule keeps: window (r), sinks + window (s + r), heavy hitters + window (k + r),
//                  full (everything). FastGen gives each head the cheapest rule that recovers at
//                  least T of its attention.
// The means run over rows t >= r + s, the rows where some token is outside every rule's set:
// earlier rows recover everything under every rule and would only make each head look local.
// FastGen also keeps punctuation tokens; this project's stories have few and the rule is left out.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace h2o {

// One layer's attention over a prompt as a full cache saw it: row (h, t) starts at
// data + (h * T + t) * T and its entries 0..t are query t's weights over positions 0..t (each row
// sums to 1; entries after t are never read).
struct PromptAttention {
  const float* data;     // (H, T, T)
  std::size_t n_heads;   // H
  std::size_t n_tokens;  // T
  const float* row(std::size_t h, std::size_t t) const {
    return data + (h * n_tokens + t) * n_tokens;
  }
};

// FastGen's candidate rules, cheapest first (tokens kept: r, s + r, k + r, all).
enum class HeadRule { Window, SinkWindow, HeavyWindow, Full };
constexpr std::size_t kHeadRules = 4;
std::string to_string(HeadRule rule);  // "window", "sink+window", "heavy+window", "full"

struct HeadProfileOptions {
  std::size_t recent = 16;  // r
  std::size_t heavy = 16;   // k: by default the window's size, so heavy and local compare fairly
  std::size_t sinks = 1;    // s: the first token (BOS in every story here)
  bool operator==(const HeadProfileOptions& o) const {
    return recent == o.recent && heavy == o.heavy && sinks == o.sinks;
  }
};

// The one definition of a head's kind ("local", "heavy", "sink"), the same in every program
// (lesson 10, lesson 14, the explorer page): a profile at these sizes, the last r = 16 tokens
// against the k = 16 heavy hitters outside them and the first token, whatever budget a policy has.
// The kind must not move with a budget: with a window sized by it (FastGen's r = 36 at 10% of a
// story) more heads look local only because their window holds more. A profile at other sizes
// still says which rule recovers what (FastGen chooses its rules so) but has no kind.
constexpr HeadProfileOptions kKindSizes{16, 16, 1};

// What a head is, by the thresholds below, tested in this order:
//   sink   its sink share is at least sink_ratio times the uniform share (10x: the bar the
//          course sets for "a sink formed"; StreamingLLM's models are far above it);
//   local  the window recovers at least local_share of its attention and at least twice what
//          the heavy hitters outside it get: the window alone serves it;
//   heavy  its heavy hitters outside the window get at least what the window gets: remembering
//          old tokens by their score pays;
//   mixed  none of these.
// Unclassified: a profile at sizes other than kKindSizes, which defines no kind.
enum class HeadKind { Sink, Local, Heavy, Mixed, Unclassified };
std::string to_string(HeadKind kind);  // "sink", "local", "heavy", "mixed", "unclassified"

struct HeadKindThresholds {
  double sink_ratio = 10.0;
  double local_share = 0.5;
};

struct HeadProfile {
  std::size_t kv_head = 0;
  std::size_t rows = 0;      // rows averaged: T - (r + s)
  double sink_share = 0;     // mean weight on positions 0..s-1
  double uniform_share = 0;  // mean of s / (t + 1) over the same rows
  double local_share = 0;    // mean weight on positions t-r+1..t
  double heavy_share = 0;    // mean weight on the k heavy hitters outside the window
  std::array<double, kHeadRules> recovered{};  // (rules,) by HeadRule, recovered[Full] = 1
  HeadKind kind = HeadKind::Mixed;
  double sink_ratio() const { return uniform_share > 0 ? sink_share / uniform_share : 0.0; }
  double recovered_by(HeadRule rule) const { return recovered[static_cast<std::size_t>(rule)]; }
};

// The running sums behind one KV head's profile. Every caller measures a row's three shares its own
// way (profile_heads from a dense attention matrix, FastGenPolicy from a cache's slots while it
// reads a prompt) and adds them here, which owns which rows count and what the means become.
struct HeadProfileSums {
  std::size_t rows = 0;
  double sink = 0, uniform = 0, local = 0, heavy = 0;
  // True when row t is one the means run over (t >= r + s): only then need it be measured.
  static bool counts(std::size_t t, const HeadProfileOptions& options) {
    return t >= options.recent + options.sinks;
  }
  // Adds row t's shares on the sinks, the window and the heavy hitters (a row that does not count
  // is ignored).
  void add(std::size_t t, const HeadProfileOptions& options, double sink_share, double local_share,
           double heavy_share);
  // The means, the recovery of each rule and the kind (Unclassified unless `options` are
  // kKindSizes). With no row counted every share is 0 and only the full cache recovers anything:
  // nothing shows that a smaller rule serves the head.
  HeadProfile profile(std::size_t kv_head, const HeadProfileOptions& options,
                      const HeadKindThresholds& thresholds = {}) const;
};

// The profile of each of the G KV heads: (G,), each with its kind when `options` are kKindSizes
// (Unclassified otherwise). Throws std::invalid_argument when H is not a
// multiple of G, when recent is 0, or when the prompt has no row to average (T <= r + s).
std::vector<HeadProfile> profile_heads(const PromptAttention& attention, std::size_t n_kv_heads,
                                       const HeadProfileOptions& options = {},
                                       const HeadKindThresholds& thresholds = {});

// The kind of a profile by the thresholds above (profile_heads sets it with the same function);
// a kind only when the profile was measured at kKindSizes.
HeadKind classify_head(const HeadProfile& profile, const HeadKindThresholds& thresholds = {});

// FastGen's recovery test: does `rule` recover at least `target` of the head's attention?
bool rule_recovers(const HeadProfile& profile, HeadRule rule, double target);

// FastGen's choice: the cheapest rule (in HeadRule's order) that recovers at least `target`;
// Full when no other does. Throws std::invalid_argument unless 0 < target <= 1.
HeadRule cheapest_rule(const HeadProfile& profile, double target);

// Tokens `rule` keeps per KV head once the sequence is past r + s + k tokens.
std::size_t rule_tokens(HeadRule rule, const HeadProfileOptions& options, std::size_t n_tokens);

}  // namespace h2o
