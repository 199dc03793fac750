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
  bool asked() const { return twice > 0 || secret > 0; }
  std::string option() const;  // "--twice 100" or "--secret 32", as typed
};

// Adds --twice N and --secret N to a program's options; `stories` says what is read ("each
// story's", "the story's").
void add_read_twice_options(ArgParser& args, const std::string& stories);

// Reads them: N a whole number from 2 on (the second reading's first piece is not counted), and
// at most one of the two (two different readings). Throws UsageError.
ReadTwiceOptions read_twice_options(const ArgParser& args);

// Each story of `stories` (texts, as the --text file holds them) built as the options ask: the
// first N tokens twice (read_twice), or story i between two copies of the secret drawn with seed
// kSecretSeed + i (plant_secret, secret_passage). Checked before any run: the two readings (and,
// with --secret, the story between them) fit in `positions` (the model's seq_len: BOS included),
// every story has N tokens for --twice, and the vocabulary N pieces for --secret; otherwise a
// one-line std::runtime_error naming the option and the story of `text_name`.
std::vector<TwoReadings> two_readings(const ReadTwiceOptions& options,
                                      const std::vector<std::string>& stories,
                                      const Tokenizer& tokenizer, std::size_t positions,
                                      const std::string& text_name);

}  // namespace h2o
