// kv_cache.hpp: one layer's preallocated key/value cache, with each slot's original position.
//
// Dimension legend: G = KV heads, S = slot capacity, D = head_dim.
//
// Storage never grows: every array is allocated once, at capacity, so a decode step allocates
// nothing. Each KV head has its own live count, size(g), and its live rows are always slots
// [0, size(g)). Appending writes slot size(g) of every head; evicting a slot of head g moves that
// head's last live row into it ("overwrite in place"), so the live rows stay contiguous and
// attention reads one dense (size(g), D) block per head. Slot order is therefore NOT position
// order; attention does not care, because RoPE already rotated each key by its own position
// before it was cached.
//
// Most policies give every KV head the same budget, so all heads hold as many tokens
// (uniform_size()); a policy that shares a layer's budget among its heads unevenly (each head as
// many tokens as its attention needs) evicts from one head at a time (remove_slot), and the heads'
// counts differ.
//
// Each slot also carries a score: a number the eviction policy keeps per token (H2O: accumulated
// attention). It lives here, not in the policy, so that it moves with its key and value rows.
//
// Quantised storage (KvFormat bits 8, 4 or 2): the rows live in a QuantisedKVStore
// (quantised_kv_store.hpp: KIVI's layout, codes, scales, zeros and key groups, the newest tokens in
// float32 until their group fills), while this class keeps the slots as in float32: how many are
// live, their positions and scores, and which row moves where when a token is evicted.
// Attention reads either store through attend_cached_group (below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/cache/quantised_kv_store.hpp"

namespace h2o {

class LayerKVCache {
 public:
  // format: fp32 (default) or quantised; max_positions (0 = unknown) bounds how many key groups
  // can be live at once (one per B positions), so fewer group floats are reserved.
  LayerKVCache(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity,
               const KvFormat& format = {}, std::size_t max_positions = 0);

  // Writes the new token's rows into slot size(g) of every KV head g and gives it score 0.
  // Quantised: first quantises the residual tokens when `position` opens a new position group.
  //   keys (G * D,)  values (G * D,)  — head g's row starts at g * D.
  void append(const float* keys, const float* values, Position position);

  // Evicts live slot `slot` of KV head g: the head's last live row moves into it; then size(g)
  // shrinks by one. The other heads are untouched.
  void remove_slot(std::size_t g, std::size_t slot);
  // Evicts one slot from every KV head at once: slot_per_head (G,), each checked before any row
  // moves (a refused call changes nothing); the same as remove_slot(g, slot_per_head[g]) for
  // every g.
  void remove_one_per_head(const std::size_t* slot_per_head);

  // The blog's append-then-filter eviction: head g keeps exactly slots_per_head[g] (distinct live
  // slots of head g), in that order, packed into slots [0, n_g). Heads may keep different
  // numbers. A refused call changes nothing. Allocates.
  void keep_per_head(const std::vector<std::vector<std::size_t>>& slots_per_head);

  void clear();

  // Live slots of KV head g.
  std::size_t size(std::size_t g) const { return sizes_[g]; }
  // The live count every KV head shares, for callers of a uniform policy (every head the same
  // budget); std::logic_error when the heads hold different numbers of tokens.
  std::size_t uniform_size() const;
  // The most live slots any head holds, and the live slots of all heads together.
  std::size_t max_size() const;
  std::size_t total_size() const;
  std::size_t capacity() const { return capacity_; }
  std::size_t n_kv_heads() const { return n_kv_heads_; }
  std::size_t head_dim() const { return head_dim_; }

  const KvFormat& format() const { return format_; }

