#include "h2o/cache/kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/attention/attention.hpp"

namespace h2o {

namespace {
// The sizes of a quantised cache's arrays (see the header's legend), shared by the constructor
// and bytes_for so that the memory guard counts exactly what is allocated.
struct QuantShape {
  std::size_t value_group, value_groups, row_bytes, residual_rows, key_groups;
};
QuantShape quant_shape(std::size_t head_dim, std::size_t capacity, const KvFormat& format,
                       std::size_t max_positions) {
  QuantShape q{};
  q.value_group = std::min(format.group, head_dim);
  if (head_dim % q.value_group != 0) q.value_group = head_dim;  // groups must tile the row
  q.value_groups = head_dim / q.value_group;
  q.row_bytes = packed_bytes(head_dim, format.bits);
  q.residual_rows = std::min(format.group, capacity);
  // A live key group has a live member, and a group closes every B positions at most.
  q.key_groups = capacity;
  if (max_positions > 0) {
    q.key_groups = std::min(capacity, (max_positions + format.group - 1) / format.group);
  }
  return q;
}

// codes_out (D,) = the D codes of a packed row (packed_bytes(D, bits),) as floats, the same
// numbers get_code reads, a whole byte at a time (attention reads every row every step).
void unpack_row(const std::uint8_t* packed, std::size_t D, unsigned bits, float* codes_out) {
  if (bits == 8) {
    for (std::size_t d = 0; d < D; ++d) codes_out[d] = static_cast<float>(packed[d]);
  } else if (bits == 4 && D % 2 == 0) {
    for (std::size_t i = 0; i < D / 2; ++i) {
      codes_out[2 * i] = static_cast<float>(packed[i] & 0x0F);
      codes_out[2 * i + 1] = static_cast<float>(packed[i] >> 4);
    }
  } else if (bits == 2 && D % 4 == 0) {
    for (std::size_t i = 0; i < D / 4; ++i) {
      for (unsigned j = 0; j < 4; ++j) {
        codes_out[4 * i + j] = static_cast<float>((packed[i] >> (2 * j)) & 0x03);
      }
    }
  } else {
    for (std::size_t d = 0; d < D; ++d)
      codes_out[d] = static_cast<float>(get_code(packed, d, bits));
  }
}

// Re-packs the per-slot rows of one head: row i of the result is old row slots[i].
//   base (S, width): the head's block of one per-slot array.
template <typename T>
void gather_rows(T* base, std::size_t width, const std::vector<std::size_t>& slots) {
  std::vector<T> kept(slots.size() * width);
  for (std::size_t i = 0; i < slots.size(); ++i) {
    std::copy_n(base + slots[i] * width, width, kept.data() + i * width);
  }
  std::copy(kept.begin(), kept.end(), base);
}
}  // namespace

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
  if (!format.quantised()) {
    keys_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
    values_ = xt::zeros<float>({n_kv_heads, capacity, head_dim});
    return;
  }
  const QuantShape q = quant_shape(head_dim, capacity, format, max_positions);
  const std::size_t G = n_kv_heads;
  value_group_ = q.value_group;
  row_bytes_ = q.row_bytes;
  key_codes_ = xt::zeros<std::uint8_t>({G, capacity, q.row_bytes});
  value_codes_ = xt::zeros<std::uint8_t>({G, capacity, q.row_bytes});
  value_scale_ = xt::zeros<float>({G, capacity, q.value_groups});
  value_zero_ = xt::zeros<float>({G, capacity, q.value_groups});
  group_of_ = xt::zeros<std::int32_t>({G, capacity});
  residual_of_ = xt::zeros<std::int32_t>({G, capacity});
  residual_keys_ = xt::zeros<float>({G, q.residual_rows, head_dim});
  residual_values_ = xt::zeros<float>({G, q.residual_rows, head_dim});
  group_scale_ = xt::zeros<float>({G, q.key_groups, head_dim});
  group_zero_ = xt::zeros<float>({G, q.key_groups, head_dim});
  group_members_ = xt::zeros<std::int32_t>({G, q.key_groups});
  free_groups_ = xt::zeros<std::int32_t>({G, q.key_groups});
  free_residual_ = xt::zeros<std::int32_t>({G, q.residual_rows});
  free_group_count_.assign(G, 0);
  free_residual_count_.assign(G, 0);
  clear();
}

