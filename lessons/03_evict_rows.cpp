// Lesson 03: evicting a token means removing its row from EVERY array, with one list of indices.
// Mirrors the blog's learn_03_evict.py ("Remove low-scoring old tokens").
//
// A KV cache is several arrays with one row per token: keys (T, D), values (T, D), scores (T,),
// and - so we know which token a row is - positions (T,). Once lesson 01's rule has chosen the
// keep indices, the blog filters every array with the same list:
//   key_cache = key_cache[keep_indices];  value_cache = value_cache[keep_indices];  ...
// This lesson writes that filter out by hand on tiny 2-number keys and values, shows what goes
// wrong when the arrays do not move together, and checks the result against h2o::ToyKVCache.
//
// Dimension legend: T = tokens in the cache, D = numbers in one key or value (2 here).
#include <cmath>
#include <cstddef>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "h2o/app/cli.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"

namespace {

const char* yes_no(bool ok) { return ok ? "yes" : "no"; }

std::string row_text(const h2o::Matrix& rows, std::size_t r) {
  return h2o::format_list(h2o::Vector(xt::view(rows, r, xt::all())));
}

// The made-up keys and values below have the token's position as their whole part, so the
// owner of any row can be read off it: floor(1.70) = 1 means "this row belongs to position 1".
h2o::Position owner(const h2o::Matrix& rows, std::size_t r) {
  return static_cast<h2o::Position>(std::floor(rows(r, 0)));
}

// True when every row's key and value belong to the token at that row's position.
bool rows_aligned(const std::vector<h2o::Position>& positions, const h2o::Matrix& keys,
                  const h2o::Matrix& values) {
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (owner(keys, r) != positions[r] || owner(values, r) != positions[r]) return false;
  }
  return true;
}

