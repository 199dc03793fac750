#include "h2o/model/swiglu.hpp"

#include <cmath>

#include "h2o/base/vector_math.hpp"

namespace h2o {

namespace {
H2O_VECTOR_CLONES
void swiglu_dispatch(float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float a = gate[i];
    gate[i] = a * (1.0f / (1.0f + exp_polynomial(-a))) * up[i];
  }
}
}  // namespace

void swiglu_inplace(float* gate, const float* up, std::size_t n) { swiglu_dispatch(gate, up, n); }

void swiglu_reference_inplace(float* gate, const float* up, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float a = gate[i];
    gate[i] = a * (1.0f / (1.0f + std::exp(-a))) * up[i];
  }
}

}  // namespace h2o
