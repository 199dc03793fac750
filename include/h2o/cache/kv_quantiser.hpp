// kv_quantiser.hpp: the plain reference quantiser of a quantised KV cache (KIVI's asymmetric
// min-max rounding), written so a reader can follow every step.
//
// A group of n numbers x (keys: one channel over a group of tokens; values: a group of channels of
// one token) is stored as b-bit codes and two floats:
//   zero  = min(x)                          the group's smallest number
//   scale = (max(x) - min(x)) / (2^b - 1)   one step between neighbouring codes
//   code  = round((x - zero) / scale), clamped to 0 .. 2^b - 1 (round half to even, as torch)
//   x'    = code * scale + zero             what attention reads back
// so |x - x'| <= scale / 2: half a step, whatever the numbers. A group of equal numbers has scale
// 0: every code is 0 and x' = zero exactly (KIVI's own code divides by that 0; here it is defined).
//
// Codes are packed along a row, lowest bits first (base/packed_codes.hpp).
//
// Dimension legend: n = numbers in one group, D = head_dim.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "h2o/base/packed_codes.hpp"

namespace h2o {

// How a KV cache stores its keys and values: 32 = plain float32 rows (the default, exactly the
// cache of lessons 06-11); 8, 4 or 2 = KIVI's layout (kv_cache.hpp): keys per channel over
// position groups of `group` tokens, values per token over groups of min(group, D) channels,
// the newest tokens in float32 until their group fills.
struct KvFormat {
  unsigned bits = 32;
  std::size_t group = 32;  // tokens per key group (KIVI's group size); ignored at 32 bits
  // KIVI's residual window: the newest tokens stay float32 until `residual` of them (a multiple of
  // the group) are there, then are quantised together, `group` positions to a key group. 0: one
  // group (the newest group stays float32 until it fills). KIVI's code defaults to 128.
  std::size_t residual = 0;
  bool quantised() const { return bits != 32; }
  std::size_t residual_window() const { return residual == 0 ? group : residual; }
};

// Throws std::invalid_argument naming the problem unless bits is 32, 8, 4 or 2, group >= 1 and
// residual is 0 or a multiple of group.
void check_kv_format(const KvFormat& format);

// "fp32", "4-bit, groups of 32" or "4-bit, groups of 32, newest 128 fp32" for reports.
std::string describe_kv_format(const KvFormat& format);

struct QuantStep {
  float scale = 0.0f;  // (max - min) / (2^b - 1)
  float zero = 0.0f;   // min
};

// The scale and zero of a group whose smallest number is lo and largest hi.
QuantStep quant_step_for_range(float lo, float hi, unsigned bits);
// The group's scale and zero: x[i * stride] for i = 0 .. n - 1 (n >= 1).
QuantStep quant_step_of(const float* x, std::size_t n, std::size_t stride, unsigned bits);

// One number's code, 0 .. 2^b - 1, and the number a code stands for.
std::uint8_t quantise_number(float x, const QuantStep& step, unsigned bits);
inline float dequantise_number(std::uint8_t code, const QuantStep& step) {
  return static_cast<float>(code) * step.scale + step.zero;
}

}  // namespace h2o
