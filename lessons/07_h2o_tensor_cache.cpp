// Lesson 07: H2O over real key and value tensors, first in one head, then in several.
// Mirrors the blog's learn_06_h2o_tensor_cache.py ("Remove real K and V rows using H2O").
//
// Steps 1-2 are the blog's lesson: one attention head, its keys and values as tensors (T, D), and
// every token goes through lesson 04's four steps - append rows (lesson 06), attend (05), add the
// attention to h2o_scores (02), over budget keep recent + heavy (01) and drop the other rows of K,
// V and scores together (03). Steps 3-5 add heads. Every head has its own keys, values and
// attention, so "which tokens matter" can differ from head to head. Two ways to score:
//   per-head (the H2O paper's official code): each head adds up its OWN attention and keeps its own
//     heavy hitters, so different heads may keep different tokens;
//   shared (as the TOVA paper scores): the attention is averaged over heads first, so every head
//     keeps the same tokens.
// Every head's cache is step 2's cache, run with the same two helpers, h2o::attend (lesson 05)
// and h2o::plan_keep (lesson 01); only the scores added differ.
//
// Dimension legend: T = tokens in the cache, D = numbers in a key or value (4), H = heads (3).
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "h2o/app/program.hpp"
#include "h2o/app/step_option.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/base/rows.hpp"
#include "h2o/base/xtensor.hpp"
#include "h2o/cache/selection.hpp"

using h2o::format_list;

namespace {
constexpr std::size_t kHeads = 3, kHeadDim = 4;

struct TokenVectors {   // one token's made-up vectors, a row per head
  h2o::Matrix queries;  // (H, D)
  h2o::Matrix keys;     // (H, D)
  h2o::Matrix values;   // (H, D)
};
// One head's H2O cache as the blog keeps it: four lists whose rows belong together.
struct HeadCache {
  h2o::Matrix key_cache = h2o::Matrix::from_shape({0, kHeadDim});    // (T, D)
  h2o::Matrix value_cache = h2o::Matrix::from_shape({0, kHeadDim});  // (T, D)
  h2o::Vector h2o_scores = h2o::Vector::from_shape({0});             // (T,)
  std::vector<h2o::Position> positions;                              // (T,)
};

// Step 1's made-up vectors: head h's queries point roughly along direction h, and the key of
// position favourite[h] points the same way in head h, so head h keeps looking back at it.
std::vector<TokenVectors> make_tokens(std::size_t n, std::uint64_t seed,
                                      const std::vector<h2o::Position>& favourite) {
  h2o::Rng rng(seed);
  std::vector<TokenVectors> tokens;
  for (std::size_t t = 0; t < n; ++t) {
    TokenVectors tv{xt::zeros<float>({kHeads, kHeadDim}), xt::zeros<float>({kHeads, kHeadDim}),
                    xt::zeros<float>({kHeads, kHeadDim})};
    for (std::size_t h = 0; h < kHeads; ++h) {
      for (std::size_t d = 0; d < kHeadDim; ++d) {
        tv.queries(h, d) = (d == h ? 2.0f : 0.0f) + 0.3f * rng.normal();
        tv.keys(h, d) = 0.5f * rng.normal();
        tv.values(h, d) = rng.normal();
      }
      if (static_cast<h2o::Position>(t) == favourite[h]) tv.keys(h, h) += 2.5f;
    }
    tokens.push_back(tv);
  }
  return tokens;
}

// The blog's tensor cache, every line written out: appending a token ...
void append_token(HeadCache& cache, const h2o::Vector& new_key, const h2o::Vector& new_value,
                  h2o::Position position) {
  // key_cache = torch.cat([key_cache, new_key], dim=0)
  cache.key_cache = h2o::append_row(cache.key_cache, new_key);
  // value_cache = torch.cat([value_cache, new_value], dim=0)
  cache.value_cache = h2o::append_row(cache.value_cache, new_value);
  cache.h2o_scores = h2o::append(cache.h2o_scores, 0.0f);  // a new token starts with score 0
  cache.positions.push_back(position);
}

// ... and, over budget, keeping recent + heavy (lesson 01) and dropping the other rows of K, V and
// scores together (lesson 03).
void evict_over_budget(HeadCache& cache, const h2o::CacheBudget& budget) {
  if (cache.positions.size() <= budget.total()) return;
  const std::vector<std::size_t> keep_indices =
      h2o::plan_keep(cache.positions, cache.h2o_scores, budget).kept;
  // key_cache = key_cache[keep_indices]
  cache.key_cache = h2o::take(cache.key_cache, keep_indices);
  // value_cache = value_cache[keep_indices]
  cache.value_cache = h2o::take(cache.value_cache, keep_indices);
  // h2o_scores = h2o_scores[keep_indices]
  cache.h2o_scores = h2o::take(cache.h2o_scores, keep_indices);
  cache.positions = h2o::take(cache.positions, keep_indices);
}

// Step 3's four steps for one token in every head's cache. Scored per head, each head adds its
// own attention; shared, every head adds the mean over heads (so all hold the same tokens).
enum class Scoring { PerHead, Shared };
void add_token(std::vector<HeadCache>& caches, const TokenVectors& token, h2o::Position position,
               const h2o::CacheBudget& budget, Scoring scoring) {
  std::vector<h2o::Vector> attention(kHeads);  // (H, T): head h over its own rows
  for (std::size_t h = 0; h < kHeads; ++h) {
    append_token(caches[h], xt::row(token.keys, h), xt::row(token.values, h), position);
    attention[h] =
        h2o::attend(xt::row(token.queries, h), caches[h].key_cache, caches[h].value_cache).weights;
  }
  h2o::Vector mean = attention[0] / static_cast<float>(kHeads);  // (T,) the mean over heads
  for (std::size_t h = 1; h < kHeads; ++h) mean += attention[h] / static_cast<float>(kHeads);
  for (std::size_t h = 0; h < kHeads; ++h) {
    caches[h].h2o_scores =
        caches[h].h2o_scores + (scoring == Scoring::Shared ? mean : attention[h]);
    evict_over_budget(caches[h], budget);
  }
}

// "positions [0, 1, 10, 11]   scores [2.28, 7.20, 0.29, 0.04]": the rows are in position order.
std::string positions_and_scores(const HeadCache& cache) {
  return "positions " + h2o::pad_right(format_list(cache.positions), 16) + " scores " +
         format_list(cache.h2o_scores);
}
}  // namespace

