// test_policies.cpp: the eviction policies beside H2O, plugged into the unchanged decoder:
// sliding window, attention sinks + window (StreamingLLM), random eviction and TOVA
// (sliding_window_policy.hpp, sink_window_policy.hpp, random_eviction_policy.hpp, tova_policy.hpp).
//
// Three kinds of checks:
//   decoder:     a random decoder shaped like stories260K runs a few hundred tokens; after every
//                step, every layer and KV head is checked against the budget and the policy's own
//                rule (window: exactly the last N; sinks: positions 0..sinks-1 plus the last
//                recent; random: the recent window survives, same seed same choices; TOVA: the
//                recorded attention of the step, replayed, picks the same victim);
//   crafted:     attention written by hand into a LayerKVCache, so TOVA's scores and victims and
//                random's uniform draws can be worked out on paper;
//   equivalence: a budget that covers the sequence gives the full cache's logits bit for bit, and
//                the policies that reduce to a sliding window (H2O with heavy 0, sinks 0, random
//                protecting its whole budget) give the window's logits bit for bit.
//
// Dimension legend: H = query heads, G = KV heads, S = slot capacity, D = head_dim, T = live slots.
#include <algorithm>
#include "h2o_catch.hpp"
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/policy/random_eviction_policy.hpp"
#include "h2o/policy/sink_window_policy.hpp"
#include "h2o/policy/sliding_window_policy.hpp"
#include "h2o/policy/tova_policy.hpp"
#include "policy_test_support.hpp"

using namespace h2o;
using h2o_catch::Contains;
using namespace h2o_test;  // policy_test_support.hpp

namespace {

// ---------------------------------------------------------------------------------------------
// Random decoders

// (random_model and random_tokens come from policy_test_support.hpp)

PolicySettings settings_of(std::size_t heavy, std::size_t recent, std::size_t sinks = 4,
                           std::uint64_t seed = 1, ScoringMode scoring = ScoringMode::PerHead) {
  PolicySettings settings;
  settings.heavy = heavy;
  settings.recent = recent;
  settings.sinks = sinks;
  settings.seed = seed;
  settings.scoring = scoring;
  return settings;
}

// Positions first .. last, both included (empty when last < first).
std::vector<Position> span(Position first, Position last) {
  std::vector<Position> out;
  for (Position p = first; p <= last; ++p) out.push_back(p);
  return out;
}

// Every head's positions slot by slot (not sorted): two caches that agree here made the same
// decisions AND moved the same rows, so their attention sums run in the same order.
std::vector<std::vector<Position>> slot_positions(const LayerKVCache& cache) {
  std::vector<std::vector<Position>> out;
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    out.emplace_back(cache.positions(g), cache.positions(g) + cache.uniform_size());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Crafted caches and attention

void append_position(LayerKVCache& cache, Position p) {
  const std::size_t G = cache.n_kv_heads(), D = cache.head_dim();
  std::vector<float> keys(G * D), values(G * D);  // (G * D,)
  for (std::size_t i = 0; i < G * D; ++i) {
    keys[i] = static_cast<float>(p * 100) + static_cast<float>(i);
    values[i] = -keys[i];
  }
  cache.append(keys.data(), values.data(), p);
}

}  // namespace

// =============================================================================================
// Every policy on a random decoder

TEST_CASE("every policy stays within its budget in every layer and kv head", "[policies]") {
  const std::string name = GENERATE(from_range(budgeted_policy_names()));
  struct Budget {
    std::size_t heavy, recent, sinks;
  };
  const Budget b = GENERATE(Budget{5, 7, 4}, Budget{0, 1, 0}, Budget{1, 1, 1}, Budget{8, 8, 4},
                            Budget{2, 30, 3});
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  // The budget as policy_factory.hpp maps --heavy, --recent and --sinks onto each policy.
  const std::size_t total =
      make_policy(name, settings_of(b.heavy, b.recent, b.sinks))->max_tokens(1000);
  const std::size_t steps = 300;
  const auto weights = random_model(steps, 41);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, make_policy(name, settings_of(b.heavy, b.recent, b.sinks, 5, mode)));
  REQUIRE(decoder.policy().name() == name);
  REQUIRE(decoder.policy().max_tokens(1000) == total);
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 42);
  INFO(decoder.policy().describe());

  for (std::size_t i = 0; i < steps; ++i) {
    decoder.forward(tokens[i]);
    require_bounded_caches(decoder, i, total);
  }
  // The run did cover evictions: as many in all as a uniform budget of `total` makes.
  std::size_t held = 0;
  for (std::size_t l = 0; l < c.n_layers; ++l) held += decoder.cache(l).total_size();
  CHECK(held == c.n_layers * c.n_kv_heads * total);
}

