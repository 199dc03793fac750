#include "h2o/attention/quantised_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "h2o/attention/attention.hpp"
#include "h2o/attention/matvec_kernel.hpp"
#include "h2o/base/packed_codes.hpp"
#include "h2o/base/vector_math.hpp"
#include "lanes8.hpp"

namespace h2o {

namespace {
// codes_out (D,) = the D codes of a packed row (packed_bytes(D, bits),) as floats, read one by
// one with packed_codes.hpp's get_code: the readable path (the fused kernel below reads 8 at once).
void unpack_row(const std::uint8_t* packed, std::size_t D, unsigned bits, float* codes_out) {
  for (std::size_t d = 0; d < D; ++d) codes_out[d] = static_cast<float>(get_code(packed, d, bits));
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

namespace {

using lanes8::dot;
using lanes8::Floats8;
using lanes8::load8;
using lanes8::sum_each;

// 8 int32s, the codes' lanes before they become Floats8 (lanes8.hpp).
typedef std::int32_t Ints8 __attribute__((vector_size(32)));

// The 8 codes of kBits bits that start at p (kBits bytes, lowest bits first) as floats: every
// lane shifts its own copy of the bytes right by its code's bit offset and masks the code off.
template <unsigned kBits>
H2O_INLINE Floats8 codes8(const std::uint8_t* p) {
  Ints8 v;
  if constexpr (kBits == 8) {
    std::int32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + 4, 4);
    v = (Ints8{lo, lo, lo, lo, hi, hi, hi, hi} >> Ints8{0, 8, 16, 24, 0, 8, 16, 24}) & 0xFF;
  } else if constexpr (kBits == 4) {
    std::int32_t w;
    std::memcpy(&w, p, 4);
    v = (Ints8{w, w, w, w, w, w, w, w} >> Ints8{0, 4, 8, 12, 16, 20, 24, 28}) & 0x0F;
  } else {
    std::uint16_t h;
    std::memcpy(&h, p, 2);
    const std::int32_t w = h;
    v = (Ints8{w, w, w, w, w, w, w, w} >> Ints8{0, 2, 4, 6, 8, 10, 12, 14}) & 0x03;
  }
  return __builtin_convertvector(v, Floats8);
}

// The codes of 8 slots side by side, one slot a lane: chunk c (codes 8c .. 8c + 7) of slot
// first + i, as lane i of `lo` (its first 32 bits; at 2 bits its 16 bits, zero-extended) and, at
// 8 bits, lane i of `hi` (codes 8c + 4 .. 8c + 7). Code d of the chunk is then
// (word >> (kBits * d)) & mask in every lane at once (d < 4 in lo and hi at 8 bits).
template <unsigned kBits, std::size_t kRow>
H2O_INLINE void gather_chunk(const std::uint8_t* codes, std::size_t first, std::size_t c, Ints8& lo,
                             Ints8& hi) {
  const std::uint8_t* p = codes + first * kRow + c * kBits;
  if constexpr (kRow == 4 && kBits == 4) {  // head size 8: 8 rows of 4 bytes, one load
    std::memcpy(&lo, p, sizeof(lo));
  } else if constexpr (kRow == 8 && kBits == 8) {  // head size 8: 8 rows of 8 bytes, two loads
    Ints8 a, b;
    std::memcpy(&a, p, sizeof(a));
    std::memcpy(&b, p + sizeof(a), sizeof(b));
    lo = __builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);  // each row's first 4 codes
    hi = __builtin_shufflevector(a, b, 1, 3, 5, 7, 9, 11, 13, 15);  // and its last 4
  } else if constexpr (kRow == 2 && kBits == 2) {  // head size 8: 8 rows of 2 bytes, one load
    typedef std::uint16_t Halves8 __attribute__((vector_size(16)));
    Halves8 h;
    std::memcpy(&h, p, sizeof(h));
    lo = __builtin_convertvector(h, Ints8);
  } else {
    for (int i = 0; i < 8; ++i) {
      if constexpr (kBits == 2) {
        std::uint16_t h;
        std::memcpy(&h, p + i * kRow, 2);
        lo[i] = h;
      } else {
        std::int32_t word;  // (a vector lane has no address: copy through a scalar)
        std::memcpy(&word, p + i * kRow, 4);
        lo[i] = word;
        if constexpr (kBits == 8) {
          std::memcpy(&word, p + i * kRow + 4, 4);
          hi[i] = word;
        }
      }
    }
  }
}

// Code d (0 .. 7) of a gathered chunk, in every lane, as floats.
template <unsigned kBits>
H2O_INLINE Floats8 code_of(const Ints8& lo, const Ints8& hi, unsigned d) {
  constexpr std::int32_t kMask = (1 << kBits) - 1;
  if constexpr (kBits == 8) {
    const Ints8& word = d < 4 ? lo : hi;
    return __builtin_convertvector((word >> static_cast<int>(8 * (d % 4))) & kMask, Floats8);
  } else {
    return __builtin_convertvector((lo >> static_cast<int>(kBits * d)) & kMask, Floats8);
  }
}

// The end of the run of slots from t on that share slot t's key group k (key_group (n,)): 8
// slots at a time while all 8 match, then one at a time. Branch-free blocks, as a run is mostly
// a whole key group of 32 slots.
H2O_INLINE std::size_t run_end(const std::int32_t* key_group, std::size_t t, std::size_t n) {
  const std::int32_t k = key_group[t];
  std::size_t end = t + 1;
  for (; end + 8 <= n; end += 8) {
    std::int32_t differ = 0;
    for (int i = 0; i < 8; ++i) differ |= key_group[end + i] ^ k;
    if (differ != 0) break;
  }
  while (end < n && key_group[end] == k) ++end;
  return end;
}

// Whether the 8 slots from t are all quantised (none residual; key_group (t + 8,)).
H2O_INLINE bool all_quantised8(const std::int32_t* key_group, std::size_t t) {
  std::int32_t any = 0;  // kResidual is the only negative key group
  for (int i = 0; i < 8; ++i) any |= key_group[t + i];
  return any >= 0;
}

// Scores of kQ queries (queries (kQ, D), their weight rows at w + jj * stride) over slots
// [0, n_tokens), read together so that each key's codes are unpacked once for all kQ. One run of
// slots of the same key group at a time: slots enter in position order and leave by eviction, so
// a group's members mostly sit side by side.
template <std::size_t kD, unsigned kBits, std::size_t kQ>
H2O_INLINE void fused_scores(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                             float* w, std::size_t stride) {
  constexpr std::size_t kChunks = kD / 8;
  constexpr std::size_t kRow = kD * kBits / 8;  // P: packed bytes of a row
  const std::int32_t* key_group = rows.key_group;
  Floats8 q[kQ][kChunks];
  for (std::size_t jj = 0; jj < kQ; ++jj) {
    for (std::size_t c = 0; c < kChunks; ++c) q[jj][c] = load8(queries + jj * kD + 8 * c);
  }
  for (std::size_t t = 0; t < n_tokens;) {
    const std::int32_t k = key_group[t];
    const std::size_t end = run_end(key_group, t, n_tokens);
    if (k == QuantisedRows::kResidual) {  // float32 rows, scored as attention.cpp scores them
      for (; t + 8 <= end; t += 8) {
        const float* key[8];
        for (int i = 0; i < 8; ++i) {
          key[i] = rows.residual_keys + static_cast<std::size_t>(rows.residual_of[t + i]) * kD;
        }
        for (std::size_t jj = 0; jj < kQ; ++jj) {
          const Floats8 scores = lanes8::dot_8_rows(q[jj], key);
          std::memcpy(w + jj * stride + t, &scores, sizeof(scores));
        }
      }
      for (; t < end; ++t) {
        const float* key = rows.residual_keys + static_cast<std::size_t>(rows.residual_of[t]) * kD;
        Floats8 x[kChunks];
        for (std::size_t c = 0; c < kChunks; ++c) x[c] = load8(key + 8 * c);
        for (std::size_t jj = 0; jj < kQ; ++jj) w[jj * stride + t] = dot(q[jj], x);
      }
      continue;
    }
    // The group's steps folded into each query: q . (c * s + z) = (q * s) . c + q . z.
    const float* ks = rows.key_scale + static_cast<std::size_t>(k) * kD;
    const float* kz = rows.key_zero + static_cast<std::size_t>(k) * kD;
    Floats8 qs[kQ][kChunks];
    float qz[kQ];
    for (std::size_t jj = 0; jj < kQ; ++jj) {
      Floats8 z[kChunks];
      for (std::size_t c = 0; c < kChunks; ++c) {
        qs[jj][c] = q[jj][c] * load8(ks + 8 * c);
        z[c] = load8(kz + 8 * c);
      }
      qz[jj] = dot(q[jj], z);
    }
    // 8 keys at a time, one key a lane: no sum across lanes.
    for (; t + 8 <= end; t += 8) {
      Floats8 acc[kQ] = {};
      for (std::size_t c = 0; c < kChunks; ++c) {
        Ints8 lo, hi;
        gather_chunk<kBits, kRow>(rows.key_codes, t, c, lo, hi);
        for (unsigned d = 0; d < 8; ++d) {
          const Floats8 code = code_of<kBits>(lo, hi, d);
          for (std::size_t jj = 0; jj < kQ; ++jj) acc[jj] += qs[jj][c][d] * code;
        }
      }
      for (std::size_t jj = 0; jj < kQ; ++jj) {
        const Floats8 scores = acc[jj] + qz[jj];
        std::memcpy(w + jj * stride + t, &scores, sizeof(scores));
      }
    }
    for (; t < end; ++t) {
      Floats8 x[kChunks];
      for (std::size_t c = 0; c < kChunks; ++c) {
        x[c] = codes8<kBits>(rows.key_codes + t * kRow + c * kBits);
      }
      for (std::size_t jj = 0; jj < kQ; ++jj) {
        w[jj * stride + t] = dot(qs[jj], x) + qz[jj];
      }
    }
  }
}

// The fused kernel for head size kD (a multiple of 8) and kBits-bit codes; value groups of a
// multiple of 8 channels.
template <std::size_t kD, unsigned kBits>
H2O_INLINE void fused_kernel(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                             std::size_t n_queries, float* weights, std::size_t stride,
                             float* outputs) {
  constexpr std::size_t kChunks = kD / 8;
  constexpr std::size_t kRow = kD * kBits / 8;  // P: packed bytes of a row
  const std::size_t VB = rows.value_group, VG = kD / VB;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  const std::int32_t* key_group = rows.key_group;
  // 1. Scores: the queries 4, 2 or 1 at a time.
  std::size_t j = 0;
  for (; j + 4 <= n_queries; j += 4) {
    fused_scores<kD, kBits, 4>(rows, n_tokens, queries + j * kD, weights + j * stride, stride);
  }
  for (; j + 2 <= n_queries; j += 2) {
    fused_scores<kD, kBits, 2>(rows, n_tokens, queries + j * kD, weights + j * stride, stride);
  }
  for (; j < n_queries; ++j) {
    fused_scores<kD, kBits, 1>(rows, n_tokens, queries + j * kD, weights + j * stride, stride);
  }
  for (j = 0; j < n_queries; ++j) {
    float* w = weights + j * stride;
    // 2. Weights.
    softmax_inplace(w, n_tokens, scale);
    // 3. Output: value[d] = c[d] * s + z per token and channel group, so the weighted sum is
    //    sum of (w * s) * c, plus the weights times the zeros, summed per channel group and added
    //    once at the end.
    Floats8 out[kChunks] = {};
    float zeros[kD / 8] = {};  // (VG,): sum of w * z per value group (VG <= kD / 8)
    std::size_t t = 0;
    if constexpr (kD == 8) {
      // One value group (VB = 8 = D): 8 tokens at a time, one token a lane, one sum per channel
      // across the tokens' lanes (acc[d]), reduced once at the end.
      Floats8 acc[8] = {}, zero_sum = {};
      while (t < n_tokens) {
        if (t + 8 <= n_tokens && all_quantised8(key_group, t)) {
          const Floats8 w8 = load8(w + t);
          const Floats8 a = w8 * load8(rows.value_scale + t);
          zero_sum += w8 * load8(rows.value_zero + t);
          Ints8 lo, hi;
          gather_chunk<kBits, kRow>(rows.value_codes, t, 0, lo, hi);
          for (unsigned d = 0; d < 8; ++d) acc[d] += a * code_of<kBits>(lo, hi, d);
          t += 8;
          continue;
        }
        // A residual token among the next 8, or fewer than 8 left: this token alone.
        const float wt = w[t];
        if (key_group[t] == QuantisedRows::kResidual) {
          const float* value =
              rows.residual_values + static_cast<std::size_t>(rows.residual_of[t]) * kD;
          out[0] += wt * load8(value);
        } else {
          out[0] += (wt * rows.value_scale[t]) * codes8<kBits>(rows.value_codes + t * kRow);
          zeros[0] += wt * rows.value_zero[t];
        }
        ++t;
      }
      out[0] += sum_each(acc);
      for (int i = 0; i < 8; ++i) zeros[0] += zero_sum[i];
    }
    for (; t < n_tokens; ++t) {
      const float wt = w[t];
      if (key_group[t] == QuantisedRows::kResidual) {
        const float* value =
            rows.residual_values + static_cast<std::size_t>(rows.residual_of[t]) * kD;
        for (std::size_t c = 0; c < kChunks; ++c) out[c] += wt * load8(value + 8 * c);
        continue;
      }
      const float* vs = rows.value_scale + t * VG;
      const float* vz = rows.value_zero + t * VG;
      const std::uint8_t* codes = rows.value_codes + t * kRow;
      for (std::size_t c = 0; c < kChunks; ++c) {
        out[c] += (wt * vs[8 * c / VB]) * codes8<kBits>(codes + c * kBits);
      }
      for (std::size_t group = 0; group < VG; ++group) zeros[group] += wt * vz[group];
    }
    for (std::size_t c = 0; c < kChunks; ++c) out[c] += zeros[8 * c / VB];
    std::memcpy(outputs + j * kD, out, sizeof(out));
  }
}

// Each (head size, bits) kernel is its own function in each build: the optimiser then sees one
// kernel at a time. Inlined all into one function per build, the 36 took about twice the compile
// time (quiet g++ 12 -O3: 52 s against about 25 s for this file) for the same instructions.
template <std::size_t kD, unsigned kBits>
__attribute__((noinline)) void fused_kernel_baseline(const QuantisedRows& rows,
                                                     std::size_t n_tokens, const float* queries,
                                                     std::size_t n_queries, float* weights,
                                                     std::size_t stride, float* outputs) {
  fused_kernel<kD, kBits>(rows, n_tokens, queries, n_queries, weights, stride, outputs);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define H2O_HAVE_AVX2_BUILD 1
template <std::size_t kD, unsigned kBits>
__attribute__((noinline, target("avx2,fma"))) void fused_kernel_avx2(
    const QuantisedRows& rows, std::size_t n_tokens, const float* queries, std::size_t n_queries,
    float* weights, std::size_t stride, float* outputs) {
  fused_kernel<kD, kBits>(rows, n_tokens, queries, n_queries, weights, stride, outputs);
}
#endif

// Which SIMD build of the fused kernel runs (attend_quantised_group_with says which kernel choice
// runs which).
enum class SimdBuild { baseline, avx2 };

template <SimdBuild kBuild, unsigned kBits>
bool fused_for_bits(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                    std::size_t n_queries, float* weights, std::size_t stride, float* outputs) {
  return lanes8::with_vector_head_size(rows.head_dim, [&](auto size) {
    constexpr std::size_t kD = decltype(size)::value;
#ifdef H2O_HAVE_AVX2_BUILD
    if constexpr (kBuild == SimdBuild::avx2) {
      fused_kernel_avx2<kD, kBits>(rows, n_tokens, queries, n_queries, weights, stride, outputs);
      return;
    }
#endif
    fused_kernel_baseline<kD, kBits>(rows, n_tokens, queries, n_queries, weights, stride,
                                     outputs);
  });
}

// Runs the fused kernel of that build when it has one for this shape; false otherwise (nothing
// written).
template <SimdBuild kBuild>
bool fused_dispatch(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                    std::size_t n_queries, float* weights, std::size_t stride, float* outputs) {
  if (rows.value_group % 8 != 0) return false;
  switch (rows.bits) {
    case 8:
      return fused_for_bits<kBuild, 8>(rows, n_tokens, queries, n_queries, weights, stride,
                                       outputs);
    case 4:
      return fused_for_bits<kBuild, 4>(rows, n_tokens, queries, n_queries, weights, stride,
                                       outputs);
    case 2:
      return fused_for_bits<kBuild, 2>(rows, n_tokens, queries, n_queries, weights, stride,
                                       outputs);
    default:
      return false;
  }
}

}  // namespace

bool has_fused_kernel(const QuantisedRows& rows) {
  return lanes8::VectorHeadSizes::contains(rows.head_dim) && rows.value_group % 8 == 0 &&
         (rows.bits == 8 || rows.bits == 4 || rows.bits == 2);
}

void attend_quantised_group(const QuantisedRows& rows, std::size_t n_tokens, const float* queries,
                            std::size_t n_queries, float* weights_out, std::size_t weights_stride,
                            float* outputs_out, float* row_buffer) {
  attend_quantised_group_with(active_matvec_kernel(), rows, n_tokens, queries, n_queries,
                              weights_out, weights_stride, outputs_out, row_buffer);
}

void attend_quantised_group_with(MatvecKernel kernel, const QuantisedRows& rows,
                                 std::size_t n_tokens, const float* queries, std::size_t n_queries,
                                 float* weights_out, std::size_t weights_stride, float* outputs_out,
                                 float* row_buffer) {
  if (!kernel_supported(kernel)) {
    throw std::invalid_argument(std::string("attend_quantised_group: this CPU cannot run the ") +
                                kernel_name(kernel) + " kernel");
  }
  if (n_queries == 0) return;
  if (n_tokens == 0) {  // nothing to attend to: a zero output, as an empty weighted sum
    std::fill_n(outputs_out, n_queries * rows.head_dim, 0.0f);
    return;
  }
  bool done = false;
  switch (kernel) {
    case MatvecKernel::reference:
      break;
    case MatvecKernel::baseline:
      done = fused_dispatch<SimdBuild::baseline>(rows, n_tokens, queries, n_queries, weights_out,
                                                  weights_stride, outputs_out);
      break;
    case MatvecKernel::avx2:
    case MatvecKernel::avx512:  // every AVX-512 CPU has AVX2 and FMA
#ifdef H2O_HAVE_AVX2_BUILD
      done = fused_dispatch<SimdBuild::avx2>(rows, n_tokens, queries, n_queries, weights_out,
                                              weights_stride, outputs_out);
#endif
      break;
  }
  if (done) return;
  attend_quantised_group_reference(rows, n_tokens, queries, n_queries, weights_out, weights_stride,
                                   outputs_out, row_buffer);
}

}  // namespace h2o
