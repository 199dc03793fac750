// default_files.hpp: where the programs look for a model, its tokenizer and a text when the user
// names none, and the command-line options that name them. One owner for these paths: lesson 09,
// generate and compare_policies all ask here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

// Largest text file a program reads (far more than any model here can read in one sequence).
constexpr std::uint64_t kMaxTextBytes = 1ull << 20;

// The project's data/ folder (the source tree's, fixed at build time).
std::string data_dir();

struct ModelFiles {
  std::string model;      // llama2.c checkpoint
  std::string tokenizer;  // llama2.c tokenizer
};

// The model a program runs when the user names none: the project's own, data/model.bin and
// data/tokenizer.bin (made by scripts/train-model.sh; see data/README.md). It ships with the
// project, so every program runs on a fresh clone with no download.
ModelFiles default_model_files();

// The text the real-model programs read when the user names none: data/heldout_story.txt, a
// story the model never saw in training.
std::string default_text_file();

// The project's lists of character names, data/*names*.txt in file-name order (the generator's
// names.txt, the held-out stories' and the two hand-written sets' names).
std::vector<std::string> default_names_files();

// The names name recall counts when the user names no list: every name of the project's lists and
// every name a text itself shows (measure/name_recall.hpp's names_in_text: a capitalised word that
// recurs and stands where a name stands at least once, not only where a sentence starts or a place
// or thing is named), each once, the lists' first. So a teacher's own story about Lily, Tom and Max
// counts its characters without an option (a story in a script without capitals needs --names).
std::vector<std::string> default_names(const std::vector<std::string>& texts);

// --names PATH: the one list to count instead (read_names' rule); names_from_options reads it, or
// without it gives default_names(texts).
ArgParser& add_names_option(ArgParser& args);  // returns args, for more options
std::vector<std::string> names_from_options(const ArgParser& args,
                                            const std::vector<std::string>& texts);

// --model PATH and --tokenizer PATH, defaulting to default_model_files().
void add_model_options(ArgParser& args);
ModelFiles model_files_from_options(const ArgParser& args);

// --text PATH, defaulting to default_text_file(); read_text_option reads it (regular files of at
// most kMaxTextBytes only).
void add_text_option(ArgParser& args);
std::string read_text_option(const ArgParser& args);

// The stories of the --text file (text/stories.hpp: paragraphs separated by blank lines, stories
// by a line holding only "<|story|>"): the lessons read the first, compare_policies all of them.
std::vector<std::string> read_stories_option(const ArgParser& args);

// --text PATH (default data/heldout_stories.txt) and --stories N (default `count`): the lessons
// that read several stories (12-14). read_stories_options gives the first N as tokens, each
// at least min_tokens and at most max_tokens (the model's seq_len), else a one-line error.
ArgParser& add_stories_options(ArgParser& args, const std::string& count);  // returns args
TokenisedStories read_stories_options(const ArgParser& args, const Tokenizer& tokenizer,
                                      std::size_t min_tokens, std::size_t max_tokens);

// The story a lesson reads: the first of the --text file, whole (every paragraph).
struct StoryTokens {
  std::string text;                 // the story as the file holds it
  std::vector<int> tokens;          // (N,) token ids, BOS first
  std::size_t stories_in_file = 0;  // stories the file holds (the lesson reads the first)
  std::size_t paragraphs = 0;       // paragraphs of the story read
};

// The first story of --text as token ids, BOS first, as the lessons read it: at least min_tokens
// and at most max_tokens (the model's seq_len), else a one-line error; a story that is too long
// is refused before encoding when its length in bytes already proves it.
StoryTokens read_story(const ArgParser& args, const Tokenizer& tokenizer, std::size_t min_tokens,
                       std::size_t max_tokens);

}  // namespace h2o