TEST_CASE("the sliding window keeps exactly the last tokens", "[policies]") {
  const std::size_t recent = GENERATE(1, 3, 17);
  const std::size_t steps = 200;
  const auto weights = random_model(steps, 51);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, policy_of<SlidingWindowPolicy>(CacheBudget{0, recent}));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 52);
  for (std::size_t i = 0; i < steps; ++i) {
    decoder.forward(tokens[i]);
    const auto newest = static_cast<Position>(i);
    const std::vector<Position> expected =
        span(std::max<Position>(0, newest - static_cast<Position>(recent) + 1), newest);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const LayerKVCache& cache = decoder.cache(l);
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        INFO("step " << i << ", layer " << l << ", KV head " << g);
        REQUIRE(cache.sorted_positions(g) == expected);
        for (std::size_t s = 0; s < cache.uniform_size(); ++s) REQUIRE(cache.scores(g)[s] == 0.0f);
      }
    }
  }
}

TEST_CASE("attention sinks keep the first positions and the last recent ones", "[policies]") {
  const std::size_t sinks = GENERATE(0, 1, 4);
  const std::size_t recent = GENERATE(1, 5, 16);
  const std::size_t steps = 200, budget = sinks + recent;
  const auto weights = random_model(steps, 61);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, policy_of<SinkWindowPolicy>(sinks, recent));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 62);
  for (std::size_t i = 0; i < steps; ++i) {
    decoder.forward(tokens[i]);
    const auto newest = static_cast<Position>(i);
    std::vector<Position> expected = span(0, newest);
    if (i + 1 > budget) {
      expected = span(0, static_cast<Position>(sinks) - 1);
      for (Position p : span(newest - static_cast<Position>(recent) + 1, newest)) {
        expected.push_back(p);
      }
    }
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        INFO("sinks " << sinks << ", recent " << recent << ", step " << i << ", layer " << l);
        REQUIRE(decoder.cache(l).sorted_positions(g) == expected);
      }
    }
  }
}

TEST_CASE("random eviction protects the recent window and repeats per seed", "[policies]") {
  const std::size_t budget = 12, recent = GENERATE(0, 4, 11);
  const std::size_t steps = 250;
  const auto weights = random_model(steps, 71);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 72);
  Decoder first(weights, policy_of<RandomEvictionPolicy>(CacheBudget{budget - recent, recent}, 9));
  Decoder again(weights, policy_of<RandomEvictionPolicy>(CacheBudget{budget - recent, recent}, 9));
  Decoder other_seed(weights,
                     policy_of<RandomEvictionPolicy>(CacheBudget{budget - recent, recent}, 10));
  INFO(first.policy().describe());

  bool seeds_ever_differ = false, heads_ever_differ = false;
  std::vector<std::vector<std::vector<std::vector<Position>>>> history;  // (steps, L, G, T)
  for (std::size_t i = 0; i < steps; ++i) {
    const Vector& a = first.forward(tokens[i]);
    const Vector& b = again.forward(tokens[i]);
    other_seed.forward(tokens[i]);
    for (std::size_t v = 0; v < c.vocab_size; ++v) REQUIRE(a(v) == b(v));
    const auto newest = static_cast<Position>(i);
    history.emplace_back();
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      const LayerKVCache& cache = first.cache(l);
      history.back().push_back(slot_positions(cache));
      REQUIRE(slot_positions(again.cache(l)) == slot_positions(cache));
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        const std::vector<Position> kept = cache.sorted_positions(g);
        // The last `recent` positions are all there, at the end of the sorted list.
        const std::size_t window = std::min(recent, i + 1);
        for (std::size_t r = 0; r < window; ++r) {
          REQUIRE(kept[kept.size() - 1 - r] == newest - static_cast<Position>(r));
        }
        if (kept != other_seed.cache(l).sorted_positions(g)) seeds_ever_differ = true;
        if (kept != cache.sorted_positions(0)) heads_ever_differ = true;
      }
    }
  }
  CHECK(seeds_ever_differ);
  CHECK(heads_ever_differ);  // each KV head draws on its own

  // The generator restarts with every new sequence: after reset() the same tokens replay the
  // same evictions, slot for slot.
  first.reset();
  for (std::size_t i = 0; i < steps; ++i) {
    first.forward(tokens[i]);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      INFO("replay step " << i << ", layer " << l);
      REQUIRE(slot_positions(first.cache(l)) == history[i][l]);
    }
  }
}

