#include "h2o/attention/quantised_attention.hpp"

#include <algorithm>
#include <cmath>

#include "h2o/attention/attention.hpp"
#include "h2o/base/packed_codes.hpp"

namespace h2o {

namespace {
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
}  // namespace

const float* dequantised_key_row(const QuantisedRows& rows, std::size_t t, float* buffer) {
  const std::size_t D = rows.head_dim;
  const std::int32_t group = rows.key_group[t];
  if (group == QuantisedRows::kResidual) {
    return rows.residual_keys + static_cast<std::size_t>(rows.residual_of[t]) * D;
  }
  // dequantise_number, channel by channel: code * scale + zero, each channel its own step.
  const float* scale = rows.key_scale + static_cast<std::size_t>(group) * D;
  const float* zero = rows.key_zero + static_cast<std::size_t>(group) * D;
  unpack_row(rows.key_codes + t * rows.row_bytes, D, rows.bits, buffer);
  for (std::size_t d = 0; d < D; ++d) buffer[d] = buffer[d] * scale[d] + zero[d];
  return buffer;
}

const float* dequantised_value_row(const QuantisedRows& rows, std::size_t t, float* buffer) {
  const std::size_t D = rows.head_dim, VB = rows.value_group;
  if (rows.key_group[t] == QuantisedRows::kResidual) {
    return rows.residual_values + static_cast<std::size_t>(rows.residual_of[t]) * D;
  }
  // dequantise_number, one step per group of VB channels.
  const float* scale = rows.value_scale + t * rows.value_groups();
  const float* zero = rows.value_zero + t * rows.value_groups();
  unpack_row(rows.value_codes + t * rows.row_bytes, D, rows.bits, buffer);
  for (std::size_t c = 0; c * VB < D; ++c) {
    for (std::size_t d = c * VB; d < (c + 1) * VB; ++d) buffer[d] = buffer[d] * scale[c] + zero[c];
  }
  return buffer;
}

void attend_quantised_group_reference(const QuantisedRows& rows, std::size_t n_tokens,
                                      const float* queries, std::size_t n_queries,
                                      float* weights_out, std::size_t weights_stride,
                                      float* outputs_out, float* row_buffer) {
  const std::size_t T = n_tokens, D = rows.head_dim;
  // The steps of attention.hpp's kernel, each key and value row dequantised as it is reached.
  for (std::size_t t = 0; t < T; ++t) {
    const float* key = dequantised_key_row(rows, t, row_buffer);
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
    const float* value = dequantised_value_row(rows, t, row_buffer);
    for (std::size_t j = 0; j < n_queries; ++j) {
      const float w = weights_out[j * weights_stride + t];
      float* out = outputs_out + j * D;
      for (std::size_t d = 0; d < D; ++d) out[d] += w * value[d];
    }
  }
}

}  // namespace h2o
