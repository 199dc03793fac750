#include "h2o/cache/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/attention/attention.hpp"
#include "h2o/attention/quantised_attention.hpp"

namespace h2o {

LayerKVCache::LayerKVCache(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity,
                           const KvFormat& format, std::size_t max_positions)
    : n_kv_heads_(n_kv_heads),
      head_dim_(head_dim),
      capacity_(capacity),
      sizes_(n_kv_heads, 0),
      format_(format) {
  if (n_kv_heads == 0 || head_dim == 0 || capacity == 0) {
    throw std::invalid_argument("LayerKVCache: KV heads, head_dim and capacity must all be >= 1");
  }
  check_kv_format(format);
  positions_ = xt::zeros<Position>({n_kv_heads, capacity});
  scores_ = xt::zeros<float>({n_kv_heads, capacity});
  if (format.quantised()) {
    quantised_.emplace(n_kv_heads, head_dim, capacity, format, max_positions);
    return;
  }
  keys_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
  values_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
}

void LayerKVCache::clear() {
  std::fill(sizes_.begin(), sizes_.end(), std::size_t{0});
  if (quantised_) quantised_->clear();
}

std::size_t LayerKVCache::uniform_size() const {
  for (std::size_t g = 1; g < n_kv_heads_; ++g) {
    if (sizes_[g] != sizes_[0]) {
      throw std::logic_error("LayerKVCache: KV head " + std::to_string(g) + " holds " +
                             std::to_string(sizes_[g]) + " tokens and head 0 holds " +
                             std::to_string(sizes_[0]) + " (ask size(g) per head)");
    }
  }
  return sizes_[0];
}

std::size_t LayerKVCache::max_size() const {
  return *std::max_element(sizes_.begin(), sizes_.end());
}

std::size_t LayerKVCache::total_size() const {
  std::size_t total = 0;
  for (std::size_t n : sizes_) total += n;
  return total;
}

const float* LayerKVCache::keys(std::size_t g) const {
  if (quantised_) throw std::logic_error("LayerKVCache::keys: the cache is quantised");
  return &keys_(g, 0, 0);
}

const float* LayerKVCache::values(std::size_t g) const {
  if (quantised_) throw std::logic_error("LayerKVCache::values: the cache is quantised");
  return &values_(g, 0, 0);
}

const QuantisedKVStore& LayerKVCache::quantised_store() const {
  if (!quantised_) throw std::logic_error("LayerKVCache::quantised_store: the cache is fp32");
  return *quantised_;
}

const float* LayerKVCache::key_row(std::size_t g, std::size_t slot, float* buffer) const {
  if (!quantised_) return &keys_(g, slot, 0);
  return dequantised_key_row(quantised_->rows(g), slot, buffer);
}

const float* LayerKVCache::value_row(std::size_t g, std::size_t slot, float* buffer) const {
  if (!quantised_) return &values_(g, slot, 0);
  return dequantised_value_row(quantised_->rows(g), slot, buffer);
}

const float* LayerKVCache::newest_key(std::size_t g) const {
  const std::size_t n = sizes_[g];
  if (n == 0) throw std::logic_error("LayerKVCache::newest_key: the cache is empty");
  if (quantised_ && !quantised_->is_residual(g, n - 1)) {
    throw std::logic_error("LayerKVCache::newest_key: the newest slot is already quantised");
  }
  return key_row(g, n - 1, nullptr);
}

std::size_t LayerKVCache::quantised_rows(std::size_t g) const {
  if (!quantised_) return 0;
  return sizes_[g] - quantised_->residual_rows(g);
}

void LayerKVCache::append(const float* keys, const float* values, Position position) {
  if (max_size() == capacity_) {
    throw std::length_error("LayerKVCache is full (" + std::to_string(capacity_) +
                            " slots): the policy must evict before the next token");
  }
  if (quantised_) quantised_->append(keys, values, position, sizes_.data(), &positions_(0, 0));
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::size_t slot = sizes_[g]++;
    if (!quantised_) {
      std::copy(keys + g * head_dim_, keys + (g + 1) * head_dim_, &keys_(g, slot, 0));
      std::copy(values + g * head_dim_, values + (g + 1) * head_dim_, &values_(g, slot, 0));
    }
    positions_(g, slot) = position;
    scores_(g, slot) = 0.0f;
  }
}

void LayerKVCache::remove_slot(std::size_t g, std::size_t slot) {
  if (g >= n_kv_heads_) throw std::out_of_range("LayerKVCache: no KV head " + std::to_string(g));
  if (slot >= sizes_[g]) {
    throw std::out_of_range(sizes_[g] == 0 ? "LayerKVCache: nothing to evict"
                                           : "LayerKVCache: evicting a slot that is not live");
  }
  const std::size_t last = --sizes_[g];
  if (quantised_) quantised_->release(g, slot);
  if (slot == last) return;
  if (quantised_) {
    quantised_->move(g, last, slot);
  } else {
    // Raw row pointers (no per-element index arithmetic): this runs once per layer, head and token.
    const std::size_t D = head_dim_;
    float* key_to = &keys_(g, slot, 0);
    float* value_to = &values_(g, slot, 0);
    const float* key_from = &keys_(g, last, 0);
    const float* value_from = &values_(g, last, 0);
    for (std::size_t d = 0; d < D; ++d) key_to[d] = key_from[d];
    for (std::size_t d = 0; d < D; ++d) value_to[d] = value_from[d];
  }
  positions_(g, slot) = positions_(g, last);
  scores_(g, slot) = scores_(g, last);
}

