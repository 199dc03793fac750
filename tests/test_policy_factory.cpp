// test_policy_factory.cpp: making cache policies from their command-line names
// (policy_factory.hpp).
#include "h2o_catch.hpp"
#include <memory>
#include <string>

#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/policy/random_eviction_policy.hpp"
#include "h2o/policy/sink_window_policy.hpp"
#include "h2o/policy/sliding_window_policy.hpp"
#include "h2o/policy/tova_policy.hpp"

using namespace h2o;
using h2o_catch::Contains;

TEST_CASE("the factory lists every policy and makes each by its name") {
  REQUIRE(policy_kinds().size() >= 2);
  CHECK(policy_kinds()[0].name == "full");
  CHECK(policy_kinds()[1].name == "h2o");
  CHECK(policy_names() == "full, h2o, window, sinks, random, tova");
  PolicySettings settings;
  settings.heavy = 2;
  settings.recent = 3;
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    CHECK(!kind.summary.empty());
    const std::unique_ptr<CachePolicy> policy = make_policy(kind.name, settings);
    REQUIRE(policy != nullptr);
    CHECK(policy->name() == kind.name);
  }
}

TEST_CASE("the full policy keeps every position") {
  const auto policy = make_policy("full");
  CHECK(policy->describe() == "full cache (keeps every token)");
  CHECK(policy->max_tokens(256) == 256);
}

TEST_CASE("the h2o policy takes the budget and scoring mode it is given") {
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  PolicySettings settings;
  settings.heavy = 2;
  settings.recent = 3;
  settings.scoring = mode;
  const auto policy = make_policy("h2o", settings);
  const auto* h2o = dynamic_cast<const H2OPolicy*>(policy.get());
  REQUIRE(h2o != nullptr);
  CHECK(h2o->budget().heavy == 2);
  CHECK(h2o->budget().recent == 3);
  CHECK(h2o->mode() == mode);
  CHECK(policy->max_tokens(256) == 5);
  CHECK(policy->max_tokens(4) == 4);
  CHECK(policy->describe() == "H2O, heavy 2 + recent 3 = 5 tokens, " + to_string(mode) + " scores");
}

TEST_CASE("the factory maps heavy recent sinks and seed onto the new policies") {
  PolicySettings settings;
  settings.heavy = 2;
  settings.recent = 3;
  settings.sinks = 6;
  settings.seed = 77;
  settings.scoring = ScoringMode::Shared;

  // window: heavy + recent, all of it a recent window.
  const auto window = make_policy("window", settings);
  const auto* w = dynamic_cast<const SlidingWindowPolicy*>(window.get());
  REQUIRE(w != nullptr);
  CHECK(w->window() == 5);
  // sinks: --sinks + recent; heavy is not used.
  const auto sinks = make_policy("sinks", settings);
  const auto* s = dynamic_cast<const SinkWindowPolicy*>(sinks.get());
  REQUIRE(s != nullptr);
  CHECK(s->sinks() == 6);
  CHECK(s->recent() == 3);
  CHECK(s->max_tokens(256) == 9);
  // random: heavy + recent in all, the last `recent` protected, the given seed.
  const auto random = make_policy("random", settings);
  const auto* r = dynamic_cast<const RandomEvictionPolicy*>(random.get());
  REQUIRE(r != nullptr);
  CHECK(r->budget() == 5);
  CHECK(r->recent() == 3);
  CHECK(r->seed() == 77);
  // tova: heavy + recent in all, nothing protected, the given scoring mode.
  const auto tova = make_policy("tova", settings);
  const auto* t = dynamic_cast<const TovaPolicy*>(tova.get());
  REQUIRE(t != nullptr);
  CHECK(t->budget() == 5);
  CHECK(t->mode() == ScoringMode::Shared);

  // The defaults: StreamingLLM's 4 sinks.
  CHECK(PolicySettings{}.sinks == 4);
}

TEST_CASE("unknown policy names are refused with the allowed names listed") {
  for (const std::string name : {"lru", "", "H2O", "full "}) {
    INFO("'" << name << "'");
    CHECK_THROWS_WITH(make_policy(name), Contains("unknown cache policy '" + name + "'") &&
                                             Contains("expected one of: full, h2o"));
    CHECK_THROWS_AS(make_policy(name), std::invalid_argument);
  }
}

TEST_CASE("an h2o budget of zero tokens is refused") {
  PolicySettings settings;
  settings.heavy = 0;
  settings.recent = 0;
  CHECK_THROWS_AS(make_policy("h2o", settings), std::invalid_argument);
  // The full policy has no budget to check.
  CHECK(make_policy("full", settings)->name() == "full");
}

TEST_CASE("a factory h2o policy whose budget covers every step matches the full cache") {
  ModelConfig config = stories260k_shape();
  config.seq_len = 24;
  auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 3));
  PolicySettings settings;
  settings.heavy = 12;
  settings.recent = 12;
  settings.scoring = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  Decoder full(weights, make_policy("full", settings));
  Decoder h2o(weights, make_policy("h2o", settings));
  for (int pos = 0; pos < 24; ++pos) {
    const int token = (pos * 37 + 5) % 512;
    const Vector expected = full.forward(token);
    const Vector& got = h2o.forward(token);
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got(i) == expected(i));
  }
  CHECK(h2o.evicted_tokens(0) == 0);
}

TEST_CASE("a factory h2o policy with a small budget evicts one token per step") {
  ModelConfig config = stories260k_shape();
  config.seq_len = 20;
  auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 4));
  PolicySettings settings;
  settings.heavy = 2;
  settings.recent = 3;
  Decoder decoder(weights, make_policy("h2o", settings));
  for (int pos = 0; pos < 20; ++pos) decoder.forward(pos + 3);
  for (std::size_t layer = 0; layer < config.n_layers; ++layer) {
    CHECK(decoder.cache(layer).size() == 5);
    CHECK(decoder.evicted_tokens(layer) == 15);
  }
}
