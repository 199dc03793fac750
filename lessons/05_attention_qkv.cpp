// Lesson 05: attention with Q, K and V.
// Mirrors the blog's lesson_01_attention.py ("Calculate attention").
//
// The newest token "sat" asks a question (its query Q); every cached token offers a key K and a
// value V. Comparing Q with every K gives one match score per token; softmax turns the scores into
// attention that adds up to 1; the output is the attention's mix of the value rows.
// "Q searches K and gets information from V."
//
// From here on the lessons use tensors, as the blog's later lessons use PyTorch: xtensor's
// xt::xtensor (h2o::Matrix, h2o::Vector) and xtensor-blas's xt::linalg::dot for the blog's `@`.
// The blog's cache [The, cat, sat] gets the attention 0.20, 0.50, 0.30: the vectors below were
// chosen so that the computed attention rounds to exactly those digits.
//
// Dimension legend: T = tokens in the cache (3), D = numbers in a query, key or value (2).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>
#include "h2o/base/xtensor_blas.hpp"

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"

using h2o::fixed;
using h2o::format_list;
using h2o::format_rows;

namespace {
// "the same numbers as xt::linalg::dot" when another way of computing gives these numbers (to
// float rounding).
std::string same_as(const h2o::Vector& other, const h2o::Vector& numbers) {
  return xt::allclose(other, numbers, 1e-5, 1e-6) ? "the same numbers as xt::linalg::dot"
                                                  : "NOT the same numbers as xt::linalg::dot";
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::start_lesson(argc, argv,
                    "Lesson 05: one query attends over the keys and values of [The, cat, sat].");
  // Step 1: every token in the cache has a key and a value; the newest token brings a query.
  const std::vector<std::string> words = {"The", "cat", "sat"};
  const h2o::Matrix keys = {{0.1f, 0.2f}, {1.0f, 0.6f}, {0.5f, 0.4f}};    // (T, D)
  const h2o::Matrix values = {{1.0f, 0.0f}, {0.0f, 1.0f}, {0.5f, 0.5f}};  // (T, D)
  const h2o::Vector query = {1.0f, 1.0f};                                 // (D,)
  const std::size_t n = words.size(), head_dim = query.size();
  std::cout << "Lesson 05: attention with Q, K and V (blog: lesson_01_attention.py)\n\n"
            << "Step 1: cache " << format_list(words) << ", keys K " << format_rows(keys, 1)
            << "\n        values V " << format_rows(values, 1) << ", Q " << format_list(query, 1);

  // Step 2: one match score per cached token: the dot product of Q with that token's key.
  // query @ keys.T                              (D,) @ (D, T) -> (T,)
  const h2o::Vector raw_scores = xt::linalg::dot(query, xt::transpose(keys));
  // That one line is T dot products, score[t] = sum over d of Q[d] * K[t][d]; written out:
  h2o::Vector by_hand = xt::zeros<float>({n});
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t d = 0; d < head_dim; ++d) by_hand(t) += query(d) * keys(t, d);
  }
  // Dividing by sqrt(D) keeps the scores from growing with the vector length.
  const h2o::Vector scores = raw_scores / std::sqrt(static_cast<float>(head_dim));  // (T,)
  std::cout << "\n\nStep 2: scores = xt::linalg::dot(query, xt::transpose(keys)) / sqrt(D)\n"
            << "  Q . K = " << format_list(raw_scores, 4)
            << ", / sqrt(2) = " << format_list(scores, 4) << "\n  the loop written out gives "
            << same_as(by_hand, raw_scores) << "\n";

  // Step 3: softmax turns scores into attention that is positive and adds up to 1. Subtracting
  // the largest score first changes nothing mathematically but keeps exp() from overflowing.
  const h2o::Vector exps = xt::exp(scores - xt::amax(scores)());  // (T,)
  const h2o::Vector attention = exps / xt::sum(exps)();           // (T,)
  const float total = xt::sum(attention)();                       // 1, as every softmax
  // The most attention goes to the token whose key matches the query best.
  const std::string favourite = words[static_cast<std::size_t>(
      std::max_element(attention.begin(), attention.end()) - attention.begin())];
  std::cout << "\nStep 3: attention = softmax(scores): " << h2o::format_pairs(words, attention)
            << "\n  sum = " << fixed(total) << "; " << favourite << "'s key fits Q best\n";

  // Step 4: the output is the attention-weighted mix of the value rows.
  // attention @ values                          (T,) @ (T, D) -> (D,)
  const h2o::Vector output = xt::linalg::dot(attention, values);
  // Written out: output[d] = sum over t of attention[t] * V[t][d], each value row in its share.
  h2o::Vector by_hand_output = xt::zeros<float>({head_dim});
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t d = 0; d < head_dim; ++d) by_hand_output(d) += attention(t) * values(t, d);
  }
  // The library's h2o::attend does steps 2-4 in one call; the later lessons use it.
  const h2o::AttentionResult library = h2o::attend(query, keys, values);
  std::cout << "\nStep 4: output = xt::linalg::dot(attention, values) = " << format_list(output, 4)
            << "\n  the loop written out gives " << same_as(by_hand_output, output)
            << "\n  h2o::attend, used from now on, gives " << format_list(library.output, 4) << ": "
            << same_as(library.output, output) << "\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
