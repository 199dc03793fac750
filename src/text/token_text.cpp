#include "h2o/text/token_text.hpp"

#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/base/utf8.hpp"

namespace h2o {

namespace {

constexpr char32_t kReplacement = 0xFFFD;  // "�"

// The bytes of tokens[begin, end) and where each token's bytes start.
struct SpanBytes {
  std::string bytes;
  std::vector<std::size_t> start;  // (end - begin + 1,) token k's bytes: [start[k], start[k + 1])
};

SpanBytes span_bytes(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t begin,
                     std::size_t end) {
  if (begin > end || end > tokens.size()) {
    throw std::out_of_range("tokens [" + std::to_string(begin) + ", " + std::to_string(end) +
                            ") of a text of " + std::to_string(tokens.size()));
  }
  SpanBytes span;
  for (std::size_t p = begin; p < end; ++p) {
    span.start.push_back(span.bytes.size());
    const int token = tokens[p];
    if (token < 0 || static_cast<std::size_t>(token) >= tokenizer.vocab_size()) {
      throw std::out_of_range("token id " + std::to_string(token) + " is outside the vocabulary");
    }
    if (token == Tokenizer::kBos || token == Tokenizer::kEos) continue;
    span.bytes += tokenizer.decode_piece(p > 0 ? tokens[p - 1] : -1, token);
  }
  span.start.push_back(span.bytes.size());
  return span;
}

// The character (code point) each byte of `bytes` belongs to: kReplacement for a byte of no valid
// character. Calls visit(first byte, length, code point) once per character, in order.
template <typename Visit>
void for_each_character(const std::string& bytes, Visit visit) {
  for (std::size_t i = 0; i < bytes.size();) {
    char32_t cp = kReplacement;
    const std::size_t n = utf8_sequence(bytes, i, &cp);
    visit(i, n == 0 ? 1 : n, n == 0 ? kReplacement : cp);
    i += n == 0 ? 1 : n;
  }
}

// What a reader is shown for one character (or one byte of no character): newlines and tabs as
// they are, everything else as printable() shows it (control characters as "\x01", "\r").
std::string shown(const std::string& bytes) {
  return bytes == "\n" || bytes == "\t" ? bytes : printable(bytes);
}

bool is_word_character(char32_t cp) {
  if (cp < 0x80) {
    return (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || (cp >= '0' && cp <= '9') ||
           cp == '\'';
  }
  if (cp == 0x2019) return true;                  // ’, the typographic apostrophe
  if (cp <= 0xBF) return false;                   // C1 controls and Latin-1's « » ¡ ¿ ...
  if (cp >= 0x2000 && cp <= 0x206F) return false;  // General Punctuation: “ ” — …
  if (cp >= 0x3000 && cp <= 0x303F) return false;  // CJK punctuation
  return cp != kReplacement;
}

// token_text of a span as a table shows it: spaces and newlines visible, BOS and EOS named.
std::string shown_span(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                       std::size_t begin, std::size_t end) {
  if (end == begin + 1 && end <= tokens.size()) {  // else token_text names the bad span
    if (tokens[begin] == Tokenizer::kBos) return "<BOS>";
    if (tokens[begin] == Tokenizer::kEos) return "<EOS>";
  }
  std::string text = token_text(tokenizer, tokens, begin, end);
  for (char& ch : text) ch = ch == ' ' ? '_' : ch == '\n' ? '/' : ch;
  return text;
}

}  // namespace

std::vector<std::string> token_texts(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                                     std::size_t begin, std::size_t end) {
  const SpanBytes span = span_bytes(tokenizer, tokens, begin, end);
  std::vector<std::string> texts(end - begin);
  std::size_t k = 0;  // the token whose bytes hold the character's first byte
  for_each_character(span.bytes, [&](std::size_t first, std::size_t length, char32_t) {
    while (span.start[k + 1] <= first) ++k;
    texts[k] += shown(span.bytes.substr(first, length));
  });
  return texts;
}

std::string token_text(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                       std::size_t begin, std::size_t end) {
  std::string text;
  for (const std::string& share : token_texts(tokenizer, tokens, begin, end)) text += share;
  return text;
}

std::vector<TokenSpan> token_words(const Tokenizer& tokenizer, const std::vector<int>& tokens) {
  const SpanBytes span = span_bytes(tokenizer, tokens, 0, tokens.size());
  // Each byte's character, as (index of its first byte, code point).
  std::vector<std::size_t> char_start(span.bytes.size());
  std::vector<char32_t> char_of(span.bytes.size());
  for_each_character(span.bytes, [&](std::size_t first, std::size_t length, char32_t cp) {
    for (std::size_t i = first; i < first + length; ++i) char_start[i] = first, char_of[i] = cp;
  });
  std::vector<TokenSpan> words;
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    const std::size_t first = span.start[p], last = span.start[p + 1];  // token p's bytes
    bool joins = false;
    if (p > 0 && first < last && !words.empty() && tokens[p - 1] != Tokenizer::kBos &&
        tokens[p - 1] != Tokenizer::kEos && span.start[p - 1] < first) {
      const std::size_t before = first - 1;  // the last byte of token p - 1
      joins = char_start[before] == char_start[first] ||
              (is_word_character(char_of[before]) && is_word_character(char_of[first]));
    }
    if (joins) {
      words.back().end = p + 1;
    } else {
      words.push_back({p, p + 1});
    }
  }
  return words;
}

TokenSpan word_at(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  if (p >= tokens.size()) {
    throw std::out_of_range("token " + std::to_string(p) + " of a text of " +
                            std::to_string(tokens.size()));
  }
  for (const TokenSpan& word : token_words(tokenizer, tokens)) {
    if (p < word.end) return word;
  }
  return {p, p + 1};  // not reached: the words cover every token
}

std::string shown_token(const Tokenizer& tokenizer, const std::vector<int>& tokens, std::size_t p) {
  return shown_span(tokenizer, tokens, p, p + 1);
}

std::string shown_word(const Tokenizer& tokenizer, const std::vector<int>& tokens,
                       const TokenSpan& word) {
  return shown_span(tokenizer, tokens, word.begin, word.end);
}

}  // namespace h2o
