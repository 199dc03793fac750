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

#include "h2o/base/random.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/policy/snapkv_policy.hpp"
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
  const H2OScore score = GENERATE(H2OScore::Sum, H2OScore::NormalisedSum, H2OScore::DecayedSum);
  const auto weights = h2o_test::random_model(150, 63);
  const ModelConfig& c = weights->config;
  const std::size_t P = 90, heavy = 12, recent = 8, budget = heavy + recent;
  const std::vector<int> tokens = h2o_test::random_tokens(130, c.vocab_size, 64);
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + P);
  INFO("score " << to_string(score));

  // A decoder that never evicts gathers the scores the whole prompt leaves (sums, or decayed sums).
  Decoder watcher(weights,
                  policy_of<H2OPolicy>(CacheBudget(150, 0), ScoringMode::PerHead, score,
                                       std::size_t{0}, kDefaultH2ODecay),
                  150);
  Matrix expected_logits;  // (P, V)
  watcher.forward_batch(prompt, &expected_logits);

  Decoder decoder(weights,
                  policy_of<H2OPolicy>(CacheBudget(heavy, recent), ScoringMode::PerHead, score,
                                       std::size_t{0}, kDefaultH2ODecay),
                  150);
  Matrix prompt_logits;
  decoder.read_prompt_compressed(prompt, &prompt_logits);
  CHECK(same_numbers(prompt_logits, expected_logits));  // the prompt was read with the full cache
  CHECK(decoder.position() == Position(P));

  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const LayerKVCache& cache = decoder.cache(l);
    const LayerKVCache& all = watcher.cache(l);
    REQUIRE(cache.uniform_size() == budget);
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
  CHECK(small.cache(0).uniform_size() == 10);

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
  CHECK(decoder.cache(0).uniform_size() == 8);
  CHECK(h2o_test::error_of<std::logic_error>([&] { decoder.read_prompt_compressed({1}); }) ==
        "read_prompt_compressed: the prompt must come first (position 0)");
  decoder.reset();
  decoder.read_prompt_compressed({1, 2, 3});
  CHECK(decoder.cache(0).uniform_size() == 3);
}

// =============================================================================================
// One cut by the rule, and the two policies that score a prompt their own way

namespace {
// A cache of n tokens at positions 0..n-1 with the given scores in KV head 0 (and 1).
LayerKVCache cache_with_scores(const std::vector<float>& scores, std::size_t n_kv = 1) {
  LayerKVCache cache(n_kv, 2, scores.size());
  const std::vector<float> zeros(n_kv * 2, 0.0f);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    cache.append(zeros.data(), zeros.data(), static_cast<Position>(i));
    for (std::size_t g = 0; g < n_kv; ++g) cache.scores(g)[i] = scores[i];
  }
  return cache;
}
}  // namespace

TEST_CASE("h2o's prompt cut with normalised sums and no recent window keeps the rule's tokens",
          "[prompt-compression]") {
  // Issue 18's hand case: 5 tokens, keep 2. With the newest position 4 fixed, the keys are
  // 2.5/5, 2/4, 0.5/3, 1/2, 0.5/1: position 2 goes, then the ties at 0.5 go newest first.
  // Evicting one token at a time used to re-measure the keys once position 4 was gone, and kept
  // {1, 3}.
  LayerKVCache cache = cache_with_scores({2.5f, 2.0f, 0.5f, 1.0f, 0.5f}, 2);
  H2OPolicy policy(CacheBudget{2, 0}, ScoringMode::PerHead, H2OScore::NormalisedSum);
  policy.compress(cache, 2);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{0, 1});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 1});
}

