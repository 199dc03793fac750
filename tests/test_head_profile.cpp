// test_head_profile.cpp: FastGen's per-head profile (head_profile.hpp) on hand-made attention rows
// with every share worked out by hand, its kinds and rule choice on hand-made profiles, seeded
// invariants on random rows, and its errors; the reason sentence lesson 10 and the explorer page
// give from profiles (report/attention_report.hpp).
#include <cmath>
#include <stdexcept>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/report/attention_report.hpp"
#include "h2o_catch.hpp"
#include "test_support.hpp"

using namespace h2o;

namespace {

// (H, T, T) with row (h, t) set to `rows[h][t]` (t + 1 weights), zeros after t.
std::vector<float> attention_of(const std::vector<std::vector<std::vector<float>>>& rows) {
  const std::size_t H = rows.size(), T = rows[0].size();
  std::vector<float> data(H * T * T, 0.0f);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t j = 0; j <= t; ++j) data[(h * T + t) * T + j] = rows[h][t][j];
    }
  }
  return data;
}

}  // namespace

TEST_CASE("a head's sink, local and heavy shares worked out by hand", "[head_profile]") {
  // KV head 0 reads query heads 0 and 1, whose mean rows are
  //   t=0 [1]  t=1 [.2 .8]  t=2 [.1 .6 .3]  t=3 [.1 .4 .1 .4]  t=4 [.1 .3 .2 .2 .2];
  // KV head 1 reads heads 2 and 3, which look only at the query itself.
  // With r = 2, s = 1, k = 1 the rows averaged are t = 3 and 4. Sums before t = 3: position 0
  // 1.3, position 1 1.4, so the heavy hitter is position 1 (0.4 of row 3); before t = 4 it still
  // leads (1.8 against 1.4), 0.3 of row 4.
  const std::vector<std::vector<float>> mean = {{1.0f},
                                                {0.2f, 0.8f},
                                                {0.1f, 0.6f, 0.3f},
                                                {0.1f, 0.4f, 0.1f, 0.4f},
                                                {0.1f, 0.3f, 0.2f, 0.2f, 0.2f}};
  std::vector<std::vector<float>> plus = mean, minus = mean;  // the two heads differ, mean alike
  plus[3] = {0.15f, 0.35f, 0.1f, 0.4f}, minus[3] = {0.05f, 0.45f, 0.1f, 0.4f};
  std::vector<std::vector<float>> self(5);
  for (std::size_t t = 0; t < 5; ++t) self[t].assign(t + 1, 0.0f), self[t][t] = 1.0f;
  const std::vector<float> data = attention_of({plus, minus, self, self});
  const PromptAttention attention{data.data(), 4, 5};
  HeadProfileOptions options;
  options.recent = 2, options.sinks = 1, options.heavy = 1;
  const std::vector<HeadProfile> profiles = profile_heads(attention, 2, options);
  REQUIRE(profiles.size() == 2);

  const HeadProfile& mixed = profiles[0];
  CHECK(mixed.kv_head == 0);
  CHECK(mixed.rows == 2);
  CHECK(mixed.sink_share == Approx(0.1));
  CHECK(mixed.uniform_share == Approx((1.0 / 4 + 1.0 / 5) / 2));  // 0.225
  CHECK(mixed.sink_ratio() == Approx(0.1 / 0.225));
  CHECK(mixed.local_share == Approx((0.5 + 0.4) / 2));  // 0.45
  CHECK(mixed.heavy_share == Approx((0.4 + 0.3) / 2));  // 0.35
  CHECK(mixed.recovered_by(HeadRule::Window) == Approx(0.45));
  CHECK(mixed.recovered_by(HeadRule::SinkWindow) == Approx(0.55));
  CHECK(mixed.recovered_by(HeadRule::HeavyWindow) == Approx(0.8));
  CHECK(mixed.recovered_by(HeadRule::Full) == 1.0);
  // r = 2, k = 1 are not kKindSizes: shares and rules, but no kind; the shares' kind by hand.
  CHECK(mixed.kind == HeadKind::Unclassified);
  CHECK(classify_head(mixed) == HeadKind::Mixed);  // window 0.45 < 0.5, heavy 0.35 < window
  // FastGen's choice: the cheapest rule recovering the target.
  CHECK(cheapest_rule(mixed, 0.4) == HeadRule::Window);
  CHECK(cheapest_rule(mixed, 0.5) == HeadRule::SinkWindow);
  CHECK(cheapest_rule(mixed, 0.7) == HeadRule::HeavyWindow);
  CHECK(cheapest_rule(mixed, 0.9) == HeadRule::Full);
  CHECK(rule_recovers(mixed, HeadRule::HeavyWindow, 0.8));
  CHECK_FALSE(rule_recovers(mixed, HeadRule::HeavyWindow, 0.81));
  CHECK(rule_recovers(mixed, HeadRule::Full, 1.0));

  const HeadProfile& local = profiles[1];
  CHECK(local.sink_share == 0.0);
  CHECK(local.local_share == Approx(1.0));
  CHECK(local.heavy_share == 0.0);
  CHECK(local.kind == HeadKind::Unclassified);
  CHECK(classify_head(local) == HeadKind::Local);
  CHECK(cheapest_rule(local, 1.0) == HeadRule::Window);
}

