#include "h2o/base/vector_math.hpp"

#include <cstring>

namespace h2o {

namespace {

// How many numbers of the block x (n,) are not finite (all exponent bits set: NaN or infinity).
// Branch-free, so it vectorises; the caller looks closer only when a block has any.
H2O_VECTOR_CLONES
std::size_t count_non_finite(const float* x, std::size_t n) {
  std::uint32_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, x + i, sizeof(bits));
    count += (bits & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
  }
  return count;
}

}  // namespace

std::size_t first_non_finite(const float* x, std::size_t n) {
  constexpr std::size_t kBlock = 1 << 14;  // 64 KiB of floats: stays in the L2 cache
  for (std::size_t start = 0; start < n; start += kBlock) {
    const std::size_t count = n - start < kBlock ? n - start : kBlock;
    if (count_non_finite(x + start, count) == 0) continue;
    for (std::size_t i = start; i < start + count; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, x + i, sizeof(bits));
      if ((bits & 0x7f800000u) == 0x7f800000u) return i;
    }
  }
  return n;
}

}  // namespace h2o
