// test_attention_split.cpp: the full cache's attention split by two policies' kept sets
// (measure/attention_split.hpp) on a hand-computed example and invariants, and the sentence made
// of it (report/verdict_reason.hpp).
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "h2o/measure/attention_split.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

namespace {

// A trace of one layer and one KV head over n tokens with these eviction steps (N,).
CacheTrace trace_of(const std::vector<std::int32_t>& evicted_at, std::size_t layers = 1,
                    std::size_t kv_heads = 1) {
  CacheTrace trace;
  trace.layers = layers;
  trace.kv_heads = kv_heads;
  trace.steps = evicted_at.size() - 1;
  trace.heads.assign(layers, std::vector<HeadTrace>(kv_heads));
  for (auto& layer : trace.heads) {
    for (HeadTrace& head : layer) head.evicted_at = evicted_at;
  }
  return trace;
}

// Adds one row of weights over positions 0..t for query head h of layer 0.
void add_row(AttentionSplitter& splitter, std::size_t t, std::size_t h,
             const std::vector<float>& weights) {
  std::vector<Position> positions;
  for (std::size_t p = 0; p < weights.size(); ++p) positions.push_back(static_cast<Position>(p));
  splitter.add(t, 0, h, positions.data(), weights.data(), weights.size());
}

}  // namespace

TEST_CASE("the split of a small example, by hand", "[attention_split]") {
  // 4 tokens, 3 steps, 2 query heads on one KV head. The first policy evicts position 1 at step
  // 1, the second position 0 at step 1: both hold {0} at step 0 and {0, 1} at step 1 (a position
  // evicted at a step was attended at it); at step 2 the first holds {0, 2}, the second {1, 2}.
  const CacheTrace first = trace_of({-1, 1, -1, -1}), second = trace_of({1, -1, -1, -1});
  AttentionSplitter splitter(first, second, 2);
  for (std::size_t h = 0; h < 2; ++h) {
    add_row(splitter, 0, h, {1.0f});
    add_row(splitter, 1, h, {0.4f, 0.6f});
  }
  add_row(splitter, 2, 0, {0.5f, 0.3f, 0.2f});
  add_row(splitter, 2, 1, {0.1f, 0.6f, 0.3f});
  const AttentionSplit split = splitter.result();
  // Only step 2 differs: position 0 (first only) draws 0.5 + 0.1, position 1 (second only)
  // 0.3 + 0.6, over 6 rows (3 steps x 2 heads).
  CHECK(split.steps == 3);
  CHECK(split.first_only == Approx(0.6 / 6));
  CHECK(split.second_only == Approx(0.9 / 6));
  CHECK(split.first_only_by_layer.at(0) == Approx(0.1));
  CHECK(split.second_only_by_layer.at(0) == Approx(0.15));
  REQUIRE(split.first_only_at.size() == 4);
  REQUIRE(split.second_only_at.size() == 4);
  CHECK(split.first_only_at[0] == Approx(0.1));
  CHECK(split.second_only_at[1] == Approx(0.15));
  for (std::size_t p : {1, 2, 3}) CHECK(split.first_only_at[p] == 0.0);
  for (std::size_t p : {0, 2, 3}) CHECK(split.second_only_at[p] == 0.0);

  const std::vector<ShownWord> words = {{0, 1, "Sam"}, {1, 2, "the"}, {2, 3, "Sam"}, {3, 4, "."}};
  const std::vector<WordShare> firsts = top_words(split.first_only_at, words, 3);
  const std::vector<WordShare> seconds = top_words(split.second_only_at, words, 3);
  REQUIRE(firsts.size() == 1);  // words with no share are left out
  CHECK(firsts[0].text == "Sam");
  CHECK(firsts[0].share == Approx(0.1));
  CHECK(attention_split_reason(split, "h2o", "window", firsts, seconds) ==
        "over its 3 steps the full cache gave 10.0% of its attention (a mean over every layer "
        "and query head) to tokens h2o held and window had evicted, most to \"Sam\" (10.0 "
        "points); and 15.0% to tokens window held and h2o had evicted, most to \"the\" (15.0 "
        "points); so window held more of what the full cache attended to");
  AttentionSplit swapped = split;  // the policies named the other way round
  std::swap(swapped.first_only, swapped.second_only);
  CHECK_THAT(attention_split_reason(swapped, "window", "h2o", seconds, firsts),
             Catch::Matchers::EndsWith("so window held more of what the full cache attended to"));
  swapped.second_only = swapped.first_only + 0.0004;  // the same to one decimal of a percent
  CHECK_THAT(attention_split_reason(swapped, "window", "h2o", seconds, firsts),
             Catch::Matchers::EndsWith("so neither held more of what the full cache attended to"));
}

TEST_CASE("top words add up every mention of a word, largest first", "[attention_split]") {
  const std::vector<double> share = {0.1, 0.2, 0.05, 0.3, 0.05};
  const std::vector<ShownWord> words = {{0, 1, "a"}, {1, 3, "bc"}, {3, 4, "d"}, {4, 5, "a"}};
  const std::vector<WordShare> top = top_words(share, words, 2);
  REQUIRE(top.size() == 2);
  CHECK(top[0].text == "d");
  CHECK(top[0].share == Approx(0.3));
  CHECK(top[1].text == "bc");
  CHECK(top[1].share == Approx(0.25));
  CHECK(top_words(share, words, 5).back().share == Approx(0.15));  // "a": 0.1 + 0.05
  CHECK_THROWS_WITH(top_words(share, {{4, 6, "x"}}, 2),
                    "top_words: a word at positions 4-6 of a text of 5");
}

