// token_text.hpp: what a reader sees of a tokenized text: the text of a span of tokens, each
// token's share of it, and the words the tokens make.
//
// A token's bytes are those run.c prints for it after its predecessor (Tokenizer::decode_piece):
// the dummy space after BOS dropped, a byte-fallback token "<0xC3>" one raw byte. A character the
// vocabulary has no piece for ("é") is two or more such byte tokens, so one token alone is often
// not text, while a span of them is. token_text() decodes a span's bytes as UTF-8 for display:
//   - every valid character as it is written ("café", "Priya", "😀"), newline and tab too;
//   - every other control character, and each byte that does not belong to a valid character
//     inside the span, as printable() (base/format.hpp) shows it, so it is seen in any font and
//     cannot upset a terminal: "\x01", "\r", "\x7f", a lone "<0xC3>" as "\xc3";
//   - BOS and EOS, which are no text, as nothing (callers label them: "<s>", "<BOS>").
// token_texts() splits that same text into each token's share: a character whose bytes come from
// several tokens goes to the token of its first byte, and the later tokens get "" (so "café"
// from " caf", "<0xC3>", "<0xA9>" is "caf", "é", ""). Joined, the shares are token_text().
//
// Words: a word is a run of tokens that a reader sees as one word: a token joins the word of the
// token before it when its first character and that token's last character are both word
// characters (letters, digits, the apostrophes ' and ’, or any other non-ASCII character outside
// Unicode's punctuation blocks), or are one character split across the two tokens. " P", "ri",
// "y", "a" make one word ("Priya"), " said" and "," two; BOS is always a word of its own.
//
// Dimension legend: N = tokens of the text, W = words.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/text/tokenizer.hpp"

namespace h2o {

// Tokens [begin, end) of a text.
struct TokenSpan {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The text a reader sees for tokens[begin, end) (rules above). Throws std::out_of_range unless
// begin <= end <= tokens.size(), std::out_of_range for a token id outside the vocabulary.
std::string token_text(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                       std::size_t begin, std::size_t end);

// (end - begin,) each token's share of token_text(tokenizer, tokens, begin, end).
std::vector<std::string> token_texts(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                                     std::size_t begin, std::size_t end);

// (W,) the words of `tokens` in order; together they cover every token exactly once.
std::vector<TokenSpan> token_words(const Tokenizer& tokenizer, const std::vector<int>& tokens);

}  // namespace h2o
