// test_batched_decoder.cpp: Decoder::forward_batch against forward(), token by token.
//
// Checks, for every policy of the factory (and both scoring modes where there are two), on two
// random model shapes (grouped-query and one KV head per query head), over more tokens than one
// chunk holds: the same logits for every token (within the bound of logit_bound.hpp, which allows
// for the different order of additions of a batch's sgemm), the same cache (the same positions in
// the same slots, so the same decisions; keys, values and scores within 1e-5 of the largest: the
// same bound's allowance of a few layers' products, rounded up); mixing batches and single steps;
// and the refusals (bad token, too many tokens, none).
//
// Dimension legend: N = tokens read, V = vocabulary, G = KV heads, D = head_dim, T = live slots.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "logit_bound.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

namespace {

// Largest |a - b| over n numbers, relative to max(1, largest |b|).
double worst_relative(const float* a, const float* b, std::size_t n) {
  double worst = 0.0, scale = 1.0;
  for (std::size_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  for (std::size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(double(a[i]) - b[i]));
  return worst / scale;
}

// The two decoders' caches hold the same tokens in the same slots, with values within 1e-5.
void require_same_caches(const Decoder& batched, const Decoder& single) {
  const ModelConfig& c = single.config();
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const LayerKVCache& a = batched.cache(l);
    const LayerKVCache& b = single.cache(l);
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      INFO("layer " << l << ", KV head " << g);
      REQUIRE(a.size(g) == b.size(g));
      const std::size_t T = b.size(g), D = c.head_dim();
      REQUIRE(std::equal(a.positions(g), a.positions(g) + T, b.positions(g)));
      CHECK(worst_relative(a.keys(g), b.keys(g), T * D) < 1e-5);
      CHECK(worst_relative(a.values(g), b.values(g), T * D) < 1e-5);
      CHECK(worst_relative(a.scores(g), b.scores(g), T) < 1e-5);
    }
  }
}

ModelConfig one_kv_head_per_query_shape() {
  ModelConfig config;
  config.dim = 48;
  config.hidden_dim = 96;
  config.n_layers = 3;
  config.n_heads = 6;
  config.n_kv_heads = 6;
  config.vocab_size = 300;
  config.seq_len = 200;
  return config;
}

struct PolicyCase {
  std::string name;
  ScoringMode scoring;
};

}  // namespace

TEST_CASE("forward_batch gives forward's logits and caches for every policy", "[batched]") {
  // Every policy of the factory; those that read attention in both scoring modes.
  std::vector<PolicyCase> cases;
  for (const PolicyKind& kind : policy_kinds()) {
    cases.push_back({kind.name, ScoringMode::PerHead});
    if (kind.uses_attention()) cases.push_back({kind.name, ScoringMode::Shared});
  }
  const bool grouped = GENERATE(true, false);
  ModelConfig config = grouped ? stories260k_shape() : one_kv_head_per_query_shape();
  config.seq_len = 200;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 5));
  const std::size_t n = 150;  // two whole chunks and a part of a third
  const std::vector<int> tokens = h2o_test::random_tokens(n, config.vocab_size, 9);
  const std::vector<double> tolerance = h2o_test::logit_tolerances(*weights, n);  // (V,)

  for (const PolicyCase& pc : cases) {
    INFO("policy " << pc.name << " (" << to_string(pc.scoring) << "), grouped " << grouped);
    PolicySettings base;
    base.scoring = pc.scoring;
    const PolicySettings settings = settings_for_budget(pc.name, 24, base);
    Decoder single(weights, make_policy(pc.name, settings), n);
    Decoder batched(weights, make_policy(pc.name, settings), n);

    Matrix expected = xt::zeros<float>({n, config.vocab_size});  // (N, V)
    for (std::size_t i = 0; i < n; ++i) {
      const Vector& logits = single.forward(tokens[i]);
      std::copy_n(logits.data(), config.vocab_size, &expected(i, 0));
    }
    Matrix all;
    const Vector& last = batched.forward_batch(tokens, &all);
    REQUIRE(all.shape()[0] == n);
    REQUIRE(all.shape()[1] == config.vocab_size);
    double worst = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      worst = std::max(worst, h2o_test::worst_over_tolerance(&all(i, 0), &expected(i, 0),
                                                            tolerance));
    }
    CHECK(worst <= 1.0);
    CHECK(h2o_test::worst_over_tolerance(last.data(), &expected(n - 1, 0), tolerance) <= 1.0);
    CHECK(batched.position() == single.position());
    require_same_caches(batched, single);
  }
}

TEST_CASE("forward_batch mixes with single steps and returns the last logits", "[batched]") {
  const auto weights = h2o_test::random_model(300, 3);
  const std::vector<int> tokens = h2o_test::random_tokens(220, 512, 4);
  const PolicySettings settings = settings_for_budget("h2o", 40);
  Decoder reference(weights, make_policy("h2o", settings), 220);
  Decoder mixed(weights, make_policy("h2o", settings), 220);
  Vector expected;
  for (int token : tokens) expected = reference.forward(token);
  // 70 tokens batched (logits of the last only), 10 single steps, then the rest batched.
  mixed.forward_batch(std::vector<int>(tokens.begin(), tokens.begin() + 70));
  for (std::size_t i = 70; i < 80; ++i) mixed.forward(tokens[i]);
  const Vector& last = mixed.forward_batch(std::vector<int>(tokens.begin() + 80, tokens.end()));
  const std::vector<double> tolerance = h2o_test::logit_tolerances(*weights, tokens.size());
  CHECK(h2o_test::worst_over_tolerance(last.data(), expected.data(), tolerance) <= 1.0);
  require_same_caches(mixed, reference);
}

TEST_CASE("forward_batch refuses bad input before processing any token", "[batched]") {
  const auto weights = h2o_test::random_model(64, 1);
  Decoder decoder(weights, make_policy("full"), 10);
  CHECK_THROWS_AS(decoder.forward_batch({}), std::invalid_argument);
  CHECK_THROWS_AS(decoder.forward_batch({1, 2, 512}), std::out_of_range);
  CHECK_THROWS_AS(decoder.forward_batch({1, -1}), std::out_of_range);
  CHECK_THROWS_AS(decoder.forward_batch(std::vector<int>(11, 1)), std::length_error);
  CHECK(decoder.position() == 0);
  CHECK(decoder.cache(0).uniform_size() == 0);
  decoder.forward_batch(std::vector<int>(10, 1));
  CHECK(decoder.position() == 10);
  CHECK_THROWS_AS(decoder.forward_batch({1}), std::length_error);
}
