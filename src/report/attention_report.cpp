#include "h2o/report/attention_report.hpp"

#include <algorithm>
#include <stdexcept>

#include "h2o/base/format.hpp"

namespace h2o {

std::string percent_text(double share) { return fixed(100.0 * share, 1) + "%"; }

Table age_profile_table(const AgeProfile& age, std::size_t n_tokens) {
  const std::size_t parts = age.mean_score.size();
  Table table({"positions", "mean score", "per step", "heavy hitters by score", "by per step",
               "by decayed"});
  for (std::size_t j = 0; j < parts; ++j) {
    // Part j holds positions ceil(j n / parts) .. ceil((j + 1) n / parts) - 1.
    table.row(std::to_string((j * n_tokens + parts - 1) / parts) + "-" +
                  std::to_string(((j + 1) * n_tokens + parts - 1) / parts - 1),
              fixed(age.mean_score[j], 2), fixed(age.mean_per_step[j], 4),
              percent_text(age.top_share_by_sum[j]), percent_text(age.top_share_by_per_step[j]),
              percent_text(age.top_share_by_decayed[j]));
  }
  return table;
}

std::string age_bias_words(const AgeProfile& age, double decay) {
  const std::size_t last = age.mean_score.size() - 1;
  return "the oldest 10% of tokens take " + percent_text(age.top_share_by_sum[0]) +
         " of the heavy-hitter slots (10% if age did not\n  matter); ranked by score per step "
         "(normalised sum) they take " +
         percent_text(age.top_share_by_per_step[0]) + ", the newest 10% " +
         percent_text(age.top_share_by_per_step[last]) + ";\n  ranked by the sum decayed by " +
         fixed(decay, 2) + " per step they take " + percent_text(age.top_share_by_decayed[0]) +
         ", the newest 10% " + percent_text(age.top_share_by_decayed[last]);
}

std::string HeadKindCounts::describe() const {
  return std::to_string(local) + " of " + std::to_string(all) + " KV heads are local, " +
         std::to_string(heavy) + " heavy, " + std::to_string(sink) +
         " sinks (a sink: 10x the uniform share;\n  the largest here " +
         fixed(largest_sink_ratio, 1) + "x)";
}

HeadKindCounts count_head_kinds(const std::vector<std::vector<HeadProfile>>& profiles) {
  HeadKindCounts tally;
  for (const std::vector<HeadProfile>& layer : profiles) {
    for (const HeadProfile& head : layer) {
      ++tally.all;
      tally.largest_sink_ratio = std::max(tally.largest_sink_ratio, head.sink_ratio());
      tally.local += head.kind == HeadKind::Local;
      tally.heavy += head.kind == HeadKind::Heavy;
      tally.sink += head.kind == HeadKind::Sink;
    }
  }
  return tally;
}

Table head_profile_table(const std::vector<std::vector<HeadProfile>>& profiles,
                         const HeadProfileOptions& sizes, HeadKindCounts* counts) {
  const std::string window = std::to_string(sizes.recent), heavy = std::to_string(sizes.heavy);
  Table table({"layer", "KV head", "first token", "x uniform", "last " + window,
               heavy + " heavy hitters", "kind"});
  for (std::size_t l = 0; l < profiles.size(); ++l) {
    for (const HeadProfile& head : profiles[l]) {
      table.row(l, head.kv_head, percent_text(head.sink_share), fixed(head.sink_ratio(), 1),
                percent_text(head.local_share), percent_text(head.heavy_share),
                to_string(head.kind));
    }
  }
  if (counts != nullptr) *counts = count_head_kinds(profiles);
  return table;
}

std::string head_profile_reason(const std::vector<std::vector<HeadProfile>>& profiles,
                                const HeadProfileOptions& sizes) {
  HeadKindCounts kinds;
  head_profile_table(profiles, sizes, &kinds);
  if (kinds.all == 0) throw std::invalid_argument("head_profile_reason needs a head's profile");
  double local = 0.0, heavy = 0.0;  // mean shares over every KV head
  for (const std::vector<HeadProfile>& layer : profiles) {
    for (const HeadProfile& head : layer) {
      local += head.local_share / static_cast<double>(kinds.all);
      heavy += head.heavy_share / static_cast<double>(kinds.all);
    }
  }
  const std::string most = 2 * kinds.local > kinds.all   ? "most KV heads are local"
                           : 2 * kinds.heavy > kinds.all ? "most KV heads are heavy"
                                                         : "the KV heads are of mixed kinds";
  const std::string lean =
      local >= 2 * heavy ? "the newest tokens count most, and a window of the same budget keeps "
                           "more of them than H2O does"
      : heavy >= local   ? "old tokens kept by their score count as much as the newest: H2O "
                           "keeps them and a window loses them"
                         : "the newest tokens count more, but the old ones H2O keeps by score "
                           "count too";
  // (The kinds' counts are not repeated here: lesson 10 prints them on the line above,
  // HeadKindCounts::describe.)
  return most + ": on average a head gives its last " + std::to_string(sizes.recent) + " tokens " +
         percent_text(local) + " of its attention and its " + std::to_string(sizes.heavy) +
         " heavy hitters outside them " + percent_text(heavy) + ", so " + lean;
}

}  // namespace h2o