void LayerKVCache::clear() {
  std::fill(sizes_.begin(), sizes_.end(), std::size_t{0});
  if (!format_.quantised()) return;
  open_group_ = -1;
  const std::size_t key_groups = free_groups_.shape()[1], residual_rows = free_residual_.shape()[1];
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    // Stacks popped from the end: slot 0 is handed out first.
    for (std::size_t i = 0; i < key_groups; ++i) {
      free_groups_(g, i) = static_cast<std::int32_t>(key_groups - 1 - i);
      group_members_(g, i) = 0;
    }
    for (std::size_t i = 0; i < residual_rows; ++i) {
      free_residual_(g, i) = static_cast<std::int32_t>(residual_rows - 1 - i);
    }
    free_group_count_[g] = key_groups;
    free_residual_count_[g] = residual_rows;
  }
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
  if (format_.quantised()) throw std::logic_error("LayerKVCache::keys: the cache is quantised");
  return &keys_(g, 0, 0);
}

const float* LayerKVCache::values(std::size_t g) const {
  if (format_.quantised()) throw std::logic_error("LayerKVCache::values: the cache is quantised");
  return &values_(g, 0, 0);
}

const float* LayerKVCache::key_row(std::size_t g, std::size_t slot, float* buffer) const {
  if (!format_.quantised()) return &keys_(g, slot, 0);
  const std::int32_t group = group_of_(g, slot);
  if (group == kResidual)
    return &residual_keys_(g, static_cast<std::size_t>(residual_of_(g, slot)), 0);
  // dequantise_number, channel by channel: code * scale + zero, each channel its own step.
  const float* scale = &group_scale_(g, static_cast<std::size_t>(group), 0);
  const float* zero = &group_zero_(g, static_cast<std::size_t>(group), 0);
  unpack_row(&key_codes_(g, slot, 0), head_dim_, format_.bits, buffer);
  for (std::size_t d = 0; d < head_dim_; ++d) buffer[d] = buffer[d] * scale[d] + zero[d];
  return buffer;
}

const float* LayerKVCache::value_row(std::size_t g, std::size_t slot, float* buffer) const {
  if (!format_.quantised()) return &values_(g, slot, 0);
  if (group_of_(g, slot) == kResidual) {
    return &residual_values_(g, static_cast<std::size_t>(residual_of_(g, slot)), 0);
  }
  // dequantise_number, one step per group of value_group_ channels.
  const float* scale = &value_scale_(g, slot, 0);
  const float* zero = &value_zero_(g, slot, 0);
  unpack_row(&value_codes_(g, slot, 0), head_dim_, format_.bits, buffer);
  for (std::size_t c = 0; c * value_group_ < head_dim_; ++c) {
    for (std::size_t d = c * value_group_; d < (c + 1) * value_group_; ++d) {
      buffer[d] = buffer[d] * scale[c] + zero[c];
    }
  }
  return buffer;
}

const float* LayerKVCache::newest_key(std::size_t g) const {
  const std::size_t n = sizes_[g];
  if (n == 0) throw std::logic_error("LayerKVCache::newest_key: the cache is empty");
  if (format_.quantised() && group_of_(g, n - 1) != kResidual) {
    throw std::logic_error("LayerKVCache::newest_key: the newest slot is already quantised");
  }
  return key_row(g, n - 1, nullptr);
}

std::size_t LayerKVCache::quantised_rows(std::size_t g) const {
  if (!format_.quantised()) return 0;
  return sizes_[g] - (free_residual_.shape()[1] - free_residual_count_[g]);
}

