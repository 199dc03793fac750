// second_reading.hpp: read it twice - does a cache let the model copy what it has already read?
//
// A model that has read a passage once can predict it the second time round by copying: at each
// piece of the second reading it finds the same piece in the first reading and predicts the one
// that followed it there (an "induction head": after [A][B] ... [A], predict [B]). It can only do
// that while its cache still holds the first reading. So a text is built as
//   [BOS] + first reading + (what lies between) + second reading
// and read with teacher forcing (teacher_forcing.hpp) under a cache policy at a budget, as every
// other measure here is (policy_sweep.hpp). Two ways to build it:
//   read twice  a text's first F tokens (after BOS) twice in a row: nothing between;
//   secret      F random pieces (a "secret message") before a whole story and again after it: the
//               retrieval test of the KV-cache papers (passkey retrieval in StreamingLLM, a needle
//               in a haystack), which no knowledge of the language can predict, only copying.
// The measure: the share of the second reading predicted top-1 (the most likely next token is the
// text's), beside the same share of the first reading. Each reading's first piece is left out of
// both: nothing before it says that the passage starts (again), so no copy can predict it.
//   first reading  top-1 of its pieces 2..F: what the model knows of the passage on its own;
//   second reading top-1 of its pieces 2..F: that, plus what it copies from the first reading.
// The full cache copies whatever the model can copy; a policy that evicted the first reading (a
// window shorter than the distance between the readings) cannot copy it; H2O keeps what its
// accumulated attention chose before the passage came back.
//
// Dimension legend: N = tokens of the built text (BOS first), F = tokens of one reading of the
// passage, G = tokens between the two readings, S = N - 1 predictions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

// A passage written twice in a token sequence.
struct TwoReadings {
  std::vector<int> tokens;  // (N,) BOS, the passage, what lies between, the passage again
  std::size_t passage = 0;  // F: tokens of the passage
  std::size_t first = 1;    // position of the first reading's first token (1: right after BOS)
  std::size_t second = 0;   // position of the second reading's first token: 1 + F + G
  // How far back the second reading's source lies: a window holds the token to copy at every
  // piece of the second reading only while it keeps at least this many tokens.
  std::size_t distance() const { return second - first; }
  std::size_t predictions() const { return passage - 1; }  // per reading: its pieces 2..F
};

// The first `n` tokens of `story` (token ids, BOS first; the n tokens after BOS) twice in a row:
// [BOS] + story[1..n] + story[1..n], N = 2n + 1. Throws std::invalid_argument when n < 2 (the
// second reading would predict nothing) or the story has fewer than n tokens after BOS.
TwoReadings read_twice(const std::vector<int>& story, std::size_t n);

// `passage` after the first `at` tokens of `story` (BOS first; at 0: right after BOS) and again
// after the whole story: [BOS] + story[1..at] + passage + story[at+1..] + passage,
// N = 2F + story.size(), the first reading at position 1 + at. Right after BOS the secret sits
// where the attention sinks are (cache/sink positions), which every heavy-hitter policy keeps;
// further in, it has to earn its place. Throws std::invalid_argument when the passage has fewer
// than 2 tokens, the story is empty or does not start with BOS, or has fewer than `at` tokens
// after BOS.
TwoReadings plant_secret(const std::vector<int>& story, const std::vector<int>& passage,
                         std::size_t at = 0);

// The pieces a secret is drawn from: every id of the vocabulary but <unk>, BOS, EOS and the byte
// tokens (ids 3..258, byte fallback: stray bytes, half a character), and pieces that are empty or
// hold a line break (a passage of such pieces would not print as one line). Ascending.
std::vector<int> secret_pieces(const Tokenizer& tokenizer);

// The seed of story i's secret is kSecretSeed + i: every story its own passage, the same on every
// run.
constexpr std::uint64_t kSecretSeed = 55;

// `n` distinct pieces of `pieces`, drawn in random order with Rng(seed) (the first n of a
// Fisher-Yates shuffle): the same passage for the same seed, on every platform. Distinct, so that
// every piece of the passage has one successor to copy. Throws std::invalid_argument when n
// exceeds pieces.size() (the message names both).
std::vector<int> secret_passage(const std::vector<int>& pieces, std::size_t n, std::uint64_t seed);

// What one teacher-forced reading predicted of the two readings, top-1.
struct ReadingHits {
  std::vector<double> first, second;  // (F - 1,) 1 where the piece was predicted top-1, else 0
  std::size_t first_correct() const;
  std::size_t second_correct() const;
};
// top1 (S,): the reading's most likely next token per step (TeacherForcedRun::top1). Step t
// predicts text.tokens[t + 1]. Throws std::invalid_argument when top1 has not S entries.
ReadingHits reading_hits(const TwoReadings& text, const std::vector<int>& top1);

// One policy at one budget over every text (story) read twice.
struct SecondReading {
  std::string label, policy;    // as the run's (SweepRun)
  int percent = 0;              // its budget, in percent of each text's tokens (0: the full cache)
  std::size_t tokens = 0;       // that budget in the first text, per layer and KV head (0: full)
  std::size_t kept = 0;         // tokens layer 0 holds per KV head at the first text's end
  std::string refused;          // the factory's refusal of the budget ("" = it ran)
  std::size_t texts = 0;        // texts read (each its own unit of the bootstrap from 8 on)
  std::size_t predictions = 0;  // per reading, over all texts
  std::size_t first_correct = 0, second_correct = 0;
  // The share of each reading predicted top-1 with its 95% interval: verdict.hpp's bootstrap over
  // its units (the texts, or blocks of kBootstrapBlock predictions of fewer texts).
  BootstrapMean first, second;
};

// The second-reading measure of `run` (a sweep over the tokens of `texts`, in order).
// Throws std::invalid_argument when the run read other texts.
SecondReading second_reading(const SweepRun& run, const std::vector<TwoReadings>& texts);

// Whether a run copies: its second reading's share - the low end of its 95% interval where it has
// one, so that the gain is no noise - lies at least kCopyMargin (10 points) above its first
// reading's share.
constexpr double kCopyMargin = 0.10;
bool copies(const SecondReading& reading);

}  // namespace h2o
