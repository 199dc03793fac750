#include "h2o/cache/toy_cache.hpp"

#include <stdexcept>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

namespace h2o {

Matrix take_rows(const Matrix& rows, const std::vector<std::size_t>& indices) {
  const std::size_t cols = rows.shape()[1];
  Matrix out = xt::zeros<float>({indices.size(), cols});
  for (std::size_t r = 0; r < indices.size(); ++r) {
    if (indices[r] >= rows.shape()[0]) {
      throw std::out_of_range("take_rows: row " + std::to_string(indices[r]) + " of " +
                              std::to_string(rows.shape()[0]));
    }
    for (std::size_t c = 0; c < cols; ++c) out(r, c) = rows(indices[r], c);
  }
  return out;
}

ToyKVCache::ToyKVCache(std::size_t head_dim)
    : head_dim_(head_dim),
      keys_(xt::zeros<float>({std::size_t{0}, head_dim})),
      values_(xt::zeros<float>({std::size_t{0}, head_dim})) {
  if (head_dim == 0) throw std::invalid_argument("ToyKVCache: head_dim must be at least 1");
}

void ToyKVCache::append(const std::string& word, Position position, const Vector& key,
                        const Vector& value) {
  if (key.size() != head_dim_ || value.size() != head_dim_) {
    throw std::invalid_argument("ToyKVCache::append: key and value need " +
                                std::to_string(head_dim_) + " numbers each");
  }
  words_.push_back(word);
  positions_.push_back(position);
  scores_.push_back(0.0f);
  keys_ = xt::concatenate(xt::xtuple(keys_, xt::view(key, xt::newaxis(), xt::all())), 0);
  values_ = xt::concatenate(xt::xtuple(values_, xt::view(value, xt::newaxis(), xt::all())), 0);
}

void ToyKVCache::add_attention(const Vector& attention) {
  accumulate_attention(scores_, std::vector<float>(attention.begin(), attention.end()));
}

void ToyKVCache::keep(const std::vector<std::size_t>& slots) {
  keys_ = take_rows(keys_, slots);
  values_ = take_rows(values_, slots);
  scores_ = take(scores_, slots);
  positions_ = take(positions_, slots);
  words_ = take(words_, slots);
}

KeepPlan ToyKVCache::plan(const CacheBudget& budget) const {
  return plan_keep(positions_, scores_, budget);
}

}  // namespace h2o