TEST_CASE("random eviction picks every unprotected token equally often", "[policies]") {
  // Budget 4 with the last token protected: from positions 0..4, one of 0..3 goes. 4000 draws
  // give each about 1000 (standard deviation about 27); the bound of 150 is more than 5 of those,
  // and with a fixed seed the counts are the same on every run.
  RandomEvictionPolicy policy(CacheBudget{3, 1}, 2024);
  CraftedAttention no_attention(1, 5);
  std::vector<std::size_t> evicted(5, 0);
  for (int trial = 0; trial < 4000; ++trial) {
    LayerKVCache cache(1, 1, 5);
    for (Position p = 0; p < 5; ++p) append_position(cache, p);
    policy.after_attention(cache, no_attention.view());
    REQUIRE(cache.uniform_size() == 4);
    const std::vector<Position> kept = cache.sorted_positions(0);
    for (Position p = 0; p < 5; ++p) {
      if (!std::binary_search(kept.begin(), kept.end(), p)) ++evicted[static_cast<std::size_t>(p)];
    }
  }
  INFO("evictions of positions 0..4: " << evicted[0] << " " << evicted[1] << " " << evicted[2]
                                       << " " << evicted[3] << " " << evicted[4]);
  for (std::size_t p = 0; p < 4; ++p) {
    CHECK(evicted[p] > 850);
    CHECK(evicted[p] < 1150);
  }
  CHECK(evicted[4] == 0);  // the recent window
}

// =============================================================================================
// TOVA

TEST_CASE("tova evicts the lowest attention of the current step in each kv head", "[policies]") {
  // H = 4 query heads over G = 2 KV heads; every number is a short binary fraction, so the means
  // are exact. Old scores of 9 are planted to show TOVA ignores earlier steps entirely.
  const std::size_t G = 2, H = 4, S = 4;
  LayerKVCache cache(G, 2, S);
  for (Position p = 0; p < 4; ++p) append_position(cache, p);
  for (std::size_t g = 0; g < G; ++g) std::fill(cache.scores(g), cache.scores(g) + 4, 9.0f);
  CraftedAttention att(H, S);
  att.set_row(0, {0.5f, 0.0625f, 0.25f, 0.1875f});  // KV head 0: sum [0.75, 0.25, 0.5, 0.5]
  att.set_row(1, {0.25f, 0.1875f, 0.25f, 0.3125f});
  att.set_row(2, {0.25f, 0.5f, 0.25f, 0.0f});  // KV head 1: sum [0.5, 0.75, 0.625, 0.125]
  att.set_row(3, {0.25f, 0.25f, 0.375f, 0.125f});

  SECTION("per head: each KV head drops its own least attended token") {
    TovaPolicy policy(CacheBudget{0, 3}, ScoringMode::PerHead);
    policy.after_attention(cache, att.view());
    REQUIRE(cache.uniform_size() == 3);
    CHECK(cache.sorted_positions(0) == std::vector<Position>{0, 2, 3});
    CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 1, 2});  // the newest token went
    CHECK(score_of(cache, 0, 0) == 0.75f);
    CHECK(score_of(cache, 0, 2) == 0.5f);
    CHECK(score_of(cache, 0, 3) == 0.5f);
    CHECK(score_of(cache, 1, 0) == 0.5f);
    CHECK(score_of(cache, 1, 1) == 0.75f);
    CHECK(score_of(cache, 1, 2) == 0.625f);
  }
  SECTION("shared: all query heads decide for every head, as in the TOVA paper") {
    // Sum of all four rows: [1.25, 1.0, 1.125, 0.625].
    TovaPolicy policy(CacheBudget{0, 3}, ScoringMode::Shared);
    policy.after_attention(cache, att.view());
    for (std::size_t g = 0; g < G; ++g) {
      CHECK(cache.sorted_positions(g) == std::vector<Position>{0, 1, 2});
      CHECK(score_of(cache, g, 0) == 1.25f);
      CHECK(score_of(cache, g, 1) == 1.0f);
      CHECK(score_of(cache, g, 2) == 1.125f);
    }
  }
  SECTION("under budget: scores are overwritten and nothing is evicted") {
    TovaPolicy policy(CacheBudget{0, 4}, ScoringMode::PerHead);
    policy.after_attention(cache, att.view());
    REQUIRE(cache.uniform_size() == 4);
    CHECK(score_of(cache, 0, 1) == 0.25f);
    CHECK(score_of(cache, 1, 3) == 0.125f);
  }
}

