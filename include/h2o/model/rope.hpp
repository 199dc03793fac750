// rope.hpp: rotary position embedding (RoPE), llama2.c's convention.
//
// Inside each head of D numbers, the adjacent pair (i, i+1) is rotated by the angle
//   position * 10000^(-(i mod D) / D).
// A rotation keeps each vector's length; the dot product of a rotated query and a rotated key then
// depends on how far apart their positions are. Keys are cached already rotated.
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

}  // namespace h2o
