// test_prompt_compression.cpp: Decoder::read_prompt_compressed, the H2O paper's way with a
// prompt (read it whole, then cut the cache once), against the full cache and plan_keep.
//
// Checks: a budget that covers the whole text gives the full cache's logits, bit for bit, for
// every policy; a smaller budget still gives the full cache's prompt logits, cuts every cache to
// the budget, keeps exactly plan_keep's tokens of the scores the whole prompt left, and keeps the
// budget afterwards; teacher forcing with a compressed prompt; and the refusals.
//
// Dimension legend: N = tokens, P = prompt tokens, V = vocabulary, G = KV heads.
#include <algorithm>
#include "h2o_catch.hpp"
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/cache/selection.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;

namespace {

// Bit-for-bit equality (a plain bool, which Catch can print; see STYLE.md on xtensor in CHECK).
bool same_numbers(const Vector& a, const Vector& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}
bool same_numbers(const Matrix& a, const Matrix& b) {
  return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace

TEST_CASE("a budget covering the text makes prompt compression the full cache, bit for bit",
          "[prompt-compression]") {
  const auto weights = h2o_test::random_model(120, 61);
  const std::vector<int> tokens = h2o_test::random_tokens(100, weights->config.vocab_size, 62);
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + 70);

  Decoder full(weights, make_policy("full"), 100);
  Matrix full_prompt_logits;  // (P, V)
  full.forward_batch(prompt, &full_prompt_logits);
  std::vector<Vector> full_logits;  // the continuation's, token by token
  for (std::size_t i = 70; i < 100; ++i) full_logits.push_back(full.forward(tokens[i]));

  for (const PolicyKind& kind : policy_kinds()) {
    INFO("policy " << kind.name);
    Decoder compressed(weights, make_policy(kind.name, settings_for_budget(kind.name, 100)), 100);
    Matrix prompt_logits;
    compressed.read_prompt_compressed(prompt, &prompt_logits);
    REQUIRE(same_numbers(prompt_logits, full_prompt_logits));
    for (std::size_t i = 70; i < 100; ++i) {
      REQUIRE(same_numbers(compressed.forward(tokens[i]), full_logits[i - 70]));
    }
  }
}

TEST_CASE("prompt compression cuts once to plan_keep's tokens and keeps the budget after",
          "[prompt-compression]") {
  const H2OScore score = GENERATE(H2OScore::Sum, H2OScore::NormalisedSum);
  const auto weights = h2o_test::random_model(150, 63);
  const ModelConfig& c = weights->config;
  const std::size_t P = 90, heavy = 12, recent = 8, budget = heavy + recent;
  const std::vector<int> tokens = h2o_test::random_tokens(130, c.vocab_size, 64);
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + P);
  INFO("score " << to_string(score));

  // A decoder that never evicts gathers the scores the whole prompt leaves.
  Decoder watcher(weights, std::make_unique<H2OPolicy>(CacheBudget(150, 0)), 150);
  Matrix expected_logits;  // (P, V)
  watcher.forward_batch(prompt, &expected_logits);

  Decoder decoder(
      weights, std::make_unique<H2OPolicy>(CacheBudget(heavy, recent), ScoringMode::PerHead, score),
      150);
  Matrix prompt_logits;
  decoder.read_prompt_compressed(prompt, &prompt_logits);
  CHECK(same_numbers(prompt_logits, expected_logits));  // the prompt was read with the full cache
  CHECK(decoder.position() == Position(P));

  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const LayerKVCache& cache = decoder.cache(l);
    const LayerKVCache& all = watcher.cache(l);
    REQUIRE(cache.size() == budget);
    CHECK(decoder.evicted_tokens(l) == P - budget);
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      const std::vector<Position> positions(all.positions(g), all.positions(g) + P);
      std::vector<float> scores(all.scores(g), all.scores(g) + P);
      if (score == H2OScore::NormalisedSum) {  // position p has been in the cache P - p steps
        for (std::size_t i = 0; i < P; ++i)
          scores[i] /= static_cast<float>(Position(P) - positions[i]);
      }
      std::vector<Position> expected;
      for (std::size_t slot : plan_keep(positions, scores, CacheBudget(heavy, recent)).kept) {
        expected.push_back(positions[slot]);
      }
      INFO("layer " << l << ", KV head " << g);
      CHECK(cache.sorted_positions(g) == expected);
    }
  }
  // Decoding goes on token by token at the budget.
  for (std::size_t i = P; i < tokens.size(); ++i) {
    decoder.forward(tokens[i]);
    h2o_test::require_bounded_caches(decoder, i, budget);
  }
}

TEST_CASE("teacher forcing reads a compressed prompt, then the rest token by token",
          "[prompt-compression]") {
  const auto weights = h2o_test::random_model(100, 65);
  const std::vector<int> tokens = h2o_test::random_tokens(80, weights->config.vocab_size, 66);
  Decoder full(weights, make_policy("full"), 100);
  const TeacherForcedRun reference = read_with_teacher_forcing(full, tokens);

  TeacherForcingOptions options;
  options.compressed_prompt = 50;
  Decoder roomy(weights, make_policy("h2o", settings_for_budget("h2o", 80)), 100);
  const TeacherForcedRun same = read_with_teacher_forcing(roomy, tokens, options);
  CHECK(same.top1 == reference.top1);
  for (std::size_t t = 0; t < same.steps(); ++t) {
    CHECK(same.token_nll[t] == Approx(reference.token_nll[t]).epsilon(1e-5));
  }

  // A small budget: the prompt's predictions are still the full cache's; the rest may differ.
  Decoder small(weights, make_policy("h2o", settings_for_budget("h2o", 10)), 100);
  const TeacherForcedRun cut = read_with_teacher_forcing(small, tokens, options);
  for (std::size_t t = 0; t < 50; ++t) {
    CHECK(cut.token_nll[t] == Approx(reference.token_nll[t]).epsilon(1e-5));
  }
  CHECK(small.cache(0).size() == 10);

  Decoder again(weights, make_policy("full"), 100);
  options.compressed_prompt = 80;
  CHECK(h2o_test::error_of<std::invalid_argument>([&] {
          read_with_teacher_forcing(again, tokens, options);
        }) == "a compressed prompt of 80 tokens leaves nothing of a 80-token text to continue");
}

TEST_CASE("read_prompt_compressed refuses what it cannot do", "[prompt-compression]") {
  const auto weights = h2o_test::random_model(64, 67);
  Decoder decoder(weights, make_policy("h2o", settings_for_budget("h2o", 8)), 20);
  CHECK_THROWS_AS(decoder.read_prompt_compressed({}), std::invalid_argument);
  CHECK_THROWS_AS(decoder.read_prompt_compressed(std::vector<int>(21, 1)), std::length_error);
  CHECK_THROWS_AS(decoder.read_prompt_compressed({1, 2, 100000}), std::out_of_range);
  CHECK(decoder.position() == 0);
  // A failed prompt leaves the decoder usable: nothing observed-only lingers.
  decoder.read_prompt_compressed({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  CHECK(decoder.cache(0).size() == 8);
  CHECK(h2o_test::error_of<std::logic_error>([&] { decoder.read_prompt_compressed({1}); }) ==
        "read_prompt_compressed: the prompt must come first (position 0)");
  decoder.reset();
  decoder.read_prompt_compressed({1, 2, 3});
  CHECK(decoder.cache(0).size() == 3);
}
