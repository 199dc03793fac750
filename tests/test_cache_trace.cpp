// test_cache_trace.cpp: the per-step trace of every cache (cache_trace.hpp) against the decoder's
// own caches, step by step, on a random model.
#include <algorithm>
#include <memory>
#include <vector>

#include "h2o/measure/cache_trace.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

namespace {

// The kept set of step t as the trace states it: {p <= t : evicted_at[p] > t or never}.
std::vector<Position> kept_from_trace(const HeadTrace& head, std::size_t t) {
  std::vector<Position> kept;
  for (std::size_t p = 0; p <= t; ++p) {
    const std::int32_t e = head.evicted_at[p];
    if (e == kNeverEvicted || e > static_cast<std::int32_t>(t))
      kept.push_back(static_cast<Position>(p));
  }
  return kept;
}

}  // namespace

TEST_CASE("shade levels are rounded shares of the row's largest value", "[cache_trace]") {
  CHECK(shade_level(1.0f, 1.0f) == kShadeLevels - 1);
  CHECK(shade_level(0.5f, 1.0f) == 32);  // round(63 * 0.5) = round(31.5)
  CHECK(shade_level(0.1f, 2.0f) == 3);   // round(3.15)
  CHECK(shade_level(0.0f, 1.0f) == 0);
  CHECK(shade_level(-1.0f, 1.0f) == 0);
  CHECK(shade_level(0.3f, 0.0f) == 0);                 // a row of zeros (a policy without scores)
  CHECK(shade_level(2.0f, 1.0f) == kShadeLevels - 1);  // clamped
}

TEST_CASE("a cache trace replays the decoder's kept positions at every step", "[cache_trace]") {
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const auto weights = h2o_test::random_model(64, seed);
  const std::vector<int> tokens = h2o_test::random_tokens(40, weights->config.vocab_size, seed);
  // Every policy of the factory that evicts (the full cache has a test of its own below).
  const std::string name = GENERATE(from_range(h2o_test::evicting_policy_names()));
  Decoder full(weights, policy_of<FullCachePolicy>(), 64);
  const TeacherForcedRun reference = read_with_teacher_forcing(full, tokens);

  Decoder decoder(weights, make_policy(name, settings_for_budget(name, 8)), 64);
  const ModelConfig& c = weights->config;
  std::vector<std::vector<std::vector<std::vector<Position>>>> seen;  // (S, L, G, kept)
  const CacheTrace trace = trace_cache(decoder, tokens, &reference, [&](std::size_t) {
    seen.emplace_back();
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      seen.back().emplace_back();
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        seen.back().back().push_back(decoder.cache(l).sorted_positions(g));
      }
    }
  });
  const std::size_t steps = tokens.size() - 1;
  REQUIRE(trace.steps == steps);
  REQUIRE(seen.size() == steps);
  REQUIRE(trace.heads.size() == c.n_layers);
  const bool sized_by_budget = policy_kind(name).sized_by_budget;
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    REQUIRE(trace.heads[l].size() == c.n_kv_heads);
    // The layer's budget per KV head: 8, or its own share of 8 on average (PyramidKV); its heads
    // alike unless a head may hold more than that (Ada-KV).
    const LayerPolicy& layer = decoder.layer_policy(l);
    const std::size_t budget = layer.keep();
    const bool heads_alike = sized_by_budget && layer.head_capacity() == budget;
    for (std::size_t t = 0; t < steps; ++t) {
      std::size_t layer_evicted = 0;  // a step evicts one token a head, from whichever heads
      for (const HeadTrace& head : trace.heads[l]) {
        layer_evicted += static_cast<std::size_t>(std::count(
            head.evicted_at.begin(), head.evicted_at.end(), static_cast<std::int32_t>(t)));
      }
      if (sized_by_budget) {  // FastGen: each head by its own rule
        CHECK(layer_evicted == (t + 1 > budget ? c.n_kv_heads : 0u));
      }
    }
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      const HeadTrace& head = trace.heads[l][g];
      REQUIRE(head.evicted_at.size() == tokens.size());
      CHECK(head.evicted_at.back() == kNeverEvicted);  // the last token is never read
      for (std::size_t t = 0; t < steps; ++t) {
        const std::vector<Position> kept = kept_from_trace(head, t);
        CHECK(kept == seen[t][l][g]);
        const auto evicted_now = static_cast<std::size_t>(std::count(
            head.evicted_at.begin(), head.evicted_at.end(), static_cast<std::int32_t>(t)));
        // One a step once over the budget, unless the layer's heads share it (Ada-KV).
        if (heads_alike) {
          CHECK(evicted_now == (t + 1 > budget ? 1u : 0u));
        }
        CHECK(head.attention[t].size() == kept.size() + evicted_now);
        CHECK(head.score[t].size() == kept.size());
        // Each attention row is shaded relative to its largest weight: that one is the top level.
        CHECK(*std::max_element(head.attention[t].begin(), head.attention[t].end()) ==
              kShadeLevels - 1);
        CHECK(head.attention_max[t] > 0.0f);
        CHECK(head.attention_max[t] <= 1.0f);
      }
    }
  }
  // Agreement, step by step, with the reference's top-1 tokens.
  REQUIRE(trace.agrees.size() == steps);
  std::size_t agreed = 0;
  for (std::size_t t = 0; t < steps; ++t) {
    CHECK(trace.agrees[t] == (trace.reading.top1[t] == reference.top1[t]));
    agreed += trace.agrees[t] ? 1 : 0;
  }
  CHECK(trace.reading.agreements == agreed);
}