  // Numbers held by live key and value rows over all KV heads: 2 * D * (sum of size(g)).
  std::size_t live_kv_numbers() const { return 2 * total_size() * head_dim_; }
  // Bytes the live keys and values take, exactly: fp32, 4 bytes a number; quantised, the packed
  // codes of the quantised rows, their values' scales and zeros, the scales and zeros of every key
  // group with a live member, and the float32 rows of the residual tokens. (Positions and scores
  // are the policy's bookkeeping, not KV: not counted, in either format.)
  std::size_t live_kv_bytes() const;
  // Bytes reserved for keys and values (capacity, not live rows), counted the same way.
  std::size_t reserved_kv_bytes() const;
  // Bytes of EVERY array a cache of this shape allocates: per KV head and slot a key and a value
  // row (2 D floats), a position (int64) and a score (float), and for a quantised format its
  // codes, scales, zeros and bookkeeping. Memory guards ask here before allocating: keys and values
  // alone undercount (with D = 2 the rest adds 75%).
  static std::uint64_t bytes_for(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity,
                                 const KvFormat& format = {}, std::size_t max_positions = 0);
  // The same number, counted from the arrays this cache holds.
  std::size_t reserved_bytes() const;

  // Head g's rows: keys(g) and values(g) point at (S, D) blocks whose first size(g) rows are live.
  // fp32 format only (std::logic_error otherwise: use key_row / value_row).
  const float* keys(std::size_t g) const;
  const float* values(std::size_t g) const;
  // The key or value row (D,) of head g's live slot as attention reads it, in any format: a
  // float32 row is returned as it is; a quantised one is dequantised into `buffer` (D,), which is
  // returned.
  const float* key_row(std::size_t g, std::size_t slot, float* buffer) const;
  const float* value_row(std::size_t g, std::size_t slot, float* buffer) const;
  // The key (D,) of head g's newest slot (size(g) - 1) right after append: float32 in every
  // format (a new token starts in the residual). std::logic_error when that slot is quantised.
  const float* newest_key(std::size_t g) const;
  // Live slots of head g whose rows are quantised (the rest are residual, float32).
  std::size_t quantised_rows(std::size_t g) const;
  // The quantised store (quantised formats only; std::logic_error for fp32).
  const QuantisedKVStore& quantised_store() const;
  const Position* positions(std::size_t g) const { return &positions_(g, 0); }  // (S,)
  // The position of head 0's newest slot (size(0) - 1): right after append, the token the decoder
  // just appended, which every head holds. The cache must not be empty.
  Position newest_position() const { return positions_(0, sizes_[0] - 1); }
  const float* scores(std::size_t g) const { return &scores_(g, 0); }           // (S,)
  float* scores(std::size_t g) { return &scores_(g, 0); }

  // Live positions of head g, sorted (handy for printing and tests; allocates).
  std::vector<Position> sorted_positions(std::size_t g) const;

 private:
  std::size_t n_kv_heads_, head_dim_, capacity_;
  std::vector<std::size_t> sizes_;      // (G,) live slots of each head
  Tensor3 keys_;                        // (G, S, D) float32 rows (empty when quantised)
  Tensor3 values_;                      // (G, S, D)
  xt::xtensor<Position, 2> positions_;  // (G, S)
  Matrix scores_;                       // (G, S)

  KvFormat format_;
  std::optional<QuantisedKVStore>
      quantised_;  // the rows of a quantised format (else keys_, values_)
};

// Attention of the Q query heads that share KV head g over that head's live slots, whatever the
// cache's format: fp32 calls attend_group_into on the rows as they are (the same bits as before);
// a quantised cache calls attend_quantised_group (attention/quantised_attention.hpp), which reads
// the codes directly; the weights (what policies score) are those of the dequantised keys, to
// float rounding (its bound is stated there).
//   queries (Q, D)  weights_out: Q rows of size(g) weights, row j at + j * weights_stride
//   outputs_out (Q, D)  row_buffer (D,)
void attend_cached_group(const LayerKVCache& cache, std::size_t g, const float* queries,
                         std::size_t n_queries, float* weights_out, std::size_t weights_stride,
                         float* outputs_out, float* row_buffer);

}  // namespace h2o
