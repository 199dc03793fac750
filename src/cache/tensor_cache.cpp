#include "h2o/cache/tensor_cache.hpp"

#include <stdexcept>
#include <string>

#include "h2o/base/rows.hpp"

namespace h2o {

TensorKVCache::TensorKVCache(std::size_t head_dim)
    : key_cache(Matrix::from_shape({0, head_dim})),
      value_cache(Matrix::from_shape({0, head_dim})),
      h2o_scores(Vector::from_shape({0})) {
  if (head_dim == 0) throw std::invalid_argument("TensorKVCache: keys need at least 1 number");
}

void TensorKVCache::append(const Vector& new_key, const Vector& new_value, Position position) {
  const std::size_t head_dim = key_cache.shape()[1];
  if (new_key.size() != head_dim || new_value.size() != head_dim) {  // checked before any change
    throw std::invalid_argument("TensorKVCache::append: key and value need " +
                                std::to_string(head_dim) + " numbers each, got " +
                                std::to_string(new_key.size()) + " and " +
                                std::to_string(new_value.size()));
  }
  key_cache = append_row(key_cache, new_key);
  value_cache = append_row(value_cache, new_value);
  h2o_scores = h2o::append(h2o_scores, 0.0f);
  positions.push_back(position);
}

void TensorKVCache::keep(const std::vector<std::size_t>& keep_indices) {
  key_cache = take(key_cache, keep_indices);
  value_cache = take(value_cache, keep_indices);
  h2o_scores = take(h2o_scores, keep_indices);
  positions = take(positions, keep_indices);
}

}  // namespace h2o
