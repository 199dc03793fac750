// test_policy_sweep.cpp: the sweep lesson 11 and compare_policies share (measure/policy_sweep.hpp)
// adds up what teacher forcing measures story by story, treats 100% as the full cache, keeps the
// reference the others compare with, and its context gain is 1 where a window holds everything;
// a policy's KV format quantises its own runs only; the score variants follow their policies.
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "h2o/base/format.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/cache/window_bytes.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/report/sweep_report.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_catch::Contains;

namespace {
SweepText two_stories(const DecoderWeights& weights) {
  SweepText text;
  text.stories = {h2o_test::random_tokens(40, weights.config.vocab_size, 6),
                  h2o_test::random_tokens(25, weights.config.vocab_size, 7)};
  text.bytes = {100, 60};
  return text;
}
}  // namespace

TEST_CASE("the sweep's measures add up teacher forcing over every story", "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  const PolicySweep sweep =
      sweep_policies(weights, text, {{"H2O", "h2o", {}}, {"window", "window", {}}}, {10, 100});
  double nll = 0.0;
  for (std::size_t i = 0; i < text.stories.size(); ++i) {
    Decoder decoder(weights, policy_of<FullCachePolicy>(), text.stories[i].size());
    const TeacherForcedRun run = read_with_teacher_forcing(decoder, text.stories[i]);
    nll += run.mean_nll() * static_cast<double>(run.steps());
    CHECK(sweep.full.readings[i].token_nll.size() == run.steps());
  }
  CHECK(sweep.full.steps == 39 + 24);
  CHECK(sweep.full.bytes == 160);
  CHECK(sweep.full.perplexity() == Approx(std::exp(nll / 63)).epsilon(1e-6));
  CHECK(sweep.full.bits_per_byte() == Approx(nll / std::log(2.0) / 160).epsilon(1e-6));
  CHECK(sweep.full.agreement() == 1.0);
  CHECK(sweep.full.tokens == 0);
  CHECK(sweep.full.kept == 39);  // the first story: every token it read

  // 100% evicts nothing: the full cache's numbers exactly. 10% of 40 tokens: 4 kept.
  const SweepRun& whole = *sweep.find("H2O", 1);
  CHECK(whole.evicted == 0);
  CHECK(whole.perplexity() == sweep.full.perplexity());
  CHECK(whole.agreement() == 1.0);
  const SweepRun& small = sweep.of("window")[0];
  CHECK(small.tokens == 4);
  CHECK(small.kept == 4);
  CHECK(small.kept_at_end.size() == weights->config.n_layers);
  CHECK(small.kept_at_end[0] == std::vector<Position>{35, 36, 37, 38});  // the last 4 read
  CHECK(small.readings.size() == 2);
  CHECK(small.perplexity() > 0.0);
  CHECK(sweep.find("nothing", 0) == nullptr);
  CHECK_THROWS_WITH(sweep.of("nothing"), Contains("no policy labelled 'nothing'"));

  // The same run against itself: a change of exactly 0, "no difference within noise".
  const PerplexityDifference same = difference(small, small);
  CHECK(same.change == 0.0);
  CHECK(verdict_of(same) == Verdict::WithinNoise);
}

TEST_CASE("each story's steps can be observed, or only some stories'", "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  REQUIRE(text.stories[0].size() != text.stories[1].size());
  std::vector<std::size_t> asked;
  std::vector<std::size_t> steps(text.stories.size(), 0);  // (stories,) layer 0's steps seen
  SweepOptions options;
  options.story_observer = [&](const SweepRun& run, std::size_t story) {
    asked.push_back(story);
    CHECK(run.label == "window");
    return Decoder::StepObserver([&steps, story](std::size_t layer, const LayerKVCache&) {
      if (layer == 0) ++steps[story];
    });
  };
  const SweepRun full = read_full_cache(weights, text);
  read_stories(weights, text, {"window", "window", {}}, {50, 0}, &full, options);
  CHECK(asked == std::vector<std::size_t>{0, 1});  // once per story, in order
  for (std::size_t i = 0; i < text.stories.size(); ++i) {
    CHECK(steps[i] + 1 == text.stories[i].size());  // every step of story i, read once
  }
  // An empty observer for a story: none of its steps is seen.
  std::fill(steps.begin(), steps.end(), 0);
  options.story_observer = [&](const SweepRun&, std::size_t story) {
    if (story == 0) return Decoder::StepObserver();
    return Decoder::StepObserver([&steps, story](std::size_t layer, const LayerKVCache&) {
      if (layer == 0) ++steps[story];
    });
  };
  read_stories(weights, text, {"window", "window", {}}, {50, 0}, &full, options);
  CHECK(steps[0] == 0);
  CHECK(steps[1] + 1 == text.stories[1].size());
}

TEST_CASE("context gain: 1 when the window holds every token, above 0 always", "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  const SweepRun full = read_full_cache(weights, text);
  CHECK(context_gain(weights, text, full, 64) == Approx(1.0).epsilon(1e-12));
  CHECK(context_gain(weights, text, full, 4) > 0.0);
  CHECK_THAT(context_gain_sentence(1.1104), Contains("context gain 1.110, the perplexity with only "
                                                     "the last 64 tokens over the full cache's"));
}

