// test_policy_factory.cpp: making cache policies from their command-line names, and what each
// row of the table says about its policy, checked against the running policy (policy_factory.hpp).
#include "h2o_catch.hpp"
#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/policy/random_eviction_policy.hpp"
#include "h2o/policy/scored_policy.hpp"
#include "h2o/policy/sink_window_policy.hpp"
#include "h2o/policy/sliding_window_policy.hpp"
#include "h2o/policy/tova_policy.hpp"
#include "policy_test_support.hpp"

using namespace h2o;
using h2o_test::layer_as;
using h2o_test::single_layer;
using h2o_catch::Contains;

TEST_CASE("the factory lists every policy and makes each by its name") {
  REQUIRE(policy_kinds().size() >= 2);
  std::string joined;
  for (const PolicyKind& kind : policy_kinds()) joined += (joined.empty() ? "" : ", ") + kind.name;
  CHECK(policy_names() == joined);
  CHECK(!reference_policy().evicts);
  PolicySettings settings;
  settings.heavy = 2;
  settings.recent = 3;
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    CHECK(!kind.summary.empty());
    CHECK(is_policy_name(kind.name));
    CHECK(&policy_kind(kind.name) == &kind);
    const std::unique_ptr<CachePolicy> policy = make_policy(kind.name, settings);
    REQUIRE(policy != nullptr);
    CHECK(policy->name() == kind.name);
    // The full cache is the only one that keeps everything (FastGen may keep every token in some
    // heads, so each head may hold them all).
    if (kind.sized_by_budget) CHECK((policy->max_tokens(1000) < 1000) == kind.evicts);
  }
}

TEST_CASE("one row is the subject and one its baseline: H2O against the window, both evicting") {
  std::size_t subjects = 0, baselines = 0;
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    CHECK(!kind.prose_name.empty());
    subjects += kind.role == PolicyRole::Subject ? 1 : 0;
    baselines += kind.role == PolicyRole::Baseline ? 1 : 0;
  }
  CHECK(subjects == 1);
  CHECK(baselines == 1);
  CHECK(subject_policy().name == "h2o");
  CHECK(baseline_policy().name == "window");
  CHECK(subject_policy().evicts);
  CHECK(baseline_policy().evicts);
  CHECK(subject_policy().prose_name == "H2O");
  CHECK(baseline_policy().prose_name == "the window");
}

TEST_CASE("each attention-reading policy scores as its paper unless told otherwise") {
  for (const PolicyKind& kind : policy_kinds()) {
    if (!kind.uses_attention()) continue;
    INFO(kind.name);
    PolicySettings settings = settings_for_budget(kind.name, 10);
    CHECK_THAT(make_policy(kind.name, settings)->describe(),
               Contains(to_string(*kind.paper_scoring) + " scores"));
    CHECK_THAT(paper_scoring_names(), Contains(kind.name + " " + to_string(*kind.paper_scoring)));
    for (ScoringMode mode : {ScoringMode::PerHead, ScoringMode::Shared}) {
      settings.scoring = mode;
      CHECK_THAT(make_policy(kind.name, settings)->describe(),
                 Contains(to_string(mode) + " scores"));
    }
  }
  // The papers: H2O's code scores per head; TOVA's averages over all heads of a layer.
  CHECK(policy_kind("h2o").paper_scoring == ScoringMode::PerHead);
  CHECK(policy_kind("tova").paper_scoring == ScoringMode::Shared);
  CHECK(parse_scoring_choice("paper") == std::nullopt);
  CHECK(parse_scoring_choice("shared") == ScoringMode::Shared);
  CHECK_THROWS_WITH(parse_scoring_choice("mean"),
                    Contains("unknown scoring mode 'mean' (expected per-head, shared or paper)"));
}

