// test_second_reading.cpp: read it twice (measure/second_reading.hpp) and its words
// (report/second_reading_report.hpp): the two ways a text is built, worked by hand; which
// predictions each reading counts; a secret passage drawn the same for a seed; on a tiny random
// model, the measure counts what teacher forcing predicts, and every policy with a budget of the
// whole text equals the full cache (seeded random cases); what the sentences say when the full
// cache copies and when it does not. The bootstrap they share: test_verdict.cpp.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/measure/second_reading.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/second_reading_report.hpp"
#include "h2o/text/sampler.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_catch::Contains;

namespace {
constexpr int kTwiceBos = Tokenizer::kBos;

// BOS, then n seeded random ids from 3 up (no BOS or EOS inside the story).
std::vector<int> bos_and_random_ids(std::size_t n, std::size_t vocab, std::uint64_t seed) {
  std::vector<int> story = {kTwiceBos};
  for (int t : h2o_test::random_tokens(n, vocab - 3, seed)) story.push_back(t + 3);
  return story;
}
}  // namespace

TEST_CASE("read twice: the first n tokens after BOS twice in a row", "[second_reading]") {
  const TwoReadings text = read_twice({kTwiceBos, 10, 11, 12, 13}, 3);
  CHECK(text.tokens == std::vector<int>{kTwiceBos, 10, 11, 12, 10, 11, 12});
  CHECK(text.passage == 3);
  CHECK(text.first == 1);
  CHECK(text.second == 4);
  CHECK(text.distance() == 3);
  CHECK(text.predictions() == 2);
  // The whole text may be read twice; one token more than it has may not, nor fewer than 2.
  CHECK(read_twice({kTwiceBos, 10, 11}, 2).tokens == std::vector<int>{kTwiceBos, 10, 11, 10, 11});
  CHECK_THROWS_WITH(read_twice({kTwiceBos, 10, 11}, 3),
                    Contains("2 tokens after BOS, fewer than the 3"));
  CHECK_THROWS_WITH(read_twice({kTwiceBos, 10, 11}, 1), Contains("at least 2 tokens, got 1"));
}

TEST_CASE("a secret: the passage before the whole story and again after it", "[second_reading]") {
  const TwoReadings text = plant_secret({kTwiceBos, 20, 21, 22}, {30, 31});
  CHECK(text.tokens == std::vector<int>{kTwiceBos, 30, 31, 20, 21, 22, 30, 31});
  CHECK(text.passage == 2);
  CHECK(text.second == 6);
  CHECK(text.distance() == 5);
  CHECK(text.predictions() == 1);
  CHECK_THROWS_WITH(plant_secret({kTwiceBos, 20}, {30}), Contains("at least 2 tokens, got 1"));
  CHECK_THROWS_WITH(plant_secret({20, 21}, {30, 31}), Contains("must start with BOS"));
}

TEST_CASE("a secret planted further in: after the story's first P tokens", "[second_reading]") {
  const std::vector<int> story = {kTwiceBos, 20, 21, 22};
  const TwoReadings text = plant_secret(story, {30, 31}, 2);
  CHECK(text.tokens == std::vector<int>{kTwiceBos, 20, 21, 30, 31, 22, 30, 31});
  CHECK(text.first == 3);
  CHECK(text.second == 6);
  CHECK(text.distance() == 3);
  // At 0 it is the secret before the story; at the story's length, right after it.
  CHECK(plant_secret(story, {30, 31}, 0).tokens == plant_secret(story, {30, 31}).tokens);
  CHECK(plant_secret(story, {30, 31}, 3).tokens ==
        std::vector<int>{kTwiceBos, 20, 21, 22, 30, 31, 30, 31});
  CHECK_THROWS_WITH(plant_secret(story, {30, 31}, 4),
                    Contains("3 tokens after BOS, fewer than the 4 to plant the secret after"));
  // Any story, any place: the text is the story with the passage inserted, and read back the
  // readings are the passage.
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> s = {kTwiceBos};
    const std::size_t length = 1 + rng.below(40), pieces = 2 + rng.below(10);
    for (std::size_t k = 0; k < length; ++k) s.push_back(3 + static_cast<int>(rng.below(50)));
    std::vector<int> passage;
    for (std::size_t k = 0; k < pieces; ++k) passage.push_back(100 + static_cast<int>(k));
    const std::size_t at = rng.below(length + 1);
    const TwoReadings t = plant_secret(s, passage, at);
    INFO("trial " << trial);
    REQUIRE(t.tokens.size() == s.size() + 2 * pieces);
    CHECK(std::vector<int>(t.tokens.begin() + static_cast<long>(t.first),
                           t.tokens.begin() + static_cast<long>(t.first + pieces)) == passage);
    CHECK(std::vector<int>(t.tokens.begin() + static_cast<long>(t.second), t.tokens.end()) ==
          passage);
    std::vector<int> without(t.tokens.begin(), t.tokens.begin() + static_cast<long>(t.first));
    without.insert(without.end(), t.tokens.begin() + static_cast<long>(t.first + pieces),
                   t.tokens.begin() + static_cast<long>(t.second));
    CHECK(without == s);
    CHECK(t.first == 1 + at);
  }
}