void LayerKVCache::quantise_residual() {
  const unsigned bits = format_.bits;
  const std::size_t D = head_dim_, residual_rows = free_residual_.shape()[1];
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    if (free_residual_count_[g] == residual_rows) continue;  // every residual token was evicted
    if (free_group_count_[g] == 0) throw std::logic_error("LayerKVCache: no free key group");
    const auto group = static_cast<std::size_t>(free_groups_(g, --free_group_count_[g]));
    // Keys: one scale and zero per channel, over the group's surviving tokens.
    for (std::size_t d = 0; d < D; ++d) {
      float lo = 0.0f, hi = 0.0f;
      bool first = true;
      for (std::size_t s = 0; s < sizes_[g]; ++s) {
        if (group_of_(g, s) != kResidual) continue;
        const float x = residual_keys_(g, static_cast<std::size_t>(residual_of_(g, s)), d);
        lo = first ? x : std::min(lo, x);
        hi = first ? x : std::max(hi, x);
        first = false;
      }
      const QuantStep step = quant_step_for_range(lo, hi, bits);
      group_scale_(g, group, d) = step.scale;
      group_zero_(g, group, d) = step.zero;
    }
    for (std::size_t s = 0; s < sizes_[g]; ++s) {
      if (group_of_(g, s) != kResidual) continue;
      const auto r = static_cast<std::size_t>(residual_of_(g, s));
      const float* key = &residual_keys_(g, r, 0);
      const float* value = &residual_values_(g, r, 0);
      std::uint8_t* key_codes = &key_codes_(g, s, 0);
      std::uint8_t* value_codes = &value_codes_(g, s, 0);
      for (std::size_t d = 0; d < D; ++d) {
        const QuantStep step{group_scale_(g, group, d), group_zero_(g, group, d)};
        put_code(key_codes, d, bits, quantise_number(key[d], step, bits));
      }
      // Values: one scale and zero per token and group of channels.
      for (std::size_t c = 0; c * value_group_ < D; ++c) {
        const QuantStep step = quant_step_of(value + c * value_group_, value_group_, 1, bits);
        value_scale_(g, s, c) = step.scale;
        value_zero_(g, s, c) = step.zero;
        for (std::size_t d = c * value_group_; d < (c + 1) * value_group_; ++d) {
          put_code(value_codes, d, bits, quantise_number(value[d], step, bits));
        }
      }
      group_of_(g, s) = static_cast<std::int32_t>(group);
      ++group_members_(g, group);
    }
    // The residual is empty again.
    for (std::size_t i = 0; i < residual_rows; ++i) {
      free_residual_(g, i) = static_cast<std::int32_t>(residual_rows - 1 - i);
    }
    free_residual_count_[g] = residual_rows;
  }
}

void LayerKVCache::release_slot(std::size_t g, std::size_t slot) {
  const std::int32_t group = group_of_(g, slot);
  if (group == kResidual) {
    free_residual_(g, free_residual_count_[g]++) = residual_of_(g, slot);
  } else if (--group_members_(g, static_cast<std::size_t>(group)) == 0) {
    free_groups_(g, free_group_count_[g]++) = group;  // its last member: its floats are free
  }
}

void LayerKVCache::move_slot(std::size_t g, std::size_t from, std::size_t to) {
  std::copy_n(&key_codes_(g, from, 0), row_bytes_, &key_codes_(g, to, 0));
  std::copy_n(&value_codes_(g, from, 0), row_bytes_, &value_codes_(g, to, 0));
  const std::size_t value_groups = value_scale_.shape()[2];
  std::copy_n(&value_scale_(g, from, 0), value_groups, &value_scale_(g, to, 0));
  std::copy_n(&value_zero_(g, from, 0), value_groups, &value_zero_(g, to, 0));
  group_of_(g, to) = group_of_(g, from);
  residual_of_(g, to) = residual_of_(g, from);
  positions_(g, to) = positions_(g, from);
  scores_(g, to) = scores_(g, from);
}