TEST_CASE("the factory's properties are what the policies do in a decoder") {
  // Each policy at a budget of 8 tokens on a random decoder: the newest token survives every step
  // exactly when the row says it is protected; a policy that reads no attention ignores it.
  ModelConfig config = stories260k_shape();
  config.seq_len = 120;
  auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 5));
  // A random model spreads its attention evenly; FastGen needs a low target there to give some
  // head a rule smaller than the full cache (the others ignore it).
  PolicySettings base;
  base.fastgen.target = 0.05;
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    Decoder decoder(weights, make_policy(kind.name, settings_for_budget(kind.name, 8, base)));
    bool newest_always_kept = true;
    for (std::size_t i = 0; i < config.seq_len; ++i) {
      decoder.forward(static_cast<int>((i * 37) % config.vocab_size));
      for (std::size_t l = 0; l < config.n_layers; ++l) {
        for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
          if (decoder.cache(l).sorted_positions(g).back() != static_cast<Position>(i)) {
            newest_always_kept = false;
          }
        }
      }
    }
    CHECK(newest_always_kept == kind.protects_newest);
    std::size_t evicted = 0;  // layer 0's heads may hold different numbers (FastGen, DuoAttention)
    for (std::size_t g = 0; g < config.n_kv_heads; ++g) evicted += decoder.evicted_tokens(0, g);
    CHECK((evicted > 0) == kind.evicts);

    // Attention whose query heads do not fit the KV heads: refused exactly by the readers.
    LayerKVCache cache(2, 2, 4);
    const float row[2 * 2] = {1, 2, 3, 4};
    cache.append(row, row, 0);
    const std::vector<float> weights_3_heads(3 * 4, 1.0f);
    const auto policy = single_layer(*make_policy(kind.name, settings_for_budget(kind.name, 8)), 2);
    const StepAttention odd{weights_3_heads.data(), 3, 4};
    if (kind.uses_attention()) {
      CHECK_THROWS_AS(policy->after_attention(cache, odd), std::invalid_argument);
    } else {
      CHECK_NOTHROW(policy->after_attention(cache, odd));
    }
  }
}

namespace {

// One token's turn on a bare layer cache, as the decoder takes it (cache_policy.hpp): the token
// at `position` arrives with seeded random keys and values, each of n_heads query heads gives the
// live slots random weights summing to 1, then the policy acts (after_attention; only observe
// while a prompt is read for a later compress).
void random_step(LayerPolicy& policy, LayerKVCache& cache, Position position, std::size_t n_heads,
                 bool observe_only, Rng& rng) {
  const std::size_t G = cache.n_kv_heads(), D = cache.head_dim();
  std::vector<float> keys(G * D), values(G * D);  // (G * D,)
  for (float& k : keys) k = rng.normal();
  for (float& v : values) v = rng.normal();
  cache.append(keys.data(), values.data(), position);
  // Row h covers the slots of the KV head it reads (heads may hold different numbers: Ada-KV).
  const std::size_t T = cache.max_size(), group = n_heads / G;
  std::vector<float> weights(n_heads * T, 0.0f);  // (H, T)
  for (std::size_t h = 0; h < n_heads; ++h) {
    float* row = weights.data() + h * T;
    const std::size_t live = cache.size(h / group);
    float sum = 0.0f;
    for (std::size_t s = 0; s < live; ++s) sum += row[s] = rng.uniform(0.01f, 1.0f);
    for (std::size_t s = 0; s < live; ++s) row[s] /= sum;
  }
  const StepAttention attention{weights.data(), n_heads, T};
  if (observe_only) {
    policy.observe(cache, attention);
  } else {
    policy.after_attention(cache, attention);
  }
}

}  // namespace

