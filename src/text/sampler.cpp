#include "h2o/text/sampler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include "h2o/base/xtensor.hpp"

#include "h2o/attention/attention.hpp"

namespace h2o {

int sample_argmax(const float* values, std::size_t n) {
  if (n == 0) throw std::invalid_argument("sample_argmax: no values");
  // A NaN compares false with everything, so a NaN would silently "choose" token 0: refused.
  std::size_t best = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(values[i])) {
      throw std::domain_error("sample_argmax: value " + std::to_string(i) + " is NaN");
    }
    if (values[i] > values[best]) best = i;  // strictly greater: the first maximum wins
  }
  return static_cast<int>(best);
}

int sample_multinomial(const float* probabilities, std::size_t n, float coin) {
  if (n == 0) throw std::invalid_argument("sample_multinomial: no probabilities");
  float cdf = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    cdf += probabilities[i];
    if (coin < cdf) return static_cast<int>(i);
  }
  // NaN probabilities never pass the test above; they must not pass for "the last token".
  if (std::isnan(cdf)) throw std::domain_error("sample_multinomial: the probabilities hold a NaN");
  return static_cast<int>(n - 1);  // the sum fell just short of the coin through rounding
}

int sample_top_p(const float* probabilities, std::size_t n, float top_p, float coin,
                 std::vector<ProbabilityIndex>& scratch) {
  if (n == 0) throw std::invalid_argument("sample_top_p: no probabilities");
  if (n == 1) return 0;
  // A token below this cutoff can never be inside the nucleus: even if all n - 1 others were as
  // small, they could not add up to 1 - top_p. Dropping them makes the sort much shorter.
  const float cutoff = (1.0f - top_p) / static_cast<float>(n - 1);
  scratch.clear();
  for (std::size_t i = 0; i < n; ++i) {
    if (probabilities[i] >= cutoff) scratch.push_back({probabilities[i], static_cast<int>(i)});
  }
  // With a tiny top_p and a nearly flat distribution nothing reaches the cutoff (run.c then reads
  // outside its array); the nucleus is then just the most likely token.
  if (scratch.empty()) return sample_argmax(probabilities, n);
  // Larger probability first; equal probabilities by index, so the order never depends on the
  // sort algorithm (run.c's qsort leaves ties unspecified).
  std::sort(
      scratch.begin(), scratch.end(), [](const ProbabilityIndex& a, const ProbabilityIndex& b) {
        return a.probability != b.probability ? a.probability > b.probability : a.index < b.index;
      });

  float cumulative = 0.0f;
  std::size_t last = scratch.size() - 1;
  for (std::size_t i = 0; i < scratch.size(); ++i) {
    cumulative += scratch[i].probability;
    if (cumulative > top_p) {
      last = i;
      break;
    }
  }
  const float r = coin * cumulative;
  float cdf = 0.0f;
  for (std::size_t i = 0; i <= last; ++i) {
    cdf += scratch[i].probability;
    if (r < cdf) return scratch[i].index;
  }
  return scratch[last].index;
}

Sampler::Sampler(std::size_t vocab_size, float temperature, float top_p, std::uint64_t seed)
    : vocab_size_(vocab_size), temperature_(temperature), top_p_(top_p), rng_(seed) {
  if (vocab_size == 0) throw std::invalid_argument("Sampler: the vocabulary is empty");
  if (!std::isfinite(temperature) || temperature < 0.0f) {
    throw std::invalid_argument("temperature must be a number >= 0, got " +
                                std::to_string(temperature));
  }
  if (!(top_p >= 0.0f && top_p <= 1.0f)) {  // also refuses NaN
    throw std::invalid_argument("top-p must be between 0 and 1, got " + std::to_string(top_p));
  }
  probabilities_ = xt::zeros<float>({vocab_size});
  candidates_.reserve(vocab_size);
}

int Sampler::sample(const Vector& logits) {
  if (logits.size() != vocab_size_) {
    throw std::invalid_argument("Sampler: expected " + std::to_string(vocab_size_) +
                                " logits, got " + std::to_string(logits.size()));
  }
  // A NaN or infinite logit (a model whose numbers overflowed) leaves nothing to sample from: an
  // error, never a made-up token.
  for (std::size_t i = 0; i < vocab_size_; ++i) {
    if (!std::isfinite(logits(i))) {
      throw std::runtime_error("the model's logit for token " + std::to_string(i) + " is " +
                               std::to_string(logits(i)) + " (its numbers overflowed)");
    }
  }
  if (temperature_ == 0.0f) return sample_argmax(logits.data(), vocab_size_);

  // run.c divides the logits by the temperature, then softmax subtracts their maximum. With a tiny
  // temperature (1e-38) the division overflows to infinity and softmax makes inf - inf = NaN.
  // Subtracting the largest logit first gives the same distribution with every value <= 0, which
  // cannot overflow: a temperature near 0 then samples like greedy. It is used only when the plain
  // division would overflow, so at ordinary temperatures the arithmetic (and the text) is run.c's.
  float* p = probabilities_.data();
  const float largest = *std::max_element(logits.begin(), logits.end());
  if (std::isfinite(largest / temperature_)) {
    for (std::size_t i = 0; i < vocab_size_; ++i) p[i] = logits(i) / temperature_;
  } else {
    for (std::size_t i = 0; i < vocab_size_; ++i) p[i] = (logits(i) - largest) / temperature_;
  }
  softmax_inplace(p, vocab_size_);
  const float coin = rng_.uniform();
  if (top_p_ <= 0.0f || top_p_ >= 1.0f) return sample_multinomial(p, vocab_size_, coin);
  return sample_top_p(p, vocab_size_, top_p_, coin, candidates_);
}

}  // namespace h2o
