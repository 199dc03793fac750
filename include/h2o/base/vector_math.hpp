// vector_math.hpp: the exponential the hot loops use, and how they are compiled for wider vectors.
//
// std::exp is a library call the compiler cannot vectorise, and softmax and SwiGLU call it once per
// number. exp_polynomial() is Cephes' expf written as plain arithmetic (no branches, no calls), so
// a loop over it compiles to vector instructions: 4 floats at a time with the x86-64 baseline
// (SSE2), 8 with AVX2. Its relative error is below 2e-7 over the whole float range it handles
// (tests/test_vector_math.cpp checks 1e-6 against std::exp); exp_polynomial(-inf) = 0, and
// inputs above 88 give e^88 (about 1.7e38) instead of overflowing to infinity.
//
// H2O_VECTOR_CLONES (GCC and Clang on x86-64 Linux) compiles a function twice, for the baseline
// and for x86-64-v3 (AVX2 + FMA), and picks one when the program starts (the loader's ifunc
// support): the default build stays portable, no -march=native needed, and a modern CPU still
// runs 8-wide code. Elsewhere, and in the ThreadSanitizer build (H2O_NO_TARGET_CLONES: the loader
// calls the resolver before the sanitizer's runtime is ready, CMakeLists.txt), it expands to
// nothing.
//
// The loops built on exp_polynomial() are compiled with -fno-trapping-math (src/CMakeLists.txt):
// without it GCC will not turn a floating-point comparison inside a loop into a vector select. It
// changes no result, only the promise that no floating-point exception is ever looked at.
//
// Dimension legend: n = numbers in the array a function works on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(H2O_NO_TARGET_CLONES)
#define H2O_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define H2O_VECTOR_CLONES
#endif

namespace h2o {

// e^x for any float x, as a polynomial after range reduction: x = n ln2 + r with |r| <= ln2 / 2,
// e^x = 2^n e^r. Inlined into loops so that they vectorise.
inline float exp_polynomial(float x) {
  // Below -87.3 e^x is denormal or 0: flush to 0 (a softmax weight that small is 0 anyway).
  const bool underflow = x < -87.33654f;
  x = x < -87.33654f ? -87.33654f : x;
  x = x > 88.0f ? 88.0f : x;  // keeps n <= 127, a finite 2^n
  // n = round(x / ln2) by the 1.5 * 2^23 trick (exact in round-to-nearest, no library call).
  const float shifter = 12582912.0f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  // r = x - n ln2, with ln2 split in two parts so that the subtraction loses nothing.
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  const float r2 = r * r;
  const float poly = ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                         4.1665795894e-2f) *
                            r +
                        1.6666665459e-1f) *
                           r +
                       5.0000001201e-1f) *
                          r2 +
                      r) +
                     1.0f;
  // 2^n from its exponent bits. A NaN input leaves n NaN, and converting NaN to an integer is
  // undefined behaviour: use 0 for it instead (poly is NaN then, so the result stays NaN).
  const float whole_n = n == n ? n : 0.0f;
  const std::int32_t bits = (static_cast<std::int32_t>(whole_n) + 127) << 23;
  float two_to_n;
  std::memcpy(&two_to_n, &bits, sizeof(two_to_n));
  return underflow ? 0.0f : poly * two_to_n;
}

// Index of the first NaN or infinity in x (n,), or n when every number is finite. Vectorised (it
// looks at the exponent bits, 8 numbers at a time): checking a 438 MB checkpoint takes a few tens
// of milliseconds, not the better part of a second.
std::size_t first_non_finite(const float* x, std::size_t n);

}  // namespace h2o
