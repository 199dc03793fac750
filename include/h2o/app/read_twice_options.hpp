// read_twice_options.hpp: --twice N and --secret N, the options that read a passage twice
// (measure/second_reading.hpp), for every program that offers them (compare_policies, explore):
// the option table, the checks of N, and the texts they build, each checked before any run.
//
// Every problem with an option's value is a UsageError (exit code 2) naming it; a text the
// options cannot build (a story shorter than N, a reading beyond the model's positions) is a
// one-line std::runtime_error naming the story.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/measure/second_reading.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

struct ReadTwiceOptions {
  std::size_t twice = 0;   // --twice N: each story's first N tokens twice in a row (0: not asked)
  std::size_t secret = 0;  // --secret N: N random pieces before each story and again after it
  std::size_t secret_at = 0;  // --secret-at P: the first copy after the story's first P tokens
  bool asked() const { return twice > 0 || secret > 0; }
  std::string option() const;  // "--twice 100", "--secret 32" or "--secret 32 --secret-at 100"
  // Where the secret's first copy goes: "before each story" or "after the first 100 tokens of
  // each story", with `stories` for "each story".
  std::string placement(const std::string& stories) const;
};

// Adds --twice N, --secret N and --secret-at P to a program's options; `stories` says what is
// read ("each story's", "the story's").
void add_read_twice_options(ArgParser& args, const std::string& stories);

// Reads them: N a whole number from 2 on (the second reading's first piece is not counted), at
// most one of the two (two different readings), and --secret-at only with --secret. Throws
// UsageError.
ReadTwiceOptions read_twice_options(const ArgParser& args);

// Each story of `stories` (texts, as the --text file holds them) built as the options ask: the
// first N tokens twice (read_twice), or story i between two copies of the secret drawn with seed
// kSecretSeed + i (plant_secret, secret_passage), after the story's first secret_at tokens.
// Checked before any run: the two readings (and, with --secret, the story between them) fit in
// `positions` (the model's seq_len: BOS included), every story has N tokens for --twice and more
// than secret_at for --secret, and the vocabulary N pieces for --secret; otherwise a one-line
// std::runtime_error naming the option and the story of `text_name`.
std::vector<TwoReadings> two_readings(const ReadTwiceOptions& options,
                                      const std::vector<std::string>& stories,
                                      const Tokenizer& tokenizer, std::size_t positions,
                                      const std::string& text_name);

}  // namespace h2o