TEST_CASE("tova breaks ties by evicting the newer token whatever the slot order", "[policies]") {
  // Slots hold positions [3, 1, 2, 4] after one swap-remove, so slot order is not position order.
  LayerKVCache cache(1, 2, 4);
  for (Position p = 0; p < 4; ++p) append_position(cache, p);
  const std::size_t first_slot = 0;
  cache.remove_one_per_head(&first_slot);  // position 3 moves into slot 0
  append_position(cache, 4);
  REQUIRE(slot_positions(cache)[0] == std::vector<Position>{3, 1, 2, 4});

  SECTION("a tie between two older tokens: the newer of them goes") {
    CraftedAttention att(1, 4);
    att.set_row(0, {0.125f, 0.25f, 0.125f, 0.5f});  // positions 3 and 2 tie at 0.125
    TovaPolicy(CacheBudget{0, 3}).after_attention(cache, att.view());
    CHECK(cache.sorted_positions(0) == std::vector<Position>{1, 2, 4});
  }
  SECTION("all equal: the newest token goes") {
    CraftedAttention att(1, 4);
    att.set_row(0, {0.25f, 0.25f, 0.25f, 0.25f});
    TovaPolicy(CacheBudget{0, 3}).after_attention(cache, att.view());
    CHECK(cache.sorted_positions(0) == std::vector<Position>{1, 2, 3});
  }
}

TEST_CASE("tova decisions in a decoder follow the recorded attention step by step", "[policies]") {
  // The test recomputes every KV head's summed attention from the decoder's recorded weights (same
  // float operations as the policy), picks the victim with the documented tie-break, and compares
  // with what the cache holds after the step: same survivors, same scores.
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const std::size_t budget = 10, steps = 250;
  const auto weights = random_model(steps, 81);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, policy_of<TovaPolicy>(CacheBudget{0, budget}, mode));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 82);
  bool newest_ever_evicted = false, heads_ever_differ = false;

  const auto check_step = [&](std::size_t i, std::size_t l, std::size_t g,
                              const AttentionRecord& record, const LayerKVCache& cache) {
    const std::vector<Position>& slots = record.positions[g];  // (T,) before eviction
    // (T,) the sum over the query heads that score KV head g; it ranks as the mean
    std::vector<float> mean(slots.size(), 0.0f);
    add_recorded_attention(mean, record, g, mode);
    std::vector<Position> expected = slots;
    if (slots.size() > budget) {
      std::size_t victim = 0;
      for (std::size_t s = 1; s < slots.size(); ++s) {
        if (mean[s] < mean[victim] || (mean[s] == mean[victim] && slots[s] > slots[victim])) {
          victim = s;
        }
      }
      if (slots[victim] == static_cast<Position>(i)) newest_ever_evicted = true;
      expected.erase(expected.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    std::sort(expected.begin(), expected.end());

    INFO("step " << i << ", layer " << l << ", KV head " << g);
    REQUIRE(cache.sorted_positions(g) == expected);
    for (std::size_t s = 0; s < cache.uniform_size(); ++s) {
      const auto at = std::find(slots.begin(), slots.end(), cache.positions(g)[s]);
      REQUIRE(cache.scores(g)[s] == mean[static_cast<std::size_t>(at - slots.begin())]);
    }
    if (cache.sorted_positions(g) != cache.sorted_positions(0)) heads_ever_differ = true;
  };
  replay_each_head(decoder, tokens, check_step);
  CHECK(newest_ever_evicted);  // TOVA protects nothing, not even the token just added
  CHECK(heads_ever_differ == (mode == ScoringMode::PerHead));
}

// =============================================================================================
// Equivalences

TEST_CASE("a policy whose budget covers the sequence matches the full cache", "[policies]") {
  const std::string name = GENERATE(from_range(evicting_policy_names()));
  const std::size_t steps = 64;
  const auto weights = random_model(steps, 91);
  const ModelConfig& c = weights->config;
  // Budgets of 64 tokens (sinks: 4 + 64): never more tokens than that to hold.
  Decoder full(weights, policy_of<FullCachePolicy>());
  Decoder policy(weights, make_policy(name, settings_of(0, steps)));
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 92);
  for (std::size_t i = 0; i < steps; ++i) {
    const Vector expected = full.forward(tokens[i]);
    const Vector& got = policy.forward(tokens[i]);
    for (std::size_t v = 0; v < c.vocab_size; ++v) REQUIRE(got(v) == expected(v));
  }
  CHECK(policy.evicted_tokens(0) == 0);
  CHECK(policy.cache(0).uniform_size() == steps);
}