void LayerKVCache::append(const float* keys, const float* values, Position position) {
  if (max_size() == capacity_) {
    throw std::length_error("LayerKVCache is full (" + std::to_string(capacity_) +
                            " slots): the policy must evict before the next token");
  }
  if (format_.quantised()) {
    const std::int64_t group = position / static_cast<std::int64_t>(format_.group);
    // A new position group (or, with positions out of order, a full residual) closes the open one.
    bool residual_full = false;
    for (std::size_t g = 0; g < n_kv_heads_; ++g) residual_full |= free_residual_count_[g] == 0;
    if ((open_group_ >= 0 && group != open_group_) || residual_full) quantise_residual();
    open_group_ = group;
    for (std::size_t g = 0; g < n_kv_heads_; ++g) {
      const std::int32_t r = free_residual_(g, --free_residual_count_[g]);
      const auto row = static_cast<std::size_t>(r);
      std::copy(keys + g * head_dim_, keys + (g + 1) * head_dim_, &residual_keys_(g, row, 0));
      std::copy(values + g * head_dim_, values + (g + 1) * head_dim_, &residual_values_(g, row, 0));
      const std::size_t slot = sizes_[g]++;
      group_of_(g, slot) = kResidual;
      residual_of_(g, slot) = r;
      positions_(g, slot) = position;
      scores_(g, slot) = 0.0f;
    }
    return;
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::size_t slot = sizes_[g]++;
    std::copy(keys + g * head_dim_, keys + (g + 1) * head_dim_, &keys_(g, slot, 0));
    std::copy(values + g * head_dim_, values + (g + 1) * head_dim_, &values_(g, slot, 0));
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
  if (format_.quantised()) {
    release_slot(g, slot);
    if (slot != last) move_slot(g, last, slot);
    return;
  }
  if (slot == last) return;
  // Raw row pointers (no per-element index arithmetic): this runs once per layer, head and token.
  const std::size_t D = head_dim_;
  float* key_to = &keys_(g, slot, 0);
  float* value_to = &values_(g, slot, 0);
  const float* key_from = &keys_(g, last, 0);
  const float* value_from = &values_(g, last, 0);
  for (std::size_t d = 0; d < D; ++d) key_to[d] = key_from[d];
  for (std::size_t d = 0; d < D; ++d) value_to[d] = value_from[d];
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
  if (format_.quantised()) {
    const std::size_t P = row_bytes_, VG = value_scale_.shape()[2];
    for (std::size_t g = 0; g < n_kv_heads_; ++g) {
      const auto& slots = slots_per_head[g];
      std::vector<bool> kept_slot(sizes_[g], false);
      for (std::size_t s : slots) kept_slot[s] = true;
      for (std::size_t s = 0; s < sizes_[g]; ++s) {
        if (!kept_slot[s]) release_slot(g, s);
      }
      gather_rows(&key_codes_(g, 0, 0), P, slots);
      gather_rows(&value_codes_(g, 0, 0), P, slots);
      gather_rows(&value_scale_(g, 0, 0), VG, slots);
      gather_rows(&value_zero_(g, 0, 0), VG, slots);
      gather_rows(&group_of_(g, 0), 1, slots);
      gather_rows(&residual_of_(g, 0), 1, slots);
      gather_rows(&positions_(g, 0), 1, slots);
      gather_rows(&scores_(g, 0), 1, slots);
      sizes_[g] = slots.size();
    }
    return;
  }
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const auto& slots = slots_per_head[g];
    const std::size_t kept = slots.size();
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
    sizes_[g] = kept;
  }
}

