// random.hpp: a tiny seeded random number generator with the same results on every platform.
//
// std::normal_distribution and friends are implementation-defined, so lessons that must print the
// same bytes everywhere use this xorshift generator (the one llama2.c's sampler uses) instead.
#pragma once

#include <cmath>
#include <cstdint>

namespace h2o {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed == 0 ? 0x9E3779B97F4A7C15ULL : seed) {}

  // Uniform 32-bit integer (xorshift64*, upper 32 bits).
  std::uint32_t next_u32() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<std::uint32_t>((state_ * 0x2545F4914F6CDD1DULL) >> 32);
  }

  // Uniform float in [0, 1), from the top 24 bits so every value is exactly representable.
  float uniform() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }

  // Uniform float in [lo, hi).
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }

  // Standard normal sample (Box-Muller; the second value of each pair is discarded for simplicity).
  float normal() {
    const float u1 = 1.0f - uniform();  // (0, 1]: log(0) would be -inf
    const float u2 = uniform();
    return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530718f * u2);
  }

  // Uniform integer in [0, n); n must be positive.
  std::uint32_t below(std::uint32_t n) { return next_u32() % n; }

  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

}  // namespace h2o
