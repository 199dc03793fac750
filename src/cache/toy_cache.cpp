#include "h2o/cache/toy_cache.hpp"

#include <stdexcept>

#include "h2o/base/rows.hpp"

namespace h2o {

void ToyKVCache::append(const std::string& token, Position position, const Row& key,
                        const Row& value) {
  const std::size_t head_dim = key_cache.empty() ? key.size() : key_cache.front().size();
  if (key.size() != head_dim || value.size() != head_dim || head_dim == 0) {
    throw std::invalid_argument("ToyKVCache::append: key and value need " +
                                std::to_string(head_dim) + " numbers each, got " +
                                std::to_string(key.size()) + " and " +
                                std::to_string(value.size()));
  }
  tokens.push_back(token);
  positions.push_back(position);
  key_cache.push_back(key);
  value_cache.push_back(value);
  h2o_scores.push_back(0.0f);
}

void ToyKVCache::keep(const std::vector<std::size_t>& keep_indices) {
  const std::size_t n = positions.size();
  if (tokens.size() != n || key_cache.size() != n || value_cache.size() != n ||
      h2o_scores.size() != n) {
    throw std::logic_error("ToyKVCache::keep: the lists have different lengths");
  }
  tokens = take(tokens, keep_indices);
  positions = take(positions, keep_indices);
  key_cache = take(key_cache, keep_indices);
  value_cache = take(value_cache, keep_indices);
  h2o_scores = take(h2o_scores, keep_indices);
}

std::size_t ToyKVCache::kv_numbers() const {
  const std::size_t head_dim = key_cache.empty() ? 0 : key_cache.front().size();
  return 2 * size() * head_dim;
}

}  // namespace h2o
