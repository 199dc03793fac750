#include "h2o/text/stories.hpp"

namespace h2o {

std::vector<std::string> split_stories(const std::string& raw) {
  // Windows line endings ("\r\n") are read as "\n": the stories are split the same way and no
  // stray "\r" reaches the tokenizer.
  std::string text;
  text.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\r' && i + 1 < raw.size() && raw[i + 1] == '\n') continue;
    text += raw[i];
  }
  std::vector<std::string> stories;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find("\n\n", start);
    if (end == std::string::npos) end = text.size();
    std::string story = text.substr(start, end - start);
    while (!story.empty() && story.front() == '\n') story.erase(story.begin());
    while (!story.empty() && story.back() == '\n') story.pop_back();
    if (!story.empty()) stories.push_back(story);
    start = end + 2;
  }
  return stories;
}

}  // namespace h2o
