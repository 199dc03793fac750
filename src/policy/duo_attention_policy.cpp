#include "h2o/policy/duo_attention_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "h2o/attention/query_groups.hpp"
#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/policy/sink_window_policy.hpp"

namespace h2o {

namespace {

// np.quantile(values, q) with its default linear method (numpy 1.24's _quantile): the virtual
// index (n - 1) q between two sorted neighbours, and numpy's _lerp, which interpolates from the
// upper neighbour once the weight is 0.5 or more, so that the bits are numpy's.
double numpy_linear_quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double index = static_cast<double>(values.size() - 1) * q;
  const auto below = static_cast<std::size_t>(std::floor(index));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double t = index - static_cast<double>(below);
  const double a = values[below], b = values[above], diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

}  // namespace

std::vector<bool> duo_retrieval_heads(const std::vector<double>& scores, double sparsity) {
  if (scores.empty()) throw std::invalid_argument("DuoAttention: no heads to split");
  if (std::isnan(sparsity)) {
    throw std::invalid_argument("DuoAttention: the share of streaming heads is not a number");
  }
  // sparsify_attention_heads: every head at or above the threshold keeps the full cache; a
  // sparsity of 1 or more makes every head stream (threshold 2, above any share), 0 or less none.
  double threshold = -1.0;
  if (sparsity >= 1.0) {
    threshold = 2.0;
  } else if (sparsity > 0.0) {
    threshold = numpy_linear_quantile(scores, sparsity);
  }
  std::vector<bool> retrieval;
  for (double score : scores) retrieval.push_back(score >= threshold);
  return retrieval;
}

DuoAttentionPolicy::DuoAttentionPolicy(std::size_t sinks, std::size_t recent, double sparsity,
                                       std::size_t profile_tokens, ScoringMode mode,
                                       const LayerShape& shape)
    : ProfiledPolicy(shape, profile_tokens),
      sinks_(sinks),
      recent_(recent),
      sparsity_(sparsity),
      mode_(mode) {
  if (recent == 0) {
    throw std::invalid_argument("DuoAttention: the recent window must be at least 1 token");
  }
  if (!(sparsity >= 0.0 && sparsity <= 1.0)) {
    throw std::invalid_argument("DuoAttention: the share of streaming heads must be 0 to 1, got " +
                                fixed(sparsity, 3));
  }
  if (profile_tokens <= sinks + recent) {
    throw std::invalid_argument("DuoAttention: a profile of " + std::to_string(profile_tokens) +
                                " tokens has no row past the sinks and window (needs more than " +
                                std::to_string(sinks + recent) + ")");
  }
}

std::string DuoAttentionPolicy::describe() const {
  return "DuoAttention: per layer, the " + fixed(100.0 * (1.0 - sparsity_), 0) +
         "% of KV heads with the most attention outside " + std::to_string(sinks_) +
         " sinks + the last " + std::to_string(recent_) + " over the first " +
         std::to_string(profile_tokens()) + " tokens keep every token, the others " +
         std::to_string(sinks_) + " + " + std::to_string(recent_) + "; " + to_string(mode_) +
         " scores";
}

void DuoAttentionPolicy::start(const LayerKVCache& cache) {
  outside_sums_.assign(cache.n_kv_heads(), 0.0);
  rows_ = 0;
  scores_.clear();
  retrieval_.clear();
}

void DuoAttentionPolicy::profile(const LayerKVCache& cache, const StepAttention& attention) {
  const std::size_t G = cache.n_kv_heads();
  const QueryGroups groups(attention.n_heads, G, "DuoAttention");
  const auto t = static_cast<std::size_t>(cache.newest_position());
  if (t < sinks_ + recent_) return;  // every token is a sink or recent: nothing to miss
  const auto first_recent = static_cast<Position>(t + 1 - recent_);
  const auto sinks = static_cast<Position>(sinks_);
  for (std::size_t g = 0; g < G; ++g) {
    // The query heads that score head g: its own group, or every head (shared).
    const ScoringHeads heads = scoring_heads(groups, g, mode_);
    const Position* positions = cache.positions(g);  // (t + 1,): nothing is evicted yet
    double outside = 0.0;
    for (std::size_t h = heads.first; h < heads.first + heads.count; ++h) {
      const float* row = attention.head(h);  // (t + 1,) over head g's slots
      for (std::size_t j = 0; j < cache.size(g); ++j) {
        if (positions[j] >= sinks && positions[j] < first_recent) outside += row[j];
      }
    }
    outside_sums_[g] += outside / static_cast<double>(heads.count);
  }
  ++rows_;
}

void DuoAttentionPolicy::decide(std::size_t n_kv_heads) {
  scores_.assign(n_kv_heads, 0.0);
  if (rows_ > 0) {
    for (std::size_t g = 0; g < n_kv_heads; ++g) {
      scores_[g] = outside_sums_[g] / static_cast<double>(rows_);
    }
  }
  retrieval_ = duo_retrieval_heads(scores_, sparsity_);
}

void DuoAttentionPolicy::cut(LayerKVCache& cache) const {
  const std::size_t G = cache.n_kv_heads();
  std::vector<std::vector<std::size_t>> kept(G);  // (G,) x (slots kept,)
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);
    const Position* positions = cache.positions(g);  // (n,)
    // compress(): the first s and the last r tokens of a streaming head stay.
    const Position first_recent = retrieval_[g] ? 0 : first_recent_position(positions, n, recent_);
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] < static_cast<Position>(sinks_) || positions[j] >= first_recent) {
        kept[g].push_back(j);
      }
    }
  }
  cache.keep_per_head(kept);
}

std::size_t DuoAttentionPolicy::keeps(std::size_t g) const {
  return retrieval_[g] ? kNoPositionLimit : sinks_ + recent_;
}

std::size_t DuoAttentionPolicy::victim(const LayerKVCache& cache, std::size_t g) const {
  return oldest_non_sink(cache.positions(g), cache.size(g), sinks_);
}

}  // namespace h2o
