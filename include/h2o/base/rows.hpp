// rows.hpp: the blog's two row operations on a cache, one line each in C++ as in Python.
//
//   key_cache = torch.cat([key_cache, new_key], dim=0)   key_cache = h2o::append_row(key_cache, k);
//   key_cache = key_cache[keep_indices]                  key_cache = h2o::take(key_cache, keep);
//
// take() works on plain lists (std::vector, as lessons 01-04 use, like the blog's plain Python)
// and on xtensor matrices and vectors (lessons 05-08, like the blog's PyTorch tensors). Every row
// of the result is a copy, so the old cache can be dropped. Both allocate: they are for lessons and
// tests; the decoder's preallocated cache (kv_cache.hpp) overwrites slots in place instead.
//
// Dimension legend: T = rows (tokens), D = numbers in a row, K = number of indices kept.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

// out (K,) with out[i] = items[indices[i]]: the items picked, in the order of `indices`.
// Throws std::out_of_range for an index past the end.
template <class T>
std::vector<T> take(const std::vector<T>& items, const std::vector<std::size_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size());
  for (std::size_t i : indices) {
    if (i >= items.size()) {
      throw std::out_of_range("take: index " + std::to_string(i) + " of " +
                              std::to_string(items.size()) + " items");
    }
    out.push_back(items[i]);
  }
  return out;
}

// rows (T, D) -> (K, D): the rows picked, in the order of `indices`.
Matrix take(const Matrix& rows, const std::vector<std::size_t>& indices);
// values (T,) -> (K,).
Vector take(const Vector& values, const std::vector<std::size_t>& indices);

// rows (T, D) and row (D,) -> (T + 1, D). A (0, D) matrix is an empty cache.
Matrix append_row(const Matrix& rows, const Vector& row);
// values (T,) and value -> (T + 1,).
Vector append(const Vector& values, float value);

}  // namespace h2o
