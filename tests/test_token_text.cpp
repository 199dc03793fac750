// test_token_text.cpp: tokens and words as tables show them (text/token_text.hpp), on the shipped
// tokenizer: a word's pieces joined, "é" whole again, spaces and newlines visible.
#include <algorithm>
#include <string>
#include <vector>

#include "h2o/text/token_text.hpp"
#include "h2o_catch.hpp"

using namespace h2o;

namespace {
Tokenizer shipped() { return Tokenizer::load(std::string(H2O_DATA_DIR) + "/tokenizer.bin", 4096); }
}  // namespace

TEST_CASE("a token is shown with its space, BOS as <BOS>", "[token_text]") {
  const Tokenizer tokenizer = shipped();
  const std::vector<int> tokens = tokenizer.encode("Tom ran.\nThe end", true, false);
  CHECK(token_text(tokenizer, tokens, 0) == "<BOS>");
  std::string all;
  for (std::size_t p = 1; p < tokens.size(); ++p) all += token_text(tokenizer, tokens, p);
  CHECK(all == "Tom_ran./The_end");
}

TEST_CASE("a word's pieces are joined, whichever piece is asked for", "[token_text]") {
  const Tokenizer tokenizer = shipped();
  const std::string text = "The girl Xiomara ate a crêpe at the café, then left.";
  const std::vector<int> tokens = tokenizer.encode(text, true, false);
  std::vector<std::string> words;  // each word once, in order
  for (std::size_t p = 1; p < tokens.size();) {
    const WordSpan word = word_at(tokenizer, tokens, p);
    CHECK(word.first == p);  // a word starts where the last one ended
    for (std::size_t q = word.first; q <= word.last; ++q) {
      CHECK(word_at(tokenizer, tokens, q).first == word.first);
      CHECK(word_at(tokenizer, tokens, q).last == word.last);
    }
    words.push_back(word_text(tokenizer, tokens, word));
    p = word.last + 1;
  }
  // (This tokenizer spells " Xiomara" as " " + "X" + "i" + "om" + "ar" + "a".)
  CHECK(std::find(words.begin(), words.end(), "Xiomara") != words.end());
  CHECK(std::find(words.begin(), words.end(), "_crêpe") != words.end());
  CHECK(std::find(words.begin(), words.end(), "_café") != words.end());
  std::string joined;
  for (const std::string& word : words) joined += word;
  CHECK(joined == "The_girl_Xiomara_ate_a_crêpe_at_the_café,_then_left.");
  CHECK(word_text(tokenizer, tokens, word_at(tokenizer, tokens, 0)) == "<BOS>");
}