TEST_CASE("h2o's prompt cut is the rule's one cut for every option combination",
          "[prompt-compression]") {
  // Seeded caches against selection.hpp's plan_cut (itself checked against a direct reference in
  // test_selection.cpp), over recent window, start area and score.
  Rng rng(71);
  for (int trial = 0; trial < 120; ++trial) {
    const std::size_t n = 7 + rng.below(30);
    const std::size_t recent = rng.below(4), start = rng.below(3);
    const std::size_t heavy =
        start + 1 + rng.below(static_cast<std::uint32_t>(n - recent - start - 1));
    const bool normalise = rng.below(2) == 1;
    std::vector<float> scores(n);
    for (float& s : scores) s = 0.5f * static_cast<float>(rng.below(6));  // many ties
    LayerKVCache cache = cache_with_scores(scores);
    H2OPolicy policy(CacheBudget(heavy, recent), ScoringMode::PerHead,
                     normalise ? H2OScore::NormalisedSum : H2OScore::Sum, start);
    std::vector<Position> positions(n);
    for (std::size_t i = 0; i < n; ++i) positions[i] = static_cast<Position>(i);
    std::vector<Position> expected;
    for (std::size_t slot :
         plan_cut(positions, scores, EvictionRule{recent, start, normalise}, heavy + recent).kept) {
      expected.push_back(positions[slot]);
    }
    policy.compress(cache, heavy + recent);
    INFO("trial " << trial);
    CHECK(cache.sorted_positions(0) == expected);
  }
}

TEST_CASE("knorm keeps the recent window and the shortest keys", "[prompt-compression]") {
  // Keys (D = 2) of lengths 5, 1, 3, 2, 4 at positions 0..4; heavy 2 + recent 1: position 4 stays
  // for recency, then the two shortest older keys, positions 1 and 3.
  const std::vector<std::vector<float>> keys = {{3, 4}, {0, 1}, {3, 0}, {0, 2}, {0, 4}};
  const auto policy = h2o_test::single_layer(*make_policy("knorm", [] {
    PolicySettings s;
    s.heavy = 2;
    s.recent = 1;
    return s;
  }()));
  LayerKVCache cache(1, 2, 5);
  const StepAttention none{nullptr, 1, 5};
  for (std::size_t p = 0; p < keys.size(); ++p) {
    cache.append(keys[p].data(), keys[p].data(), static_cast<Position>(p));
    policy->observe(cache, none);
  }
  CHECK(h2o_test::score_of(cache, 0, 0) == -5.0f);  // minus the key's length
  CHECK(h2o_test::score_of(cache, 0, 2) == -3.0f);
  LayerKVCache stepwise = cache;
  policy->compress(cache, 3);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{1, 3, 4});
  // Token by token the decoder asks for one victim at a time: the same tokens go.
  std::size_t victim = 0;
  while (stepwise.uniform_size() > 3) {
    policy->choose_victims(stepwise, &victim);
    stepwise.remove_one_per_head(&victim);
  }
  CHECK(stepwise.sorted_positions(0) == std::vector<Position>{1, 3, 4});
}

TEST_CASE("snapkv cuts a prompt by its window's pooled votes", "[prompt-compression]") {
  // 10 prompt tokens, one KV head with one query head, window 2, heavy 2. The window's two
  // queries (positions 8 and 9) vote for the older positions 0..7:
  //   votes   0  0  0  .5 0  0  0  .5    (position 3 from query 8, position 7 from query 9)
  //   pooled over 5 neighbours (zero beyond 0 and 7):
  //           0  .5 .5 .5 .5 1  .5 .5
  // Best two: 5 (1), then the tie at .5 keeps the oldest, position 1. Kept: 1, 5, 8, 9. The
  // earlier queries' attention to position 0 does not count: they are not in the window.
  const std::size_t n = 10;
  SnapKVPolicy policy(CacheBudget{2, 2}, ScoringMode::PerHead);
  LayerKVCache cache(1, 2, n);
  const std::vector<float> zeros(2, 0.0f);
  for (std::size_t p = 0; p < n; ++p) {
    cache.append(zeros.data(), zeros.data(), static_cast<Position>(p));
    std::vector<float> row(n, 0.0f);
    row[p] = 0.5f;              // every query looks at itself ...
    if (p == 8) row[3] = 0.5f;  // ... and the window's queries at one older token each
    if (p == 9) row[7] = 0.5f;
    if (p < 8) row[0] = 0.5f;  // earlier queries (not in the window) vote for position 0
    policy.observe(cache, StepAttention{row.data(), 1, n});
  }
  policy.compress(cache, 4);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{1, 5, 8, 9});
  // Each kept token's score is the attention the window gave it (not pooled).
  CHECK(h2o_test::score_of(cache, 0, 1) == 0.0f);
  CHECK(h2o_test::score_of(cache, 0, 8) == 0.5f);
  CHECK(h2o_test::score_of(cache, 0, 9) == 0.5f);
}