TEST_CASE("swapping the policies swaps the split and identical kept sets give none",
          "[attention_split]") {
  const std::uint64_t seed = GENERATE(1, 2, 3, 4);
  std::mt19937_64 random(seed);
  const std::size_t n = 30, layers = 2, kv_heads = 2, query_heads = 4;
  auto random_trace = [&] {
    CacheTrace trace = trace_of(std::vector<std::int32_t>(n, kNeverEvicted), layers, kv_heads);
    for (auto& layer : trace.heads) {
      for (HeadTrace& head : layer) {
        for (std::size_t p = 0; p < n; ++p) {  // evicted at a step >= p, or never
          const std::size_t at = p + random() % (n - p + 5);
          head.evicted_at[p] = at < n - 1 ? static_cast<std::int32_t>(at) : kNeverEvicted;
        }
      }
    }
    return trace;
  };
  const CacheTrace a = random_trace(), b = random_trace();
  AttentionSplitter ab(a, b, query_heads), ba(b, a, query_heads), aa(a, a, query_heads);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (std::size_t t = 0; t + 1 < n; ++t) {
    for (std::size_t l = 0; l < layers; ++l) {
      for (std::size_t h = 0; h < query_heads; ++h) {
        std::vector<float> w(t + 1);
        float sum = 0.0f;
        for (float& x : w) sum += (x = uniform(random));
        for (float& x : w) x /= sum;
        std::vector<Position> positions;
        for (std::size_t p = t + 1; p-- > 0;) positions.push_back(static_cast<Position>(p));
        std::reverse(w.begin(), w.end());  // any order of positions will do
        ab.add(t, l, h, positions.data(), w.data(), w.size());
        ba.add(t, l, h, positions.data(), w.data(), w.size());
        aa.add(t, l, h, positions.data(), w.data(), w.size());
      }
    }
  }
  const AttentionSplit x = ab.result(), y = ba.result(), same = aa.result();
  CHECK(x.first_only == Approx(y.second_only));
  CHECK(x.second_only == Approx(y.first_only));
  CHECK(x.first_only + x.second_only > 0.0);  // random kept sets differ somewhere
  CHECK(x.first_only + x.second_only <= 1.0);
  double at_sum = 0.0;
  for (double s : x.first_only_at) at_sum += s;
  CHECK(at_sum == Approx(x.first_only));
  CHECK(same.first_only == 0.0);
  CHECK(same.second_only == 0.0);
}

TEST_CASE("an attention split refuses traces and rows that do not fit", "[attention_split]") {
  const CacheTrace three = trace_of({-1, -1, -1}), four = trace_of({-1, -1, -1, -1});
  CHECK_THROWS_WITH(AttentionSplitter(three, four, 2),
                    "attention split: the two traces are not of the same text and model (layers, "
                    "KV heads or steps differ)");
  CHECK_THROWS_WITH(AttentionSplitter(four, four, 0),
                    "attention split: 0 query heads are not a multiple of 1 KV heads");
  AttentionSplitter splitter(four, four, 2);
  const std::vector<Position> late = {2};
  const std::vector<float> one = {1.0f};
  CHECK_THROWS_WITH(splitter.add(1, 0, 0, late.data(), one.data(), 1),
                    "attention split: position 2 at step 1");
  CHECK_THROWS_WITH(splitter.add(3, 0, 0, late.data(), one.data(), 1),
                    "attention split: step 3, layer 0, query head 0 is out of range");
}

TEST_CASE("the full cache's attention split against a window, on a random model",
          "[attention_split]") {
  const std::uint64_t seed = GENERATE(1, 2);
  const auto weights = h2o_test::random_model(64, seed);
  const std::vector<int> tokens = h2o_test::random_tokens(40, weights->config.vocab_size, seed);
  Decoder full_traced(weights, policy_of<FullCachePolicy>(), 64);
  const CacheTrace full = trace_cache(full_traced, tokens);
  Decoder windowed(weights, make_policy("window", settings_for_budget("window", 8)), 64);
  const CacheTrace window = trace_cache(windowed, tokens);
  Decoder reader(weights, policy_of<FullCachePolicy>(), 64);
  const AttentionSplit split = split_full_attention(reader, tokens, full, window);
  // The window holds nothing the full cache lacks; what it lost drew attention after step 8.
  CHECK(split.second_only == 0.0);
  CHECK(split.first_only > 0.0);
  CHECK(split.first_only < 1.0);
  for (std::size_t p = 32; p < tokens.size(); ++p) CHECK(split.first_only_at[p] == 0.0);
  Decoder again(weights, policy_of<FullCachePolicy>(), 64);
  const AttentionSplit swapped = split_full_attention(again, tokens, window, full);
  CHECK(swapped.second_only == Approx(split.first_only));
  CHECK(swapped.first_only == 0.0);
}
