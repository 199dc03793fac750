#include "h2o/app/model_and_stories.hpp"

#include <utility>

#include "h2o/measure/name_recall.hpp"
#include "h2o/model/checkpoint.hpp"

namespace h2o {

ModelAndStories load_model_and_stories(const ArgParser& args, std::size_t name_gap) {
  const ModelFiles files = model_files_from_options(args);
  auto weights = std::make_shared<const DecoderWeights>(load_checkpoint(files.model));
  Tokenizer tokenizer = Tokenizer::load(files.tokenizer, weights->config.vocab_size);
  TokenisedStories read = read_stories_options(args, tokenizer, 16, weights->config.seq_len);
  SweepText text =
      sweep_text(tokenizer, read.stories,
                 names_as_tokens(tokenizer, names_from_options(args, read.texts)), name_gap);
  return {files, std::move(weights), std::move(tokenizer), std::move(read), std::move(text)};
}

}  // namespace h2o
