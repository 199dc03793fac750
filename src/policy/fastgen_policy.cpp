#include "h2o/policy/fastgen_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "h2o/attention/query_groups.hpp"
#include "h2o/base/format.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/sink_window_policy.hpp"

namespace h2o {

FastGenPolicy::FastGenPolicy(CacheBudget budget, std::size_t sinks, double target,
                             std::size_t profile_tokens, ScoringMode mode, const LayerShape& shape)
    : ProfiledPolicy(shape, profile_tokens),
      budget_(budget),
      sizes_{budget.recent, budget.heavy, sinks},
      target_(target),
      mode_(mode),
      heavy_rule_{budget.recent} {
  if (budget.recent == 0) {
    throw std::invalid_argument("FastGen: the recent window must be at least 1 token");
  }
  if (!(target > 0.0 && target <= 1.0)) {
    throw std::invalid_argument("FastGen: the target share must be above 0 and at most 1, got " +
                                fixed(target, 3));
  }
  if (profile_tokens <= budget.recent + sinks) {
    throw std::invalid_argument("FastGen: a profile of " + std::to_string(profile_tokens) +
                                " tokens has no row past the window and sinks (needs more than " +
                                std::to_string(budget.recent + sinks) + ")");
  }
}

std::string FastGenPolicy::describe() const {
  return "FastGen: each KV head's cheapest rule recovering " + fixed(100.0 * target_, 0) +
         "% of its attention over the first " + std::to_string(profile_tokens()) +
         " tokens: window " + std::to_string(sizes_.recent) + ", sink+window " +
         std::to_string(sizes_.sinks) + " + " + std::to_string(sizes_.recent) + ", heavy+window " +
         std::to_string(sizes_.heavy) + " + " + std::to_string(sizes_.recent) + ", or full; " +
         to_string(mode_) + " scores";
}

std::size_t FastGenPolicy::rule_tokens(HeadRule rule) const {
  return ::h2o::rule_tokens(rule, sizes_, std::numeric_limits<std::size_t>::max());
}

void FastGenPolicy::start(const LayerKVCache& cache) {
  ranked_.reserve(cache.capacity());
  sums_.assign(cache.n_kv_heads(), HeadProfileSums{});
  profiles_.clear();
  rules_.clear();
}

void FastGenPolicy::profile(const LayerKVCache& cache, const StepAttention& attention) {
  const std::size_t G = cache.n_kv_heads();
  const QueryGroups groups(attention.n_heads, G, "FastGen");
  const auto t = static_cast<std::size_t>(cache.newest_position());
  if (!HeadProfileSums::counts(t, sizes_)) return;
  const auto first_recent = static_cast<Position>(t + 1 - sizes_.recent);
  const auto sinks = static_cast<Position>(sizes_.sinks);
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);  // t + 1: nothing is evicted while the prompt is read
    const Position* positions = cache.positions(g);  // (n,)
    const float* scores = cache.scores(g);           // (n,) sums of the rows before t
    // Slot j's weight in the head's row: its query group's mean, as profile_heads takes it.
    const auto weight = [&](std::size_t j) {
      double w = 0;
      for (std::size_t h = groups.first(g); h < groups.end(g); ++h) w += attention.head(h)[j];
      return w / static_cast<double>(groups.size());
    };
    double sink = 0, local = 0, heavy = 0;
    ranked_.clear();
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] < sinks) sink += weight(j);
      if (positions[j] >= first_recent) {
        local += weight(j);
      } else {
        ranked_.push_back(j);
      }
    }
    // The heavy hitters: the k best scores outside the window (ties: the earlier position).
    const std::size_t kept = std::min(sizes_.heavy, ranked_.size());
    std::nth_element(ranked_.begin(), ranked_.begin() + static_cast<std::ptrdiff_t>(kept),
                     ranked_.end(), [&](std::size_t a, std::size_t b) {
                       return scores[a] > scores[b] ||
                              (scores[a] == scores[b] && positions[a] < positions[b]);
                     });
    for (std::size_t i = 0; i < kept; ++i) heavy += weight(ranked_[i]);
    sums_[g].add(t, sizes_, sink, local, heavy);
  }
}

void FastGenPolicy::score(LayerKVCache& cache, const StepAttention& attention) {
  add_step_attention(cache, attention, mode_);
}

void FastGenPolicy::decide(std::size_t n_kv_heads) {
  profiles_.clear();
  rules_.clear();
  for (std::size_t g = 0; g < n_kv_heads; ++g) {
    profiles_.push_back(sums_[g].profile(g, sizes_));  // rules, no kind
    rules_.push_back(cheapest_rule(profiles_.back(), target_));
  }
}

std::size_t FastGenPolicy::victim(const LayerKVCache& cache, std::size_t g) const {
  const HeadRule rule = g < rules_.size() ? rules_[g] : HeadRule::HeavyWindow;
  const std::size_t n = cache.size(g);
  const Position* positions = cache.positions(g);  // (n,)
  if (rule == HeadRule::Window || rule == HeadRule::SinkWindow) {
    // The oldest token (sink+window: the oldest that is not a sink).
    return oldest_non_sink(positions, n, rule == HeadRule::SinkWindow ? sizes_.sinks : 0);
  }
  return slot_to_evict(positions, cache.scores(g), n, heavy_rule_);
}

void FastGenPolicy::cut(LayerKVCache& cache) const {
  const std::size_t G = cache.n_kv_heads();
  std::vector<std::vector<std::size_t>> kept(G);  // (G,) x (slots kept,)
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);
    const HeadRule rule = rules_[g];
    if (n <= rule_tokens(rule)) {
      for (std::size_t j = 0; j < n; ++j) kept[g].push_back(j);
      continue;
    }
    const Position* positions = cache.positions(g);  // (n,)
    if (rule == HeadRule::HeavyWindow) {
      const std::vector<Position> p(positions, positions + n);
      const std::vector<float> s(cache.scores(g), cache.scores(g) + n);
      kept[g] = plan_cut(p, s, heavy_rule_, rule_tokens(rule)).kept;
      continue;
    }
    const Position first_recent = first_recent_position(positions, n, sizes_.recent);
    const auto sinks = static_cast<Position>(rule == HeadRule::SinkWindow ? sizes_.sinks : 0);
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] < sinks || positions[j] >= first_recent) kept[g].push_back(j);
    }
  }
  cache.keep_per_head(kept);
}

}  // namespace h2o
