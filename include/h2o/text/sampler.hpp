// sampler.hpp: picking the next token from the logits, exactly as llama2.c run.c does.
//
// Dimension legend: V = vocabulary size.
//
//   temperature 0       greedy: the FIRST token with the largest logit (no randomness at all)
//   temperature t > 0   probabilities = softmax(logits / t); one uniform "coin" in [0, 1) per step.
//                       Any t > 0 works: where logits / t would overflow (t = 1e-38), the largest
//                       logit is subtracted first (the same distribution), so a tiny t samples
//                       like greedy instead of turning the logits into inf and NaN.
//     top_p in (0, 1)   nucleus sampling: keep the most likely tokens until their probabilities
//                       add up to more than top_p, and draw among those only
//     top_p 0 or 1      draw from the whole distribution (run.c treats both ends this way)
//
// The coin comes from h2o::Rng (llama2.c's xorshift), so a seed gives the same tokens on every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/base/tensor.hpp"

namespace h2o {

// Index of the first maximum of values (n,); n must be positive. Throws std::domain_error if a
// value is NaN (NaN compares false with everything, so it would otherwise pick token 0).
int sample_argmax(const float* values, std::size_t n);

// Draws from probabilities (n,) with coin in [0, 1): the first index whose running sum exceeds the
// coin (the last index if rounding leaves the total just under the coin; std::domain_error if a
// NaN is what kept it under).
int sample_multinomial(const float* probabilities, std::size_t n, float coin);

// A candidate token of nucleus sampling.
struct ProbabilityIndex {
  float probability;
  int index;
};

// Nucleus sampling over probabilities (n,), top_p in (0, 1): sorts the candidates by probability
// (larger first, smaller index first on ties), keeps the shortest prefix whose sum exceeds top_p
// and draws coin * (that sum) within it. Tokens below (1 - top_p) / (n - 1) cannot be in the
// nucleus and are dropped before sorting (run.c's shortcut). `scratch` is reused between calls.
int sample_top_p(const float* probabilities, std::size_t n, float top_p, float coin,
                 std::vector<ProbabilityIndex>& scratch);

class Sampler {
 public:
  // Throws std::invalid_argument for vocab_size 0, a negative or non-finite temperature, or a
  // top_p outside [0, 1].
  Sampler(std::size_t vocab_size, float temperature, float top_p, std::uint64_t seed);

  // The next token for these logits (V,). Does not modify them. Throws std::runtime_error when a
  // logit is NaN or infinite.
  int sample(const Vector& logits);

  float temperature() const { return temperature_; }
  float top_p() const { return top_p_; }

 private:
  std::size_t vocab_size_;
  float temperature_;
  float top_p_;
  Rng rng_;
  Vector probabilities_;                      // (V,) scratch
  std::vector<ProbabilityIndex> candidates_;  // (<= V,) scratch for top-p
};

}  // namespace h2o
