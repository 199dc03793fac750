// toy_cache.hpp: the blog's simple H2O cache: plain lists whose rows are appended, then filtered
// with keep indices.
//
// One row per cached token, and the rows of every list always belong together:
//   tokens (T,)  positions (T,)  key_cache (T, D)  value_cache (T, D)  h2o_scores (T,)
// The names are the blog's. Eviction is the blog's `key_cache = key_cache[keep_indices]` applied to
// all five lists at once (lesson 03 writes it out), so a token's key, value, score and position
// can never drift apart. It allocates on every step, which is fine for lessons; the decoder uses
// the preallocated LayerKVCache (kv_cache.hpp) instead.
//
// Dimension legend: T = tokens in the cache, D = numbers in one key or value (head_dim).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

using Row = std::vector<float>;  // (D,) one key or value

struct ToyKVCache {
  std::vector<std::string> tokens;  // (T,) the token's text, for printing
  std::vector<Position> positions;  // (T,) where the token stood in the sequence
  std::vector<Row> key_cache;       // (T, D)
  std::vector<Row> value_cache;     // (T, D)
  std::vector<float> h2o_scores;    // (T,) accumulated attention

  // Appends one token; it enters with score 0. Throws std::invalid_argument when the key and
  // value do not have the D numbers of the rows already cached (or of each other).
  void append(const std::string& token, Position position, const Row& key, const Row& value);

  // Keeps only these rows, in this order, of every list at once (the blog's
  // `key_cache = key_cache[keep_indices]`, for all five). Throws std::out_of_range for an index
  // that is not a row, and std::logic_error if the lists were edited to different lengths.
  void keep(const std::vector<std::size_t>& keep_indices);

  std::size_t size() const { return positions.size(); }
  std::size_t kv_numbers() const;  // numbers held by keys and values: 2 * T * D
};

}  // namespace h2o
