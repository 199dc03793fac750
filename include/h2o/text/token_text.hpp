// token_text.hpp: a token of a text, and the word it belongs to, as tables and lists show them.
//
// A token's text is its piece as run.c prints it (Tokenizer::decode_piece), shown so that it
// stays readable in a line of text: a space as '_', a newline as '/', BOS as "<BOS>", and other
// control characters and invalid UTF-8 escaped (printable(), base/format.hpp), so no text can
// upset a terminal. A word the tokenizer cut into pieces ("P|ri|y|a") is shown joined: its pieces
// are the tokens from one that starts a word (with a space, a newline, a non-letter, or after
// one) up to the next such; joining them also puts the bytes of a letter like "é" back together.
//
// Dimension legend: N = tokens of the text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/text/tokenizer.hpp"

namespace h2o {

// The text of token p of tokens (N,), shown as above.
std::string token_text(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p);

struct WordSpan {
  std::size_t first = 0, last = 0;  // positions of its first and last token, inclusive
};
// The word that token p belongs to (a single token for BOS, spaces and punctuation).
WordSpan word_at(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p);
// The text of positions first..last joined, shown as token_text shows one token.
std::string word_text(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                      const WordSpan& word);

}  // namespace h2o
