// quantised_attention.hpp: attention of the query heads that share one KV head over that head's
// rows stored quantised (KIVI's layout: cache/quantised_kv_store.hpp keeps them, and
// cache/kv_quantiser.hpp has the rounding). A row is read back as code * scale + zero:
//   keys    each channel d of key group k has its own step: key[d] = c[d] * ks(k, d) + kz(k, d)
//   values  each group of channels of one token has its own: value[d] = c[d] * vs(t, d / VB) + ...
// and the residual tokens (the newest, not quantised yet) are float32 rows.
//
// Dimension legend: S = slot capacity, T = live slots, D = head_dim, P = packed bytes of a row of
// D codes, VG = value channel groups per row, VB = channels per value group (D / VG),
// NG = key group slots, R = residual rows, Q = query heads per KV head.
#pragma once

#include <cstddef>
#include <cstdint>

#include "h2o/attention/matvec_kernel.hpp"

namespace h2o {

// One KV head's quantised rows as attention reads them (pointers into the store; nothing owned).
struct QuantisedRows {
  static constexpr std::int32_t kResidual = -1;  // key_group of a float32 (residual) slot
  unsigned bits = 4;                             // 8, 4 or 2
  std::size_t head_dim = 0;                      // D
  std::size_t row_bytes = 0;                     // P
  std::size_t value_group = 0;                   // VB
  const std::uint8_t* key_codes;                 // (S, P)
  const std::uint8_t* value_codes;               // (S, P)
  const float* value_scale;                      // (S, VG)
  const float* value_zero;                       // (S, VG)
  const std::int32_t* key_group;    // (S,) key group slot of a quantised slot, or kResidual
  const float* key_scale;           // (NG, D) each key group's per-channel step
  const float* key_zero;            // (NG, D)
  const std::int32_t* residual_of;  // (S,) residual row of a residual slot
  const float* residual_keys;       // (R, D)
  const float* residual_values;     // (R, D)
  std::size_t value_groups() const { return head_dim / value_group; }
};

// The key or value row (D,) of live slot t as attention reads it: a residual row as it is, a
// quantised one dequantised into buffer (D,) (code * scale + zero, per channel), which is returned.
const float* dequantised_key_row(const QuantisedRows& rows, std::size_t t, float* buffer);
const float* dequantised_value_row(const QuantisedRows& rows, std::size_t t, float* buffer);

// The readable reference: attention.hpp's steps over the T live slots, each key and value row
// dequantised as it is reached (one row at a time into row_buffer (D,)). The weights (what
// policies score) are those of the dequantised keys.
//   queries (Q, D)  weights_out: Q rows of T weights, row j at + j * weights_stride
//   outputs_out (Q, D)  row_buffer (D,)
void attend_quantised_group_reference(const QuantisedRows& rows, std::size_t n_tokens,
                                      const float* queries, std::size_t n_queries,
                                      float* weights_out, std::size_t weights_stride,
                                      float* outputs_out, float* row_buffer);

// The fast kernel, reading codes directly. Keys: per-channel key groups let a group's steps be
// folded into the query once per group, q . (c * s + z) = (q * s) . c + q . z, so a key costs one
// product of codes with the folded query. Values: sum of w * (c * s + z) over tokens = sum of
// (w * s) * c, plus the sum of w * z per value group added once at the end. Residual rows are
// float32 and scored as attention.hpp's kernel scores them. Keys are scored 8 at a time, one key a
// lane (no sum across lanes), for up to 4 queries at once so each key's codes are unpacked once;
// at head size 8 values are summed 8 tokens at a time the same way. The head sizes attention.hpp's
// kernel vectorises, with value groups of a multiple of 8 channels, run 8 lanes at a time
// (has_fused_kernel); other shapes run attend_quantised_group_reference. Same arguments. The order
// of rounding differs from the reference's: tests/test_kv_quant.cpp bounds the difference (weights
// within 2e-6, outputs within 2e-6 of the largest |value|), for each build.
// Which build runs follows the decode kernel's choice (matvec_kernel.hpp: the best this CPU has,
// or H2O_MATVEC_KERNEL's), so one switch picks every kernel of a decode step.
void attend_quantised_group(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                            std::size_t n_queries, float* weights_out, std::size_t weights_stride,
                            float* outputs_out, float* row_buffer);

// attend_quantised_group with the build a decode kernel choice stands for: reference runs
// attend_quantised_group_reference; baseline the fast kernel compiled for the x86-64 baseline
// (SSE2: two 4-float registers per 8 lanes); avx2 and avx512 the same source compiled for AVX2 +
// FMA (one 8-float register; it fuses each multiply-add, one rounding where the baseline has two,
// so the two builds differ in the last bits, each within the bound above). Tests run the SSE2
// build on CPUs that would choose the AVX2 one. Throws std::invalid_argument when this CPU cannot
// run `kernel` (matvec_kernel.hpp's kernel_supported).
void attend_quantised_group_with(MatvecKernel kernel, const QuantisedRows& rows,
                                 std::size_t n_tokens, const float* queries, std::size_t n_queries,
                                 float* weights_out, std::size_t weights_stride, float* outputs_out,
                                 float* row_buffer);
// Whether attend_quantised_group has its fast kernel for these rows' shape.
bool has_fused_kernel(const QuantisedRows& rows);

}  // namespace h2o