TEST_CASE("every policy that reduces to a sliding window gives its logits bit for bit",
          "[policies]") {
  // H2O with heavy 0, sinks with 0 sinks and random protecting its whole budget all have one
  // candidate to evict, the oldest token, in the same slot: the same rows move, the same sums run.
  const std::size_t recent = GENERATE(1, 10, 33);
  const std::size_t steps = 300;
  const auto weights = random_model(steps, 101);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = random_tokens(steps, c.vocab_size, 102);
  Decoder window(weights, policy_of<SlidingWindowPolicy>(CacheBudget{0, recent}));
  std::vector<std::unique_ptr<Decoder>> others;
  for (ScoringMode mode : {ScoringMode::PerHead, ScoringMode::Shared}) {
    others.push_back(
        std::make_unique<Decoder>(weights, policy_of<H2OPolicy>(CacheBudget{0, recent}, mode)));
  }
  others.push_back(std::make_unique<Decoder>(weights, policy_of<SinkWindowPolicy>(0, recent)));
  others.push_back(std::make_unique<Decoder>(
      weights, policy_of<RandomEvictionPolicy>(CacheBudget{0, recent}, 3)));
  for (std::size_t i = 0; i < steps; ++i) {
    const Vector& expected = window.forward(tokens[i]);
    for (auto& other : others) {
      const Vector& got = other->forward(tokens[i]);
      INFO(other->policy().describe() << ", step " << i);
      for (std::size_t v = 0; v < c.vocab_size; ++v) REQUIRE(got(v) == expected(v));
      for (std::size_t l = 0; l < c.n_layers; ++l) {
        REQUIRE(slot_positions(other->cache(l)) == slot_positions(window.cache(l)));
      }
    }
  }
  CHECK(window.evicted_tokens(0) == steps - recent);
}

// =============================================================================================
// Names, sizes and bad settings

TEST_CASE("the new policies describe themselves and size their caches", "[policies]") {
  const SlidingWindowPolicy window(CacheBudget{32, 32});
  CHECK(window.name() == "window");
  CHECK(window.describe() == "sliding window, last 64 tokens");
  CHECK(window.keep() == 64);
  CHECK(SlidingWindowPolicy(CacheBudget{32, 32}, LayerShape{0, 1, 1, 10}).keep() == 10);

  const SinkWindowPolicy sinks(4, 60);
  CHECK(sinks.name() == "sinks");
  CHECK(sinks.describe() == "attention sinks 4 + recent 60 = 64 tokens (StreamingLLM)");
  CHECK(sinks.budget() == 64);
  CHECK(sinks.keep() == 64);
  CHECK(SinkWindowPolicy(4, 60, LayerShape{0, 1, 1, 10}).keep() == 10);

  const RandomEvictionPolicy random(CacheBudget{32, 32}, 7);
  CHECK(random.name() == "random");
  CHECK(random.describe() == "random eviction, 64 tokens, the last 32 protected, seed 7");
  CHECK(random.keep() == 64);
  CHECK(RandomEvictionPolicy(CacheBudget{32, 32}, 7, LayerShape{0, 1, 1, 10}).keep() == 10);

  const TovaPolicy tova(CacheBudget{32, 32}, ScoringMode::Shared);
  CHECK(tova.name() == "tova");
  CHECK(tova.describe() == "TOVA, 64 tokens, lowest current attention evicted, shared scores");
  CHECK(tova.keep() == 64);
  CHECK(TovaPolicy(CacheBudget{32, 32}, ScoringMode::Shared, LayerShape{0, 1, 1, 10}).keep() == 10);
  CHECK(TovaPolicy(CacheBudget{0, 5}).mode() == ScoringMode::Shared);  // the paper's

  // The decoder reserves budget + 1 slots a layer, whatever the sequence length.
  const auto weights = random_model(1000, 3);
  const ModelConfig& c = weights->config;
  Decoder decoder(weights, policy_of<SinkWindowPolicy>(4, 6), 1000);
  CHECK(decoder.reserved_kv_bytes() ==
        c.n_layers * 2 * c.n_kv_heads * (10 + 1) * c.head_dim() * sizeof(float));
}

