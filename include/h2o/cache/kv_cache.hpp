// kv_cache.hpp: one layer's preallocated key/value cache, with each slot's original position.
//
// Dimension legend: G = KV heads, S = slot capacity, D = head_dim.
//
// Storage never grows: every array is allocated once, at capacity, so a decode step allocates
// nothing. The live rows of every KV head are always slots [0, size()). Appending writes slot
// size(); evicting a slot moves the head's last live row into it ("overwrite in place"), so the
// live rows stay contiguous and attention reads one dense (size, D) block per head. Slot order is
// therefore NOT position order; attention does not care, because RoPE already rotated each key by
// its own position before it was cached.
//
// Each slot also carries a score: a number the eviction policy keeps per token (H2O: accumulated
// attention). It lives here, not in the policy, so that it moves with its key and value rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

class LayerKVCache {
 public:
  LayerKVCache(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity);

  // Writes the new token's rows into slot size() of every KV head and gives it score 0.
  //   keys (G * D,)  values (G * D,)  — head g's row starts at g * D.
  void append(const float* keys, const float* values, Position position);

  // Evicts one slot from every KV head at once: slot_per_head (G,). Head g's last live row moves
  // into slot_per_head[g]; then size() shrinks by one.
  void remove_one_per_head(const std::size_t* slot_per_head);

  // The blog's append-then-filter eviction: head g keeps exactly slots_per_head[g] (distinct live
  // slots), in that order, packed into slots [0, n). Every head must keep the same number n of
  // slots. A refused call changes nothing. Allocates.
  void keep_per_head(const std::vector<std::vector<std::size_t>>& slots_per_head);

  void clear() { size_ = 0; }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t n_kv_heads() const { return n_kv_heads_; }
  std::size_t head_dim() const { return head_dim_; }

  // Numbers held by live key and value rows over all KV heads: 2 * G * size * D.
  std::size_t live_kv_numbers() const { return 2 * n_kv_heads_ * size_ * head_dim_; }
  std::size_t live_kv_bytes() const { return live_kv_numbers() * sizeof(float); }
  // Bytes reserved for keys and values (capacity, not live rows).
  std::size_t reserved_kv_bytes() const {
    return 2 * n_kv_heads_ * capacity_ * head_dim_ * sizeof(float);
  }
  // Bytes of EVERY array a cache of this shape allocates: per KV head and slot a key and a value
  // row (2 D floats), a position (int64) and a score (float). Memory guards ask here before
  // allocating: keys and values alone undercount (with D = 2 the rest adds 75%).
  static std::uint64_t bytes_for(std::size_t n_kv_heads, std::size_t head_dim,
                                 std::size_t capacity);
  // The same number, counted from the arrays this cache holds.
  std::size_t reserved_bytes() const;

  // Head g's rows: keys(g) and values(g) point at (S, D) blocks whose first size() rows are live.
  const float* keys(std::size_t g) const { return &keys_(g, 0, 0); }
  const float* values(std::size_t g) const { return &values_(g, 0, 0); }
  const Position* positions(std::size_t g) const { return &positions_(g, 0); }  // (S,)
  const float* scores(std::size_t g) const { return &scores_(g, 0); }           // (S,)
  float* scores(std::size_t g) { return &scores_(g, 0); }

  // Live positions of head g, sorted (handy for printing and tests; allocates).
  std::vector<Position> sorted_positions(std::size_t g) const;

 private:
  std::size_t n_kv_heads_, head_dim_, capacity_;
  std::size_t size_ = 0;
  Tensor3 keys_;                        // (G, S, D)
  Tensor3 values_;                      // (G, S, D)
  xt::xtensor<Position, 2> positions_;  // (G, S)
  Matrix scores_;                       // (G, S)
};

}  // namespace h2o
