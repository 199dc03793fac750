// Lesson 05: attention with Q, K and V.
//
// Mirrors the blog's lesson_01_attention.py. The newest token "sat" asks a question (its query Q);
// every cached token offers a key K and a value V. Comparing Q with every K gives one match score
// per token; softmax turns the scores into attention weights that add up to 1; the output is the
// weights' mix of the value rows. "Q searches K and gets information from V."
//
// The blog's cache [The, cat, sat] gets the weights 0.20, 0.50, 0.30: the vectors below were chosen
// so that the computed weights round to exactly those digits.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>
#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"

using h2o::fixed;
using h2o::format_list;

int main(int argc, char** argv) {
  return h2o::run_program("05_attention_qkv", [&] {
    h2o::ArgParser args(
        "05_attention_qkv",
        "Lesson 05: one query attends over the keys and values of [The, cat, sat].");
    if (!args.parse(argc, argv)) return 0;

    // Step 1: every token in the cache has a key and a value of 2 numbers (head_dim D = 2).
    const std::vector<std::string> words = {"The", "cat", "sat"};
    const h2o::Matrix keys = {{0.1f, 0.2f}, {1.0f, 0.6f}, {0.5f, 0.4f}};    // (T, D) = (3, 2)
    const h2o::Matrix values = {{1.0f, 0.0f}, {0.0f, 1.0f}, {0.5f, 0.5f}};  // (T, D) = (3, 2)
    const h2o::Vector query = {1.0f, 1.0f};  // (D,): the newest token's Q
    const std::size_t head_dim = query.size();

    std::cout << "Lesson 05: attention with Q, K and V (blog: lesson_01_attention.py)\n\n";
    std::cout
        << "Step 1: the cache holds a key and a value for each token; the newest token asks\n";
    std::cout << "        with its query Q = " << format_list(query, 1) << "\n\n";
    std::cout << "  token   key K         value V\n";
    for (std::size_t t = 0; t < words.size(); ++t) {
      std::cout << "  " << h2o::pad_right(words[t], 6) << "  "
                << h2o::pad_right(format_list(h2o::Vector(xt::row(keys, t)), 1), 12) << "  "
                << format_list(h2o::Vector(xt::row(values, t)), 1) << "\n";
    }

    // Step 2: match scores. The blog's `query @ keys.T` is a matrix product; in xtensor it reads
    // xt::linalg::dot(query, xt::transpose(keys)): (D,) @ (D, T) -> (T,).
    const h2o::Vector raw_scores = xt::linalg::dot(query, xt::transpose(keys));  // (T,)
    // Dividing by sqrt(D) keeps the scores from growing with the vector length.
    const h2o::Vector scores = raw_scores / std::sqrt(static_cast<float>(head_dim));  // (T,)
    std::cout << "\nStep 2: scores = xt::linalg::dot(query, xt::transpose(keys)) / sqrt(D)\n";
    std::cout << "  Q . K      = " << format_list(raw_scores, 4) << "\n";
    std::cout << "  / sqrt(" << head_dim << ")  = " << format_list(scores, 4) << "\n";

    // Step 3: softmax. Subtracting the largest score first changes nothing mathematically but keeps
    // exp() from overflowing on big scores.
    const h2o::Vector exps = xt::exp(scores - xt::amax(scores)());  // (T,)
    const h2o::Vector weights = exps / xt::sum(exps)();             // (T,)
    std::cout << "\nStep 3: attention weights = softmax(scores)\n";
    for (std::size_t t = 0; t < words.size(); ++t) {
      std::cout << "  " << h2o::pad_right(words[t] + ":", 5) << " " << fixed(weights(t), 2) << "\n";
    }
    const std::size_t favourite = static_cast<std::size_t>(
        std::max_element(weights.begin(), weights.end()) - weights.begin());
    std::cout << "  sum  = " << fixed(xt::sum(weights)(), 2) << "   (" << words[favourite]
              << " gets the most attention: its key matches Q best)\n";

    // Step 4: the output is the attention-weighted mix of the value rows: (T,) @ (T, D) -> (D,).
    const h2o::Vector output = xt::linalg::dot(weights, values);  // (D,)
    std::cout << "\nStep 4: output = xt::linalg::dot(weights, values)\n";
    std::cout << "  output = " << format_list(output, 4) << "\n";

    // Step 5: the library's h2o::attend does the same in one call; later lessons use it.
    const h2o::AttentionResult library = h2o::attend(query, keys, values);
    const float weight_gap = xt::amax(xt::abs(library.weights - weights))();
    const float output_gap = xt::amax(xt::abs(library.output - output))();
    std::cout << "\nStep 5: h2o::attend(query, keys, values) agrees with the steps above\n";
    std::cout << "  largest difference: weights " << h2o::scientific(weight_gap) << ", output "
              << h2o::scientific(output_gap) << "\n";
    std::cout << "\nQ searches K and gets information from V.\n";
    return 0;
  });
}
