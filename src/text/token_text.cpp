#include "h2o/text/token_text.hpp"

#include "h2o/base/format.hpp"

namespace h2o {

namespace {
// The raw piece of token p (BOS has none).
std::string piece_at(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  return p == 0 ? std::string() : tokenizer.decode_piece(tokens[p - 1], tokens[p]);
}
// A byte that belongs inside a word: an ASCII letter or digit, or any byte of a UTF-8 letter.
bool word_byte(char ch) {
  const auto byte = static_cast<unsigned char>(ch);
  return byte >= 0x80 || (byte >= '0' && byte <= '9') ||
         ((byte | 0x20) >= 'a' && (byte | 0x20) <= 'z');
}
// Does token p carry on the word of token p - 1 (both word bytes where they meet)?
bool continues_word(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  if (p <= 1 || p >= tokens.size()) return false;
  const std::string before = piece_at(tokenizer, tokens, p - 1);
  const std::string piece = piece_at(tokenizer, tokens, p);
  return !before.empty() && !piece.empty() && word_byte(before.back()) && word_byte(piece.front());
}
std::string shown(std::string text) {
  for (char& ch : text) ch = ch == ' ' ? '_' : ch == '\n' ? '/' : ch;
  return printable(text);
}
}  // namespace

std::string token_text(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  if (p == 0) return "<BOS>";
  return shown(piece_at(tokenizer, tokens, p));
}

WordSpan word_at(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  WordSpan word{p, p};
  while (continues_word(tokenizer, tokens, word.first)) --word.first;
  while (continues_word(tokenizer, tokens, word.last + 1)) ++word.last;
  return word;
}

std::string word_text(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                      const WordSpan& word) {
  if (word.first == 0 && word.last == 0) return "<BOS>";
  std::string text;
  for (std::size_t p = word.first; p <= word.last; ++p) text += piece_at(tokenizer, tokens, p);
  return shown(text);
}

}  // namespace h2o