TEST_CASE("each policy's recent window, as its row names it, is always in its cache") {
  // Every row at several equal budgets, on a bare layer cache (2 KV heads, 4 query heads) over
  // seeded random keys and attention, token by token or after a prompt cut (compress): after
  // every step, each of the newest recent_window positions is in every KV head. The window is no
  // more than the policy keeps, all of it exactly when the row has no kept label, and no less than
  // the policy protects: when the policy keeps more than its window, the newest position outside
  // it is evicted at some step.
  const std::size_t prompt = GENERATE(0, 100);  // tokens read before one compress; 0: none
  const std::size_t n_tokens = 1000, G = 2, H = 4, D = 8;
  for (const PolicyKind& kind : policy_kinds()) {
    for (std::size_t budget : {2, 3, 5, 9, 16, 40, 70}) {
      INFO(kind.name << " at a budget of " << budget << ", prompt of " << prompt << " tokens");
      PolicySettings base;
      base.fastgen.target = 0.05;  // random attention is spread: FastGen's heads must evict
      const PolicySettings settings = settings_for_budget(kind.name, budget, base);
      const std::unique_ptr<CachePolicy> policy = make_policy(kind.name, settings);
      const std::size_t keeps = policy->max_tokens(n_tokens);
      const std::size_t window = kind.recent_window(settings, n_tokens);
      INFO(policy->describe() << "; recent window " << window);
      CHECK(window <= keeps);
      CHECK(kind.kept_label.empty() == (window == keeps));

      const std::unique_ptr<LayerPolicy> layer = policy->for_layer({0, 1, G, n_tokens});
      LayerKVCache cache(G, D, std::max(prompt, layer->head_capacity() + 1));
      Rng rng(1000 * budget + prompt + 7);
      std::string first_miss;  // the first window position found missing ("": none)
      bool outside_evicted = false;
      for (std::size_t p = 0; p < n_tokens; ++p) {
        const bool reading_prompt = p < prompt;
        random_step(*layer, cache, static_cast<Position>(p), H, reading_prompt, rng);
        if (p + 1 == prompt) layer->compress(cache, keeps);
        if (reading_prompt && p + 1 < prompt) continue;  // nothing is evicted yet
        const std::size_t newest_outside = p + 1 > window ? p + 1 - window : 0;  // window start
        for (std::size_t g = 0; g < G; ++g) {
          const std::vector<Position> kept = cache.sorted_positions(g);
          const auto has = [&](std::size_t q) {
            return std::binary_search(kept.begin(), kept.end(), static_cast<Position>(q));
          };
          for (std::size_t q = newest_outside; q <= p && first_miss.empty(); ++q) {
            if (!has(q)) {
              first_miss = "position " + std::to_string(q) + " missing after step " +
                           std::to_string(p) + " in KV head " + std::to_string(g);
            }
          }
          if (p >= window && !has(p - window)) outside_evicted = true;
        }
      }
      CHECK(first_miss == "");
      if (window < keeps) CHECK(outside_evicted);
    }
  }
}

TEST_CASE("the rows' recent windows and kept labels, worked out for a budget of 9 tokens") {
  // settings_for_budget(9): heavy 4 + recent 5; sinks 4 + recent 5; SnapKV's window 5 (< 32).
  const auto window_of = [](const std::string& name) {
    return policy_kind(name).recent_window(settings_for_budget(name, 9), 100);
  };
  CHECK(window_of("full") == 100);  // every token of the text
  CHECK(window_of("h2o") == 5);
  CHECK(window_of("window") == 9);  // all of it
  CHECK(window_of("sinks") == 5);
  CHECK(window_of("random") == 5);
  CHECK(window_of("tova") == 0);  // it protects nothing
  CHECK(window_of("knorm") == 5);
  CHECK(window_of("snapkv") == 5);
  CHECK(policy_kind("window").recent_window(settings_for_budget("window", 9), 6) == 6);  // text
  CHECK(policy_kind("full").kept_label == "");
  CHECK(policy_kind("window").kept_label == "");
  CHECK(policy_kind("h2o").kept_label == "heavy hitter");
  CHECK(policy_kind("sinks").kept_label == "sink");
  CHECK(policy_kind("random").kept_label == "kept at random");
  CHECK(policy_kind("tova").kept_label == "kept by score");
  CHECK(policy_kind("knorm").kept_label == "short key");
  CHECK(policy_kind("snapkv").kept_label == "heavy hitter");
}

