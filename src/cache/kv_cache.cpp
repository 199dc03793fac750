#include "h2o/cache/kv_cache.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace h2o {

LayerKVCache::LayerKVCache(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity)
    : n_kv_heads_(n_kv_heads), head_dim_(head_dim), capacity_(capacity) {
  if (n_kv_heads == 0 || head_dim == 0 || capacity == 0) {
    throw std::invalid_argument("LayerKVCache: KV heads, head_dim and capacity must all be >= 1");
  }
  keys_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
  values_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
  positions_ = xt::zeros<Position>({n_kv_heads, capacity});
  scores_ = xt::zeros<float>({n_kv_heads, capacity});
}

void LayerKVCache::append(const float* keys, const float* values, Position position) {
  if (size_ == capacity_) {
    throw std::length_error("LayerKVCache is full (" + std::to_string(capacity_) +
                            " slots): the policy must evict before the next token");
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    std::copy(keys + g * head_dim_, keys + (g + 1) * head_dim_, &keys_(g, size_, 0));
    std::copy(values + g * head_dim_, values + (g + 1) * head_dim_, &values_(g, size_, 0));
    positions_(g, size_) = position;
    scores_(g, size_) = 0.0f;
  }
  ++size_;
}

void LayerKVCache::remove_one_per_head(const std::size_t* slot_per_head) {
  if (size_ == 0) throw std::logic_error("LayerKVCache: nothing to evict");
  const std::size_t last = size_ - 1;
  // Check every head before moving any row, so a refused call leaves the cache unchanged.
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    if (slot_per_head[g] > last) {
      throw std::out_of_range("LayerKVCache: evicting a slot that is not live");
    }
  }
  // Raw row pointers (no per-element index arithmetic): this runs once per layer and token.
  const std::size_t D = head_dim_, rows = capacity_ * D;
  float* keys = keys_.data();
  float* values = values_.data();
  Position* positions = positions_.data();
  float* scores = scores_.data();
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::size_t slot = slot_per_head[g];
    if (slot == last) continue;
    float* key_to = keys + g * rows + slot * D;
    float* value_to = values + g * rows + slot * D;
    const float* key_from = keys + g * rows + last * D;
    const float* value_from = values + g * rows + last * D;
    for (std::size_t d = 0; d < D; ++d) key_to[d] = key_from[d];
    for (std::size_t d = 0; d < D; ++d) value_to[d] = value_from[d];
    positions[g * capacity_ + slot] = positions[g * capacity_ + last];
    scores[g * capacity_ + slot] = scores[g * capacity_ + last];
  }
  --size_;
}

void LayerKVCache::keep_per_head(const std::vector<std::vector<std::size_t>>& slots_per_head) {
  if (slots_per_head.size() != n_kv_heads_) {
    throw std::invalid_argument("LayerKVCache::keep_per_head: need one slot list per KV head");
  }
  const std::size_t kept = slots_per_head[0].size();
  // Check every list before moving any row, so a refused call leaves the cache unchanged.
  for (const auto& slots : slots_per_head) {
    if (slots.size() != kept) {
      throw std::invalid_argument(
          "LayerKVCache::keep_per_head: every head must keep as many slots");
    }
    // A slot listed twice would duplicate a token (and could write past the capacity).
    std::vector<bool> listed(size_, false);
    for (std::size_t s : slots) {
      if (s >= size_) throw std::out_of_range("LayerKVCache::keep_per_head: slot is not live");
      if (listed[s]) throw std::invalid_argument("LayerKVCache::keep_per_head: slot listed twice");
      listed[s] = true;
    }
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const auto& slots = slots_per_head[g];
    // Gather through copies, so any order of slots is safe.
    Matrix kept_keys = xt::zeros<float>({kept, head_dim_});    // (n, D)
    Matrix kept_values = xt::zeros<float>({kept, head_dim_});  // (n, D)
    std::vector<Position> kept_positions(kept);
    std::vector<float> kept_scores(kept);
    for (std::size_t i = 0; i < kept; ++i) {
      const std::size_t s = slots[i];
      std::copy(&keys_(g, s, 0), &keys_(g, s, 0) + head_dim_, &kept_keys(i, 0));
      std::copy(&values_(g, s, 0), &values_(g, s, 0) + head_dim_, &kept_values(i, 0));
      kept_positions[i] = positions_(g, s);
      kept_scores[i] = scores_(g, s);
    }
    for (std::size_t i = 0; i < kept; ++i) {
      std::copy(&kept_keys(i, 0), &kept_keys(i, 0) + head_dim_, &keys_(g, i, 0));
      std::copy(&kept_values(i, 0), &kept_values(i, 0) + head_dim_, &values_(g, i, 0));
      positions_(g, i) = kept_positions[i];
      scores_(g, i) = kept_scores[i];
    }
  }
  size_ = kept;
}

std::uint64_t LayerKVCache::bytes_for(std::size_t n_kv_heads, std::size_t head_dim,
                                      std::size_t capacity) {
  const std::uint64_t per_slot = 2 * static_cast<std::uint64_t>(head_dim) * sizeof(float) +
                                 sizeof(Position) + sizeof(float);  // key, value, position, score
  return static_cast<std::uint64_t>(n_kv_heads) * capacity * per_slot;
}

std::size_t LayerKVCache::reserved_bytes() const {
  return (keys_.size() + values_.size()) * sizeof(float) + positions_.size() * sizeof(Position) +
         scores_.size() * sizeof(float);
}

std::vector<Position> LayerKVCache::sorted_positions(std::size_t g) const {
  std::vector<Position> out(positions(g), positions(g) + size_);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace h2o
