// test_step_view.cpp: the lessons' terminal step mode (report/step_view.hpp) on string streams:
// roles in words, evicted tokens found from frame to frame, colour only when asked, Enter, q and
// the end of the input. tests/step_mode_checks.cmake runs it on a real terminal (tmux).
#include <unistd.h>

#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/report/step_view.hpp"
#include "h2o_catch.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_test::lines_of;

namespace {
const CacheBudget kBudget(2, 2);
}  // namespace

TEST_CASE("a step view that is off writes and reads nothing", "[step_view]") {
  std::istringstream in("\n\n");
  std::ostringstream out;
  StepView view(false, in, out, true, true);
  view.show("token 0", {{"cache", {"The"}, {0}, {1.0f}}}, kBudget);
  view.show("token 1", {}, kBudget);
  CHECK(out.str().empty());
  CHECK(in.tellg() == 0);  // no Enter was read
}

TEST_CASE("a step view names every token's role and the evicted one in words", "[step_view]") {
  std::istringstream in("\n\n\n");
  std::ostringstream out;
  StepView view(true, in, out, false, false);
  // Four tokens fill the budget of 2 + 2; at the next token "sat" has left (the lesson evicted it).
  view.show("token 3",
            {{"cache", {"The", "cat", "sat", "because"}, {0, 1, 2, 3}, {1.5f, 2.0f, 0.3f, 0.2f}}},
            kBudget);
  view.show("token 4",
            {{"cache", {"The", "cat", "because", "it"}, {0, 1, 3, 4}, {1.6f, 2.1f, 0.4f, 0.3f}}},
            kBudget);
  const std::string text = out.str();
  CHECK(text.find("\ntoken 3\n") != std::string::npos);
  CHECK(text.find("  heavy = kept for its score, recent = among the newest, evicted = left at "
                  "this token\n") != std::string::npos);
  // Frame 1: plan_keep keeps the two newest as recent and the two best others as heavy.
  CHECK(text.find("  cache        heavy: The@0 1.50 cat@1 2.00 | recent: sat@2 0.30 because@3 "
                  "0.20 | evicted: -\n") != std::string::npos);
  // Frame 2: sat@2 is gone, so it is named as evicted.
  CHECK(text.find("  cache        heavy: The@0 1.60 cat@1 2.10 | recent: because@3 0.40 it@4 "
                  "0.30 | evicted: sat@2\n") != std::string::npos);
  CHECK(text.find("[Enter] next token, q [Enter] stop stepping") != std::string::npos);
  CHECK(text.find('\x1b') == std::string::npos);  // no colour, no screen clearing
}

TEST_CASE("a step view colours roles only when asked, and clears the screen after Enter",
          "[step_view]") {
  std::istringstream in("\n");
  std::ostringstream out;
  StepView view(true, in, out, true, true);
  view.show("token 0", {{"cache", {"The", "cat", "sat"}, {0, 1, 2}, {1.0f, 0.5f, 0.2f}}},
            CacheBudget(1, 2));
  const std::string text = out.str();
  CHECK(text.find("\x1b[1;30;43mThe@0 1.00\x1b[0m") != std::string::npos);  // heavy
  CHECK(text.find("\x1b[30;46mcat@1 0.50\x1b[0m") != std::string::npos);    // recent
  CHECK(text.find("\x1b[H\x1b[2J") != std::string::npos);                   // redraw in place
}

TEST_CASE("q or the end of the input stops stepping", "[step_view]") {
  for (const std::string input : {"q\n", ""}) {
    std::istringstream in(input);
    std::ostringstream out;
    StepView view(true, in, out, false, false);
    view.show("token 0", {{"cache", {"a"}, {0}, {1.0f}}}, kBudget);
    CHECK(view.on() == false);
    const std::size_t length = out.str().size();
    view.show("token 1", {{"cache", {"a", "b"}, {0, 1}, {1.0f, 0.5f}}}, kBudget);  // nothing more
    CHECK(out.str().size() == length);
  }
}

TEST_CASE("a step view draws every head of a layer cache and wraps at 100 columns", "[step_view]") {
  LayerKVCache cache(2, 1, 40);
  const float k[2] = {0.0f, 0.0f};
  for (Position p = 0; p < 30; ++p) {
    cache.append(k, k, p);
    cache.scores(0)[p] = static_cast<float>(p % 7);
    cache.scores(1)[p] = static_cast<float>(p % 5);
  }
  std::istringstream in("\n");
  std::ostringstream out;
  StepView view(true, in, out, false, false);
  view.show("token 29", cache_rows("per-head", cache), CacheBudget(14, 16));
  std::istringstream lines(out.str());
  std::string line;
  std::size_t heads = 0, widest = 0;
  while (std::getline(lines, line)) {
    widest = std::max(widest, line.size());
    if (line.rfind("  per-head head ", 0) == 0) ++heads;
  }
  CHECK(heads == 2);
  CHECK(widest <= 100);
  CHECK(out.str().find("recent: #14 0.00 #15 1.00") != std::string::npos);  // by position
}