TEST_CASE("every measure has its own name and column, the CSV one row per run",
          "[policy_sweep]") {
  std::set<std::string> names, columns;
  for (const SweepMeasure& measure : sweep_measures()) {
    CHECK(names.insert(measure.name).second);
    CHECK(columns.insert(measure.csv_column).second);
    CHECK(measure.value != nullptr);
  }
  const auto weights = h2o_test::random_model(64, 5);
  const PolicySweep sweep =
      sweep_policies(weights, two_stories(*weights), {{"window", "window", {}}}, {10, 50});
  const std::string csv = sweep_csv(sweep, 64);
  CHECK(csv.rfind("policy,budget_percent,budget_tokens,perplexity,bits_per_byte,kl_nats,"
                  "top1_agreement,name_recall,name_gap\n",
                  0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
  CHECK_THAT(csv, Contains("window,10,4,"));
  CHECK(sweep_charts(sweep, "dir", "cmd", "about").size() == 4);
}

TEST_CASE("a sweep policy's KV format: its own runs quantised, the reference in float32",
          "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  const KvFormat four_bits{4, 8};
  const PolicySweep sweep = sweep_policies(
      weights, text, {{"window", "window", {}}, {"window 4-bit", "window", {}, four_bits}}, {50});
  const SweepRun &fp32 = sweep.of("window")[0], &quantised = sweep.of("window 4-bit")[0];
  // Each story read alone in that format: the bytes it holds at its end, summed.
  std::size_t full_bytes = 0, quantised_bytes = 0;
  for (const std::vector<int>& story : text.stories) {
    Decoder full(weights, policy_of<FullCachePolicy>(), story.size());
    read_with_teacher_forcing(full, story);
    full_bytes += full.live_kv_bytes();
    Decoder window(
        weights,
        make_policy("window", settings_for_budget("window", tokens_for_percent(story.size(), 50))),
        story.size(), four_bits);
    read_with_teacher_forcing(window, story);
    quantised_bytes += window.live_kv_bytes();
  }
  CHECK(sweep.full.stories_kv_bytes == full_bytes);
  CHECK(quantised.stories_kv_bytes == quantised_bytes);
  CHECK(quantised.kept == fp32.kept);
  CHECK(quantised.live_kv_bytes < fp32.live_kv_bytes);
  CHECK(fp32.stories_kv_bytes < sweep.full.stories_kv_bytes);
  CHECK(quantised.perplexity() != fp32.perplexity());  // 4 bits change what attention reads
}

TEST_CASE("the score variants sit after their policy, each with its own label and description",
          "[policy_sweep]") {
  const std::vector<SweepPolicy> variants = score_variants();
  const std::vector<SweepPolicy> contenders = with_variants(evicting_policies(), variants);
  std::vector<std::string> labels;
  for (const SweepPolicy& p : contenders) labels.push_back(p.label);
  // Each variant right after its paper's policy (or the variants before it), in the listed order.
  CHECK(std::vector<std::string>(labels.begin(), labels.begin() + 5) ==
        std::vector<std::string>{"h2o", "h2o-norm", "h2o-decay", "h2o+start4", "h2o-heavy10"});
  CHECK(std::set<std::string>(labels.begin(), labels.end()).size() == labels.size());
  CHECK(contenders.size() == evicting_policies().size() + variants.size());
  // What each variant changes shows in the policy it makes at a budget of 10 tokens.
  auto described = [](const SweepPolicy& p) {
    return make_policy(p.policy, settings_for_budget(p.policy, 10, p.settings))->describe();
  };
  CHECK_THAT(described(variants[0]), Contains("normalised by steps in the cache"));
  CHECK_THAT(described(variants[1]), Contains("decayed by 0.980 per step"));
  CHECK_THAT(described(variants[2]), Contains("the first 4 of the heavy slots protected"));
  CHECK_THAT(described(variants[3]), Contains("heavy 1 + recent 9"));
  CHECK_THAT(described(variants[4]), Contains("per-head"));
}

TEST_CASE("equal bytes: each story's held tokens per layer and KV head, rounded, at least 2",
          "[policy_sweep]") {
  SweepRun run;
  run.label = "fastgen";
  run.slots_per_token = 4;
  run.story_held = {40, 18, 17, 3};
  CHECK(equal_bytes_tokens(run) == std::vector<std::size_t>{10, 5, 4, 2});
  run.story_held.clear();
  CHECK_THROWS_WITH(equal_bytes_tokens(run), Contains("'fastgen' read no story"));
}

TEST_CASE("a window at FastGen's bytes: story by story FastGen's tokens, after the same prompt "
          "read with every token kept",
          "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  const SweepRun full = read_full_cache(weights, text);
  const SweepRun fastgen = read_stories(weights, text, {"fastgen", "fastgen"}, {20, 0}, &full);
  REQUIRE(fastgen.refused.empty());
  const SweepRun window =
      read_at_equal_bytes(weights, text, {"window", "window"}, fastgen, &full);
  REQUIRE(window.refused.empty());
  CHECK(window.label == "window at fastgen's bytes");
  const std::vector<std::size_t> tokens = equal_bytes_tokens(fastgen);
  for (std::size_t i = 0; i < text.stories.size(); ++i) {
    const std::size_t n = text.stories[i].size();
    // FastGen's prompt is its profile: twice the budget it was given.
    const std::size_t budget = tokens_for_percent(n, 20);
    CHECK(fastgen.story_prompt[i] ==
          make_policy("fastgen", settings_for_budget("fastgen", budget))->prompt_tokens());
    CHECK(window.story_prompt[i] == fastgen.story_prompt[i]);
    CHECK(window.story_held[i] == std::min(tokens[i], n) * window.slots_per_token);
    // While the prompt is read both keep every token: their predictions are the full cache's
    // (FastGen's bit for bit; the window's prompt is read as one batch, whose sums round in
    // another order than token by token: to about 1e-6 of the value).
    for (std::size_t t = 0; t < fastgen.story_prompt[i]; ++t) {
      CHECK(window.readings[i].token_nll[t] ==
            Approx(full.readings[i].token_nll[t]).epsilon(1e-5));
      CHECK(fastgen.readings[i].token_nll[t] == full.readings[i].token_nll[t]);
    }
  }
  // Without a prompt of its own, a policy's runs record none.
  const SweepRun h2o = read_stories(weights, text, {"h2o", "h2o"}, {20, 0}, &full);
  CHECK(h2o.story_prompt == std::vector<std::size_t>{0, 0});
}

TEST_CASE("quantised, a window at H2O's bytes holds the bytes H2O held, to a token's",
          "[policy_sweep]") {
  const auto weights = h2o_test::random_model(64, 5);
  const SweepText text = two_stories(*weights);
  const KvFormat four_bits{4, 8};
  const SweepRun full = read_full_cache(weights, text);
  const SweepRun h2o = read_stories(weights, text, {"h2o", "h2o", {}, four_bits}, {25, 0}, &full);
  const SweepRun window =
      read_at_equal_bytes(weights, text, {"window", "window", {}, four_bits}, h2o, &full);
  const ModelConfig& c = weights->config;
  for (std::size_t i = 0; i < text.stories.size(); ++i) {
    const std::size_t n = text.stories[i].size();
    // H2O's scattered tokens pay for their key groups' scales, the window's newest for their
    // float32 residual: the same tokens are not the same bytes, so the window's tokens are counted.
    const std::size_t per_head = window.story_held[i] / window.slots_per_token;
    // Within one token's bytes of what H2O held (the nearest window).
    const auto bytes = [&](std::size_t tokens) {
      return c.n_layers *
             window_layer_kv_bytes(c.n_kv_heads, c.head_dim(), four_bits, n - 1, tokens);
    };
    const std::size_t one_more =
        std::max(bytes(per_head + 1) - bytes(per_head), bytes(per_head) - bytes(per_head - 1));
    const std::size_t gap = window.story_kv_bytes[i] > h2o.story_kv_bytes[i]
                                ? window.story_kv_bytes[i] - h2o.story_kv_bytes[i]
                                : h2o.story_kv_bytes[i] - window.story_kv_bytes[i];
    CHECK(gap <= one_more);
  }
  CHECK_THROWS_WITH(
      read_at_equal_bytes(weights, text, {"sinks", "sinks", {}, four_bits}, h2o, &full),
      "read_at_equal_bytes: quantised, only the window can be given another's bytes, not "
      "'sinks'");
}

TEST_CASE("the smallest-budget list says why a policy needs every budget and fits 100 columns",
          "[policy_sweep]") {
  // A hand-made sweep: the full cache at perplexity e, one policy whose perplexity at the largest
  // evicting budget (10%) is e^k, so its excess over the full cache is e^(k-1) - 1.
  const auto run = [](const std::string& label, int percent, double nll_per_step) {
    SweepRun r;
    r.label = label;
    r.budget.percent = percent;
    r.steps = 10;
    r.nll = nll_per_step * 10;
    return r;
  };
  PolicySweep sweep;
  sweep.full = run("full", 100, 1.0);
  sweep.percents = {5, 10};
  for (double k : {1.3, 2.0, 30.0}) {  // 35.0%, 171.8% and an excess of 16 digits
    sweep.runs = {{run("tova-per-head", 5, k + 0.1), run("tova-per-head", 10, k)}};
    const std::string lines = smallest_budget_lines(sweep, 0.05);
    const std::string excess = fixed(100 * (std::exp(k - 1.0) - 1), 1) + "%";
    CHECK_THAT(lines, Contains("tova-per-head none of these"));
    CHECK_THAT(lines, Contains("why: what it evicts is needed later; at 10% still"));
    CHECK_THAT(lines, Contains(excess));
    for (const std::string& line : h2o_test::lines_of(lines)) CHECK(line.size() <= 100);
  }
}
