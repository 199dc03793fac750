// Lesson 03: evicting a token means removing its row from EVERY list, with one list of indices.
// Mirrors the blog's learn_03_evict.py ("Remove low-scoring old tokens").
//
// A KV cache is several lists with one row per token: keys (T, D), values (T, D), scores (T,),
// and - so we know which token a row is - positions (T,). Once lesson 01's rule has chosen the
// keep indices, the blog filters every list with the same indices:
//   key_cache = key_cache[keep_indices];  value_cache = value_cache[keep_indices];  ...
// This lesson writes that out on tiny 2-number keys and values, shows what goes wrong when the
// lists do not move together, and meets the library's ToyKVCache, which later lessons use.
// Plain lists (std::vector), no tensors, like the blog's plain-Python first lessons.
//
// Dimension legend: T = tokens in the cache, D = numbers in one key or value (2 here).
#include <cmath>
#include <cstddef>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/cache/toy_cache.hpp"
#include "h2o/report/table.hpp"

using h2o::format_list;
using h2o::Row;
using h2o::take;

namespace {
// The made-up keys and values have the token's position as their whole part: floor(1.70) = 1
// means "this row belongs to position 1".
h2o::Position owner(const Row& row) { return static_cast<h2o::Position>(std::floor(row.at(0))); }

// How many rows hold a key or a value of another position than the row's own.
std::size_t rows_with_a_wrong_value(const h2o::ToyKVCache& cache) {
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < cache.size(); ++r) {
    if (owner(cache.key_cache[r]) != cache.positions[r] ||
        owner(cache.value_cache[r]) != cache.positions[r]) {
      ++wrong;
    }
  }
  return wrong;
}

void print_cache(const h2o::ToyKVCache& cache) {
  h2o::Table table({"row", "position", "token", "key", "value", "score", ""});
  for (std::size_t r = 0; r < cache.size(); ++r) {
    const h2o::Position owner_of_value = owner(cache.value_cache[r]);
    table.add({std::to_string(r), std::to_string(cache.positions[r]), cache.tokens[r],
               format_list(cache.key_cache[r]), format_list(cache.value_cache[r]),
               h2o::fixed(cache.h2o_scores[r]),
               owner_of_value == cache.positions[r]
                   ? ""
                   : "<- the value of position " + std::to_string(owner_of_value)});
  }
  table.print(std::cout);
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::start_lesson(argc, argv,
                    "Lesson 03: remove evicted tokens' rows from keys, values, scores and\n"
                    "positions together (blog learn_03_evict.py).");
  std::cout << "Lesson 03: evict rows from every list together (blog: learn_03_evict.py)\n\n";

  // Step 1: the blog's five tokens and scores, now with a key and a value row each. The made-up
  // numbers have the token's position as their whole part, so a row's owner can be read off it.
  std::vector<std::string> tokens = {"The", "cat", "sat", "because", "it"};
  std::vector<h2o::Position> positions = {0, 1, 2, 3, 4};  // (T,)
  std::vector<Row> key_cache = {
      {0.1f, 0.2f}, {1.1f, 1.2f}, {2.1f, 2.2f}, {3.1f, 3.2f}, {4.1f, 4.2f}};  // (T, D)
  std::vector<Row> value_cache = {
      {0.7f, 0.8f}, {1.7f, 1.8f}, {2.7f, 2.8f}, {3.7f, 3.8f}, {4.7f, 4.8f}};  // (T, D)
  std::vector<float> h2o_scores = {1.78f, 1.58f, 0.91f, 0.51f, 0.22f};        // (T,)
  const h2o::ToyKVCache before{tokens, positions, key_cache, value_cache, h2o_scores};
  std::cout << "Step 1: the cache before eviction (" << before.size() << " tokens, D = 2)\n";
  print_cache(before);

  // Step 2: lesson 01's choice, from the library: which rows stay.
  const std::size_t heavy_size = 2;
  const std::size_t recent_size = 2;
  const h2o::CacheBudget budget(heavy_size, recent_size);
  const h2o::KeepPlan plan = h2o::plan_keep(positions, h2o_scores, budget);
  const std::vector<std::size_t> keep_indices = plan.kept;
  std::cout << "\nStep 2: choose with " << budget.describe() << " (library h2o::plan_keep)\n"
            << "  keep_indices " << format_list(keep_indices) << "  (evicted rows "
            << format_list(plan.evicted) << ")\n";

  // Step 3: the new idea - apply the SAME keep_indices to every list. h2o::take(list, indices)
  // is the blog's list[indices]: a new list of the rows the indices name, in that order.
  // key_cache = key_cache[keep_indices]
  key_cache = take(key_cache, keep_indices);
  // value_cache = value_cache[keep_indices]
  value_cache = take(value_cache, keep_indices);
  // h2o_scores = h2o_scores[keep_indices]
  h2o_scores = take(h2o_scores, keep_indices);
  positions = take(positions, keep_indices);  // and the two lists that say which token a row is
  tokens = take(tokens, keep_indices);
  const h2o::ToyKVCache after{tokens, positions, key_cache, value_cache, h2o_scores};
  std::cout << "\nStep 3: keep those rows of keys, values, scores and positions\n";
  print_cache(after);
  std::cout << "  every row's key and value still belong to its position: "
            << (rows_with_a_wrong_value(after) == 0 ? "yes" : "no") << "\n"
            << "  KV numbers: " << before.kv_numbers() << " before, " << after.kv_numbers()
            << " after\n";

  // Step 4: why one list of indices for all. Two ways of removing a row are each fine on their
  // own - erase it (later rows shift up), or move the last row into the hole (the preallocated
  // cache of the decoder does this). Mixing them, keys erased but values moved, raises no error
  // but pairs keys with the wrong values.
  const auto hole = static_cast<std::ptrdiff_t>(plan.evicted.at(0));
  h2o::ToyKVCache mixed = before;
  mixed.key_cache.erase(mixed.key_cache.begin() + hole);
  mixed.tokens.erase(mixed.tokens.begin() + hole);
  mixed.positions.erase(mixed.positions.begin() + hole);
  mixed.h2o_scores.erase(mixed.h2o_scores.begin() + hole);
  mixed.value_cache[static_cast<std::size_t>(hole)] = mixed.value_cache.back();  // moved instead
  mixed.value_cache.pop_back();
  std::cout << "\nStep 4: what goes wrong when the lists do not move together\n"
            << "  keys erased at row " << hole << ", values moved (last row into row " << hole
            << "):\n";
  print_cache(mixed);
  std::cout << "  rows with a wrong value: " << rows_with_a_wrong_value(mixed) << " of "
            << mixed.size() << " - and nothing raised an error\n";
  // Forgetting a list altogether at least fails loudly, because the lengths differ.
  try {
    h2o::plan_keep(positions, before.h2o_scores, budget);  // old scores (5), new positions (4)
  } catch (const std::invalid_argument& e) {
    std::cout << "  forgetting the scores is caught: " << e.what() << "\n";
  }

  // Step 5: the library's ToyKVCache holds the five lists and filters them all with one call.
  // Lesson 04 uses it.
  h2o::ToyKVCache cache = before;
  cache.keep(keep_indices);
  const bool same = cache.tokens == after.tokens && cache.positions == after.positions &&
                    cache.key_cache == after.key_cache && cache.value_cache == after.value_cache &&
                    cache.h2o_scores == after.h2o_scores;
  std::cout << "\nStep 5: library h2o::ToyKVCache::keep gives the same rows: "
            << (same ? "yes" : "no") << "\n"
            << "  cache " << format_list(cache.tokens) << ", " << cache.kv_numbers()
            << " KV numbers\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
