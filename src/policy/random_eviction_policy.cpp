#include "h2o/policy/random_eviction_policy.hpp"

#include <stdexcept>

#include "h2o/cache/selection.hpp"

namespace h2o {

RandomEvictionPolicy::RandomEvictionPolicy(CacheBudget budget, std::uint64_t seed,
                                           const LayerShape& shape)
    : LayerPolicy(shape, budget.total()),
      budget_(budget.total()),
      recent_(budget.recent),
      seed_(seed),
      rng_(first_rng()) {}

std::string RandomEvictionPolicy::describe() const {
  return "random eviction, " + std::to_string(budget_) + " tokens, the last " +
         std::to_string(recent_) + " protected, seed " + std::to_string(seed_);
}

Rng RandomEvictionPolicy::first_rng() const {
  // Layer 0 draws from the seed itself (as a single cache always did); layer k from a seed mixed
  // with k by the golden-ratio constant, so the layers' draws are unrelated.
  const std::uint64_t k = shape().layer;
  return Rng(k == 0 ? seed_ : seed_ ^ (0x9E3779B97F4A7C15ULL * (k + 1)));
}

void RandomEvictionPolicy::observe(LayerKVCache& cache, const StepAttention&) {
  // A new sequence (its first token, position 0, alone in the cache): restart this layer's draws,
  // so every run of the same tokens repeats, also after Decoder::reset().
  if (cache.size(0) == 1 && cache.positions(0)[0] == 0) rng_ = first_rng();
}

void RandomEvictionPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  Rng& rng = rng_;
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const std::size_t n = cache.size(g);
    const Position* positions = cache.positions(g);  // (n,)
    // The recent window: selection.hpp's rule (positions at or above first_recent).
    const Position first_recent = first_recent_position(positions, n, recent_);
    if (n <= recent_) throw std::logic_error("RandomEvictionPolicy: every slot is protected");
    // n - recent >= 1 unprotected slots; pick the k-th of them in slot order.
    std::uint32_t k = rng.below(static_cast<std::uint32_t>(n - recent_));
    std::size_t victim = n;
    for (std::size_t s = 0; s < n; ++s) {
      if (positions[s] >= first_recent) continue;
      if (k == 0) {
        victim = s;
        break;
      }
      --k;
    }
    if (victim == n) {
      throw std::logic_error(
          "RandomEvictionPolicy: too few unprotected slots (positions must be distinct)");
    }
    victims[g] = victim;
  }
}

}  // namespace h2o