TEST_CASE("the new policies refuse bad settings with one line messages", "[policies]") {
  auto one_line_refusal = [](auto make, const std::string& text) {
    try {
      make();
      FAIL("no exception; expected: " << text);
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      CHECK_THAT(message, Contains(text));
      CHECK(message.find('\n') == std::string::npos);
    }
  };
  // A budget of 0 tokens cannot be made, so window, random and TOVA never see one.
  one_line_refusal([] { CacheBudget(0, 0); }, "heavy + recent must be at least 1");
  one_line_refusal([] { SinkWindowPolicy(4, 0); }, "attention sinks: recent must be at least 1");
  one_line_refusal([] { SinkWindowPolicy(0, 0); }, "attention sinks: recent must be at least 1");
  one_line_refusal([] { SinkWindowPolicy(std::numeric_limits<std::size_t>::max(), 1); },
                   "attention sinks: sinks + recent is too large");
  CHECK_NOTHROW(SinkWindowPolicy(0, 1));
  CHECK_NOTHROW(RandomEvictionPolicy(CacheBudget{1, 0}, 0));
  CHECK_NOTHROW(RandomEvictionPolicy(CacheBudget{0, 3}, 1));

  // Through the factory: a budget of 0 tokens, and sinks with no recent window.
  for (const std::string& name : evicting_policy_names()) {
    INFO(name);
    CHECK_THROWS_AS(make_policy(name, settings_of(0, 0)), std::invalid_argument);
  }
  CHECK_THROWS_AS(make_policy("sinks", settings_of(8, 0, 4)), std::invalid_argument);
  CHECK(make_policy("sinks", settings_of(0, 1, 4))->max_tokens(100) == 5);

  // TOVA reads attention: three query heads cannot share two KV heads.
  LayerKVCache cache(2, 2, 4);
  append_position(cache, 0);
  CraftedAttention att(3, 4);
  CHECK_THROWS_AS(TovaPolicy(CacheBudget{0, 1}).after_attention(cache, att.view()),
                  std::invalid_argument);
}

TEST_CASE("every policy evicts one token a step and refuses a cache two over budget",
          "[policies]") {
  const std::string name = GENERATE(from_range(budgeted_policy_names()));
  // Budget 2 for each (sinks: 1 sink + 1 recent).
  const auto policy = make_policy(name, settings_of(1, 1, 1))->for_layer({});
  LayerKVCache crowded(2, 2, 4);
  for (Position p = 0; p < 4; ++p) append_position(crowded, p);
  CraftedAttention att(2, 4);
  att.set_row(0, {0.25f, 0.25f, 0.25f, 0.25f});
  att.set_row(1, {0.25f, 0.25f, 0.25f, 0.25f});
  CHECK_THROWS_AS(policy->after_attention(crowded, att.view()), std::logic_error);
  CHECK(crowded.uniform_size() == 4);  // refused before anything moved

  LayerKVCache one_over(2, 2, 4);
  for (Position p = 0; p < 3; ++p) append_position(one_over, p);
  policy->after_attention(one_over, att.view());
  CHECK(one_over.uniform_size() == 2);
}
