// token_text.hpp: what a reader sees of a tokenized text: the text of a span of tokens, each
// token's share of it, the words the tokens make, and a token or word as a table shows it.
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
// In a table or a list of tokens (shown_token, shown_word) a token's or word's text stays on one
// line and its spaces stay visible: a space as '_', a newline as '/', BOS as "<BOS>", EOS as
// "<EOS>" (" Priya" -> "_Priya", "the end.\n" -> "_the_end./").
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

// The word (of token_words) that token p belongs to. Throws std::out_of_range unless
// p < tokens.size().
TokenSpan word_at(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p);

// Token p alone, as a table shows it (rules above): token_text(tokenizer, tokens, p, p + 1).
std::string shown_token(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p);

// The tokens of `word` joined, as a table shows them: token_text of the span.
std::string shown_word(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                       const TokenSpan& word);

}  // namespace h2o