namespace {

// The cut of a 12-token prompt, one KV head with one query head, window 2 (positions 10 and 11),
// heavy 2, under `pooling`. Every query looks at itself; the window's queries also vote for the
// older positions 0..9, query 10 for a cluster of three and query 11 for one token alone:
//   votes   0  .25 .25 .25 0  0  0  0  .5 0
// Earlier queries (not in the window) look at position 0 only: their attention does not count.
std::vector<Position> snapkv_cut(SnapKVPooling pooling) {
  const std::size_t n = 12;
  SnapKVPolicy policy(CacheBudget{2, 2}, ScoringMode::PerHead, pooling);
  LayerKVCache cache(1, 2, n);
  const std::vector<float> zeros(2, 0.0f);
  for (std::size_t p = 0; p < n; ++p) {
    cache.append(zeros.data(), zeros.data(), static_cast<Position>(p));
    std::vector<float> row(n, 0.0f);
    if (p == 10) {
      row[1] = row[2] = row[3] = row[10] = 0.25f;
    } else if (p == 11) {
      row[8] = row[11] = 0.5f;
    } else {
      row[0] = 0.5f;
      row[p] += 0.5f;
    }
    policy.observe(cache, StepAttention{row.data(), 1, n});
  }
  policy.compress(cache, 4);
  return cache.sorted_positions(0);
}

}  // namespace

TEST_CASE("snapkv pools the votes by average or by maximum over an odd kernel",
          "[prompt-compression]") {
  // Average over 5 (written as the sum of the 5 votes, zero beyond positions 0 and 9):
  //   pooled  .5 .75 .75 .75 .5 .25 .5 .5 .5 .5
  // the cluster wins: the tie at .75 keeps the oldest two, positions 1 and 2.
  CHECK(snapkv_cut({SnapKVPool::Average, 5}) == std::vector<Position>{1, 2, 10, 11});
  // Max over 7 (the largest vote within 3 places, nothing beyond the ends):
  //   pooled  .25 .25 .25 .25 .25 .5 .5 .5 .5 .5
  // the lone strong vote's neighbourhood wins: of the tie at .5 the oldest two, 5 and 6.
  CHECK(snapkv_cut({SnapKVPool::Max, 7}) == std::vector<Position>{5, 6, 10, 11});
  // Max over 3:  .25 .25 .25 .25 .25 0 0 .5 .5 .5  ->  7 and 8.
  CHECK(snapkv_cut({SnapKVPool::Max, 3}) == std::vector<Position>{7, 8, 10, 11});
  // A kernel of 1 pools nothing, by either rule: 8 (.5), then 1 (the oldest .25).
  CHECK(snapkv_cut({SnapKVPool::Average, 1}) == std::vector<Position>{1, 8, 10, 11});
  CHECK(snapkv_cut({SnapKVPool::Max, 1}) == std::vector<Position>{1, 8, 10, 11});
  // The default is the paper code's: average over 5.
  CHECK(SnapKVPolicy(CacheBudget{2, 2}).pooling().pool == SnapKVPool::Average);
  CHECK(SnapKVPolicy(CacheBudget{2, 2}).pooling().kernel == 5);
  CHECK(snapkv_cut({}) == snapkv_cut({SnapKVPool::Average, 5}));
  CHECK(SnapKVPolicy(CacheBudget{59, 32}, ScoringMode::PerHead, {SnapKVPool::Max, 7}).describe() ==
        "SnapKV, heavy 59 + recent 32 = 91 tokens, window 32, max pooling over 7 positions, "
        "per-head scores; decoding as H2O");
}