void print_cache(const std::vector<std::string>& words, const std::vector<h2o::Position>& positions,
                 const h2o::Matrix& keys, const h2o::Matrix& values,
                 const std::vector<float>& scores) {
  std::cout << "  slot  position  word     key           value         score\n";
  for (std::size_t r = 0; r < positions.size(); ++r) {
    std::cout << h2o::pad_left(std::to_string(r), 6)
              << h2o::pad_left(std::to_string(positions[r]), 10) << "  "
              << h2o::pad_right(words[r], 9) << h2o::pad_right(row_text(keys, r), 14)
              << h2o::pad_right(row_text(values, r), 14) << h2o::pad_left(h2o::fixed(scores[r]), 5)
              << "\n";
  }
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("03_evict_rows", [&] {
    h2o::ArgParser args("03_evict_rows",
                        "Lesson 03: remove evicted tokens' rows from keys, values, scores and\n"
                        "positions together (blog learn_03_evict.py).");
    if (!args.parse(argc, argv)) return 0;

    std::cout << "Lesson 03: evict rows from every array together (blog: learn_03_evict.py)\n\n";

    // Step 1: the blog's five tokens and scores, now with a key and a value row each.
    const std::vector<std::string> words = {"The", "cat", "sat", "because", "it"};
    const std::vector<float> scores = {1.78f, 1.58f, 0.91f, 0.51f, 0.22f};  // (T,)
    const std::size_t n = words.size();
    const std::size_t head_dim = 2;
    std::vector<h2o::Position> positions(n);               // (T,)
    h2o::Matrix keys = xt::zeros<float>({n, head_dim});    // (T, D)
    h2o::Matrix values = xt::zeros<float>({n, head_dim});  // (T, D)
    for (std::size_t t = 0; t < n; ++t) {
      positions[t] = static_cast<h2o::Position>(t);
      keys(t, 0) = static_cast<float>(t) + 0.1f;
      keys(t, 1) = static_cast<float>(t) + 0.2f;
      values(t, 0) = static_cast<float>(t) + 0.7f;
      values(t, 1) = static_cast<float>(t) + 0.8f;
    }
    std::cout << "Step 1: the cache before eviction (" << n << " tokens, D = " << head_dim << ")\n";
    std::cout << "  (made-up keys and values whose whole part is the token's position)\n";
    print_cache(words, positions, keys, values, scores);

    // Step 2: lesson 01's choice, from the library: which slots stay.
    const h2o::CacheBudget budget = h2o::CacheBudget(2, 2);
    const h2o::KeepPlan plan = h2o::plan_keep(positions, scores, budget);
    const std::vector<std::size_t>& keep_indices = plan.kept;
    std::cout << "\nStep 2: choose with " << budget.describe() << " (library h2o::plan_keep)\n";
    std::cout << "  keep_indices " << h2o::format_list(keep_indices) << "  (evicted slots "
              << h2o::format_list(plan.evicted) << ")\n";

    // Step 3: the new idea - apply the SAME keep_indices to every array. Row r of each new array is
    // row keep_indices[r] of the old one.
    const std::size_t kept = keep_indices.size();
    h2o::Matrix kept_keys = xt::zeros<float>({kept, head_dim});    // (kept, D)
    h2o::Matrix kept_values = xt::zeros<float>({kept, head_dim});  // (kept, D)
    std::vector<float> kept_scores(kept);                          // (kept,)
    std::vector<h2o::Position> kept_positions(kept);               // (kept,)
    std::vector<std::string> kept_words(kept);                     // (kept,)
    for (std::size_t r = 0; r < kept; ++r) {
      const std::size_t old_row = keep_indices[r];
      for (std::size_t d = 0; d < head_dim; ++d) {
        kept_keys(r, d) = keys(old_row, d);
        kept_values(r, d) = values(old_row, d);
      }
      kept_scores[r] = scores[old_row];
      kept_positions[r] = positions[old_row];
      kept_words[r] = words[old_row];
    }
    std::cout << "\nStep 3: keep those rows of keys, values, scores and positions\n";
    print_cache(kept_words, kept_positions, kept_keys, kept_values, kept_scores);
    std::cout << "  every row's key and value still belong to its position: "
              << yes_no(rows_aligned(kept_positions, kept_keys, kept_values)) << "\n";
    std::cout << "  KV numbers: " << 2 * n * head_dim << " before, " << 2 * kept * head_dim
              << " after\n";

    // Step 4: why one list for all arrays. Two ways of removing slot 2 that are each fine on
    // their own - erase it (later rows shift up), or move the last row into the hole (the
    // preallocated cache of a later lesson does this) - give different row orders. Mixing them,
    // keys erased but values moved, raises no error but pairs keys with the wrong values.
    const std::size_t hole = plan.evicted.at(0);
    h2o::Matrix erased_keys = xt::zeros<float>({n - 1, head_dim});   // (T-1, D)
    h2o::Matrix moved_values = xt::zeros<float>({n - 1, head_dim});  // (T-1, D)
    std::vector<h2o::Position> erased_positions;                     // (T-1,)
    std::vector<std::string> erased_words;                           // (T-1,)
    std::vector<float> erased_scores;                                // (T-1,)
    for (std::size_t t = 0, r = 0; t < n; ++t) {
      if (t == hole) continue;
      for (std::size_t d = 0; d < head_dim; ++d) erased_keys(r, d) = keys(t, d);
      erased_positions.push_back(positions[t]);
      erased_words.push_back(words[t]);
      erased_scores.push_back(scores[t]);
      ++r;
    }
    for (std::size_t r = 0; r < n - 1; ++r) {
      const std::size_t from = r == hole ? n - 1 : r;
      for (std::size_t d = 0; d < head_dim; ++d) moved_values(r, d) = values(from, d);
    }
    std::cout << "\nStep 4: what goes wrong when the arrays do not move together\n";
    std::cout << "  keys erased at slot " << hole << ", values moved (last row into slot " << hole
              << "):\n";
    print_cache(erased_words, erased_positions, erased_keys, moved_values, erased_scores);
    std::size_t wrong_rows = 0;
    for (std::size_t r = 0; r < n - 1; ++r) {
      if (owner(moved_values, r) != erased_positions[r]) {
        ++wrong_rows;
        std::cout << "  slot " << r << ": '" << erased_words[r] << "' now carries the value of '"
                  << words.at(static_cast<std::size_t>(owner(moved_values, r))) << "'\n";
      }
    }
    std::cout << "  rows with a wrong value: " << wrong_rows << " of " << n - 1
              << " - and nothing raised an error\n";
    // Forgetting an array altogether at least fails loudly, because the lengths differ.
    try {
      h2o::plan_keep(kept_positions, scores, budget);  // old scores (5) with new positions (4)
      std::cout << "  unfiltered scores were accepted (unexpected)\n";
    } catch (const std::invalid_argument& e) {
      std::cout << "  forgetting the scores is caught: " << e.what() << "\n";
    }
    try {
      h2o::attend(h2o::Vector{1.0f, 0.0f}, kept_keys, values);  // old values (5) with new keys (4)
      std::cout << "  unfiltered values were accepted (unexpected)\n";
    } catch (const std::invalid_argument& e) {
      std::cout << "  forgetting the values is caught: " << e.what() << "\n";
    }

    // Step 5: the library's toy cache holds all five arrays and filters them with one call.
    h2o::ToyKVCache cache(head_dim);
    for (std::size_t t = 0; t < n; ++t) {
      cache.append(words[t], positions[t], xt::view(keys, t, xt::all()),
                   xt::view(values, t, xt::all()));
    }
    h2o::Vector score_step = xt::zeros<float>({n});  // (T,) scores start at 0, so add them once
    for (std::size_t t = 0; t < n; ++t) score_step(t) = scores[t];
    cache.add_attention(score_step);
    cache.keep(cache.plan(budget).kept);
    const bool same = cache.words() == kept_words && cache.positions() == kept_positions &&
                      cache.scores() == kept_scores && cache.keys() == kept_keys &&
                      cache.values() == kept_values;
    std::cout << "\nStep 5: library h2o::ToyKVCache::keep gives the same rows: " << yes_no(same)
              << "\n";
    std::cout << "  cache " << h2o::format_list(cache.words()) << ", " << cache.kv_numbers()
              << " KV numbers\n";
    return 0;
  });
}
