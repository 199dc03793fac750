// model_and_stories.hpp: what the lessons that read several stories (12-14) start from: the
// model and tokenizer of --model/--tokenizer, the first --stories N of --text as tokens, and the
// stories ready for a sweep, with the names to recall.
//
// Dimension legend: K = stories read.
#pragma once

#include <cstddef>
#include <memory>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

struct ModelAndStories {
  ModelFiles files;                               // the paths read
  std::shared_ptr<const DecoderWeights> weights;  // shared by every run's decoder
  Tokenizer tokenizer;
  TokenisedStories read;  // (K,) the stories as tokens, and as text
  SweepText text;         // the same stories for measure/policy_sweep.hpp, with their names
};

// Loads the model (one-line errors for a bad file), then reads the stories (add_stories_options,
// each 16 tokens to the model's seq_len) and the names to count (add_names_option's --names where
// the program has it and it is given, else default_names of the stories), recalled when last seen
// more than `name_gap` tokens back.
ModelAndStories load_model_and_stories(const ArgParser& args, std::size_t name_gap = 64);

}  // namespace h2o
