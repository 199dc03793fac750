// tensor.hpp: the tensor types every other header speaks in.
//
// Dimension legend (used in shape comments across the whole library):
//   T  = tokens (cache slots or sequence positions)    D  = head_dim (numbers in one key or value)
//   H  = query heads        G = KV heads (grouped-query attention: H is a multiple of G)
//   C  = model width (dim)  F = feed-forward hidden width          V = vocabulary size
//   L  = layers             S = slot capacity of a preallocated cache
#pragma once

#include <cstddef>
#include <cstdint>

#include "h2o/base/xtensor.hpp"

namespace h2o {

// Fixed-rank xtensor containers: their shapes live on the stack, unlike xt::xarray's.
using Vector = xt::xtensor<float, 1>;   // (N,)
using Matrix = xt::xtensor<float, 2>;   // (rows, cols), row-major
using Tensor3 = xt::xtensor<float, 3>;  // (a, b, c), row-major

// Original position of a token in the sequence (0 = first token).
using Position = std::int64_t;

}  // namespace h2o
