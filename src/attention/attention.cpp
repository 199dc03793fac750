#include "h2o/attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "h2o/attention/linear.hpp"
#include "h2o/base/vector_math.hpp"
#include "lanes8.hpp"

namespace h2o {

namespace {

using lanes8::Floats8;
using lanes8::load8;

// Reductions keep kLanes independent partial results (a max or a sum per lane) so that, without
// -ffast-math, the compiler may still run them as vector instructions: it must not reorder float
// additions, but the lanes ARE the order. 8 = one AVX2 register of floats, two SSE2 registers.
constexpr std::size_t kLanes = 8;

// Largest number of x (n,), n >= 1.
H2O_INLINE float max_of(const float* x, std::size_t n) {
  float lanes[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) lanes[j] = x[0];
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lanes[j] = x[i + j] > lanes[j] ? x[i + j] : lanes[j];
  }
  float best = lanes[0];
  for (std::size_t j = 1; j < kLanes; ++j) best = lanes[j] > best ? lanes[j] : best;
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

// softmax(scale * x) in place, x (n,), n >= 1: max pass, fused exp-and-sum pass, scale pass.
H2O_INLINE void softmax_kernel(float* x, std::size_t n, float scale) {
  const float max_value = max_of(x, n);
  float lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const float e = exp_polynomial((x[i + j] - max_value) * scale);
      x[i + j] = e;
      lanes[j] += e;
    }
  }
  float sum = 0.0f;
  for (std::size_t j = 0; j < kLanes; ++j) sum += lanes[j];
  for (; i < n; ++i) {
    x[i] = exp_polynomial((x[i] - max_value) * scale);
    sum += x[i];
  }
  const float inverse_sum = 1.0f / sum;
  for (i = 0; i < n; ++i) x[i] *= inverse_sum;
}

// q (D,) . k (D,). kD is the head size when known at compile time (0: use d_runtime), so the
// common sizes compile to a few whole-vector multiplies and one horizontal sum.
template <std::size_t kD>
H2O_INLINE float dot(const float* q, const float* k, std::size_t d_runtime) {
  const std::size_t D = kD != 0 ? kD : d_runtime;
  float lanes[kLanes] = {};
  std::size_t d = 0;
  for (; d + kLanes <= D; d += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) lanes[j] += q[d + j] * k[d + j];
  }
  float sum = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) +
              ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
  for (; d < D; ++d) sum += q[d] * k[d];
  return sum;
}

// attend_group_into for one head size kD (0 = any, read from head_dim).
template <std::size_t kD>
H2O_INLINE void group_kernel(const float* queries, std::size_t n_queries, const float* keys,
                             const float* values, std::size_t n_tokens, std::size_t head_dim,
                             float* weights, std::size_t stride, float* outputs) {
  const std::size_t D = kD != 0 ? kD : head_dim;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // 1. Raw scores (Q, T): each key row is loaded once for all Q queries.
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const float* key = keys + t * D;
    for (std::size_t j = 0; j < n_queries; ++j) {
      weights[j * stride + t] = dot<kD>(queries + j * D, key, D);
    }
  }
  // 2. Weights: softmax of the scaled scores, per query.
  for (std::size_t j = 0; j < n_queries; ++j) softmax_kernel(weights + j * stride, n_tokens, scale);
  // 3. Outputs (Q, D) = weights (Q, T) @ values (T, D): each value row loaded once for all Q.
  for (std::size_t i = 0; i < n_queries * D; ++i) outputs[i] = 0.0f;
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const float* value = values + t * D;
    for (std::size_t j = 0; j < n_queries; ++j) {
      const float w = weights[j * stride + t];
      float* out = outputs + j * D;
      for (std::size_t d = 0; d < D; ++d) out[d] += w * value[d];
    }
  }
}

// The head sizes of lanes8::VectorHeadSizes get a kernel written with GCC/Clang vector types: 8
// floats (one AVX register; two SSE registers on the baseline build), so that every step is a
// whole-vector instruction. kD / 8 vectors hold one query, key or value row.

// attend_group_into for a head size kD that is a multiple of 8, one query at a time.
template <std::size_t kD>
H2O_INLINE void group_kernel_vec(const float* queries, std::size_t n_queries, const float* keys,
                                 const float* values, std::size_t n_tokens, float* weights,
                                 std::size_t stride, float* outputs) {
  constexpr std::size_t kChunks = kD / 8;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kD));
  for (std::size_t j = 0; j < n_queries; ++j) {
    Floats8 q[kChunks];
    for (std::size_t c = 0; c < kChunks; ++c) q[c] = load8(queries + j * kD + 8 * c);
    float* w = weights + j * stride;
    // 1. Scores, 8 keys at a time (lanes8::dot_8_rows), then one at a time.
    std::size_t t = 0;
    for (; t + 8 <= n_tokens; t += 8) {
      const float* key[8];
      for (int i = 0; i < 8; ++i) key[i] = keys + (t + i) * kD;
      const Floats8 scores = lanes8::dot_8_rows(q, key);
      std::memcpy(w + t, &scores, sizeof(scores));
    }
    for (; t < n_tokens; ++t) w[t] = lanes8::dot(q, keys + t * kD);
    // 2. Weights.
    softmax_kernel(w, n_tokens, scale);
    // 3. Output: the weighted sum of the value rows, kept in registers.
    Floats8 out[kChunks] = {};
    for (t = 0; t < n_tokens; ++t) {
      const float* value = values + t * kD;
      for (std::size_t c = 0; c < kChunks; ++c) out[c] += w[t] * load8(value + 8 * c);
    }
    std::memcpy(outputs + j * kD, out, sizeof(out));
  }
}

