// lanes8.hpp (private to src/attention/): what both attention kernels (attention.cpp over float
// rows, quantised_attention.cpp over packed codes) share, written once: the vector of 8 floats
// they compute in, its load, its reductions, the scoring of float key rows, and the head sizes
// that get whole-vector code. 8 floats = one AVX2 register, two SSE2 registers in the baseline
// build; the functions are forced inline, so each target build gets its own instructions.
//
// Dimension legend: D = head size (a multiple of 8), C = D / 8 vectors in a row.
#pragma once

#include <cstddef>
#include <cstring>
#include <type_traits>

#ifndef H2O_INLINE
#define H2O_INLINE inline __attribute__((always_inline))
#endif

namespace h2o::lanes8 {

typedef float Floats8 __attribute__((vector_size(32)));

// 8 floats from p (no alignment needed).
H2O_INLINE Floats8 load8(const float* p) {
  Floats8 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// r[i] = sum of the 8 numbers of a[i], i = 0..7: three rounds of pairwise adds of shuffled
// vectors, instead of eight horizontal sums (each one a chain of dependent shuffles and adds).
// __builtin_shufflevector: g++ 12 and clang both have it (the fuzz build uses clang).
H2O_INLINE Floats8 sum_each(const Floats8 (&a)[8]) {
  Floats8 b[4], c[2];
  for (int i = 0; i < 4; ++i) {
    b[i] = __builtin_shufflevector(a[2 * i], a[2 * i + 1], 0, 8, 2, 10, 4, 12, 6, 14) +
           __builtin_shufflevector(a[2 * i], a[2 * i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
  for (int i = 0; i < 2; ++i) {
    c[i] = __builtin_shufflevector(b[2 * i], b[2 * i + 1], 0, 1, 8, 9, 4, 5, 12, 13) +
           __builtin_shufflevector(b[2 * i], b[2 * i + 1], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  return __builtin_shufflevector(c[0], c[1], 0, 1, 2, 3, 8, 9, 10, 11) +
         __builtin_shufflevector(c[0], c[1], 4, 5, 6, 7, 12, 13, 14, 15);
}

// The sum of the 8 lanes of q[c] * x[c] over c: one row's dot product, a row held as C vectors.
template <std::size_t kChunks>
H2O_INLINE float dot(const Floats8 (&q)[kChunks], const Floats8 (&x)[kChunks]) {
  Floats8 acc = q[0] * x[0];
  for (std::size_t c = 1; c < kChunks; ++c) acc += q[c] * x[c];
  float sum = 0.0f;
  for (int i = 0; i < 8; ++i) sum += acc[i];
  return sum;
}

// q (C,) . k (D,), k read from memory.
template <std::size_t kChunks>
H2O_INLINE float dot(const Floats8 (&q)[kChunks], const float* k) {
  Floats8 x[kChunks];
  for (std::size_t c = 0; c < kChunks; ++c) x[c] = load8(k + 8 * c);
  return dot(q, x);
}

// The scores of q (C,) against 8 float key rows key[i] (D,) each, lane i: 8 products summed in
// one go (sum_each) instead of 8 horizontal sums.
template <std::size_t kChunks>
H2O_INLINE Floats8 dot_8_rows(const Floats8 (&q)[kChunks], const float* const (&key)[8]) {
  Floats8 products[8];
  for (int i = 0; i < 8; ++i) {
    products[i] = q[0] * load8(key[i]);
    for (std::size_t c = 1; c < kChunks; ++c) products[i] += q[c] * load8(key[i] + 8 * c);
  }
  return sum_each(products);
}

// The head sizes the kernels compile whole-vector code for, each a multiple of 8 (other sizes
// take a plain loop): with_vector_head_size(D, body) calls body(std::integral_constant<D>) when D
// is one of them and returns whether it did, so a kernel's size is a compile-time constant.
template <std::size_t... kSizes>
struct HeadSizeList {
  static constexpr bool contains(std::size_t head_dim) { return ((head_dim == kSizes) || ...); }
  template <class Body>
  H2O_INLINE static bool visit(std::size_t head_dim, Body&& body) {
    return ((head_dim == kSizes && (body(std::integral_constant<std::size_t, kSizes>{}), true)) ||
            ...);
  }
};
using VectorHeadSizes = HeadSizeList<8, 16, 32, 48, 64, 128>;

template <class Body>
H2O_INLINE bool with_vector_head_size(std::size_t head_dim, Body&& body) {
  return VectorHeadSizes::visit(head_dim, body);
}

}  // namespace h2o::lanes8
