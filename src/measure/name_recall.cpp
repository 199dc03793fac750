#include "h2o/measure/name_recall.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
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

// An upper-case letter: ASCII, Latin-1 (U+00C0..U+00DE) or Latin Extended-A (U+0100..U+017F,
// where capitals and small letters alternate, the pairs shifting by one at U+0139 and U+0178).
bool is_capital(char32_t c) {
  if (c >= U'A' && c <= U'Z') return true;
  if (c >= 0xC0 && c <= 0xDE) return c != 0xD7;
  if (c >= 0x100 && c <= 0x137) return c % 2 == 0;
  if (c >= 0x139 && c <= 0x148) return c % 2 == 1;
  if (c >= 0x14A && c <= 0x177) return c % 2 == 0;
  return c == 0x178 || c == 0x179 || c == 0x17B || c == 0x17D;
}
bool is_small_letter(char32_t c) { return is_name_letter(c) && !is_capital(c); }

// One word of a text, as names_in_text reads it.
struct TextWord {
  std::string text;
  bool starts_sentence = false;
};

// The text's words (letters, marks after them, ' or - between letters) with where they stand.
std::vector<TextWord> text_words(const std::string& text) {
  static const std::vector<std::string> kTitles = {"Mr", "Mrs", "Ms", "Miss", "Dr", "St"};
  std::vector<TextWord> words;
  bool sentence_start = true;  // the text starts a sentence
  bool after_space = true;     // the previous character was a space, a line break or none
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, i, &c);
    if (length == 0) {  // not UTF-8: a byte that is no letter
      ++i;
      after_space = false;
      continue;
    }
    if (!is_name_letter(c)) {
      if (c == U'.' || c == U'!' || c == U'?' || c == U':' || c == U'\n') sentence_start = true;
      // An opening quote: " or ' after a space, or the typographic opening marks.
      const bool quote = c == U'"' || c == U'\'';
      if ((quote && after_space) || c == 0x201C || c == 0x2018) sentence_start = true;
      after_space = c == U' ' || c == U'\n' || c == U'\t' || c == U'\r';
      i += length;
      continue;
    }
    // A word: letters and marks, with ' or - (or U+2019) only between two letters.
    std::size_t end = i;
    while (end < text.size()) {
      char32_t d = 0;
      const std::size_t n = utf8_sequence(text, end, &d);
      if (n == 0) break;
      if (is_name_letter(d) || is_combining_mark(d)) {
        end += n;
        continue;
      }
      char32_t next = 0;
      const std::size_t m = end + n < text.size() ? utf8_sequence(text, end + n, &next) : 0;
      if (is_name_joiner(d) && m > 0 && is_name_letter(next)) {
        end += n;
        continue;
      }
      break;
    }
    std::string word = text.substr(i, end - i);
    for (const std::string possessive : {"'s", "\xE2\x80\x99s"}) {  // "Tom's" is Tom's name
      if (word.size() > possessive.size() + 1 &&
          word.compare(word.size() - possessive.size(), possessive.size(), possessive) == 0) {
        word.erase(word.size() - possessive.size());
      }
    }
    words.push_back({word, sentence_start});
    sentence_start = false;
    after_space = false;
    i = end;
    // A title's dot ("Mr. Brown") ends no sentence.
    if (std::find(kTitles.begin(), kTitles.end(), word) != kTitles.end() && i < text.size() &&
        text[i] == '.') {
      ++i;
    }
  }
  return words;
}

// A word that may be a name by its letters: a capital, then at least one small letter (so neither
// "I" nor "STOP"), and none of the capitalised words that are no names.
bool may_be_name(const std::string& word) {
  // Titles, family and role words (how a character is called, but no name to recall), days, and
  // the months that are not also names.
  static const std::vector<std::string> kNoNames = {
      "Mr",      "Mrs",      "Ms",      "Miss",     "Dr",       "St",      "Sir",       "Mom",
      "Mum",     "Mommy",    "Mummy",   "Mama",     "Dad",      "Daddy",   "Papa",      "Grandma",
      "Grandpa", "Granny",   "Grandad", "Nana",     "Aunt",     "Auntie",  "Uncle",     "Captain",
      "King",    "Queen",    "Prince",  "Princess", "Monday",   "Tuesday", "Wednesday", "Thursday",
      "Friday",  "Saturday", "Sunday",  "January",  "February", "March",   "July",      "September",
      "October", "November", "December"};
  if (word.compare(0, 2, "I'") == 0 || word.compare(0, 4, "I\xE2\x80\x99") == 0) return false;
  if (std::find(kNoNames.begin(), kNoNames.end(), word) != kNoNames.end()) return false;
  char32_t first = 0;
  const std::size_t length = utf8_sequence(word, 0, &first);
  if (length == 0 || !is_capital(first)) return false;
  for (std::size_t i = length; i < word.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_sequence(word, i, &c);
    if (n == 0) return false;
    if (is_small_letter(c)) return true;
    i += n;
  }
  return false;
}
}  // namespace

std::vector<std::string> names_in_text(const std::string& text) {
  const std::vector<TextWord> words = text_words(text);
  std::vector<std::string> order;  // capitalised words, by first mention
  struct Seen {
    int mentions = 0;     // capitalised, anywhere
    bool inside = false;  // once at least where no sentence starts
  };
  std::map<std::string, Seen> capitalised;
  std::set<std::string> inside;  // the different words met where no sentence starts
  for (const TextWord& word : words) {
    if (!word.starts_sentence) inside.insert(word.text);
    char32_t first = 0;
    if (utf8_sequence(word.text, 0, &first) == 0 || !is_capital(first)) continue;
    Seen& seen = capitalised[word.text];
    if (seen.mentions == 0) order.push_back(word.text);
    ++seen.mentions;
    seen.inside = seen.inside || !word.starts_sentence;
  }
  // Capitalised inside a sentence and met only once: a German noun, a word of a title, seldom a
  // name (a name comes back). One different word in eight like that: capitals mean more than
  // names in this text.
  std::size_t lone_capitals = 0;
  for (const auto& [word, seen] : capitalised) lone_capitals += seen.inside && seen.mentions == 1;
  if (lone_capitals > 0 && lone_capitals * 8 >= inside.size()) return {};
  std::vector<std::string> names;
  for (const std::string& word : order) {
    const Seen& seen = capitalised[word];
    if (seen.mentions >= 2 && seen.inside && may_be_name(word)) names.push_back(word);
  }
  return names;
}

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