TEST_CASE("snapkv refuses a pooling kernel that is even, zero or too wide",
          "[prompt-compression]") {
  for (std::size_t kernel : {std::size_t{0}, std::size_t{4}, kMaxPoolKernel + 2}) {
    INFO("kernel " << kernel);
    const std::string message =
        "SnapKV: the pooling kernel must be an odd number of positions from 1 to 1048575 "
        "(centred on the token), got " + std::to_string(kernel);
    CHECK(h2o_test::error_of<std::invalid_argument>([&] { check_pool_kernel(kernel); }) ==
          message);
    CHECK(h2o_test::error_of<std::invalid_argument>([&] {
            SnapKVPolicy(CacheBudget{4, 4}, ScoringMode::PerHead, {SnapKVPool::Max, kernel});
          }) == message);
    PolicySettings settings = settings_for_budget("snapkv", 20);
    settings.snapkv.kernel = kernel;
    CHECK(h2o_test::error_of<std::invalid_argument>([&] { make_policy("snapkv", settings); }) ==
          message);
  }
  CHECK_NOTHROW(check_pool_kernel(1));
  CHECK_NOTHROW(check_pool_kernel(kMaxPoolKernel));
  CHECK(h2o_test::error_of<std::invalid_argument>([] { parse_snapkv_pool("median"); }) ==
        "unknown SnapKV pooling 'median' (expected avg or max)");
  CHECK(parse_snapkv_pool(to_string(SnapKVPool::Max)) == SnapKVPool::Max);
  CHECK(parse_snapkv_pool(to_string(SnapKVPool::Average)) == SnapKVPool::Average);
}

TEST_CASE("snapkv without a recorded prompt refuses to cut", "[prompt-compression]") {
  CHECK(h2o_test::error_of<std::invalid_argument>([] {
          SnapKVPolicy(CacheBudget{4, 0});
        }) ==
        "SnapKV: the observation window (recent) must be at least 1 token: its queries score the "
        "prompt");
  SnapKVPolicy policy(CacheBudget{1, 2});
  LayerKVCache cache = cache_with_scores({1, 2, 3, 4, 5});
  CHECK(h2o_test::error_of<std::logic_error>([&] { policy.compress(cache, 3); }) ==
        "SnapKV: cutting a cache needs the attention of the prompt's last 2 queries (read the "
        "prompt with Decoder::read_prompt_compressed)");
}

TEST_CASE("snapkv decodes token by token exactly as h2o", "[prompt-compression]") {
  // OpenVINO GenAI's way, which the class follows: SnapKV only changes how a prompt is cut.
  const auto weights = h2o_test::random_model(160, 73);
  const std::vector<int> tokens = h2o_test::random_tokens(150, weights->config.vocab_size, 74);
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  // Every pooling: the default, the paper's benchmark configuration, and none.
  const SnapKVPooling pooling = GENERATE(SnapKVPooling{}, SnapKVPooling{SnapKVPool::Max, 7},
                                         SnapKVPooling{SnapKVPool::Max, 1});
  INFO(pooling.describe());
  PolicySettings settings = settings_for_budget("snapkv", 20);
  settings.scoring = mode;
  settings.snapkv = pooling;
  Decoder snapkv(weights, make_policy("snapkv", settings), 160);
  Decoder h2o(weights, make_policy("h2o", settings), 160);
  for (int token : tokens) REQUIRE(same_numbers(snapkv.forward(token), h2o.forward(token)));

  // With a prompt it cuts differently from h2o, then keeps its budget.
  Decoder snap_prompt(weights, make_policy("snapkv", settings), 160);
  Decoder h2o_prompt(weights, make_policy("h2o", settings), 160);
  const std::vector<int> prompt(tokens.begin(), tokens.begin() + 100);
  snap_prompt.read_prompt_compressed(prompt);
  h2o_prompt.read_prompt_compressed(prompt);
  bool differ = false;
  for (std::size_t l = 0; l < weights->config.n_layers; ++l) {
    REQUIRE(snap_prompt.cache(l).uniform_size() == 20);
    for (std::size_t g = 0; g < weights->config.n_kv_heads; ++g) {
      differ |= snap_prompt.cache(l).sorted_positions(g) != h2o_prompt.cache(l).sorted_positions(g);
      // The observation window (the last 10 prompt tokens) is always kept.
      const std::vector<Position> kept = snap_prompt.cache(l).sorted_positions(g);
      CHECK(std::vector<Position>(kept.end() - 10, kept.end()) ==
            std::vector<Position>{90, 91, 92, 93, 94, 95, 96, 97, 98, 99});
    }
  }
  CHECK(differ);
  for (std::size_t i = 100; i < tokens.size(); ++i) {
    snap_prompt.forward(tokens[i]);
    h2o_test::require_bounded_caches(snap_prompt, i, 20);
  }
}
