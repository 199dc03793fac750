// swiglu.hpp: the gated activation of Llama's feed-forward layer.
//   gate (F,) <- silu(gate) * up,  with silu(a) = a * sigmoid(a)
// The layer around it is x += w2 (C, F) @ swiglu(w1 (F, C) @ xn, w3 (F, C) @ xn).
// Dimension legend: C = model width (dim), F = feed-forward hidden width, n = F here.
#pragma once

#include <cmath>
#include <cstddef>

namespace h2o {

inline void swiglu_inplace(float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float a = gate[i];
    gate[i] = a * (1.0f / (1.0f + std::exp(-a))) * up[i];
  }
}

}  // namespace h2o
