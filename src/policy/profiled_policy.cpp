#include "h2o/policy/profiled_policy.hpp"

#include <stdexcept>

namespace h2o {

void ProfiledPolicy::start_if_new(const LayerKVCache& cache) {
  seen_ = true;
  const std::size_t G = cache.n_kv_heads();
  if (n_kv_heads_ != G || (cache.size(0) > 0 && cache.newest_position() == 0)) {
    n_kv_heads_ = G;
    decided_ = false;
    start(cache);
  }
}

void ProfiledPolicy::decide_and_cut(LayerKVCache& cache) {
  if (!decided_) {
    decide(cache.n_kv_heads());
    decided_ = true;
  }
  cut(cache);
}

void ProfiledPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  start_if_new(cache);
  if (!decided_) profile(cache, attention);
  score(cache, attention);
}

void ProfiledPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  observe(cache, attention);
  if (!decided_) {
    if (static_cast<std::size_t>(cache.newest_position()) + 1 >= profile_tokens_) {
      decide_and_cut(cache);
    }
    return;
  }
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    if (cache.size(g) > keeps(g)) cache.remove_slot(g, victim(cache, g));
  }
}

void ProfiledPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) victims[g] = victim(cache, g);
}

void ProfiledPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  if (!seen_) {
    throw std::logic_error(name() + " policy: compress() on a cache whose prompt it never saw");
  }
  start_if_new(cache);
  decide_and_cut(cache);
  if (keep == 0) return;  // the decision alone
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    while (cache.size(g) > keep) cache.remove_slot(g, victim(cache, g));
  }
}

}  // namespace h2o