TEST_CASE("heavy hitters tie to the earlier position, and even rows are nobody's",
          "[head_profile]") {
  // Every row spreads its attention evenly: the sink gets exactly the uniform share, the window
  // r / (t + 1), the heavy hitters (all tied, the earliest taken) k / (t + 1).
  const std::size_t T = 12, r = 3, k = 2;
  std::vector<std::vector<float>> even(T);
  for (std::size_t t = 0; t < T; ++t) even[t].assign(t + 1, 1.0f / static_cast<float>(t + 1));
  const std::vector<float> data = attention_of({even});
  HeadProfileOptions options;
  options.recent = r, options.heavy = k, options.sinks = 1;
  const HeadProfile p = profile_heads({data.data(), 1, T}, 1, options).at(0);
  double uniform = 0, local = 0, heavy = 0;
  for (std::size_t t = r + 1; t < T; ++t) {
    uniform += 1.0 / (t + 1), local += double(r) / (t + 1), heavy += double(k) / (t + 1);
  }
  const double rows = double(T - r - 1);
  CHECK(p.rows == T - r - 1);
  CHECK(p.sink_ratio() == Approx(1.0));
  CHECK(p.uniform_share == Approx(uniform / rows));
  CHECK(p.local_share == Approx(local / rows));
  CHECK(p.heavy_share == Approx(heavy / rows));
  CHECK(p.kind == HeadKind::Unclassified);
  CHECK(classify_head(p) == HeadKind::Mixed);

  // Position 0 and 1 tie on every sum when the first rows give them the same weight, and row
  // t = 3 favours position 1: with k = 1 the heavy hitter is position 0 (the earlier), so row 3's
  // heavy share is its weight on position 0.
  const std::vector<std::vector<float>> tied = {
      {1.0f}, {0.5f, 0.5f}, {0.25f, 0.25f, 0.5f}, {0.1f, 0.3f, 0.3f, 0.3f}};
  const std::vector<float> tied_data = attention_of({tied});
  HeadProfileOptions one;
  one.recent = 2, one.heavy = 1, one.sinks = 0;
  const HeadProfile q = profile_heads({tied_data.data(), 1, 4}, 1, one).at(0);
  CHECK(q.rows == 2);                                // rows 2 and 3
  CHECK(q.heavy_share == Approx((0.25 + 0.1) / 2));  // position 0 both times
}

TEST_CASE("kinds follow their stated thresholds", "[head_profile]") {
  HeadProfile p;
  p.sink_share = 0.05, p.uniform_share = 0.004;  // 12.5 times uniform
  p.local_share = 0.9, p.heavy_share = 0.01;
  CHECK(classify_head(p) == HeadKind::Sink);
  p.sink_share = 0.03;  // 7.5 times: no sink
  CHECK(classify_head(p) == HeadKind::Local);
  p.local_share = 0.6, p.heavy_share = 0.31;  // window under twice the heavy hitters
  CHECK(classify_head(p) == HeadKind::Mixed);
  p.local_share = 0.3, p.heavy_share = 0.3;
  CHECK(classify_head(p) == HeadKind::Heavy);
  HeadKindThresholds strict;
  strict.local_share = 0.95;
  p.local_share = 0.9, p.heavy_share = 0.01;
  CHECK(classify_head(p, strict) == HeadKind::Mixed);
  CHECK(to_string(HeadKind::Sink) == "sink");
  CHECK(to_string(HeadRule::HeavyWindow) == "heavy+window");
}

