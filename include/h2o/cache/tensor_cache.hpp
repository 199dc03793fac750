// tensor_cache.hpp: the blog's H2O cache of one attention head with tensors (its
// learn_06_h2o_tensor_cache.py, lesson 07): rows are appended with torch.cat and filtered with
// keep indices, as in the plain-list ToyKVCache (toy_cache.hpp), but every list is an xtensor.
//
//   key_cache (T, D)  value_cache (T, D)  h2o_scores (T,)  positions (T,)
//
// Lesson 07 writes these lines out; lesson 08 calls them. Eviction filters all four at once, so
// a token's key, value, score and position never drift apart. Every step allocates, which is
// fine for lessons; the decoder uses the preallocated LayerKVCache (kv_cache.hpp) instead.
//
// Dimension legend: T = tokens in the cache, D = numbers in one key or value (head_dim).
#pragma once

#include <cstddef>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

struct TensorKVCache {
  // An empty cache for keys and values of head_dim numbers (std::invalid_argument for 0).
  explicit TensorKVCache(std::size_t head_dim);

  Matrix key_cache;                 // (T, D)
  Matrix value_cache;               // (T, D)
  Vector h2o_scores;                // (T,) accumulated attention
  std::vector<Position> positions;  // (T,) where each token stood in the sequence

  // key_cache = torch.cat([key_cache, new_key], dim=0), the same for the value; the new token
  // enters with score 0. Throws std::invalid_argument when the key or value is not D numbers.
  void append(const Vector& new_key, const Vector& new_value, Position position);

  // key_cache = key_cache[keep_indices], and the same for the three other lists. Throws
  // std::out_of_range for an index that is not a row.
  void keep(const std::vector<std::size_t>& keep_indices);

  std::size_t size() const { return positions.size(); }
  std::size_t kv_numbers() const { return key_cache.size() + value_cache.size(); }  // 2 * T * D
};

}  // namespace h2o