H2O_VECTOR_CLONES
void softmax_dispatch(float* x, std::size_t n, float scale) { softmax_kernel(x, n, scale); }

H2O_VECTOR_CLONES
void group_dispatch(const float* queries, std::size_t n_queries, const float* keys,
                    const float* values, std::size_t n_tokens, std::size_t head_dim, float* weights,
                    std::size_t stride, float* outputs) {
  const bool vectorised = lanes8::with_vector_head_size(
      head_dim, [&](auto size) __attribute__((always_inline)) {
        group_kernel_vec<decltype(size)::value>(queries, n_queries, keys, values, n_tokens, weights,
                                                stride, outputs);
      });
  if (!vectorised) {
    group_kernel<0>(queries, n_queries, keys, values, n_tokens, head_dim, weights, stride, outputs);
  }
}

}  // namespace

void softmax_inplace(float* x, std::size_t n, float scale) {
  if (n == 0) return;
  softmax_dispatch(x, n, scale);
}

void softmax_reference_inplace(float* x, std::size_t n) {
  if (n == 0) return;
  const float max_value = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  for (std::size_t i = 0; i < n; ++i) x[i] /= sum;
}

Vector softmax(const Vector& scores) {
  Vector out = scores;
  softmax_inplace(out.data(), out.size());
  return out;
}

void attend_group_into(const float* queries, std::size_t n_queries, const float* keys,
                       const float* values, std::size_t n_tokens, std::size_t head_dim,
                       float* weights_out, std::size_t weights_stride, float* outputs_out) {
  if (n_queries == 0 || head_dim == 0) return;
  if (n_tokens == 0) {  // nothing to attend to: a zero output, as an empty weighted sum
    for (std::size_t i = 0; i < n_queries * head_dim; ++i) outputs_out[i] = 0.0f;
    return;
  }
  group_dispatch(queries, n_queries, keys, values, n_tokens, head_dim, weights_out, weights_stride,
                 outputs_out);
}

void attend_into(const float* query, const float* keys, const float* values, std::size_t n_tokens,
                 std::size_t head_dim, float* weights_out, float* output_out) {
  attend_group_into(query, 1, keys, values, n_tokens, head_dim, weights_out, n_tokens, output_out);
}

namespace {
void check_rows(const Matrix& rows, std::size_t expected_cols, const char* what) {
  if (rows.shape()[1] != expected_cols) {
    throw std::invalid_argument(std::string(what) + " rows have " +
                                std::to_string(rows.shape()[1]) + " numbers, expected " +
                                std::to_string(expected_cols));
  }
}
}  // namespace

Vector attention_weights(const Vector& query, const Matrix& keys) {
  check_rows(keys, query.size(), "key");
  Vector weights = xt::zeros<float>({keys.shape()[0]});
  Vector unused_output = xt::zeros<float>({query.size()});
  // Values = keys here only to reuse the kernel; the output is discarded.
  attend_into(query.data(), keys.data(), keys.data(), keys.shape()[0], query.size(), weights.data(),
              unused_output.data());
  return weights;
}

Vector attention_output(const Vector& weights, const Matrix& values) {
  if (values.shape()[0] != weights.size()) {
    throw std::invalid_argument("attention has " + std::to_string(weights.size()) +
                                " weights but there are " + std::to_string(values.shape()[0]) +
                                " value rows");
  }
  Vector output = xt::zeros<float>({values.shape()[1]});
  matvec_transposed(output.data(), values.data(), weights.data(), values.shape()[0],
                    values.shape()[1]);
  return output;
}

AttentionResult attend(const Vector& query, const Matrix& keys, const Matrix& values) {
  check_rows(keys, query.size(), "key");
  if (values.shape()[0] != keys.shape()[0]) {
    throw std::invalid_argument("the cache has " + std::to_string(keys.shape()[0]) + " keys but " +
                                std::to_string(values.shape()[0]) + " values");
  }
  AttentionResult result{xt::zeros<float>({keys.shape()[0]}),
                         xt::zeros<float>({values.shape()[1]})};
  attend_into(query.data(), keys.data(), values.data(), keys.shape()[0], query.size(),
              result.weights.data(), result.output.data());
  return result;
}

}  // namespace h2o