int run_lesson(int argc, char** argv) {
  // Options (see --help): --tokens, --seed, --heavy, --recent and --step (for a classroom).
  h2o::TokenLessonOptions options = h2o::start_token_lesson(
      argc, argv,
      "Lesson 07: H2O over real K/V rows: one head, then 3 heads with per-head and\n"
      "shared scoring (blog learn_06_h2o_tensor_cache.py).",
      h2o::TokensOption{12, 40, "how many tokens arrive"},
      h2o::SeedOption{7, "seed for the made-up vectors"},
      h2o::BudgetOption{2, 2, "slots per head"});
  const h2o::CacheBudget budget = options.budget;
  std::cout << "Lesson 07: H2O over real K and V tensors (blog: learn_06_h2o_tensor_cache.py)\n\n";

  // Step 1: made-up vectors (make_tokens above main): head h keeps looking back at favourite[h].
  const std::vector<h2o::Position> favourite = {1, 3, 5};
  const std::vector<TokenVectors> tokens = make_tokens(options.tokens, options.seed, favourite);
  std::cout << "Step 1: " << options.tokens << " tokens; each has a query, key and value of "
            << kHeadDim << " numbers in each of " << kHeads << " heads.\n        Heads 0, 1, 2 "
            << "keep looking back at their favourite old tokens: positions "
            << format_list(favourite) << ".\n        Budget " << budget.describe()
            << " per head.\n";

  // Step 2: the blog's tensor cache for head 0 alone. Appending a token and evicting rows are the
  // two helpers above main that steps 3-5 call for every head.
  HeadCache head_0;
  std::cout
      << "\nStep 2: head 0 alone: append K and V rows, attend, add to h2o_scores, evict rows\n"
      << "  pos  key_cache  kept positions     h2o_scores\n";
  for (std::size_t t = 0; t < options.tokens; ++t) {
    const h2o::Vector query = xt::row(tokens[t].queries, 0);  // (D,)
    append_token(head_0, xt::row(tokens[t].keys, 0), xt::row(tokens[t].values, 0),
                 static_cast<h2o::Position>(t));
    const h2o::AttentionResult attention = h2o::attend(query, head_0.key_cache, head_0.value_cache);
    // h2o_scores = h2o_scores + attention.squeeze(0)
    head_0.h2o_scores = head_0.h2o_scores + attention.weights;
    evict_over_budget(head_0, budget);
    const std::string shape = "(" + std::to_string(head_0.key_cache.shape()[0]) + ", " +
                              std::to_string(head_0.key_cache.shape()[1]) + ")";
    std::cout << h2o::pad_left(std::to_string(t), 5) << "  " << h2o::pad_right(shape, 9) << "  "
              << h2o::pad_right(format_list(head_0.positions), 17) << "  "
              << format_list(head_0.h2o_scores) << "\n";
    options.step.show("head 0 alone, token " + std::to_string(t),
                      {h2o::cache_row("cache", head_0.positions, head_0.h2o_scores)}, budget);
  }

  // Step 3: all heads, two sets of caches (add_token above main), one per head each: one scored
  // per head, one with the mean over heads, where every head holds the same tokens in the same
  // rows.
  std::vector<HeadCache> per_head(kHeads), shared(kHeads);
  std::cout << "\nStep 3: " << kHeads << " heads; per token: append K and V rows in every head, "
            << "attend, add to the scores, evict\n\n  pos  per-head: kept positions of head 0, "
            << "head 1, head 2       | shared: all heads\n";
  for (std::size_t t = 0; t < options.tokens; ++t) {
    add_token(per_head, tokens[t], static_cast<h2o::Position>(t), budget, Scoring::PerHead);
    add_token(shared, tokens[t], static_cast<h2o::Position>(t), budget, Scoring::Shared);
    std::string per_head_kept;
    std::vector<h2o::CacheRow> frame;
    for (std::size_t h = 0; h < kHeads; ++h) {
      per_head_kept += h2o::pad_right(format_list(per_head[h].positions), 18);
      frame.push_back(h2o::cache_row("per-head " + std::to_string(h), per_head[h].positions,
                                     per_head[h].h2o_scores));
    }
    std::cout << h2o::pad_left(std::to_string(t), 5) << "  " << h2o::pad_right(per_head_kept, 56)
              << "| " << format_list(shared[0].positions) << "\n";
    frame.push_back(h2o::cache_row("shared", shared[0].positions, shared[0].h2o_scores));
    options.step.show("3 heads, token " + std::to_string(t), frame, budget);
  }

  // Step 4: the scores behind the last decisions.
  std::cout << "\nStep 4: accumulated scores at the end\n";
  for (std::size_t h = 0; h < kHeads; ++h) {
    std::cout << "  per-head, head " << h << ": " << positions_and_scores(per_head[h]) << "\n";
  }
  std::cout << "  shared, every head: " << positions_and_scores(shared[0]) << "\n";

  // Step 5: how many heads still hold the token they keep looking back at, in each mode.
  std::size_t per_head_keeping = 0, shared_keeping = 0;
  for (std::size_t h = 0; h < kHeads; ++h) {
    const std::vector<h2o::Position>&mine = per_head[h].positions, &ours = shared[h].positions;
    per_head_keeping += std::count(mine.begin(), mine.end(), favourite[h]);
    shared_keeping += std::count(ours.begin(), ours.end(), favourite[h]);
  }
  std::cout
      << "\nStep 5: what it shows\n  per-head mode: each head is step 2's cache run on its own "
      << "(head 0 ends with step 2's\n  positions: "
      << (per_head[0].positions == head_0.positions ? "yes" : "no") << "); " << per_head_keeping
      << " of " << kHeads
      << " heads still hold their own favourite token.\n  shared mode:   " << shared_keeping
      << " of " << kHeads << " heads keep theirs"
      << (shared_keeping < per_head_keeping
              ? ": one list serves every head, so a token that only one\n                 head "
                "needs loses out when the average over heads is what counts.\n"
              : " as well: this budget is large enough for every favourite.\n");
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