TEST_CASE("each reading counts its pieces 2..F, predicted from the piece before",
          "[second_reading]") {
  // BOS 10 11 12 | 10 11 12: step t predicts token t + 1.
  const TwoReadings text = read_twice({kTwiceBos, 10, 11, 12}, 3);
  // step:                 0   1   2   3   4   5
  const std::vector<int> top1 = {10, 11, 99, 77, 11, 12};
  // Step 0 guesses the first reading's first piece and step 3 the second's: neither counted.
  // First reading: step 1 (11 = 11) right, step 2 (99, not 12) wrong; second: steps 4, 5 right.
  const ReadingHits hits = reading_hits(text, top1);
  CHECK(hits.first == std::vector<double>{1, 0});
  CHECK(hits.second == std::vector<double>{1, 1});
  CHECK(hits.first_correct() == 1);
  CHECK(hits.second_correct() == 2);
  CHECK_THROWS_WITH(reading_hits(text, {10, 11}), Contains("2 predictions for a text of 7"));
}

TEST_CASE("a secret's pieces leave out the special, byte and line-break pieces",
          "[second_reading]") {
  std::vector<std::string> pieces = Tokenizer::base_pieces();                     // ids 0..258
  for (const char* piece : {" the", "c\n", "ab", "\r"}) pieces.push_back(piece);  // 259..262
  const Tokenizer tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
  CHECK(secret_pieces(tokenizer) == std::vector<int>{259, 261});
}

TEST_CASE("a secret passage: distinct pieces, the same for a seed", "[second_reading]") {
  std::vector<int> pieces;
  for (int id = 300; id < 340; ++id) pieces.push_back(id);
  Rng rng(17);
  for (int round = 0; round < 20; ++round) {
    const std::size_t n = 1 + rng.below(40);
    const std::uint64_t seed = rng.next_u32();
    const std::vector<int> passage = secret_passage(pieces, n, seed);
    REQUIRE(passage.size() == n);
    CHECK(std::set<int>(passage.begin(), passage.end()).size() == n);  // distinct
    for (int id : passage) CHECK(std::count(pieces.begin(), pieces.end(), id) == 1);
    CHECK(secret_passage(pieces, n, seed) == passage);  // the same seed: the same passage
  }
  // Another seed: another passage (for a passage of 8 of 40 pieces, all but surely).
  CHECK(secret_passage(pieces, 8, kSecretSeed) != secret_passage(pieces, 8, kSecretSeed + 1));
  // All of them: a permutation; one more: refused.
  std::vector<int> all = secret_passage(pieces, 40, 3);
  std::sort(all.begin(), all.end());
  CHECK(all == pieces);
  CHECK_THROWS_WITH(secret_passage(pieces, 41, 3),
                    Contains("41 distinct pieces, but the vocabulary has only 40"));
}

TEST_CASE("on a random model the measure counts what teacher forcing predicts",
          "[second_reading]") {
  const auto weights = h2o_test::random_model(96, 11);
  const std::size_t V = weights->config.vocab_size;
  // Story 1 is the model's own greedy text: read with the full cache, its first reading is
  // predicted top-1 at every piece (teacher forcing reads it as greedy decoding wrote it).
  std::vector<int> greedy = {kTwiceBos};
  {
    Decoder decoder(weights, make_policy("full", {}), 31);
    while (greedy.size() < 31) {
      greedy.push_back(sample_argmax(decoder.forward(greedy.back()).data(), V));
    }
  }
  const std::vector<TwoReadings> texts = {
      read_twice(greedy, 20), plant_secret(bos_and_random_ids(12, V, 2), {300, 301, 302})};
  SweepText sweep_text;
  for (const TwoReadings& text : texts) {
    sweep_text.stories.push_back(text.tokens);
    sweep_text.bytes.push_back(text.tokens.size());
  }
  const SweepRun full = read_full_cache(weights, sweep_text);
  const SecondReading reading = second_reading(full, texts);
  std::size_t first = 0, second = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    Decoder decoder(weights, make_policy("full", {}), texts[i].tokens.size());
    const TeacherForcedRun run = read_with_teacher_forcing(decoder, texts[i].tokens);
    const TwoReadings& text = texts[i];
    for (std::size_t k = 1; k < text.passage; ++k) {
      first += run.top1[text.first + k - 1] == text.tokens[text.first + k] ? 1 : 0;
      second += run.top1[text.second + k - 1] == text.tokens[text.second + k] ? 1 : 0;
    }
  }
  CHECK(reading.predictions == 19 + 2);
  CHECK(reading.texts == 2);
  CHECK(reading.first_correct == first);
  CHECK(reading.first_correct >= 19);  // every piece of the greedy text's first reading
  CHECK(reading.second_correct == second);
  CHECK(reading.second.mean == Approx(static_cast<double>(second) / 21.0));
  CHECK(reading.first.mean == Approx(static_cast<double>(first) / 21.0));
  CHECK(reading.label == "full");
  CHECK_THROWS_WITH(second_reading(full, {texts[0]}), Contains("read 2 texts, not 1"));
}

