// random_eviction_policy.hpp: evict a random older token; the baseline any clever policy must beat.
//
// Dimension legend: G = KV heads, S = slot capacity of a layer cache.
//
// The last budget.recent tokens are protected, as in H2O. Once a layer holds more than
// budget.total() tokens, every KV head evicts one of its other tokens, each with the same chance,
// drawn from h2o::Rng (seeded, so runs repeat exactly). Each KV head draws on its own, so heads
// keep different tokens. Attention plays no part and the per-slot scores are left at 0. There are
// no ties to break: the draw k picks the k-th unprotected slot, counted in slot order.
//
// Repeatability: each layer has its own generator (layer 0 draws from `seed` itself, layer k from
// a seed derived from `seed` and k), restarted whenever a sequence starts (the cache's only token
// is at position 0), so the same seed and tokens give the same evictions, also after
// Decoder::reset(). No layer's draws depend on another's, so the decoder may run a chunk of tokens
// layer by layer (Decoder::forward_batch) and get the same evictions as token by token.
// With heavy = 0 the only unprotected token is the oldest: a sliding window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/base/tensor.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

class RandomEvictionPolicy final : public LayerPolicy {
 public:
  // Keeps budget.total() tokens per layer and KV head, of which the last budget.recent are
  // protected; `seed` starts the draws of every sequence.
  RandomEvictionPolicy(CacheBudget budget, std::uint64_t seed, const LayerShape& shape = {});

  std::string name() const override { return "random"; }
  // "random eviction, 64 tokens, the last 32 protected, seed 1"
  std::string describe() const override;
  // Restarts the draws when a sequence starts; keeps no scores.
  void observe(LayerKVCache& cache, const StepAttention& attention) override;
  // A random slot outside the recent window, per KV head.
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;

  std::size_t budget() const { return budget_; }
  std::size_t recent() const { return recent_; }
  std::uint64_t seed() const { return seed_; }

 private:
  std::size_t budget_, recent_;
  std::uint64_t seed_;
  Rng rng_;               // this layer's draws
  Rng first_rng() const;  // the generator a sequence starts from
};

}  // namespace h2o
