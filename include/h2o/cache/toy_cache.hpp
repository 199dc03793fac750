// toy_cache.hpp: the blog's simple H2O cache — rows are appended, then filtered with keep indices.
//
// One row per cached token, and the rows of every array always belong together:
//   words (T,)  positions (T,)  keys (T, D)  values (T, D)  scores (T,)
// Eviction is the blog's `key_cache = key_cache[keep_indices]` applied to all five at once, so a
// token's key, value, score and position can never drift apart. It allocates on every step, which
// is fine for lessons; the decoder uses the preallocated LayerKVCache instead.
//
// Dimension legend: T = tokens in the cache, D = numbers in one key or value (head_dim).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

// Rows of a matrix picked by index, in the given order: (len(indices), cols).
Matrix take_rows(const Matrix& rows, const std::vector<std::size_t>& indices);

template <class T>
std::vector<T> take(const std::vector<T>& items, const std::vector<std::size_t>& indices) {
  std::vector<T> out;
  out.reserve(indices.size());
  for (std::size_t i : indices) out.push_back(items.at(i));
  return out;
}

class ToyKVCache {
 public:
  explicit ToyKVCache(std::size_t head_dim);

  // Appends one token: key (D,), value (D,); it enters with score 0.
  void append(const std::string& word, Position position, const Vector& key, const Vector& value);

  // scores (T,) += attention (T,).
  void add_attention(const Vector& attention);

  // Keeps only these rows (slot indices), in this order, from every array at once.
  void keep(const std::vector<std::size_t>& slots);

  // H2O's decision for the current rows (does not change the cache).
  KeepPlan plan(const CacheBudget& budget) const;

  std::size_t size() const { return positions_.size(); }
  std::size_t head_dim() const { return head_dim_; }
  std::size_t kv_numbers() const { return 2 * size() * head_dim_; }  // keys + values

  const std::vector<std::string>& words() const { return words_; }
  const std::vector<Position>& positions() const { return positions_; }
  const std::vector<float>& scores() const { return scores_; }
  const Matrix& keys() const { return keys_; }      // (T, D)
  const Matrix& values() const { return values_; }  // (T, D)

 private:
  std::size_t head_dim_;
  std::vector<std::string> words_;   // (T,)
  std::vector<Position> positions_;  // (T,)
  std::vector<float> scores_;        // (T,)
  Matrix keys_;                      // (T, D)
  Matrix values_;                    // (T, D)
};

}  // namespace h2o
