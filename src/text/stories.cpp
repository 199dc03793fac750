#include "h2o/text/stories.hpp"

#include <stdexcept>

#include "h2o/text/tokenizer.hpp"

namespace h2o {

namespace {

// A line is blank when it holds nothing but spaces and tabs.
bool is_blank(const std::string& line) {
  return line.find_first_not_of(" \t") == std::string::npos;
}

bool is_separator(const std::string& line) {
  const std::size_t end = line.find_last_not_of(" \t");
  return end != std::string::npos && line.compare(0, end + 1, kStorySeparator) == 0;
}

}  // namespace

std::vector<std::string> split_stories(const std::string& text) {
  std::vector<std::string> stories;
  std::string story;  // the current story's non-blank lines, joined by "\n"
  const auto finish_story = [&] {
    if (!story.empty()) stories.push_back(story);
    story.clear();
  };
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    // "\r\n" counts as "\n": no stray "\r" reaches the tokenizer (a lone "\r" is text).
    if (end < text.size() && !line.empty() && line.back() == '\r') line.pop_back();
    if (is_separator(line)) {
      finish_story();
    } else if (!is_blank(line)) {
      if (!story.empty()) story += '\n';
      story += line;
    }
    start = end + 1;
  }
  finish_story();
  return stories;
}

std::size_t paragraph_count(const std::string& story) {
  std::size_t lines = story.empty() ? 0 : 1;
  for (char c : story) lines += c == '\n' ? 1 : 0;
  return lines;
}

std::string TokenisedStories::counted() const {
  return std::to_string(stories.size()) + (stories.size() == 1 ? " story" : " stories");
}

TokenisedStories encode_stories(const Tokenizer& tokenizer, const std::vector<std::string>& stories,
                           std::size_t at_most, std::size_t seq_len, std::size_t min_tokens,
                           const std::string& file, const std::string& who) {
  TokenisedStories out;
  for (const std::string& story : stories) {
    if (out.stories.size() == at_most) break;
    out.texts.push_back(story);
    out.stories.push_back(tokenizer.encode_at_most(story, true, false, seq_len));
    if (out.stories.back().size() < min_tokens) {
      throw std::runtime_error("story " + std::to_string(out.stories.size()) + " of '" + file +
                               "' has " + std::to_string(out.stories.back().size()) + " tokens; " +
                               who + " needs at least " + std::to_string(min_tokens));
    }
    out.total += out.stories.back().size();
  }
  return out;
}

}  // namespace h2o