TEST_CASE("tokens known by position only show as #position", "[step_view]") {
  std::istringstream in("\n");
  std::ostringstream out;
  StepView view(true, in, out, false, false);
  const Vector scores = {0.5f, 2.0f, 0.25f};  // (T,) in slot order, not position order
  view.show("token 9", {cache_row("head 0", {7, 3, 9}, scores)}, CacheBudget(1, 1));
  // Over budget here (3 > 2): the rule keeps #9 (recent) and #3 (the higher score), so #7 is
  // shown as evicted.
  CHECK(out.str().find("  head 0       heavy: #3 2.00 | recent: #9 0.25 | evicted: #7 0.50\n") !=
        std::string::npos);
}

TEST_CASE("a row whose words do not match its positions is refused", "[step_view]") {
  std::istringstream in("\n");
  std::ostringstream out;
  StepView view(true, in, out, false, false);
  CHECK_THROWS_WITH(view.show("token 1", {{"cache", {"The"}, {0, 1}, {1.0f, 0.5f}}}, kBudget),
                    "StepView: row 'cache' has 1 words for 2 positions");
}

namespace {
// Two frames of a 2 + 6 budget over tokens with words, drawn `width` columns wide.
std::string two_frames(std::size_t width) {
  std::istringstream in("\n\n");
  std::ostringstream out;
  StepView view(true, in, out, false, false, width);
  const std::vector<std::string> words = {"Once", "upon",      "a",    "time", "Noufem", "evicted",
                                          "her",  "grandma's", "cats", "from", "the",    "garden"};
  std::vector<Position> positions;
  std::vector<float> scores;
  for (std::size_t i = 0; i < words.size(); ++i) {
    positions.push_back(static_cast<Position>(i));
    scores.push_back(0.25f * static_cast<float>(i % 5));
  }
  view.show("token 11", {{"story", words, positions, scores}}, CacheBudget(2, 6));
  // At the next token "garden"@11 has gone and two tokens came: over budget, the rule evicts
  // "time"@3, a heavy hitter of the frame before.
  view.show("token 13 (over budget)",
            {{"story",
              {"time", "Noufem", "her", "grandma's", "cats", "from", "the", "next", "day"},
              {3, 4, 6, 7, 8, 9, 10, 12, 13},
              {0.1f, 1.5f, 2.0f, 0.5f, 0.75f, 1.0f, 0.1f, 0.3f, 0.2f}}},
            CacheBudget(2, 6));
  return out.str();
}

}  // namespace

TEST_CASE("a frame fits the width it is given, breaking between tokens", "[step_view]") {
  const std::string at_100 = two_frames(100);
  CHECK(lines_of(two_frames(120)).size() < lines_of(at_100).size());  // wider: fewer lines
  for (const std::size_t width : {80, 64, 50}) {
    const std::string text = two_frames(width);
    INFO("width " << width << "\n" << text);
    for (const std::string& line : lines_of(text)) CHECK(line.size() <= width);
    // Every token whole on one line: "word@position score", as at 100 columns.
    for (const std::string token :
         {"Noufem@4 1.00", "grandma's@7 0.50", "time@3 0.10", "next@12 0.30"}) {
      CHECK(text.find(token) != std::string::npos);
      CHECK(at_100.find(token) != std::string::npos);
    }
    // The legend keeps its roles' names whole and breaks between the words after them.
    CHECK(text.find("  heavy = kept for its score,") != std::string::npos);
    CHECK(text.find("evicted") != std::string::npos);
    // What was on one line at 100 columns is the same words at any width.
    std::istringstream wide(at_100), narrow(text);
    std::vector<std::string> wide_words, narrow_words;
    for (std::string w; wide >> w;) wide_words.push_back(w);
    for (std::string w; narrow >> w;) narrow_words.push_back(w);
    CHECK(narrow_words == wide_words);
  }
  CHECK_THROWS_AS(StepView(true, std::cin, std::cout, false, false, 49), std::invalid_argument);
}

TEST_CASE("a row over its budget names each token it evicts once", "[step_view]") {
  // The frames' words, one space apart (lines break anywhere between tokens).
  std::istringstream words(two_frames(100));
  std::string text;
  for (std::string word; words >> word;) text += word + " ";
  // Frame 1: 12 tokens for 8 slots; the rule keeps the 6 newest and the 2 best older ones.
  CHECK(text.find("story heavy: time@3 0.75 Noufem@4 1.00 | recent: her@6 0.25 grandma's@7 0.50 "
                  "cats@8 0.75 from@9 1.00 the@10 0.00 garden@11 0.25 | evicted: Once@0 0.00 "
                  "upon@1 0.25 a@2 0.50 evicted@5 0.00 [Enter]") != std::string::npos);
  // Frame 2: "time"@3, still in the row, is the rule's (with its score), and "garden"@11, gone
  // since frame 1, is named by name; each once.
  const std::string frame_2 = text.substr(text.find("token 13 (over budget)"));
  CHECK(frame_2.find("| evicted: time@3 0.10 garden@11 [Enter]") != std::string::npos);
  CHECK(frame_2.find("time@3") == frame_2.rfind("time@3"));
}

TEST_CASE("frames on a pipe are laid out for 100 columns", "[step_view]") {
  // The test's own standard output is a pipe or a file under CTest; on a terminal, its width.
  if (isatty(STDOUT_FILENO) == 1) {
    CHECK(stdout_columns() >= 80);
  } else {
    CHECK(stdout_columns() == 100);
  }
}
