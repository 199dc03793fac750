// Lesson 06: a real key/value cache.
// Mirrors the blog's learn_05_kv_cache.py ("Build a real key and value cache").
//
// A token's key and value never change once computed, so a decoder saves them as rows of two
// growing matrices, the KV cache, instead of recomputing them for every new token. This lesson
// appends rows token by token (the blog's torch.cat), checks that attention with the cache equals
// recomputing every key and value from scratch, and counts the work the cache saved. Attention
// itself comes from the library (lesson 05 wrote it out).
//
// Dimension legend: T = tokens so far, C = embedding width (4), D = numbers in a query, key or
// value (4).
#include <algorithm>
#include <iostream>
#include <string>
#include "h2o/base/xtensor_blas.hpp"

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/rows.hpp"

namespace {
// A (rows, cols) matrix of seeded random numbers in [-1, 1).
h2o::Matrix random_matrix(h2o::Rng& rng, std::size_t rows, std::size_t cols) {
  h2o::Matrix m = h2o::Matrix::from_shape({rows, cols});
  for (auto& x : m) x = rng.uniform(-1.0f, 1.0f);
  return m;
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::start_lesson(argc, argv,
                    "Lesson 06: append keys and values token by token; compare with recomputing.");
  std::cout << "Lesson 06: a real key and value cache (blog: learn_05_kv_cache.py)\n\n";

  // Step 1: made-up token embeddings x (T, C) and the projections that turn an embedding into its
  // query, key and value: query = x Wq, key = x Wk, value = x Wv. Seeded random numbers.
  const std::size_t n_tokens = 8, width = 4, head_dim = 4;
  h2o::Rng rng(6);
  const h2o::Matrix embeddings = random_matrix(rng, n_tokens, width);  // (T, C)
  const h2o::Matrix wq = random_matrix(rng, width, head_dim);          // (C, D)
  const h2o::Matrix wk = random_matrix(rng, width, head_dim);          // (C, D)
  const h2o::Matrix wv = random_matrix(rng, width, head_dim);          // (C, D)
  std::cout << "Step 1: " << n_tokens << " tokens arrive one at a time; each has an embedding,\n"
            << "        a query, a key and a value of 4 numbers.\n";

  // Step 2: the cache starts empty: 0 rows of D numbers. Every token appends one row to each.
  h2o::Matrix key_cache = h2o::Matrix::from_shape({0, head_dim});    // (T, D)
  h2o::Matrix value_cache = h2o::Matrix::from_shape({0, head_dim});  // (T, D)
  std::size_t projections_with_cache = 0, projections_without_cache = 0;
  float largest_difference = 0.0f;
  std::cout << "\nStep 2: per token, append its key and value as new rows, then attend\n\n"
            << "  token  cache rows  attention over the cache (the new token sees itself)\n";
  for (std::size_t t = 0; t < n_tokens; ++t) {
    const h2o::Vector x = xt::row(embeddings, t);          // (C,)
    const h2o::Vector query = xt::linalg::dot(x, wq);      // (D,)
    const h2o::Vector new_key = xt::linalg::dot(x, wk);    // (D,)
    const h2o::Vector new_value = xt::linalg::dot(x, wv);  // (D,)
    projections_with_cache += 2;                           // only the new token's key and value
    // key_cache = torch.cat([key_cache, new_key], dim=0)
    key_cache = h2o::append_row(key_cache, new_key);  // a new (T + 1, D) matrix: old rows + new_key
    // value_cache = torch.cat([value_cache, new_value], dim=0)
    value_cache = h2o::append_row(value_cache, new_value);
    const h2o::AttentionResult cached = h2o::attend(query, key_cache, value_cache);

    // Step 3: the same attention without a cache: recompute every key and value so far.
    const auto seen = xt::view(embeddings, xt::range(0, t + 1), xt::all());  // (t+1, C)
    const h2o::Matrix all_keys = xt::linalg::dot(seen, wk);                  // (t+1, D)
    const h2o::Matrix all_values = xt::linalg::dot(seen, wv);                // (t+1, D)
    projections_without_cache += 2 * (t + 1);
    const h2o::AttentionResult recomputed = h2o::attend(query, all_keys, all_values);
    largest_difference =
        std::max(largest_difference, xt::amax(xt::abs(cached.output - recomputed.output))());

    std::cout << h2o::pad_left(std::to_string(t), 7) << h2o::pad_left(std::to_string(t + 1), 12)
              << "  " << h2o::format_list(cached.weights, 2) << "\n";
  }
  const char* verdict = largest_difference == 0.0f   ? "bit for bit identical"
                        : largest_difference < 1e-5f ? "float rounding only"
                                                     : "MISMATCH: the cache is broken";
  std::cout << "\nStep 3: the same outputs, recomputing every key and value from scratch\n"
            << "  largest |cached output - recomputed output| over all tokens: "
            << h2o::scientific(largest_difference) << "  (" << verdict << ")\n";

  // Step 4: the work saved. Without a cache, token t recomputes t + 1 keys and values. The price:
  // the cache holds every row and grows with every token; H2O (next lesson) bounds it.
  const double saving = static_cast<double>(projections_without_cache) / projections_with_cache;
  const std::size_t rows = key_cache.shape()[0], numbers = key_cache.size() + value_cache.size();
  std::cout << "\nStep 4: key and value projections: " << projections_with_cache << " with the "
            << "cache (2 per token), " << projections_without_cache << " without (2 x (1 + ... + "
            << n_tokens << "))\n  the cache did " << h2o::fixed(saving, 1) << "x less projection "
            << "work, and the saving grows with the length. The price:\n  " << rows << " rows of "
            << "keys and of values, " << numbers << " numbers, growing with every token; H2O (next "
            << "lesson) bounds them.\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
