// packed_codes.hpp: b-bit codes (b = 8, 4 or 2) packed along a row, lowest bits first: with b = 4
// code i sits in byte i / 2, bits 4 * (i % 2) .. 4 * (i % 2) + 3 (the order KIVI's pack_tensor
// uses inside each int32). The quantiser (cache/kv_quantiser.hpp) writes them; attention over a
// quantised cache (attention/quantised_attention.hpp) reads them.
//
// Dimension legend: n = codes in a row.
#pragma once

#include <cstddef>
#include <cstdint>

namespace h2o {

// Bytes that n codes of b bits take packed: ceil(n * b / 8).
inline std::size_t packed_bytes(std::size_t n, unsigned bits) { return (n * bits + 7) / 8; }

// Writes code i (< 2^b) into packed (packed_bytes(n, b),), or reads it back.
inline void put_code(std::uint8_t* packed, std::size_t i, unsigned bits, std::uint8_t code) {
  const std::size_t bit = i * bits;
  const auto mask = static_cast<std::uint8_t>(((1u << bits) - 1u) << (bit % 8));
  packed[bit / 8] =
      static_cast<std::uint8_t>((packed[bit / 8] & ~mask) | ((code << (bit % 8)) & mask));
}
inline std::uint8_t get_code(const std::uint8_t* packed, std::size_t i, unsigned bits) {
  const std::size_t bit = i * bits;
  return static_cast<std::uint8_t>((packed[bit / 8] >> (bit % 8)) & ((1u << bits) - 1u));
}

}  // namespace h2o
