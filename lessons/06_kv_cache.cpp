// Lesson 06: a real key/value cache.
//
// Mirrors the blog's learn_05_kv_cache.py. A token's key and value never change once computed, so a
// decoder saves them as rows of two growing matrices, the KV cache, instead of recomputing them for
// every new token. This lesson appends rows token by token (the blog's torch.cat), checks that
// attention with the cache equals recomputing every key and value from scratch, and counts the work
// the cache saved. Attention itself comes from the library (lesson 05 wrote it out).
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"

using h2o::fixed;

namespace {
// A (rows, cols) matrix of seeded random numbers in [-1, 1).
h2o::Matrix random_matrix(h2o::Rng& rng, std::size_t rows, std::size_t cols) {
  h2o::Matrix m = xt::zeros<float>({rows, cols});
  for (auto& x : m) x = rng.uniform(-1.0f, 1.0f);
  return m;
}
}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("06_kv_cache", [&] {
    h2o::ArgParser args(
        "06_kv_cache",
        "Lesson 06: append keys and values token by token; compare with recomputing.");
    args.add_option("tokens", "N", "8", "how many tokens arrive (1..64)");
    args.add_option("seed", "N", "6", "seed for the made-up embeddings and projections");
    if (!args.parse(argc, argv)) return 0;
    const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, 64));
    h2o::Rng rng(static_cast<std::uint64_t>(args.integer("seed", 0, 1'000'000'000)));

    // Step 1: made-up token embeddings x (T, C) and the projections that turn an embedding into its
    // query, key and value: q = x Wq, k = x Wk, v = x Wv, each of D numbers.
    const std::size_t width = 4, head_dim = 4;
    const h2o::Matrix embeddings = random_matrix(rng, n_tokens, width);  // (T, C)
    const h2o::Matrix wq = random_matrix(rng, width, head_dim);          // (C, D)
    const h2o::Matrix wk = random_matrix(rng, width, head_dim);          // (C, D)
    const h2o::Matrix wv = random_matrix(rng, width, head_dim);          // (C, D)
    std::cout << "Lesson 06: a real key and value cache (blog: learn_05_kv_cache.py)\n\n";
    std::cout << "Step 1: " << n_tokens << " tokens arrive one at a time; each has an embedding of "
              << width << " numbers\n        and gets a query, key and value of " << head_dim
              << " numbers.\n\n";

    // Step 2: the cache starts empty: 0 rows of D numbers.
    h2o::Matrix key_cache = xt::zeros<float>({std::size_t{0}, head_dim});    // (T, D)
    h2o::Matrix value_cache = xt::zeros<float>({std::size_t{0}, head_dim});  // (T, D)
    std::size_t projections_with_cache = 0, projections_without_cache = 0;
    float largest_difference = 0.0f;

    std::cout << "Step 2: per token, append its key and value as new rows, then attend\n\n";
    std::cout << "  token  cache rows  attention over the cache (the new token sees itself)\n";
    for (std::size_t t = 0; t < n_tokens; ++t) {
      const h2o::Vector x = xt::row(embeddings, t);  // (C,)
      const h2o::Vector q = xt::linalg::dot(x, wq);  // (D,)
      const h2o::Vector k = xt::linalg::dot(x, wk);  // (D,)
      const h2o::Vector v = xt::linalg::dot(x, wv);  // (D,)
      projections_with_cache += 2;                   // only the new token's k and v

      // The blog's torch.cat([key_cache, new_key], dim=0): one more row.
      key_cache = xt::concatenate(xt::xtuple(key_cache, xt::view(k, xt::newaxis(), xt::all())), 0);
      value_cache =
          xt::concatenate(xt::xtuple(value_cache, xt::view(v, xt::newaxis(), xt::all())), 0);
      const h2o::AttentionResult cached = h2o::attend(q, key_cache, value_cache);

      // Step 3: the same attention without a cache: recompute every key and value so far.
      const auto seen = xt::view(embeddings, xt::range(0, t + 1), xt::all());  // (t+1, C)
      const h2o::Matrix all_keys = xt::linalg::dot(seen, wk);                  // (t+1, D)
      const h2o::Matrix all_values = xt::linalg::dot(seen, wv);                // (t+1, D)
      projections_without_cache += 2 * (t + 1);
      const h2o::AttentionResult recomputed = h2o::attend(q, all_keys, all_values);
      largest_difference =
          std::max(largest_difference, xt::amax(xt::abs(cached.output - recomputed.output))());

      std::string weights = h2o::format_list(cached.weights, 2);
      if (weights.size() > 70) weights = weights.substr(0, 66) + " ...]";
      std::cout << "  " << h2o::pad_left(std::to_string(t), 5) << "  "
                << h2o::pad_left(std::to_string(key_cache.shape()[0]), 10) << "  " << weights
                << "\n";
    }

    std::cout << "\nStep 3: the same outputs, recomputing every key and value from scratch\n";
    std::cout << "  largest |cached output - recomputed output| over all tokens: "
              << h2o::scientific(largest_difference)
              << (largest_difference == 0.0f   ? "  (bit for bit identical)"
                  : largest_difference < 1e-5f ? "  (float rounding only)"
                                               : "  (MISMATCH: the cache is broken)")
              << "\n";

    // Step 4: the work saved. Without a cache, token t recomputes t + 1 keys and values.
    std::cout << "\nStep 4: key and value projections computed\n";
    std::cout << "  with the cache:    " << projections_with_cache << "  (2 per token)\n";
    std::cout << "  without the cache: " << projections_without_cache << "  (2 x (1 + 2 + ... + "
              << n_tokens << "))\n";
    std::cout << "  the cache did "
              << fixed(static_cast<double>(projections_without_cache) /
                           static_cast<double>(projections_with_cache),
                       1)
              << "x less projection work, and the saving grows with the length.\n";
    std::cout << "\nThe price: the cache holds " << key_cache.shape()[0] << " rows of keys and "
              << value_cache.shape()[0] << " rows of values,\n"
              << key_cache.size() + value_cache.size()
              << " numbers, and it grows with every token. ";
    std::cout << "H2O (next lesson) keeps it from growing without bound.\n";
    return 0;
  });
}