TEST_CASE("every policy with a budget of the whole text reads both readings as the full cache",
          "[second_reading]") {
  Rng rng(5);
  for (int round = 0; round < 3; ++round) {
    const auto weights = h2o_test::random_model(128, 20 + round);
    const std::size_t V = weights->config.vocab_size;
    std::vector<TwoReadings> texts;
    SweepText sweep_text;
    for (int story = 0; story < 2; ++story) {
      const std::size_t n = 2 + rng.below(20);
      const std::uint64_t seed = rng.next_u32();
      texts.push_back(
          rng.below(2) == 0
              ? read_twice(bos_and_random_ids(n + rng.below(10), V, seed), n)
              : plant_secret(bos_and_random_ids(1 + rng.below(30), V, seed),
                             secret_passage({300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310,
                                             311, 312, 313, 314, 315, 316, 317, 318, 319, 320, 321},
                                            n, seed)));
      sweep_text.stories.push_back(texts.back().tokens);
      sweep_text.bytes.push_back(texts.back().tokens.size());
    }
    const PolicySweep sweep = sweep_policies(weights, sweep_text, evicting_policies(), {100});
    const SecondReading full = second_reading(sweep.full, texts);
    for (const std::vector<SweepRun>& by_budget : sweep.runs) {
      const SecondReading run = second_reading(by_budget.front(), texts);
      INFO("round " << round << ", " << run.label);
      CHECK(run.refused.empty());
      CHECK(run.predictions == full.predictions);
      CHECK(run.first_correct == full.first_correct);
      CHECK(run.second_correct == full.second_correct);
      CHECK(run.second.mean == full.second.mean);
      CHECK(run.second.low == full.second.low);
      CHECK(run.second.high == full.second.high);
    }
  }
}

namespace {
// A reading with these shares over `predictions` (the interval as given).
SecondReading reading_with_shares(const std::string& policy, double first, double second,
                                  double low, double high, std::size_t kept = 0) {
  SecondReading reading;
  reading.label = reading.policy = policy;
  reading.kept = kept;
  reading.texts = 1;
  reading.predictions = 100;
  reading.first.mean = first;
  reading.second = {second, low, high, 4, 100};
  return reading;
}

// A wrapped sentence on one line again: each line break and the indent after it become a space.
std::string unwrapped(const std::string& text) {
  std::string flat;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      flat += text[i];
      continue;
    }
    flat += ' ';
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
  }
  return flat;
}

SecondReadingResults twice_results(const SecondReading& full, double window, double subject) {
  SecondReadingResults results;
  results.full = full;
  results.percents = {10, 50};
  results.budget_tokens = {20, 100};
  results.text_tokens = 201;
  results.distance = 100;
  const std::string& h2o = subject_policy().name;
  const std::string& win = baseline_policy().name;
  results.runs = {{reading_with_shares(h2o, 0.1, subject, subject, subject, 20),
                   reading_with_shares(h2o, 0.1, subject, subject, subject, 100)},
                  {reading_with_shares(win, 0.1, window, window, window, 20),
                   reading_with_shares(win, 0.1, 0.97, 0.97, 0.97, 100)}};
  return results;
}
}  // namespace

TEST_CASE("a run copies when its second reading gains 10 points beyond noise", "[second_reading]") {
  CHECK(copies(reading_with_shares("full", 0.10, 0.95, 0.90, 0.99)));
  // The low end of the interval exactly 10 points above the first reading: copies; a hair below
  // (the gain may be noise), or no gain at all: does not.
  CHECK(copies(reading_with_shares("full", 0.10, 0.25, 0.20, 0.30)));
  CHECK_FALSE(copies(reading_with_shares("full", 0.10, 0.25, 0.19, 0.30)));
  CHECK_FALSE(copies(reading_with_shares("full", 0.133, 0.138, 0.10, 0.18)));
  SecondReading refused = reading_with_shares("h2o", 0.1, 0.9, 0.9, 0.9);
  refused.refused = "too small";
  CHECK_FALSE(copies(refused));
}

