// unseen_stories.hpp: the full cache alone on stories in voices the model never saw (lesson 09's
// --unseen, by default data/unseen_stories.txt: written by hand in many styles, never trained
// on). Does the model copy a name from far back on text unlike its training, or only on stories
// like the one a lesson compares policies on? The options that name the stories and their
// names, and one reading of them.
//
// Dimension legend: K = stories of the file, N_i = tokens of story i (BOS first).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "h2o/app/cli.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

struct UnseenReading {
  std::string file;         // the file's name, without its folder
  std::size_t stories = 0;  // K, the stories it holds
  std::size_t tokens = 0;   // their tokens, BOS included, after any cut
  std::size_t cut = 0;      // stories cut to the model's positions (seq_len tokens)
  std::size_t seq_len = 0;  // the model's positions, the cut's length
  SweepRun full;            // the full cache over all of them
};

// --unseen PATH (default data/unseen_stories.txt; "none" skips the reading) and
// --unseen-names PATH (their names; default data/unseen_names.txt for the default stories, the
// names the stories show for a file the user names).
ArgParser& add_unseen_options(ArgParser& args);  // returns args, for more options

// The stories of --unseen read with the full cache, name recall counting names last seen more
// than min_gap tokens back; a story longer than the model's positions is cut to them. Nothing
// when --unseen is none; a one-line error (std::runtime_error) for a missing or empty file.
std::optional<UnseenReading> read_unseen_option(const ArgParser& args,
                                                std::shared_ptr<const DecoderWeights> weights,
                                                const Tokenizer& tokenizer, std::size_t min_gap);

}  // namespace h2o