TEST_CASE("a heavy share other than half: 19 tokens at 10% and at 75%, worked out") {
  PolicySettings tenth;
  tenth.heavy_percent = 10;  // 19 * 10 / 100 = 1.9, rounded down: 1 heavy, 18 recent
  const PolicySettings h2o = settings_for_budget("h2o", 19, tenth);
  CHECK(h2o.heavy == 1);
  CHECK(h2o.recent == 18);
  const PolicySettings sinks = settings_for_budget("sinks", 19, tenth);
  CHECK(sinks.sinks == 1);  // StreamingLLM's 4, cut to the heavy part
  CHECK(sinks.recent == 18);
  const PolicySettings snapkv = settings_for_budget("snapkv", 19, tenth);
  CHECK(snapkv.recent == 18);  // the recent part (< its paper's 32)
  CHECK(snapkv.heavy == 1);
  PolicySettings most;
  most.heavy_percent = 75;  // 19 * 75 / 100 = 14.25: 14 heavy, 5 recent
  most.h2o.start_area = 20;
  const PolicySettings h2o_most = settings_for_budget("h2o", 19, most);
  CHECK(h2o_most.heavy == 14);
  CHECK(h2o_most.recent == 5);
  CHECK(h2o_most.h2o.start_area == 14);  // cut to the heavy part
  const PolicySettings window = settings_for_budget("window", 19, most);
  CHECK(window.heavy + window.recent == 19);  // a window keeps the whole budget either way
}

TEST_CASE("every heavy share keeps the budget whole, the recent part non-empty, and half is the "
          "old split") {
  for (const PolicyKind& kind : policy_kinds()) {
    for (std::size_t tokens = 2; tokens <= 70; ++tokens) {
      for (int percent = 0; percent <= 99; ++percent) {
        PolicySettings base;
        base.heavy_percent = percent;
        const PolicySettings s = settings_for_budget(kind.name, tokens, base);
        INFO(kind.name << ", " << tokens << " tokens, heavy share " << percent << "%");
        REQUIRE(s.recent >= 1);
        // The splits that take their sinks out of the heavy part: StreamingLLM's, and
        // DuoAttention's streaming heads (the same cache).
        const bool takes_sinks = kind.name == "sinks" || kind.name == "duo";
        if (takes_sinks) {
          REQUIRE(s.sinks + s.recent == tokens);
          REQUIRE(s.sinks <= tokens * static_cast<std::size_t>(percent) / 100);
        } else {
          REQUIRE(s.heavy + s.recent == tokens);
        }
        if (percent == kDefaultHeavyPercent && kind.name != "snapkv" && !takes_sinks) {
          REQUIRE(s.heavy == tokens / 2);  // the paper's halves, the odd token to the recent
        }
      }
    }
  }
}

TEST_CASE("a heavy share outside 0..99 percent is refused, naming it") {
  for (int percent : {-1, 100, 250}) {
    PolicySettings base;
    base.heavy_percent = percent;
    CHECK_THROWS_WITH(settings_for_budget("h2o", 20, base),
                      "the heavy share of a budget must be 0 to 99 percent, got " +
                          std::to_string(percent));
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
  const auto h2o = layer_as<H2OPolicy>(*policy);
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
  const auto w = layer_as<SlidingWindowPolicy>(*window);
  REQUIRE(w != nullptr);
  CHECK(w->window() == 5);
  // sinks: --sinks + recent; heavy is not used.
  const auto sinks = make_policy("sinks", settings);
  const auto s = layer_as<SinkWindowPolicy>(*sinks);
  REQUIRE(s != nullptr);
  CHECK(s->sinks() == 6);
  CHECK(s->recent() == 3);
  CHECK(sinks->max_tokens(256) == 9);
  // random: heavy + recent in all, the last `recent` protected, the given seed.
  const auto random = make_policy("random", settings);
  const auto r = layer_as<RandomEvictionPolicy>(*random);
  REQUIRE(r != nullptr);
  CHECK(r->budget() == 5);
  CHECK(r->recent() == 3);
  CHECK(r->seed() == 77);
  // tova: heavy + recent in all, nothing protected, the given scoring mode.
  const auto tova = make_policy("tova", settings);
  const auto t = layer_as<TovaPolicy>(*tova);
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
  settings.h2o.score = GENERATE(H2OScore::Sum, H2OScore::NormalisedSum, H2OScore::DecayedSum);
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
    CHECK(decoder.cache(layer).uniform_size() == 5);
    CHECK(decoder.evicted_tokens(layer) == 15);
  }
}

