// lanes8.hpp (private to src/attention/): the vector of 8 floats that both decode kernels compute
// in (attention.cpp over float rows, quantised_attention.cpp over packed codes), with its load and
// its 8-way reduction written once. 8 floats = one AVX2 register, two SSE2 registers in the
// baseline clone; the functions are forced inline, so each target clone gets its own instructions.
#pragma once

#include <cstring>

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

}  // namespace h2o::lanes8
