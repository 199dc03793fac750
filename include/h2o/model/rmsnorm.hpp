// rmsnorm.hpp: root-mean-square normalisation, as in Llama.
//   out (n,) = gain (n,) * x (n,) / sqrt(mean(x^2) + 1e-5)        (out may alias x)
// Dimension legend: n = the width being normalised (the model's dim C in the decoder).
#pragma once

#include <cmath>
#include <cstddef>

namespace h2o {

inline void rmsnorm(float* out, const float* x, const float* gain, std::size_t n) {
  float sum_of_squares = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum_of_squares += x[i] * x[i];
  const float inverse_rms = 1.0f / std::sqrt(sum_of_squares / static_cast<float>(n) + 1e-5f);
  for (std::size_t i = 0; i < n; ++i) out[i] = gain[i] * (inverse_rms * x[i]);
}

}  // namespace h2o
