#include "h2o/measure/name_recall.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <stdexcept>

#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/utf8.hpp"

namespace h2o {

namespace {
constexpr std::uint64_t kMaxNamesFileBytes = 1ull << 20;

// What a person's name can hold, the rule training/common.py's read_names() follows too: letters,
// ASCII or not (every code point from U+00C0 on, except the signs x and /, the marks and the
// punctuation, space and special blocks below), with combining marks (U+0300..U+036F) after a
// letter, and an apostrophe (' or U+2019) or a hyphen only between two letters: "Zoë", "Łukasz",
// "O'Brien", "Mary-Jane". Tables of Unicode's categories would say more, at a cost no names list
// needs.
bool is_name_letter(char32_t c) {
  if ((c >= U'A' && c <= U'Z') || (c >= U'a' && c <= U'z')) return true;
  if (c < 0xC0 || c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x300 && c <= 0x36F) return false;    // combining marks: is_combining_mark
  if (c >= 0x2000 && c <= 0x206F) return false;  // General Punctuation (spaces, dashes, quotes)
  if (c >= 0x3000 && c <= 0x303F) return false;  // CJK spaces and punctuation
  if (c == 0xFEFF || c >= 0xFFF0) return false;  // byte-order mark, specials
  return true;
}
bool is_combining_mark(char32_t c) { return c >= 0x300 && c <= 0x36F; }
bool is_name_joiner(char32_t c) { return c == U'\'' || c == 0x2019 || c == U'-'; }

// True when `line` is one name by the rule above.
bool is_one_name(const std::string& line) {
  bool after_letter = false;  // the previous character was a letter or a mark after one
  bool joiner_waiting = false;
  for (std::size_t i = 0; i < line.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(line, i, &c);
    if (length == 0) return false;
    i += length;
    if (is_name_letter(c)) {
      after_letter = true;
      joiner_waiting = false;
    } else if (is_combining_mark(c) && after_letter) {
      continue;  // a mark belongs to the letter before it
    } else if (is_name_joiner(c) && after_letter) {
      after_letter = false;
      joiner_waiting = true;
    } else {
      return false;
    }
  }
  return after_letter && !joiner_waiting;
}
}  // namespace

std::vector<std::string> read_names(const std::string& path) {
  const std::string what = "names file '" + path + "'";
  std::istringstream lines(read_text_file(path, what, kMaxNamesFileBytes));
  std::vector<std::string> names;
  std::string line;
  std::size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A byte-order mark (U+FEFF, as some editors write one) before the first line is no name.
    if (number == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
    if (line.empty()) continue;
    if (!is_one_name(line)) {
      // The line is quoted escaped and cut (a bad line may be a megabyte of anything).
      throw std::runtime_error(what + ": line " + std::to_string(number) + " ('" +
                               printable(line, 60) +
                               "') is not one name (letters, with ' or - between them)");
    }
    names.push_back(line);
  }
  if (names.empty()) throw std::runtime_error(what + " holds no names");
  return names;
}

std::vector<std::string> NameTokens::split_names() const {
  std::vector<std::string> out;
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (tokens_per_name[k] > 1) {
      out.push_back(names[k] + " (" + std::to_string(tokens_per_name[k]) + " tokens)");
    }
  }
  return out;
}

NameTokens names_as_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& names) {
  NameTokens out;
  out.names = names;
  for (const std::string& name : names) {
    // encode() puts SentencePiece's dummy space first: these are the tokens of " Name".
    out.tokens_per_name.push_back(tokenizer.encode(name, false, false).size());
  }
  out.token_text.reserve(tokenizer.vocab_size());
  for (std::size_t id = 0; id < tokenizer.vocab_size(); ++id) {
    const int token = static_cast<int>(id);
    const bool marker = token == Tokenizer::kBos || token == Tokenizer::kEos;
    // After a token that is neither BOS nor EOS a piece decodes as itself (bytes as their byte).
    out.token_text.push_back(marker ? std::string() : tokenizer.decode_piece(-1, token));
  }
  return out;
}

namespace {
bool is_word_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
}  // namespace

