// quantised_kv_store.hpp: the keys and values of one layer's KV cache stored quantised (KvFormat
// bits 8, 4 or 2; kv_quantiser.hpp has the arithmetic), KIVI's layout with eviction on top. The
// layer cache (kv_cache.hpp) keeps the slots (how many are live, their positions and scores) and
// hands this store the rows; the store keeps their codes, scales, zeros and groups.
//
// Position group k = positions k * B .. (k + 1) * B - 1 (B = format.group):
//   keys     per channel over a position group: every channel of a KV head has its own scale and
//            zero per group (2 D floats a group), each token a row of D packed codes;
//   values   per token over groups of min(B, D) channels (2 floats per channel group), and a row
//            of D packed codes;
//   residual the newest tokens stay float32 (KIVI's residual window, R = format.residual_window(),
//            a multiple of B; R = B by default): when the first token of the next block of R
//            positions arrives (append), the block's surviving tokens are quantised together, keys
//            and values, B positions to a key group. Before that, attention reads them exactly.
// Eviction works on slots (the last live row moves into the freed slot, codes and all). A token
// evicted from a quantised group only drops its row: its group keeps its scale and zero
// (re-quantising the others would change numbers attention already used), and the group's floats
// are freed with its last member. So with eviction, a group's floats are shared by fewer tokens:
// live_kv_bytes() counts them, and that is part of what eviction costs a quantised cache.
//
// Dimension legend: G = KV heads, S = slot capacity, D = head_dim, NG = key group slots,
// R = residual rows (<= B), VG = value channel groups per row (D / min(B, D)), P = packed bytes of
// a row of D codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "h2o/attention/quantised_attention.hpp"
#include "h2o/base/tensor.hpp"
#include "h2o/cache/kv_quantiser.hpp"

namespace h2o {

class QuantisedKVStore {
 public:
  // format.quantised() must hold; max_positions (0 = unknown) bounds how many key groups can be
  // live at once (one per B positions), so fewer group floats are reserved.
  QuantisedKVStore(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity,
                   const KvFormat& format, std::size_t max_positions = 0);

  // Every slot free again.
  void clear();

  // Writes a new token into slot sizes[g] of every KV head g (sizes (G,): live slots before the
  // token), as a residual row; first quantises the residual tokens when `position` opens a new
  // block of R positions (or the residual is full). positions: the cache's (G, S) slot positions
  // (row g at + g * S), which say the key group of each residual token.
  //   keys (G * D,)  values (G * D,)
  void append(const float* keys, const float* values, Position position, const std::size_t* sizes,
              const Position* positions);
  // Slot `slot` of head g leaves: its residual row or its key group membership is freed.
  void release(std::size_t g, std::size_t slot);
  // Slot `from`'s codes, steps and group move into slot `to` (the cache moves its bookkeeping).
  void move(std::size_t g, std::size_t from, std::size_t to);
  // Head g keeps exactly `slots` (distinct live slots, of `size` live), in that order, packed
  // into slots [0, n): the others are released. Allocates.
  void keep(std::size_t g, std::size_t size, const std::vector<std::size_t>& slots);

  // Head g's rows as attention reads them (attention/quantised_attention.hpp).
  QuantisedRows rows(std::size_t g) const;
  bool is_residual(std::size_t g, std::size_t slot) const {
    return group_of_(g, slot) == QuantisedRows::kResidual;
  }
  // Live rows of head g still float32 (the residual tokens).
  std::size_t residual_rows(std::size_t g) const {
    return free_residual_.shape()[1] - free_residual_count_[g];
  }

  // Bytes of the live keys and values, exactly: the packed codes of the quantised rows, their
  // values' scales and zeros, the scales and zeros of every key group with a live member, and
  // the float32 rows of the residual tokens. sizes (G,): live slots of each head.
  std::size_t live_kv_bytes(const std::size_t* sizes) const;
  // Bytes reserved for keys and values, counted the same way.
  std::size_t reserved_kv_bytes() const;
  // Bytes of every array the store holds (keys and values, and its bookkeeping).
  std::size_t reserved_bytes() const;
  // The same number before allocating, from the shape.
  static std::uint64_t bytes_for(std::size_t n_kv_heads, std::size_t head_dim, std::size_t capacity,
                                 const KvFormat& format, std::size_t max_positions);

 private:
  std::size_t n_kv_heads_, head_dim_;
  KvFormat format_;
  std::size_t value_group_ = 0;   // channels per value group
  std::size_t row_bytes_ = 0;     // P
  std::size_t capacity_;          // S
  std::int64_t open_block_ = -1;  // block of R positions of the residual tokens (-1: none yet)
  xt::xtensor<std::uint8_t, 3> key_codes_, value_codes_;  // (G, S, P)
  Tensor3 value_scale_, value_zero_;                      // (G, S, VG)
  xt::xtensor<std::int32_t, 2> group_of_;  // (G, S) key group slot of a quantised row, or kResidual
  xt::xtensor<std::int32_t, 2> residual_of_;    // (G, S) residual row of a residual slot
  Tensor3 residual_keys_, residual_values_;     // (G, R, D)
  Tensor3 group_scale_, group_zero_;            // (G, NG, D) each key group's per-channel step
  xt::xtensor<std::int32_t, 2> group_members_;  // (G, NG) live rows of each key group
  // Free key group slots and residual rows of each head: a stack, the first free_*_count_ live.
  xt::xtensor<std::int32_t, 2> free_groups_, free_residual_;         // (G, NG), (G, R)
  std::vector<std::size_t> free_group_count_, free_residual_count_;  // (G,)

  // Every head's residual tokens into key groups, one per position group among them.
  void quantise_residual(const std::size_t* sizes, const Position* positions);
};

}  // namespace h2o