TEST_CASE("A budget spread over a scored policy is named by both", "[policy_factory]") {
  // "adakv:knorm" is Ada-KV over key norm's scores; "adakv" alone is over H2O's.
  for (const std::string name : {"adakv:knorm", "adakv:tova", "pyramid:knorm", "pyramid:tova"}) {
    INFO(name);
    REQUIRE(is_policy_name(name));
    const auto policy = make_policy(name, settings_for_budget(name, 20));
    CHECK(&policy->kind() == &policy_kind(name));
    CHECK(policy->kind().name == name);
    const auto layer = policy->for_layer({0, 2, 2, 100});
    const auto* spread = dynamic_cast<const BudgetSpreadPolicy*>(layer.get());
    REQUIRE(spread != nullptr);
    CHECK(spread->scorer().name() == name.substr(name.find(':') + 1));
  }
  CHECK(policy_kind("adakv:knorm").prose_name == "Ada-KV over key norm");
  CHECK_FALSE(policy_kind("adakv:knorm").uses_attention());  // key norm reads no attention
  // Ada-KV's paper scores per head, whatever TOVA's says (shared would leave nothing to spread).
  CHECK(policy_kind("adakv:tova").paper_scoring == ScoringMode::PerHead);
  CHECK_FALSE(policy_kind("adakv:tova").protects_newest);  // TOVA protects no window
  CHECK(&policy_kind("adakv:h2o") == &policy_kind("adakv"));
  CHECK(make_policy("adakv", settings_for_budget("adakv", 20))->describe() ==
        make_policy("adakv:h2o", settings_for_budget("adakv", 20))->describe());
  // Listed: the rows only.
  for (const PolicyKind& kind : policy_kinds()) CHECK(kind.name.find(':') == std::string::npos);
  // What cannot be spread, or over what, is refused by name.
  CHECK_FALSE(is_policy_name("adakv:window"));
  CHECK_THROWS_WITH(make_policy("adakv:window"),
                    h2o_catch::Contains("a scored policy (one of: h2o, tova, knorm)"));
  CHECK_THROWS_WITH(make_policy("adakv:pyramid:h2o"), h2o_catch::Contains("a scored policy"));
  CHECK_THROWS_WITH(make_policy("window:h2o"), h2o_catch::Contains("spreads no budget"));
  CHECK_THROWS_WITH(make_policy("lru:h2o"), h2o_catch::Contains("unknown cache policy 'lru:h2o'"));
  // The programs' message for a name they cannot run says what is wrong with it.
  CHECK(unknown_policy_message("adakv:window") ==
        "cache policy 'adakv:window': adakv spreads a budget over a scored policy (one of: h2o, "
        "tova, knorm)");
  CHECK(unknown_policy_message("lru").rfind("unknown cache policy 'lru' (expected one of: ", 0) ==
        0);
  CHECK(budget_spread_help() ==
        "pyramid and adakv spread the budget of any scored policy (h2o, tova, knorm), named after "
        "a colon: adakv:knorm (h2o's when none is named).");
}

TEST_CASE("A running policy knows its kind", "[policy_factory]") {
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    CHECK(&make_policy(kind.name, settings_for_budget(kind.name, 64))->kind() == &kind);
  }
  // A program's own policy has none.
  CHECK_THROWS_WITH(policy_of<FullCachePolicy>()->kind(), h2o_catch::Contains("not made by"));
}