TEST_CASE("random rows keep the profile's invariants", "[head_profile]") {
  Rng rng(34);
  const std::size_t H = 4, G = 2, T = 40;
  std::vector<float> data(H * T * T, 0.0f);
  for (std::size_t h = 0; h < H; ++h) {
    for (std::size_t t = 0; t < T; ++t) {
      float* row = data.data() + (h * T + t) * T;
      float total = 0;
      for (std::size_t j = 0; j <= t; ++j) row[j] = std::exp(3.0f * rng.uniform()), total += row[j];
      for (std::size_t j = 0; j <= t; ++j) row[j] /= total;
    }
  }
  const PromptAttention attention{data.data(), H, T};
  HeadProfileOptions options;
  options.recent = 5, options.heavy = 5, options.sinks = 1;
  for (const HeadProfile& p : profile_heads(attention, G, options)) {
    CHECK(p.rows == T - 6);
    CHECK(p.local_share + p.heavy_share <= 1.0 + 1e-9);
    CHECK(p.recovered_by(HeadRule::Window) <= p.recovered_by(HeadRule::SinkWindow));
    CHECK(p.recovered_by(HeadRule::Window) <= p.recovered_by(HeadRule::HeavyWindow));
    CHECK(p.recovered_by(HeadRule::HeavyWindow) <= 1.0 + 1e-9);
    CHECK(p.sink_share <= p.heavy_share + p.local_share + 1.0);  // a share, at most 1
    CHECK(p.sink_share >= 0.0);
    CHECK(p.kind == HeadKind::Unclassified);  // r = k = 5: no kind
  }
  // At kKindSizes (the default) every head has its kind, the one classify_head gives.
  for (const HeadProfile& p : profile_heads(attention, G)) {
    CHECK(p.kind != HeadKind::Unclassified);
    CHECK(p.kind == classify_head(p));
  }
  // Heavy hitters as many as the prompt: window and heavy hitters together hold every row.
  options.heavy = T;
  for (const HeadProfile& p : profile_heads(attention, G, options)) {
    CHECK(p.recovered_by(HeadRule::HeavyWindow) == Approx(1.0));
  }
  // One KV head reading all four: the mean of the two heads' shares (the rows are averaged,
  // and every share is linear in them except which tokens are heavy).
  options.heavy = 5;
  const std::vector<HeadProfile> two = profile_heads(attention, 2, options);
  const HeadProfile one = profile_heads(attention, 1, options).at(0);
  CHECK(one.sink_share == Approx((two[0].sink_share + two[1].sink_share) / 2));
  CHECK(one.local_share == Approx((two[0].local_share + two[1].local_share) / 2));
  CHECK(one.uniform_share == Approx(two[0].uniform_share));
}

TEST_CASE("bad head profiles are refused with a clear error", "[head_profile]") {
  const std::vector<float> data(3 * 8 * 8, 0.125f);
  CHECK(h2o_test::error_of<std::invalid_argument>([&] {
          profile_heads({data.data(), 3, 8}, 2);
        }).find("3 query heads are not a multiple of 2 KV heads") != std::string::npos);
  HeadProfileOptions options;  // r = 16, s = 1: 8 tokens are too few
  CHECK(h2o_test::error_of<std::invalid_argument>([&] {
          profile_heads({data.data(), 1, 8}, 1, options);
        }).find("has no row past the window") != std::string::npos);
  options.recent = 0;
  CHECK_THROWS_AS(profile_heads({data.data(), 1, 8}, 1, options), std::invalid_argument);
  HeadProfile p;
  CHECK_THROWS_AS(cheapest_rule(p, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(cheapest_rule(p, 1.5), std::invalid_argument);
  options.recent = 4, options.heavy = 3, options.sinks = 2;
  CHECK(rule_tokens(HeadRule::Window, options, 100) == 4);
  CHECK(rule_tokens(HeadRule::SinkWindow, options, 100) == 6);
  CHECK(rule_tokens(HeadRule::HeavyWindow, options, 100) == 7);
  CHECK(rule_tokens(HeadRule::Full, options, 100) == 100);
  CHECK(rule_tokens(HeadRule::HeavyWindow, options, 5) == 5);
}

TEST_CASE("the reason a head profile gives is chosen from its shares", "[head_profile]") {
  // Hand-made profiles: the sentence names the kinds and picks its words from the mean shares.
  auto head = [](HeadKind kind, double local, double heavy) {
    HeadProfile profile;
    profile.kind = kind;
    profile.local_share = local;
    profile.heavy_share = heavy;
    return profile;
  };
  const HeadProfileOptions sizes;  // r = k = 16
  const std::string local =
      head_profile_reason({{head(HeadKind::Local, 0.8, 0.1), head(HeadKind::Local, 0.6, 0.1)},
                           {head(HeadKind::Local, 0.4, 0.2), head(HeadKind::Sink, 0.2, 0.2)}},
                          sizes);
  CHECK(local ==
        "most KV heads are local: on average a head gives its last 16 tokens 50.0% of its "
        "attention and its 16 heavy hitters outside them 15.0%, so the newest tokens count most, "
        "and a window of the same budget keeps more of them than H2O does");
  const std::string heavy =
      head_profile_reason({{head(HeadKind::Heavy, 0.2, 0.5), head(HeadKind::Heavy, 0.3, 0.4),
                            head(HeadKind::Local, 0.4, 0.3)}},
                          sizes);
  CHECK(heavy.rfind("most KV heads are heavy: on average", 0) == 0);
  CHECK(heavy.find("so old tokens kept by their score count as much as the newest") !=
        std::string::npos);
  const std::string mixed = head_profile_reason(
      {{head(HeadKind::Mixed, 0.5, 0.3), head(HeadKind::Local, 0.5, 0.3)}}, sizes);
  CHECK(mixed.rfind("the KV heads are of mixed kinds: on average", 0) == 0);
  CHECK(mixed.find("so the newest tokens count more, but the old ones") != std::string::npos);
  CHECK_THROWS_AS(head_profile_reason({}, sizes), std::invalid_argument);
}
