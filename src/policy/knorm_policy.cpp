#include "h2o/policy/knorm_policy.hpp"

#include <cmath>

namespace h2o {

KeyNormPolicy::KeyNormPolicy(CacheBudget budget, const LayerShape& shape)
    : ScoredPolicy(shape, budget.total(), EvictionRule{budget.recent}, false), budget_(budget) {}

std::string KeyNormPolicy::describe() const {
  return "key norm, " + budget_.describe() + ", the longest keys evicted";
}

double key_norm(const float* key, std::size_t head_dim) {
  double sum = 0.0;
  for (std::size_t d = 0; d < head_dim; ++d) {
    sum += static_cast<double>(key[d]) * static_cast<double>(key[d]);
  }
  return std::sqrt(sum);
}

double rounded_key_norm(const float* key, std::size_t head_dim) {
  int exponent = 0;
  const double fraction = std::frexp(key_norm(key, head_dim), &exponent);  // in [0.5, 1)
  return std::ldexp(std::round(std::ldexp(fraction, kNormBits)), exponent - kNormBits);
}

void KeyNormPolicy::score(LayerKVCache& cache, const StepAttention&) {
  const std::size_t D = cache.head_dim();
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    if (cache.size(g) == 0) continue;
    const std::size_t newest = cache.size(g) - 1;
    cache.scores(g)[newest] = -static_cast<float>(rounded_key_norm(cache.newest_key(g), D));
  }
}

}  // namespace h2o
