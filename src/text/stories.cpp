#include "h2o/text/stories.hpp"

namespace h2o {

std::vector<std::string> split_stories(const std::string& text) {
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
