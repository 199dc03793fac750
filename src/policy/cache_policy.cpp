#include "h2o/policy/cache_policy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace h2o {

LayerPolicy::LayerPolicy(const LayerShape& shape, std::size_t keep, std::size_t head_capacity)
    : shape_(shape),
      keep_(std::min(keep, shape.max_positions)),
      head_capacity_(std::min(head_capacity, shape.max_positions)) {}

void LayerPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  observe(cache, attention);
  // Every head has the same budget here, so every head holds as many tokens.
  const std::size_t size = cache.uniform_size();
  if (size <= keep_) return;
  // The decoder adds one token per step, so one token per head goes; more is a caller's bug.
  if (size != keep_ + 1) {
    throw std::logic_error(name() + " policy: the cache is more than one token over budget");
  }
  std::size_t victims[kMaxStackHeads];
  std::vector<std::size_t> more;
  std::size_t* out = victims;
  if (cache.n_kv_heads() > kMaxStackHeads) {
    more.resize(cache.n_kv_heads());
    out = more.data();
  }
  choose_victims(cache, out);
  cache.remove_one_per_head(out);
}

void LayerPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  std::vector<std::size_t> victims(cache.n_kv_heads());
  while (cache.uniform_size() > keep) {
    choose_victims(cache, victims.data());
    cache.remove_one_per_head(victims.data());
  }
}

void LayerPolicy::cut_by_rule(LayerKVCache& cache, std::size_t keep, const EvictionRule& rule) {
  std::vector<std::vector<std::size_t>> kept(cache.n_kv_heads());
  bool cut = false;
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const std::size_t n = cache.size(g);
    if (n <= keep) {  // this head stays as it is
      for (std::size_t s = 0; s < n; ++s) kept[g].push_back(s);
      continue;
    }
    cut = true;
    const std::vector<Position> positions(cache.positions(g), cache.positions(g) + n);  // (n,)
    const std::vector<float> scores(cache.scores(g), cache.scores(g) + n);              // (n,)
    kept[g] = plan_cut(positions, scores, rule, keep).kept;
  }
  if (cut) cache.keep_per_head(kept);
}

CachePolicy::CachePolicy(MakeLayer make_layer, const PolicyKind* kind)
    : make_(std::move(make_layer)), kind_(kind) {
  if (!make_) throw std::invalid_argument("CachePolicy: no way to make a layer's policy");
  prototype_ = make_(LayerShape{});
  if (!prototype_) throw std::invalid_argument("CachePolicy: the layer maker made nothing");
}

std::size_t CachePolicy::max_tokens(std::size_t max_positions) const {
  return std::min(prototype_->keep(), max_positions);
}

const PolicyKind& CachePolicy::kind() const {
  if (kind_ == nullptr) {
    throw std::logic_error("the " + name() + " policy was not made by the factory: it has no kind");
  }
  return *kind_;
}

void FullCachePolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const Position* positions = cache.positions(g);  // (size(g),)
    const Position* oldest = std::min_element(positions, positions + cache.size(g));
    victims[g] = static_cast<std::size_t>(oldest - positions);
  }
}

}  // namespace h2o
