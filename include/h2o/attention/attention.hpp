// attention.hpp: scaled dot-product attention of one query over a cache of keys and values.
//
//   scores  (T,) = K (T, D) @ q (D,) / sqrt(D)       the blog's `query @ keys.T`
//   weights (T,) = softmax(scores)                    non-negative, sums to 1
//   output  (D,) = weights (T,) @ V (T, D)            a weighted mix of the value rows
//
// Dimension legend: T = tokens in the cache, D = head_dim.
#pragma once

#include <cstddef>

#include "h2o/base/tensor.hpp"

namespace h2o {

// softmax(scale * x) in place, x (n,), subtracting the maximum first so exp() never overflows, in
// three vectorised passes: the maximum; then e = exp_polynomial(scale * (x - max)) written back
// while summing e (the fused pass); then a multiplication by 1 / sum. Within 1e-6 of
// softmax_reference_inplace (tests/test_vector_math.cpp).
void softmax_inplace(float* x, std::size_t n, float scale = 1.0f);

// The textbook softmax of x (n,): maximum, std::exp, sum, divide, one number at a time. Slow; the
// reference the fast one is tested against.
void softmax_reference_inplace(float* x, std::size_t n);

// Softmax of a whole vector; returns a new (n,) vector.
Vector softmax(const Vector& scores);

// weights (T,) of one query (D,) over keys (T, D).
Vector attention_weights(const Vector& query, const Matrix& keys);

// output (D,) = weights (T,) @ values (T, D).
Vector attention_output(const Vector& weights, const Matrix& values);

struct AttentionResult {
  Vector weights;  // (T,)
  Vector output;   // (D,)
};

// Both steps at once: the lessons' attention (05-08) and the tests'.
AttentionResult attend(const Vector& query, const Matrix& keys, const Matrix& values);

// attend_group_into below with one query (Q = 1): the kernel under attend() and
// attention_weights(), on raw rows.
//   weights_out (T,)  output_out (D,)
void attend_into(const float* query, const float* keys, const float* values, std::size_t n_tokens,
                 std::size_t head_dim, float* weights_out, float* output_out);

// The kernel the decoder uses: the Q query heads that share one KV head (grouped-query attention)
// attend over its keys and values together, so each key and value row is read once for all Q.
//   queries (Q, D)   keys (T, D)   values (T, D)   (contiguous rows)
//   weights_out: Q rows of T weights, row j at weights_out + j * weights_stride
//   outputs_out (Q, D)
// Per query, the same weights and output as attend() (up to the order of float additions). Plain
// loops, with the common head sizes (8, 16, 32, 48, 64, 128) compiled for their exact size.
void attend_group_into(const float* queries, std::size_t n_queries, const float* keys,
                       const float* values, std::size_t n_tokens, std::size_t head_dim,
                       float* weights_out, std::size_t weights_stride, float* outputs_out);

}  // namespace h2o
