// swiglu.hpp: the gated activation of Llama's feed-forward layer.
//   gate (F,) <- silu(gate) * up,  with silu(a) = a * sigmoid(a) = a / (1 + e^-a)
// The layer around it is x += w2 (C, F) @ swiglu(w1 (F, C) @ xn, w3 (F, C) @ xn).
// Dimension legend: C = model width (dim), F = feed-forward hidden width, n = F here.
#pragma once

#include <cstddef>

namespace h2o {

// Vectorised (exp_polynomial, vector_math.hpp); within 1e-6 of swiglu_reference_inplace.
void swiglu_inplace(float* gate, const float* up, std::size_t n);

// The textbook version with std::exp, one number at a time (the tests' reference).
void swiglu_reference_inplace(float* gate, const float* up, std::size_t n);

}  // namespace h2o