void LayerKVCache::remove_one_per_head(const std::size_t* slot_per_head) {
  // Check every head before moving any row, so a refused call leaves the cache unchanged.
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    if (sizes_[g] == 0) throw std::logic_error("LayerKVCache: nothing to evict");
    if (slot_per_head[g] >= sizes_[g]) {
      throw std::out_of_range("LayerKVCache: evicting a slot that is not live");
    }
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) remove_slot(g, slot_per_head[g]);
}

void LayerKVCache::keep_per_head(const std::vector<std::vector<std::size_t>>& slots_per_head) {
  if (slots_per_head.size() != n_kv_heads_) {
    throw std::invalid_argument("LayerKVCache::keep_per_head: need one slot list per KV head");
  }
  // Check every list before moving any row, so a refused call leaves the cache unchanged.
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    // A slot listed twice would duplicate a token (and could write past the capacity).
    std::vector<bool> listed(sizes_[g], false);
    for (std::size_t s : slots_per_head[g]) {
      if (s >= sizes_[g]) throw std::out_of_range("LayerKVCache::keep_per_head: slot is not live");
      if (listed[s]) throw std::invalid_argument("LayerKVCache::keep_per_head: slot listed twice");
      listed[s] = true;
    }
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const auto& slots = slots_per_head[g];
    const std::size_t kept = slots.size();
    if (quantised_) quantised_->keep(g, sizes_[g], slots);
    // Gather through copies, so any order of slots is safe.
    const std::size_t D = quantised_ ? 0 : head_dim_;  // float32 rows to move
    Matrix kept_keys = xt::zeros<float>({kept, D});    // (n, D)
    Matrix kept_values = xt::zeros<float>({kept, D});  // (n, D)
    std::vector<Position> kept_positions(kept);
    std::vector<float> kept_scores(kept);
    for (std::size_t i = 0; i < kept; ++i) {
      const std::size_t s = slots[i];
      if (D > 0) std::copy_n(&keys_(g, s, 0), D, &kept_keys(i, 0));
      if (D > 0) std::copy_n(&values_(g, s, 0), D, &kept_values(i, 0));
      kept_positions[i] = positions_(g, s);
      kept_scores[i] = scores_(g, s);
    }
    for (std::size_t i = 0; i < kept; ++i) {
      if (D > 0) std::copy_n(&kept_keys(i, 0), D, &keys_(g, i, 0));
      if (D > 0) std::copy_n(&kept_values(i, 0), D, &values_(g, i, 0));
      positions_(g, i) = kept_positions[i];
      scores_(g, i) = kept_scores[i];
    }
    sizes_[g] = kept;
  }
}

std::size_t LayerKVCache::live_kv_bytes() const {
  if (quantised_) return quantised_->live_kv_bytes(sizes_.data());
  return live_kv_numbers() * sizeof(float);
}

std::size_t LayerKVCache::reserved_kv_bytes() const {
  if (quantised_) return quantised_->reserved_kv_bytes();
  return 2 * n_kv_heads_ * capacity_ * head_dim_ * sizeof(float);
}

std::uint64_t LayerKVCache::bytes_for(std::size_t n_kv_heads, std::size_t head_dim,
                                      std::size_t capacity, const KvFormat& format,
                                      std::size_t max_positions) {
  const std::uint64_t bookkeeping = sizeof(Position) + sizeof(float);  // position, score
  const std::uint64_t slots = static_cast<std::uint64_t>(n_kv_heads) * capacity;
  if (format.quantised()) {
    return slots * bookkeeping +
           QuantisedKVStore::bytes_for(n_kv_heads, head_dim, capacity, format, max_positions);
  }
  return slots * (2 * static_cast<std::uint64_t>(head_dim) * sizeof(float) + bookkeeping);
}

std::size_t LayerKVCache::reserved_bytes() const {
  const std::size_t rows = (keys_.size() + values_.size()) * sizeof(float);
  const std::size_t bookkeeping =
      positions_.size() * sizeof(Position) + scores_.size() * sizeof(float);
  return rows + bookkeeping + (quantised_ ? quantised_->reserved_bytes() : 0);
}

void attend_cached_group(const LayerKVCache& cache, std::size_t g, const float* queries,
                         std::size_t n_queries, float* weights_out, std::size_t weights_stride,
                         float* outputs_out, float* row_buffer) {
  const std::size_t T = cache.size(g), D = cache.head_dim();
  if (!cache.format().quantised()) {
    attend_group_into(queries, n_queries, cache.keys(g), cache.values(g), T, D, weights_out,
                      weights_stride, outputs_out);
    return;
  }
  attend_quantised_group(cache.quantised_store().rows(g), T, queries, n_queries, weights_out,
                         weights_stride, outputs_out, row_buffer);
}

std::vector<Position> LayerKVCache::sorted_positions(std::size_t g) const {
  std::vector<Position> out(positions(g), positions(g) + sizes_[g]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace h2o
