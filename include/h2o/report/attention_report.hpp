// attention_report.hpp: the tables and sentences lesson 10 prints of what it measured on the
// attention (measure/attention_stats.hpp's age profile, policy/head_profile.hpp's head profiles).
// The lesson measures; these lay the numbers out, so the lesson's steps stay about the measuring.
//
// Dimension legend: T = tokens of the text, L = layers, G = KV heads of a layer.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/measure/attention_stats.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/report/table.hpp"

namespace h2o {

// A share as lesson 10 prints it: "12.3%".
std::string percent_text(double share);

// The age profile of a text of n_tokens in age.mean_score.size() parts, oldest first: positions,
// mean score, per step, and the heavy hitters' share ranked by score, per step and decayed.
Table age_profile_table(const AgeProfile& age, std::size_t n_tokens);

// "the oldest 10% of tokens take 47.5% of the heavy-hitter slots (10% if age did not matter); ..."
// (three lines, joined by "\n  "), with the decayed sum's factor `decay`.
std::string age_bias_words(const AgeProfile& age, double decay);

// How many KV heads are of each kind, and the largest first-token share against uniform.
struct HeadKindCounts {
  std::size_t local = 0, heavy = 0, sink = 0, all = 0;
  double largest_sink_ratio = 0.0;
  // "10 of 16 KV heads are local, 1 heavy, 0 sinks (a sink: 10x the uniform share;\n  the largest
  // here 4.3x)"
  std::string describe() const;
};

// The tally of profiles (L,) x (G,).
HeadKindCounts count_head_kinds(const std::vector<std::vector<HeadProfile>>& profiles);

// One row per layer and KV head (profiles (L,) x (G,)): its first-token share, that share against
// uniform, the share on the last r and on its r heavy hitters, its kind; `counts` gets the tally.
Table head_profile_table(const std::vector<std::vector<HeadProfile>>& profiles,
                         const HeadProfileOptions& sizes, HeadKindCounts* counts);

// What the heads' profiles (L,) x (G,) say of a recent window against H2O, in one sentence, the
// words chosen from the numbers: which kind most heads are (not how many of each: lesson 10
// prints HeadKindCounts::describe on the line before), and the mean share of a head's attention
// on its last r tokens against the mean on its k heavy hitters outside them (sizes: r and k). A
// local share at least twice the heavy share: the newest tokens count most, which a window of
// the same budget holds more of than H2O; a heavy share at least the local share: old tokens
// kept by score count as much, which H2O holds and a window loses; between: both count. E.g.
//   "most KV heads are local: on average a head gives its last 16 tokens 54.8% of its attention
//    and its 16 heavy hitters outside them 12.1%, so the newest tokens count most, and a window
//    of the same budget keeps more of them than H2O does"
// Lesson 10 prints it. It describes the heads, not a run: a verdict between two policies is
// explained from its own run instead (report/verdict_reason.hpp).
// Throws std::invalid_argument without any head.
std::string head_profile_reason(const std::vector<std::vector<HeadProfile>>& profiles,
                                const HeadProfileOptions& sizes);

}  // namespace h2o