std::size_t LayerKVCache::live_kv_bytes() const {
  if (!format_.quantised()) return live_kv_numbers() * sizeof(float);
  const std::size_t float_row = head_dim_ * sizeof(float);
  const std::size_t quantised_row =
      2 * row_bytes_ + 2 * value_scale_.shape()[2] * sizeof(float);  // codes, value steps
  std::size_t bytes = 0;
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::size_t residual = free_residual_.shape()[1] - free_residual_count_[g];
    const std::size_t groups = free_groups_.shape()[1] - free_group_count_[g];
    bytes += (sizes_[g] - residual) * quantised_row + residual * 2 * float_row +
             groups * 2 * float_row;  // a key group: a scale and a zero per channel
  }
  return bytes;
}

std::size_t LayerKVCache::reserved_kv_bytes() const {
  if (!format_.quantised()) return 2 * n_kv_heads_ * capacity_ * head_dim_ * sizeof(float);
  return key_codes_.size() + value_codes_.size() +
         (value_scale_.size() + value_zero_.size() + residual_keys_.size() +
          residual_values_.size() + group_scale_.size() + group_zero_.size()) *
             sizeof(float);
}

std::uint64_t LayerKVCache::bytes_for(std::size_t n_kv_heads, std::size_t head_dim,
                                      std::size_t capacity, const KvFormat& format,
                                      std::size_t max_positions) {
  const std::uint64_t bookkeeping = sizeof(Position) + sizeof(float);  // position, score
  if (!format.quantised()) {
    const std::uint64_t per_slot =
        2 * static_cast<std::uint64_t>(head_dim) * sizeof(float) + bookkeeping;  // key, value
    return static_cast<std::uint64_t>(n_kv_heads) * capacity * per_slot;
  }
  const QuantShape q = quant_shape(head_dim, capacity, format, max_positions);
  const std::uint64_t per_slot =
      2 * q.row_bytes + 2 * q.value_groups * sizeof(float) + 2 * sizeof(std::int32_t) + bookkeeping;
  const std::uint64_t per_residual = 2 * head_dim * sizeof(float) + sizeof(std::int32_t);
  const std::uint64_t per_group = 2 * head_dim * sizeof(float) + 2 * sizeof(std::int32_t);
  return static_cast<std::uint64_t>(n_kv_heads) *
         (capacity * per_slot + q.residual_rows * per_residual + q.key_groups * per_group +
          2 * sizeof(std::size_t));  // the two free counts
}

std::size_t LayerKVCache::reserved_bytes() const {
  const std::size_t fp32 = (keys_.size() + values_.size()) * sizeof(float) +
                           positions_.size() * sizeof(Position) + scores_.size() * sizeof(float);
  if (!format_.quantised()) return fp32;
  return fp32 + reserved_kv_bytes() +
         (group_of_.size() + residual_of_.size() + group_members_.size() + free_groups_.size() +
          free_residual_.size()) *
             sizeof(std::int32_t) +
         (free_group_count_.size() + free_residual_count_.size()) * sizeof(std::size_t);
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
  // The steps of attention.hpp's kernel, each key and value row dequantised as it is reached.
  for (std::size_t t = 0; t < T; ++t) {
    const float* key = cache.key_row(g, t, row_buffer);
    for (std::size_t j = 0; j < n_queries; ++j) {
      const float* q = queries + j * D;
      float dot = 0.0f;
      for (std::size_t d = 0; d < D; ++d) dot += q[d] * key[d];
      weights_out[j * weights_stride + t] = dot;
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  for (std::size_t j = 0; j < n_queries; ++j) {
    softmax_inplace(weights_out + j * weights_stride, T, scale);
  }
  std::fill_n(outputs_out, n_queries * D, 0.0f);
  for (std::size_t t = 0; t < T; ++t) {
    const float* value = cache.value_row(g, t, row_buffer);
    for (std::size_t j = 0; j < n_queries; ++j) {
      const float w = weights_out[j * weights_stride + t];
      float* out = outputs_out + j * D;
      for (std::size_t d = 0; d < D; ++d) out[d] += w * value[d];
    }
  }
}

std::vector<Position> LayerKVCache::sorted_positions(std::size_t g) const {
  std::vector<Position> out(positions(g), positions(g) + sizes_[g]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace h2o