TEST_CASE("a full cache's trace keeps everything and agrees with itself", "[cache_trace]") {
  const auto weights = h2o_test::random_model(32, 7);
  const std::vector<int> tokens = h2o_test::random_tokens(20, weights->config.vocab_size, 7);
  Decoder reference_decoder(weights, policy_of<FullCachePolicy>(), 32);
  const TeacherForcedRun reference = read_with_teacher_forcing(reference_decoder, tokens);
  Decoder decoder(weights, policy_of<FullCachePolicy>(), 32);
  const CacheTrace trace = trace_cache(decoder, tokens, &reference);
  for (const auto& layer : trace.heads) {
    for (const HeadTrace& head : layer) {
      CHECK(std::all_of(head.evicted_at.begin(), head.evicted_at.end(),
                        [](std::int32_t e) { return e == kNeverEvicted; }));
      for (std::size_t t = 0; t < trace.steps; ++t) CHECK(head.attention[t].size() == t + 1);
      // The full cache keeps no scores: every level 0, every maximum 0.
      CHECK(std::all_of(head.score_max.begin(), head.score_max.end(),
                        [](float m) { return m == 0.0f; }));
    }
  }
  CHECK(trace.reading.agreements == trace.steps);
  // Its KV bytes: t + 1 tokens of float32 keys and values in every layer after step t.
  const ModelConfig& c = weights->config;
  REQUIRE(trace.kv_bytes.size() == trace.steps);
  for (std::size_t t = 0; t < trace.steps; ++t) {
    CHECK(trace.kv_bytes[t] == (t + 1) * c.n_layers * 2 * c.kv_dim() * sizeof(float));
  }
}

TEST_CASE("a trace notes the KV bytes a quantised cache holds after every step", "[cache_trace]") {
  const auto weights = h2o_test::random_model(48, 5);
  const std::vector<int> tokens = h2o_test::random_tokens(40, weights->config.vocab_size, 5);
  KvFormat format;
  format.bits = 4;
  format.group = 4;
  Decoder decoder(weights, policy_of<H2OPolicy>(CacheBudget{6, 6}), 48, format);
  std::vector<std::size_t> seen;  // (S,) the decoder's own count after each step
  const CacheTrace trace = trace_cache(
      decoder, tokens, nullptr, [&](std::size_t) { seen.push_back(decoder.live_kv_bytes()); });
  CHECK(trace.kv_bytes == seen);
  // Fewer bytes than the same tokens in float32 once a key group has filled.
  const ModelConfig& c = weights->config;
  const std::size_t kept = decoder.cache(0).uniform_size();
  CHECK(trace.kv_bytes.back() < kept * c.n_layers * 2 * c.kv_dim() * sizeof(float));
}

TEST_CASE("H2O's traced scores are the cache's accumulated attention", "[cache_trace]") {
  const auto weights = h2o_test::random_model(32, 11);
  const std::vector<int> tokens = h2o_test::random_tokens(24, weights->config.vocab_size, 11);
  Decoder decoder(weights, policy_of<H2OPolicy>(CacheBudget{3, 3}), 32);
  std::vector<float> largest;  // (S,) largest score of layer 0, KV head 0, from the cache
  const CacheTrace trace = trace_cache(decoder, tokens, nullptr, [&](std::size_t) {
    const LayerKVCache& cache = decoder.cache(0);
    largest.push_back(*std::max_element(cache.scores(0), cache.scores(0) + cache.uniform_size()));
  });
  const HeadTrace& head = trace.heads[0][0];
  for (std::size_t t = 0; t < trace.steps; ++t) {
    CHECK(head.score_max[t] == largest[t]);
    CHECK(*std::max_element(head.score[t].begin(), head.score[t].end()) == kShadeLevels - 1);
  }
  CHECK(trace.agrees.empty());  // no reference given
  CHECK_THROWS_AS(trace_cache(decoder, {1}), std::invalid_argument);
}
