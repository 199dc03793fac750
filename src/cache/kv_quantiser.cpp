#include "h2o/cache/kv_quantiser.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace h2o {

void check_kv_format(const KvFormat& format) {
  if (format.bits != 32 && format.bits != 8 && format.bits != 4 && format.bits != 2) {
    throw std::invalid_argument("KV bits must be 32, 8, 4 or 2 (got " +
                                std::to_string(format.bits) + ")");
  }
  if (format.group == 0) throw std::invalid_argument("the KV quantisation group must be >= 1");
  if (format.residual % format.group != 0) {
    throw std::invalid_argument("the KV residual window (" + std::to_string(format.residual) +
                                " tokens) must be a multiple of the group (" +
                                std::to_string(format.group) + ")");
  }
}

std::string describe_kv_format(const KvFormat& format) {
  if (!format.quantised()) return "fp32";
  const std::string window = format.residual_window() == format.group
                                 ? ""
                                 : ", newest " + std::to_string(format.residual) + " fp32";
  return std::to_string(format.bits) + "-bit, groups of " + std::to_string(format.group) + window;
}

QuantStep quant_step_for_range(float lo, float hi, unsigned bits) {
  const auto max_code = static_cast<float>((1u << bits) - 1u);
  return {(hi - lo) / max_code, lo};
}

QuantStep quant_step_of(const float* x, std::size_t n, std::size_t stride, unsigned bits) {
  float lo = x[0], hi = x[0];
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, x[i * stride]);
    hi = std::max(hi, x[i * stride]);
  }
  return quant_step_for_range(lo, hi, bits);
}

std::uint8_t quantise_number(float x, const QuantStep& step, unsigned bits) {
  if (step.scale == 0.0f) return 0;  // a group of equal numbers: every code 0, x' = zero
  const auto max_code = static_cast<float>((1u << bits) - 1u);
  // KIVI's order: subtract, divide, clamp, then round (to nearest, ties to even).
  const float steps = std::min(std::max((x - step.zero) / step.scale, 0.0f), max_code);
  return static_cast<std::uint8_t>(std::nearbyint(steps));
}

}  // namespace h2o
