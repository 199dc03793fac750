// test_line_wrap.cpp: text that fits a narrow terminal (report/line_wrap.hpp): lines break
// between words and never inside one, a line that fits passes byte for byte, colour codes take no
// column, and a prompt waiting on its line shows at once.
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/report/line_wrap.hpp"
#include "h2o_catch.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_test::lines_of;

namespace {
// `text` written through a WrappingBuffer of `width` columns, as the terminal would receive it.
std::string wrapped(const std::string& text, std::size_t width) {
  std::ostringstream target;
  {
    WrappingBuffer buffer(target.rdbuf(), width);
    std::ostream out(&buffer);
    out << text << std::flush;
  }
  return target.str();
}

std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}
}  // namespace

TEST_CASE("visible width counts characters, not bytes or colour codes", "[line_wrap]") {
  CHECK(visible_width("") == 0);
  CHECK(visible_width("Zo\xC3\xAB") == 3);                 // Zoë: 4 bytes, 3 columns
  CHECK(visible_width("\x1b[1;30;43mThe@0\x1b[0m") == 5);  // styled: only "The@0" shows
  CHECK(visible_width("\x1b[H\x1b[2J") == 0);              // clearing the screen
}

TEST_CASE("a line that fits passes byte for byte, spaces and all", "[line_wrap]") {
  const std::string text =
      "    word        The      cat\n  pos  (3, 4)     [0, 1, 2]          [1.28, 1.57]\n\n";
  CHECK(wrapped(text, 80) == text);
  const std::string exactly_80 = std::string(40, 'a') + " " + std::string(39, 'b') + "\n";
  CHECK(wrapped(exactly_80, 80) == exactly_80);
  const std::string colour = "  \x1b[30;46mcat@1 0.50\x1b[0m | " + std::string(60, 'x') + "\n";
  CHECK(wrapped(colour, 80) == colour);  // 76 columns, though more bytes
}

TEST_CASE("a long line breaks between words, continued two columns further in", "[line_wrap]") {
  // A worked example: 20 columns.
  CHECK(wrapped("  evicted = left at this token\n", 20) == "  evicted = left at\n    this token\n");
  CHECK(wrapped("Step 3: three heads, per token evict\n", 20) ==
        "Step 3: three heads,\n  per token evict\n");
  // A word wider than the whole line stays whole.
  CHECK(wrapped("ab " + std::string(30, 'c') + " d\n", 20) ==
        "ab\n  " + std::string(30, 'c') + "\n  d\n");
}

TEST_CASE("seeded random text: no word is cut, none lost, no line too wide", "[line_wrap]") {
  Rng rng(36);
  for (int round = 0; round < 300; ++round) {
    const std::size_t width = 20 + rng.below(81);
    std::string text;
    const std::size_t n_lines = 1 + rng.below(6);
    for (std::size_t l = 0; l < n_lines; ++l) {
      text += std::string(rng.below(9), ' ');
      const std::size_t n_words = 1 + rng.below(30);
      for (std::size_t w = 0; w < n_words; ++w) {
        if (w > 0) text += std::string(1 + rng.below(3), ' ');
        const std::size_t length = 1 + rng.below(rng.below(8) == 0 ? 30 : 9);
        for (std::size_t c = 0; c < length; ++c) text += static_cast<char>('a' + rng.below(26));
      }
      text += "\n";
    }
    const std::string out = wrapped(text, width);
    INFO("width " << width << "\n" << text);
    CHECK(words_of(out) == words_of(text));  // every word, whole and in order
    const std::vector<std::string> in_lines = lines_of(text);
    std::size_t longest_word = 0;
    for (const std::string& word : words_of(text)) {
      longest_word = std::max(longest_word, word.size());
    }
    for (const std::string& line : lines_of(out)) {
      // Too wide only for one word no line could hold (after its indentation).
      if (line.size() > width) CHECK(words_of(line).size() == 1);
    }
    for (const std::string& line : in_lines) {
      if (line.size() <= width) CHECK(out.find(line + "\n") != std::string::npos);
    }
    if (longest_word + 12 <= width) {
      for (const std::string& line : lines_of(out)) CHECK(line.size() <= width);
    }
  }
}

TEST_CASE("a prompt shows at once, and after Enter a new line begins", "[line_wrap]") {
  std::ostringstream target;
  WrappingBuffer buffer(target.rdbuf(), 20);
  std::ostream out(&buffer);
  out << "  [Enter] next " << std::flush;
  CHECK(target.str() == "  [Enter] next ");  // the last space too: the cursor waits after it
  buffer.line_restarted();                   // the user pressed Enter: its echo began a new line
  out << "0123456789 0123456789\n" << std::flush;
  CHECK(target.str() == "  [Enter] next 0123456789\n  0123456789\n");
}

TEST_CASE("a width below 20 columns is refused", "[line_wrap]") {
  std::ostringstream target;
  CHECK_THROWS_AS(WrappingBuffer(target.rdbuf(), 19), std::invalid_argument);
  WrappingBuffer buffer(target.rdbuf(), 20);
  CHECK_THROWS_AS(buffer.set_width(5), std::invalid_argument);
}