NameMentions find_name_mentions(const std::vector<int>& tokens, const NameTokens& name_tokens) {
  // The text with each token's span: token p covers text[start[p], start[p + 1]).
  std::string text;
  std::vector<std::size_t> start(tokens.size() + 1, 0);  // (N + 1,)
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    start[p] = text.size();
    const auto id = static_cast<std::size_t>(tokens[p]);
    std::string piece = id < name_tokens.token_text.size() ? name_tokens.token_text[id] : "";
    // After BOS a leading space is the dummy prefix, not text (Tokenizer::decode_piece).
    if (p > 0 && tokens[p - 1] == Tokenizer::kBos && !piece.empty() && piece[0] == ' ') {
      piece.erase(0, 1);
    }
    text += piece;
  }
  start[tokens.size()] = text.size();
  std::vector<std::size_t> token_at(text.size());  // (bytes,) the token covering each byte
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    for (std::size_t i = start[p]; i < start[p + 1]; ++i) token_at[i] = p;
  }

  NameMentions out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!std::isalpha(static_cast<unsigned char>(text[i])) ||
        (i > 0 && is_word_character(text[i - 1]))) {
      continue;
    }
    std::size_t end = i;  // the word text[i, end)
    while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
    if (end < text.size() && is_word_character(text[end])) continue;
    const std::string word = text.substr(i, end - i);
    for (std::size_t k = 0; k < name_tokens.names.size(); ++k) {
      if (name_tokens.names[k] != word) continue;
      const std::size_t first = token_at[i], last = token_at[end - 1];
      // Whole tokens: the first starts at the name or at the space before it; the last ends with
      // it.
      const bool whole = (start[first] == i || (start[first] + 1 == i && text[i - 1] == ' ')) &&
                         start[last + 1] == end;
      if (whole) {
        out.mentions.push_back({k, first, last});
      } else if (std::find(out.unusable.begin(), out.unusable.end(), word) == out.unusable.end()) {
        out.unusable.push_back(word);
      }
      break;
    }
    i = end - 1;
  }
  return out;
}

std::vector<NameMention> long_gap_mentions(const std::vector<int>& tokens,
                                           const NameTokens& name_tokens, std::size_t min_gap) {
  std::vector<NameMention> counted;
  std::vector<long long> last_seen(name_tokens.names.size(),
                                   -1);  // (K,) first position, -1 = never
  for (const NameMention& mention : find_name_mentions(tokens, name_tokens).mentions) {
    const long long previous = last_seen[mention.name];
    if (mention.first >= 1 && previous >= 0 &&
        mention.first - static_cast<std::size_t>(previous) > min_gap) {
      counted.push_back(mention);
    }
    last_seen[mention.name] = static_cast<long long>(mention.first);
  }
  return counted;
}

std::vector<std::size_t> long_gap_name_steps(const std::vector<int>& tokens,
                                             const NameTokens& name_tokens, std::size_t min_gap) {
  std::vector<std::size_t> steps;
  for (const NameMention& mention : long_gap_mentions(tokens, name_tokens, min_gap)) {
    steps.push_back(mention.first - 1);  // step first - 1 predicts position first
  }
  return steps;
}

bool name_predicted(const NameMention& mention, const std::vector<int>& tokens,
                    const std::vector<int>& top1) {
  for (std::size_t p = mention.first; p <= mention.last; ++p) {
    if (p == 0 || p - 1 >= top1.size() || top1[p - 1] != tokens[p]) return false;
  }
  return true;
}

NameRecall name_recall(const std::vector<int>& tokens, const std::vector<int>& top1,
                       const NameTokens& name_tokens, std::size_t min_gap) {
  if (tokens.empty() || top1.size() + 1 != tokens.size()) {
    throw std::invalid_argument("name_recall: " + std::to_string(top1.size()) +
                                " predictions for a text of " + std::to_string(tokens.size()) +
                                " tokens");
  }
  NameRecall result;
  result.min_gap = min_gap;
  result.counted = long_gap_mentions(tokens, name_tokens, min_gap);
  for (const NameMention& mention : result.counted) {
    result.steps.push_back(mention.first - 1);
    result.correct += name_predicted(mention, tokens, top1) ? 1 : 0;
  }
  return result;
}

}  // namespace h2o
