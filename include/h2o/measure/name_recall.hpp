// name_recall.hpp: can a model (with a given cache) still name a character it last saw long ago?
//
// The project's own stories introduce characters early and name them again much later, so that
// predicting the name needs the early context - exactly what a cache that forgets old tokens
// loses. Name recall measures it on a teacher-forced reading (teacher_forcing.hpp):
//   counted positions: steps t whose next token, tokens[t + 1], is a character's name, and whose
//     previous mention of that same name lies more than `min_gap` tokens back:
//     (t + 1) - p > min_gap, p = the previous position holding that name (first mentions and
//     names never seen before do not count);
//   name recall = the share of counted positions at which the model's top-1 prediction at step t
//     is that name's token.
// A name is a token of the vocabulary: the piece " Mia" (after a space) or "Mia" (at the start of
// a line) for each name in the list; both spellings are the same name. Names the tokenizer splits
// into several pieces cannot be predicted in one step and are left out (names_as_tokens reports
// how many).
//
// Dimension legend: N = tokens in the text, S = N - 1 steps.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/text/tokenizer.hpp"

namespace h2o {

// The character names of the project's stories, one per line (data/names.txt by default).
// Throws std::runtime_error naming the file when it cannot be read, holds no name, or holds a line
// that is not a single word of letters.
std::vector<std::string> read_names(const std::string& path);

struct NameTokens {
  std::vector<int> name_of_token;  // (V,) index into `names` for a name token, -1 otherwise
  std::vector<std::string> names;  // (K,) the names that are single tokens
  std::size_t split_names = 0;     // names of the list that are not single tokens (left out)
};

// Which token ids are names, for this tokenizer.
NameTokens names_as_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& names);

struct NameRecall {
  std::size_t min_gap = 0;
  std::vector<std::size_t> steps;  // the counted steps t (tokens[t + 1] is the name)
  std::size_t correct = 0;         // of them, how many the run predicted (top-1)
  double recall() const {
    return steps.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(steps.size());
  }
};

// The counted steps of a text (independent of any run): tokens (N,).
std::vector<std::size_t> long_gap_name_steps(const std::vector<int>& tokens,
                                             const NameTokens& name_tokens, std::size_t min_gap);

// Name recall of a run's top-1 predictions top1 (S,) over tokens (N,).
NameRecall name_recall(const std::vector<int>& tokens, const std::vector<int>& top1,
                       const NameTokens& name_tokens, std::size_t min_gap);

}  // namespace h2o
