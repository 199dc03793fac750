// logit_bound.hpp: how far apart two float evaluations of one model's logits may be when they
// differ only in the order of their additions: a prompt read in a batch (OpenBLAS's sgemm, whose
// order depends on the CPU kernel it picked: OPENBLAS_CORETYPE) against token by token, one
// decode kernel against another (H2O_MATVEC_KERNEL). Include after "h2o_catch.hpp".
//
// The bound, stated. A dot product of n terms added in float in any order is within
// gamma_n * sum_k |a_k b_k| of the exact sum, gamma_n = n u / (1 - n u), u = 2^-24 (Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 3.5); two such evaluations are
// within 2 gamma_n sum_k |a_k b_k| of each other. Logit j is the classifier row w_j times the final
// hidden vector x = g (*) h / rms(h) (g: rms_final's gains), whose normalised part has length
// sqrt(C), so sum_k |w_jk x_k| <= ||w_j (*) g||_2 sqrt(C) =: S_j (Cauchy-Schwarz). The hidden
// vector itself comes out of every earlier product; we allow each product on a logit's way its own
// 2 gamma_n of relative error, passed on without amplification: P = 6 products deep per layer
// (q, k or v; the attention scores; their weighted sum of the values; wo; w1 or w3; w2) plus the
// classifier, n = the longest sum (C, F or the positions attended to). So
//   |a_j - b_j| <= P * 2 gamma_n * S_j.
// "Without amplification" is an assumption, true for the tests' random weights (scaled by
// 1 / sqrt(fan-in), random_weights) and gains near 1; a trained model's layers may amplify errors.
//
// Dimension legend: V = vocabulary, C = model width.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "h2o/model/weights.hpp"

namespace h2o_test {

// The bound above for each logit j, for a decoder that attends to at most `positions` tokens.
// Returns (V,).
inline std::vector<double> logit_tolerances(const h2o::DecoderWeights& w, std::size_t positions) {
  const h2o::ModelConfig& c = w.config;
  const std::size_t C = c.dim, V = c.vocab_size;
  const double n = static_cast<double>(std::max({C, c.hidden_dim, positions}));
  const double u = std::ldexp(1.0, -24);
  const double gamma = n * u / (1.0 - n * u);
  const double products = 6.0 * static_cast<double>(c.n_layers) + 1.0;
  const h2o::Matrix& classifier = w.classifier();  // (V, C)
  std::vector<double> tolerance(V);
  for (std::size_t j = 0; j < V; ++j) {
    double norm2 = 0.0;  // ||w_j (*) g||_2^2
    for (std::size_t k = 0; k < C; ++k) {
      const double wg = static_cast<double>(classifier(j, k)) * w.rms_final(k);
      norm2 += wg * wg;
    }
    tolerance[j] = products * 2.0 * gamma * std::sqrt(norm2) * std::sqrt(static_cast<double>(C));
  }
  return tolerance;
}

// max over j of |a_j - b_j| / tolerance_j: the two sets of logits agree when it is <= 1. NaN
// counts as infinitely far.  a (V,)  b (V,)  tolerance (V,)
inline double worst_over_tolerance(const float* a, const float* b,
                                   const std::vector<double>& tolerance) {
  double worst = 0.0;
  for (std::size_t j = 0; j < tolerance.size(); ++j) {
    const double gap = std::fabs(static_cast<double>(a[j]) - b[j]) / tolerance[j];
    worst = std::max(worst, std::isnan(gap) ? INFINITY : gap);
  }
  return worst;
}

}  // namespace h2o_test
