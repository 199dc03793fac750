#include "h2o/policy/head_profile.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "h2o/attention/query_groups.hpp"

namespace h2o {

std::string to_string(HeadRule rule) {
  switch (rule) {
    case HeadRule::Window:
      return "window";
    case HeadRule::SinkWindow:
      return "sink+window";
    case HeadRule::HeavyWindow:
      return "heavy+window";
    case HeadRule::Full:
      return "full";
  }
  return "?";
}

std::string to_string(HeadKind kind) {
  switch (kind) {
    case HeadKind::Sink:
      return "sink";
    case HeadKind::Local:
      return "local";
    case HeadKind::Heavy:
      return "heavy";
    case HeadKind::Mixed:
      return "mixed";
    case HeadKind::Unclassified:
      return "unclassified";
  }
  return "?";
}

HeadKind classify_head(const HeadProfile& profile, const HeadKindThresholds& thresholds) {
  if (profile.sink_ratio() >= thresholds.sink_ratio) return HeadKind::Sink;
  if (profile.local_share >= thresholds.local_share &&
      profile.local_share >= 2.0 * profile.heavy_share)
    return HeadKind::Local;
  if (profile.heavy_share >= profile.local_share) return HeadKind::Heavy;
  return HeadKind::Mixed;
}

void HeadProfileSums::add(std::size_t t, const HeadProfileOptions& options, double sink_share,
                          double local_share, double heavy_share) {
  if (!counts(t, options)) return;
  ++rows;
  sink += sink_share;
  uniform += static_cast<double>(options.sinks) / static_cast<double>(t + 1);
  local += local_share;
  heavy += heavy_share;
}

HeadProfile HeadProfileSums::profile(std::size_t kv_head, const HeadProfileOptions& options,
                                     const HeadKindThresholds& thresholds) const {
  HeadProfile p;
  p.kv_head = kv_head;
  p.rows = rows;
  if (rows > 0) {
    const double n = static_cast<double>(rows);
    p.sink_share = sink / n;
    p.uniform_share = uniform / n;
    p.local_share = local / n;
    p.heavy_share = heavy / n;
  }
  p.recovered = {p.local_share, p.local_share + p.sink_share, p.local_share + p.heavy_share, 1.0};
  p.kind = options == kKindSizes ? classify_head(p, thresholds) : HeadKind::Unclassified;
  return p;
}

std::vector<HeadProfile> profile_heads(const PromptAttention& attention, std::size_t n_kv_heads,
                                       const HeadProfileOptions& options,
                                       const HeadKindThresholds& thresholds) {
  const std::size_t H = attention.n_heads, T = attention.n_tokens;
  const std::size_t r = options.recent, s = options.sinks, k = options.heavy;
  const QueryGroups groups(H, n_kv_heads, "profile_heads");
  if (r == 0) throw std::invalid_argument("profile_heads: the recent window must be at least 1");
  if (T <= r + s) {
    throw std::invalid_argument("profile_heads: a prompt of " + std::to_string(T) +
                                " tokens has no row past the window and sinks (" +
                                std::to_string(r + s) + " tokens)");
  }
  std::vector<HeadProfile> profiles(n_kv_heads);
  std::vector<double> row(T), summed(T);   // (T,) the group's mean row; its sums over rows < t
  std::vector<std::size_t> candidates(T);  // positions outside the window, ranked by `summed`
  for (std::size_t g = 0; g < n_kv_heads; ++g) {
    std::fill(summed.begin(), summed.end(), 0.0);
    HeadProfileSums sums;
    for (std::size_t t = 0; t < T; ++t) {
      std::fill(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(t + 1), 0.0);
      for (std::size_t h = groups.first(g); h < groups.end(g); ++h) {
        const float* weights = attention.row(h, t);
        for (std::size_t j = 0; j <= t; ++j) {
          row[j] += weights[j] / static_cast<double>(groups.size());
        }
      }
      if (HeadProfileSums::counts(t, options)) {
        // Sinks 0..s-1 and window t-r+1..t do not overlap here (t - r + 1 > s - 1).
        const std::size_t outside = t + 1 - r;  // positions 0..t-r
        candidates.resize(outside);
        std::iota(candidates.begin(), candidates.end(), std::size_t{0});
        const std::size_t kept = std::min(k, outside);
        std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(kept),
                         candidates.end(), [&](std::size_t a, std::size_t b) {
                           return summed[a] > summed[b] || (summed[a] == summed[b] && a < b);
                         });
        double heavy = 0;
        for (std::size_t i = 0; i < kept; ++i) heavy += row[candidates[i]];
        const double sink =
            std::accumulate(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(s), 0.0);
        const double local = std::accumulate(row.begin() + static_cast<std::ptrdiff_t>(outside),
                                             row.begin() + static_cast<std::ptrdiff_t>(t + 1), 0.0);
        sums.add(t, options, sink, local, heavy);
      }
      for (std::size_t j = 0; j <= t; ++j) summed[j] += row[j];
    }
    profiles[g] = sums.profile(g, options, thresholds);
  }
  return profiles;
}

bool rule_recovers(const HeadProfile& profile, HeadRule rule, double target) {
  return rule == HeadRule::Full || profile.recovered_by(rule) >= target;
}

HeadRule cheapest_rule(const HeadProfile& profile, double target) {
  if (!(target > 0.0 && target <= 1.0)) {
    throw std::invalid_argument("cheapest_rule: the target share must be in (0, 1], got " +
                                std::to_string(target));
  }
  for (HeadRule rule : {HeadRule::Window, HeadRule::SinkWindow, HeadRule::HeavyWindow}) {
    if (rule_recovers(profile, rule, target)) return rule;
  }
  return HeadRule::Full;
}

std::size_t rule_tokens(HeadRule rule, const HeadProfileOptions& options, std::size_t n_tokens) {
  std::size_t tokens = n_tokens;
  switch (rule) {
    case HeadRule::Window:
      tokens = options.recent;
      break;
    case HeadRule::SinkWindow:
      tokens = options.sinks + options.recent;
      break;
    case HeadRule::HeavyWindow:
      tokens = options.heavy + options.recent;
      break;
    case HeadRule::Full:
      break;
  }
  return std::min(tokens, n_tokens);
}

}  // namespace h2o