TEST_CASE("the sentences: the full cache that does not copy leaves nothing to keep",
          "[second_reading]") {
  const SecondReadingResults results =
      twice_results(reading_with_shares("full", 0.133, 0.138, 0.10, 0.18), 0.13, 0.13);
  const std::vector<std::string> lines = second_reading_findings(results);
  REQUIRE(lines.size() == 1);
  CHECK(unwrapped(lines[0]) ==
        "The full cache predicts 13.8% of the second reading, against 13.3% of the first: not 10 "
        "points more beyond noise, so this model does not copy what it has read. No policy then "
        "has anything to keep: the rows say nothing of what a cache is for.");
  for (const std::string& part : h2o_test::lines_of(lines[0])) CHECK(part.size() <= 100);
}

TEST_CASE("the sentences: where the full cache copies, what the window and H2O keep of it",
          "[second_reading]") {
  const SecondReadingResults results =
      twice_results(reading_with_shares("full", 0.12, 0.98, 0.96, 0.99), 0.05, 0.40);
  const std::vector<std::string> lines = second_reading_findings(results);
  REQUIRE(lines.size() == 3);  // the full cache, then one line per budget
  CHECK(unwrapped(lines[0]) ==
        "The full cache copies what it has read: it predicts 98.0% of the second reading, "
        "against 12.0% of the first.");
  // At 20 tokens the window no longer reaches the first reading, 100 back, and does not copy.
  CHECK(unwrapped(lines[1]) ==
        "At 20 tokens (10%): the window, whose last 20 tokens no longer reach back to the first "
        "reading (100 back), predicts 5.0% (it does not copy); and H2O, which chose what to keep "
        "before the passage came back, predicts 40.0% (58.0 points below the full cache).");
  // At 100 tokens it reaches the first reading and copies; H2O loses as much.
  CHECK(unwrapped(lines[2]) ==
        "At 100 tokens (50%): the window, whose last 100 tokens still reach back to the first "
        "reading (100 back), predicts 97.0% (it copies); and H2O, which chose what to keep before "
        "the passage came back, predicts 40.0% (58.0 points below the full cache).");
  for (const std::string& line : lines) {
    for (const std::string& part : h2o_test::lines_of(line)) CHECK(part.size() <= 100);
  }
}

TEST_CASE("the table: per budget the most copied first, each against the full cache",
          "[second_reading]") {
  const SecondReadingResults results =
      twice_results(reading_with_shares("full", 0.12, 0.98, 0.96, 0.99, 200), 0.05, 0.40);
  const std::vector<std::string> lines = h2o_test::lines_of(second_reading_table(results));
  REQUIRE(lines.size() == 6);
  CHECK(lines[0] == "  budget     policy  kept  1st reading  2nd reading  95% interval    vs full");
  CHECK(lines[1] == "  reference  full     200        12.0%        98.0%  96.0% to 99.0%");
  CHECK(lines[2] == "  10% = 20   h2o       20        10.0%        40.0%  40.0% to 40.0%    -58.0");
  CHECK(lines[3] == "             window    20        10.0%         5.0%  5.0% to 5.0%      -93.0");
  CHECK(lines[4] == "  50% = 100  window   100        10.0%        97.0%  97.0% to 97.0%     -1.0");
  CHECK(lines[5] == "             h2o      100        10.0%        40.0%  40.0% to 40.0%    -58.0");
}

TEST_CASE("the table: a policy holding what its rules keep comes after the budget's, marked",
          "[second_reading]") {
  // FastGen held 150 tokens at a budget of 20 and predicts the most: not the budget's best.
  SecondReadingResults results =
      twice_results(reading_with_shares("full", 0.12, 0.98, 0.96, 0.99, 200), 0.05, 0.40);
  results.runs.push_back({reading_with_shares("fastgen", 0.1, 0.90, 0.90, 0.90, 150),
                          reading_with_shares("fastgen", 0.1, 0.99, 0.99, 0.99, 200)});
  const std::vector<std::string> lines = h2o_test::lines_of(second_reading_table(results));
  REQUIRE(lines.size() == 8);
  CHECK(lines[2] ==
        "  10% = 20   h2o        20        10.0%        40.0%  40.0% to 40.0%    -58.0");
  CHECK(lines[4] ==
        "             fastgen   150        10.0%        90.0%  90.0% to 90.0%     -8.0  by rule");
  CHECK(lines[7] ==
        "             fastgen   200        10.0%        99.0%  99.0% to 99.0%     +1.0  by rule");
  // Nor is it named the most in the sentences.
  for (const std::string& line : second_reading_findings(results)) {
    CHECK_THAT(line, !Contains("fastgen"));
  }
}
