// rope.hpp: rotary position embedding (RoPE), llama2.c's convention.
//
// Inside each head of D numbers, the adjacent pair (i, i+1) is rotated by the angle
//   position * 10000^(-(i mod D) / D).
// A rotation keeps each vector's length; the dot product of a rotated query and a rotated key then
// depends on how far apart their positions are. Keys are cached already rotated.
//
// The angle depends only on the position and on i mod D, so the decoder computes the D / 2 cosines
// and sines once per position (rope_angles) and rotates every head of q and k, in every layer,
// with them (rope_rotate_with): the same numbers rope_rotate computes, bit for bit.
//
// Dimension legend: n = numbers in the rotated vector (C for queries, KV for keys), D = head_dim.
#pragma once

#include <cmath>
#include <cstddef>

#include "h2o/base/tensor.hpp"

namespace h2o {

// Rotates vec (n,), made of n / head_dim heads, in place for the given position.
inline void rope_rotate(float* vec, std::size_t n, std::size_t head_dim, Position position) {
  for (std::size_t i = 0; i + 1 < n; i += 2) {
    const float exponent = static_cast<float>(i % head_dim) / static_cast<float>(head_dim);
    const float angle = static_cast<float>(position) * (1.0f / std::pow(10000.0f, exponent));
    const float c = std::cos(angle), s = std::sin(angle);
    const float v0 = vec[i], v1 = vec[i + 1];
    vec[i] = v0 * c - v1 * s;
    vec[i + 1] = v0 * s + v1 * c;
  }
}

// cos_out (D / 2,), sin_out (D / 2,): pair j's rotation at `position`, the angle
// position * 10000^(-2j / D) computed exactly as rope_rotate computes it.
inline void rope_angles(Position position, std::size_t head_dim, float* cos_out, float* sin_out) {
  for (std::size_t j = 0; j < head_dim / 2; ++j) {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(head_dim);
    const float angle = static_cast<float>(position) * (1.0f / std::pow(10000.0f, exponent));
    cos_out[j] = std::cos(angle);
    sin_out[j] = std::sin(angle);
  }
}

// rope_rotate with the angles already computed: cos (D / 2,), sin (D / 2,) from rope_angles.
inline void rope_rotate_with(float* vec, std::size_t n, std::size_t head_dim, const float* cos,
                             const float* sin) {
  for (std::size_t head = 0; head + head_dim <= n; head += head_dim) {
    float* v = vec + head;
    for (std::size_t j = 0; j < head_dim / 2; ++j) {
      const float v0 = v[2 * j], v1 = v[2 * j + 1];
      v[2 * j] = v0 * cos[j] - v1 * sin[j];
      v[2 * j + 1] = v0 * sin[j] + v1 * cos[j];
    }
  }
}

}  // namespace h2o
