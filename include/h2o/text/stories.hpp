// stories.hpp: text files of stories, as people write them. The one owner of the file format;
// training/common.py (read_stories, format_stories) follows it line for line.
//
// The format:
//   - blank lines separate the paragraphs of a story (a blank line is empty or holds only spaces
//     and tabs; several in a row are one break);
//   - a file of several stories puts a line holding only kStorySeparator ("<|story|>", trailing
//     spaces and tabs allowed) between two stories; a file without it is one story;
//   - Windows line endings ("\r\n") count as "\n".
// What the model reads: each story on its own, BOS first, as its non-blank lines joined by one
// "\n" (one newline between paragraphs, as the model was trained; the blank lines are layout, so
// a story written with or without them reads the same). Lines inside a paragraph are kept as
// written.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace h2o {

// The line that separates two stories in one file (data/heldout_stories.txt uses it).
constexpr const char* kStorySeparator = "<|story|>";

// The stories of `text` as the model reads them (the format above): each holds no empty line and
// no newline at either end; stories with no text are dropped.
std::vector<std::string> split_stories(const std::string& text);

// The number of paragraphs of a story returned by split_stories (its lines).
std::size_t paragraph_count(const std::string& story);

class Tokenizer;

// The first at_most stories as tokens (BOS first, at most seq_len each), and how many tokens they
// hold together. A story shorter than min_tokens is a std::runtime_error naming it, the file and
// the minimum: "story 2 of 'FILE' has 9 tokens; <who> needs at least 16".
struct TokenisedStories {
  std::vector<std::vector<int>> stories;  // (K,) each story's tokens
  std::vector<std::string> texts;         // (K,) each story as read (the names it shows)
  std::size_t total = 0;
  std::string counted() const;  // "1 story", "12 stories"
};
TokenisedStories encode_stories(const Tokenizer& tokenizer, const std::vector<std::string>& stories,
                           std::size_t at_most, std::size_t seq_len, std::size_t min_tokens,
                           const std::string& file, const std::string& who);

}  // namespace h2o
