#include "h2o/cache/quantised_kv_store.hpp"

#include <algorithm>
#include <stdexcept>

namespace h2o {

namespace {
// The sizes of the store's arrays (see the header's legend), shared by the constructor and
// bytes_for so that the memory guard counts exactly what is allocated.
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
  q.residual_rows = std::min(format.residual_window(), capacity);
  // A live key group has a live member, and a group closes every B positions at most.
  q.key_groups = capacity;
  if (max_positions > 0) {
    q.key_groups = std::min(capacity, (max_positions + format.group - 1) / format.group);
  }
  return q;
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

QuantisedKVStore::QuantisedKVStore(std::size_t n_kv_heads, std::size_t head_dim,
                                   std::size_t capacity, const KvFormat& format,
                                   std::size_t max_positions)
    : n_kv_heads_(n_kv_heads), head_dim_(head_dim), format_(format), capacity_(capacity) {
  check_kv_format(format);
  if (!format.quantised()) throw std::invalid_argument("QuantisedKVStore: the format is fp32");
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

void QuantisedKVStore::clear() {
  open_block_ = -1;
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

QuantisedRows QuantisedKVStore::rows(std::size_t g) const {
  QuantisedRows r;
  r.bits = format_.bits;
  r.head_dim = head_dim_;
  r.row_bytes = row_bytes_;
  r.value_group = value_group_;
  r.key_codes = &key_codes_(g, 0, 0);
  r.value_codes = &value_codes_(g, 0, 0);
  r.value_scale = &value_scale_(g, 0, 0);
  r.value_zero = &value_zero_(g, 0, 0);
  r.key_group = &group_of_(g, 0);
  r.key_scale = &group_scale_(g, 0, 0);
  r.key_zero = &group_zero_(g, 0, 0);
  r.residual_of = &residual_of_(g, 0);
  r.residual_keys = &residual_keys_(g, 0, 0);
  r.residual_values = &residual_values_(g, 0, 0);
  return r;
}

void QuantisedKVStore::quantise_residual(const std::size_t* sizes, const Position* positions) {
  const unsigned bits = format_.bits;
  const std::size_t D = head_dim_, residual_rows = free_residual_.shape()[1];
  // The key group a residual token joins: one for all of them when the window is one group (so a
  // full residual of out-of-order positions still closes as one group), else its position group.
  const bool one_group = format_.residual_window() == format_.group;
  const auto B = static_cast<Position>(format_.group);
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const Position* position = positions + g * capacity_;
    auto key_of = [&](std::size_t s) { return one_group ? Position{0} : position[s] / B; };
    // One key group at a time: the position group of the first slot still residual, and every
    // residual slot of the same position group (quantised slots are no longer residual).
    for (std::size_t first = 0; first < sizes[g]; ++first) {
      if (!is_residual(g, first)) continue;
      const Position key = key_of(first);
      if (free_group_count_[g] == 0) throw std::logic_error("LayerKVCache: no free key group");
      const auto group = static_cast<std::size_t>(free_groups_(g, --free_group_count_[g]));
      auto member = [&](std::size_t s) { return is_residual(g, s) && key_of(s) == key; };
      // Keys: one scale and zero per channel, over the group's surviving tokens.
      for (std::size_t d = 0; d < D; ++d) {
        float lo = 0.0f, hi = 0.0f;
        bool seen = false;
        for (std::size_t s = first; s < sizes[g]; ++s) {
          if (!member(s)) continue;
          const float x = residual_keys_(g, static_cast<std::size_t>(residual_of_(g, s)), d);
          lo = seen ? std::min(lo, x) : x;
          hi = seen ? std::max(hi, x) : x;
          seen = true;
        }
        const QuantStep step = quant_step_for_range(lo, hi, bits);
        group_scale_(g, group, d) = step.scale;
        group_zero_(g, group, d) = step.zero;
      }
      for (std::size_t s = first; s < sizes[g]; ++s) {
        if (!member(s)) continue;
        const auto r = static_cast<std::size_t>(residual_of_(g, s));
        const float* key_row = &residual_keys_(g, r, 0);
        const float* value = &residual_values_(g, r, 0);
        std::uint8_t* key_codes = &key_codes_(g, s, 0);
        std::uint8_t* value_codes = &value_codes_(g, s, 0);
        for (std::size_t d = 0; d < D; ++d) {
          const QuantStep step{group_scale_(g, group, d), group_zero_(g, group, d)};
          put_code(key_codes, d, bits, quantise_number(key_row[d], step, bits));
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
    }
    // The residual is empty again.
    for (std::size_t i = 0; i < residual_rows; ++i) {
      free_residual_(g, i) = static_cast<std::int32_t>(residual_rows - 1 - i);
    }
    free_residual_count_[g] = residual_rows;
  }
}

void QuantisedKVStore::append(const float* keys, const float* values, Position position,
                              const std::size_t* sizes, const Position* positions) {
  const std::int64_t block = position / static_cast<std::int64_t>(format_.residual_window());
  // A new block of R positions (or, with positions out of order, a full residual) closes the
  // open one.
  bool residual_full = false;
  for (std::size_t g = 0; g < n_kv_heads_; ++g) residual_full |= free_residual_count_[g] == 0;
  if ((open_block_ >= 0 && block != open_block_) || residual_full) {
    quantise_residual(sizes, positions);
  }
  open_block_ = block;
  const std::size_t D = head_dim_;
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::int32_t r = free_residual_(g, --free_residual_count_[g]);
    const auto row = static_cast<std::size_t>(r);
    std::copy(keys + g * D, keys + (g + 1) * D, &residual_keys_(g, row, 0));
    std::copy(values + g * D, values + (g + 1) * D, &residual_values_(g, row, 0));
    group_of_(g, sizes[g]) = QuantisedRows::kResidual;
    residual_of_(g, sizes[g]) = r;
  }
}

void QuantisedKVStore::release(std::size_t g, std::size_t slot) {
  const std::int32_t group = group_of_(g, slot);
  if (group == QuantisedRows::kResidual) {
    free_residual_(g, free_residual_count_[g]++) = residual_of_(g, slot);
  } else if (--group_members_(g, static_cast<std::size_t>(group)) == 0) {
    free_groups_(g, free_group_count_[g]++) = group;  // its last member: its floats are free
  }
}

void QuantisedKVStore::move(std::size_t g, std::size_t from, std::size_t to) {
  std::copy_n(&key_codes_(g, from, 0), row_bytes_, &key_codes_(g, to, 0));
  std::copy_n(&value_codes_(g, from, 0), row_bytes_, &value_codes_(g, to, 0));
  const std::size_t value_groups = value_scale_.shape()[2];
  std::copy_n(&value_scale_(g, from, 0), value_groups, &value_scale_(g, to, 0));
  std::copy_n(&value_zero_(g, from, 0), value_groups, &value_zero_(g, to, 0));
  group_of_(g, to) = group_of_(g, from);
  residual_of_(g, to) = residual_of_(g, from);
}

void QuantisedKVStore::keep(std::size_t g, std::size_t size,
                            const std::vector<std::size_t>& slots) {
  const std::size_t P = row_bytes_, VG = value_scale_.shape()[2];
  std::vector<bool> kept_slot(size, false);
  for (std::size_t s : slots) kept_slot[s] = true;
  for (std::size_t s = 0; s < size; ++s) {
    if (!kept_slot[s]) release(g, s);
  }
  gather_rows(&key_codes_(g, 0, 0), P, slots);
  gather_rows(&value_codes_(g, 0, 0), P, slots);
  gather_rows(&value_scale_(g, 0, 0), VG, slots);
  gather_rows(&value_zero_(g, 0, 0), VG, slots);
  gather_rows(&group_of_(g, 0), 1, slots);
  gather_rows(&residual_of_(g, 0), 1, slots);
}

std::size_t QuantisedKVStore::live_kv_bytes(const std::size_t* sizes) const {
  const std::size_t float_row = head_dim_ * sizeof(float);
  const std::size_t quantised_row =
      2 * row_bytes_ + 2 * value_scale_.shape()[2] * sizeof(float);  // codes, value steps
  std::size_t bytes = 0;
  for (std::size_t g = 0; g < n_kv_heads_; ++g) {
    const std::size_t residual = residual_rows(g);
    const std::size_t groups = free_groups_.shape()[1] - free_group_count_[g];
    bytes += (sizes[g] - residual) * quantised_row + residual * 2 * float_row +
             groups * 2 * float_row;  // a key group: a scale and a zero per channel
  }
  return bytes;
}

std::size_t QuantisedKVStore::reserved_kv_bytes() const {
  return key_codes_.size() + value_codes_.size() +
         (value_scale_.size() + value_zero_.size() + residual_keys_.size() +
          residual_values_.size() + group_scale_.size() + group_zero_.size()) *
             sizeof(float);
}

std::size_t QuantisedKVStore::reserved_bytes() const {
  return reserved_kv_bytes() +
         (group_of_.size() + residual_of_.size() + group_members_.size() + free_groups_.size() +
          free_residual_.size()) *
             sizeof(std::int32_t) +
         (free_group_count_.size() + free_residual_count_.size()) * sizeof(std::size_t);
}

std::uint64_t QuantisedKVStore::bytes_for(std::size_t n_kv_heads, std::size_t head_dim,
                                          std::size_t capacity, const KvFormat& format,
                                          std::size_t max_positions) {
  const QuantShape q = quant_shape(head_dim, capacity, format, max_positions);
  const std::uint64_t per_slot =
      2 * q.row_bytes + 2 * q.value_groups * sizeof(float) + 2 * sizeof(std::int32_t);
  const std::uint64_t per_residual = 2 * head_dim * sizeof(float) + sizeof(std::int32_t);
  const std::uint64_t per_group = 2 * head_dim * sizeof(float) + 2 * sizeof(std::int32_t);
  return static_cast<std::uint64_t>(n_kv_heads) *
         (capacity * per_slot + q.residual_rows * per_residual + q.key_groups * per_group +
          2 * sizeof(std::size_t));  // the two free counts
}

}  // namespace h2o
