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
// ASCII or not (every code point from U+00C0 to U+FFEF, except the signs x and /, the marks and
// the punctuation, symbol, private and special blocks below), with combining marks (U+0300..U+036F)
// after a letter, and an apostrophe (' or U+2019) or a hyphen only between two letters: "Zoë",
// "Łukasz", "O'Brien", "Mary-Jane", "中村". The same letters decide where a word of a text begins
// and ends (word_boundary). Tables of Unicode's categories would say more, at a cost no names list
// needs.
bool is_name_letter(char32_t c) {
  if ((c >= U'A' && c <= U'Z') || (c >= U'a' && c <= U'z')) return true;
  if (c < 0xC0 || c == 0xD7 || c == 0xF7) return false;
  if (c >= 0x300 && c <= 0x36F) return false;    // combining marks: is_combining_mark
  if (c >= 0x2000 && c <= 0x2BFF) return false;  // punctuation, signs, arrows, shapes, symbols
  if (c >= 0x3000 && c <= 0x303F) return false;  // CJK spaces and punctuation
  if (c >= 0xE000 && c <= 0xF8FF) return false;  // private use
  if (c >= 0xFF00 && c <= 0xFF20) return false;  // full-width punctuation and digits
  if ((c >= 0xFF3B && c <= 0xFF40) || (c >= 0xFF5B && c <= 0xFF65)) return false;
  if (c == 0xFEFF || c >= 0xFFF0) return false;  // byte-order mark, specials (and beyond them)
  return true;
}
bool is_combining_mark(char32_t c) { return c >= 0x300 && c <= 0x36F; }
bool is_name_joiner(char32_t c) { return c == U'\'' || c == 0x2019 || c == U'-'; }

// A letter of a script written without spaces between words (Thai, Lao, Myanmar, Khmer, Hiragana,
// Katakana, Han): no space tells where its words end, so a word may end after any of its letters.
bool is_unspaced_letter(char32_t c) {
  return (c >= 0x0E00 && c <= 0x0EFF) ||  // Thai, Lao
         (c >= 0x1000 && c <= 0x109F) ||  // Myanmar
         (c >= 0x1780 && c <= 0x17FF) ||  // Khmer
         (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
         (c >= 0x31F0 && c <= 0x31FF) ||  // Katakana extensions
         (c >= 0x3400 && c <= 0x4DBF) ||  // Han, extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // Han
         (c >= 0xF900 && c <= 0xFAFF) ||  // Han compatibility
         (c >= 0xFF66 && c <= 0xFF9F);    // half-width Katakana
}

// What a word holds: letters, marks, and digits ("Ann3" is one word, not the name Ann).
bool is_name_word_character(char32_t c) {
  return is_name_letter(c) || is_combining_mark(c) || (c >= U'0' && c <= U'9');
}

// The character that ends right before text[j] and where it starts; false at the text's start or
// when the bytes there are not UTF-8.
bool character_before(const std::string& text, std::size_t j, char32_t* c, std::size_t* begin) {
  std::size_t i = j;
  while (i > 0 && j - i < 4) {
    --i;
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) break;  // not a continuation byte
  }
  char32_t found = 0;
  if (i == j || utf8_sequence(text, i, &found) != j - i) return false;
  *c = found;
  *begin = i;
  return true;
}

// True when no word goes on across text[j], between the character before j and the one at j: the
// one rule of where words begin and end, both for the names a text shows and for finding listed
// names in it. A word is letters, marks after a letter, digits, and ' or - (or U+2019) between two
// letters; in a script written without spaces (is_unspaced_letter) a word may end at every letter.
bool word_boundary(const std::string& text, std::size_t j) {
  char32_t before = 0, after = 0;
  std::size_t before_start = 0;
  const std::size_t after_length = j < text.size() ? utf8_sequence(text, j, &after) : 0;
  if (after_length == 0 || !character_before(text, j, &before, &before_start)) return true;
  const auto letter = [](char32_t c) { return is_name_letter(c) || is_combining_mark(c); };
  if (is_name_joiner(after)) {  // the ' of "O'Brien" is inside a word: a letter on each side
    char32_t next = 0;
    const std::size_t next_at = j + after_length;
    return !(letter(before) && next_at < text.size() && utf8_sequence(text, next_at, &next) > 0 &&
             is_name_letter(next));
  }
  if (is_name_joiner(before)) {
    char32_t previous = 0;
    std::size_t previous_start = 0;
    return !(is_name_letter(after) &&
             character_before(text, before_start, &previous, &previous_start) && letter(previous));
  }
  if (!is_name_word_character(before) || !is_name_word_character(after)) return true;
  if (is_combining_mark(after)) return false;  // a mark belongs to the letter before it
  return is_unspaced_letter(before) || is_unspaced_letter(after);
}

// The end of the word that starts at text[i] (a letter at a word_boundary).
std::size_t word_end(const std::string& text, std::size_t i) {
  std::size_t end = i;
  do {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, end, &c);
    end += length == 0 ? 1 : length;
  } while (end < text.size() && !word_boundary(text, end));
  return end;
}

// The bytes of a possessive 's (or U+2019 s) that ends a word at text[j]: "Tom's" is a mention of
// Tom. 0 when none is there.
std::size_t possessive_length(const std::string& text, std::size_t j) {
  for (const std::string possessive : {"'s", "\xE2\x80\x99s"}) {
    if (text.compare(j, possessive.size(), possessive) == 0 &&
        word_boundary(text, j + possessive.size())) {
      return possessive.size();
    }
  }
  return 0;
}

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

// An upper-case letter: ASCII, Latin-1, Latin Extended-A, the runs of Latin Extended-B and Latin
// Extended Additional (Vietnamese) where capitals and small letters alternate, Greek, Cyrillic and
// Armenian. (Latin Extended-B's scattered capitals, as U+0181, are left out: no names list needs
// them, and a table of Unicode's categories would cost more than they are worth.)
bool is_capital(char32_t c) {
  if (c >= U'A' && c <= U'Z') return true;
  if (c < 0xC0) return false;
  if (c <= 0xDE) return c != 0xD7;
  // Latin Extended-A: capitals and small letters alternate, the pairs shifting at U+0139, U+0178.
  if (c >= 0x100 && c <= 0x137) return c % 2 == 0;
  if (c >= 0x139 && c <= 0x148) return c % 2 == 1;
  if (c >= 0x14A && c <= 0x177) return c % 2 == 0;
  if (c >= 0x178 && c <= 0x17F) return c == 0x178 || c == 0x179 || c == 0x17B || c == 0x17D;
  if (c >= 0x1CD && c <= 0x1DC) return c % 2 == 1;  // Latin Extended-B: Ǎ ǎ ... Ǜ ǜ
  if (c >= 0x1DE && c <= 0x1EF) return c % 2 == 0;  // Ǟ ǟ ... Ǯ ǯ
  if (c >= 0x1F8 && c <= 0x21F) return c % 2 == 0;  // Ǹ ǹ ... Ȟ ȟ
  if (c >= 0x222 && c <= 0x233) return c % 2 == 0;  // Ȣ ȣ ... Ȳ ȳ
  // Greek: Ά, Έ .. Ώ (with gaps), Α .. Ϋ (no capital final sigma at U+03A2).
  if (c == 0x386 || (c >= 0x388 && c <= 0x38F && c != 0x38B && c != 0x38D)) return true;
  if (c >= 0x391 && c <= 0x3AB) return c != 0x3A2;
  // Cyrillic: Ѐ .. Я, then alternating pairs (Ӏ a capital of its own, U+04C1 .. U+04CE shifted).
  if (c >= 0x400 && c <= 0x42F) return true;
  if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF)) return c % 2 == 0;
  if (c >= 0x4C0 && c <= 0x4CE) return c == 0x4C0 || c % 2 == 1;
  if (c >= 0x4D0 && c <= 0x52F) return c % 2 == 0;
  if (c >= 0x531 && c <= 0x556) return true;  // Armenian
  if ((c >= 0x1E00 && c <= 0x1E95) || (c >= 0x1EA0 && c <= 0x1EFF)) return c % 2 == 0;
  return false;
}
bool is_small_letter(char32_t c) { return is_name_letter(c) && !is_capital(c); }
bool starts_with_capital(const std::string& word) {
  char32_t first = 0;
  return !word.empty() && utf8_sequence(word, 0, &first) > 0 && is_capital(first);
}

// One word of a text, as names_in_text reads it.
struct TextWord {
  std::string text;
  bool starts_sentence = false;
  bool joins_previous = false;  // only spaces or tabs between the word before and this one
  bool by_number = false;       // a number right before or after it, spaces between ("Class 4B",
                                // "14 Elm Street")
};

// The text's words (word_boundary's rule, a possessive 's taken off) with where they stand.
std::vector<TextWord> text_words(const std::string& text) {
  static const std::vector<std::string> kTitles = {"Mr", "Mrs", "Ms", "Miss", "Dr", "St"};
  std::vector<TextWord> words;
  bool sentence_start = true;  // the text starts a sentence
  bool after_space = true;     // the previous character was a space, a line break or none
  bool only_spaces = false;    // since the last word only spaces and tabs (false before the first)
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, i, &c);
    if (length == 0) {  // not UTF-8: a byte that is no letter
      ++i;
      after_space = only_spaces = false;
      continue;
    }
    if (!is_name_letter(c) || !word_boundary(text, i)) {
      if (c == U'.' || c == U'!' || c == U'?' || c == U':' || c == U'\n') sentence_start = true;
      // An opening quote: " or ' after a space, or the typographic opening marks.
      const bool quote = c == U'"' || c == U'\'';
      if ((quote && after_space) || c == 0x201C || c == 0x2018) sentence_start = true;
      after_space = c == U' ' || c == U'\n' || c == U'\t' || c == U'\r';
      only_spaces = only_spaces && (c == U' ' || c == U'\t');
      i += length;
      continue;
    }
    const std::size_t end = word_end(text, i);
    std::string word = text.substr(i, end - i);
    for (const std::string possessive : {"'s", "\xE2\x80\x99s"}) {  // "Tom's" is Tom's name
      if (word.size() > possessive.size() + 1 &&
          word.compare(word.size() - possessive.size(), possessive.size(), possessive) == 0) {
        word.erase(word.size() - possessive.size());
      }
    }
    const auto digit = [&](std::size_t at) { return text[at] >= '0' && text[at] <= '9'; };
    const auto space = [&](std::size_t at) { return text[at] == ' ' || text[at] == '\t'; };
    std::size_t next = end;  // the first character after the spaces that follow the word
    while (next < text.size() && space(next)) ++next;
    std::size_t before = i;  // just past the last character before the spaces that precede it
    while (before > 0 && space(before - 1)) --before;
    const bool by_number = (next > end && next < text.size() && digit(next)) ||
                           (before < i && before > 0 && digit(before - 1));
    words.push_back({word, sentence_start, only_spaces, by_number});
    sentence_start = after_space = false;
    only_spaces = true;
    i = end;
    // A title's dot ("Mr. Brown") ends no sentence.
    if (std::find(kTitles.begin(), kTitles.end(), word) != kTitles.end() && i < text.size() &&
        text[i] == '.') {
      ++i;
    }
  }
  return words;
}

// Capitalised words that are no names: titles, family and role words (how a character is called,
// but no name to recall), days, and the months that are not also names.
bool is_title_or_date(const std::string& word) {
  static const std::vector<std::string> kNoNames = {
      "Mr",      "Mrs",      "Ms",      "Miss",     "Dr",       "St",      "Sir",       "Mom",
      "Mum",     "Mommy",    "Mummy",   "Mama",     "Dad",      "Daddy",   "Papa",      "Grandma",
      "Grandpa", "Granny",   "Grandad", "Nana",     "Aunt",     "Auntie",  "Uncle",     "Captain",
      "King",    "Queen",    "Prince",  "Princess", "Monday",   "Tuesday", "Wednesday", "Thursday",
      "Friday",  "Saturday", "Sunday",  "January",  "February", "March",   "July",      "September",
      "October", "November", "December"};
  return std::find(kNoNames.begin(), kNoNames.end(), word) != kNoNames.end();
}
bool is_i_word(const std::string& word) {  // "I", "I'm", "I'll"
  return word == "I" || word.compare(0, 2, "I'") == 0 || word.compare(0, 4, "I\xE2\x80\x99") == 0;
}

// A word that may be a name by its letters: a capital, then at least one small letter (so neither
// "I" nor "STOP"), no digit, and none of the capitalised words that are no names.
bool may_be_name(const std::string& word) {
  if (is_i_word(word) || is_title_or_date(word) || !starts_with_capital(word)) return false;
  if (std::any_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  bool small = false;
  for (std::size_t i = 0; i < word.size();) {
    char32_t c = 0;
    const std::size_t n = utf8_sequence(word, i, &c);
    if (n == 0) return false;
    small = small || is_small_letter(c);
    i += n;
  }
  return small;
}

std::string lower_ascii(std::string word) {
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

// A word after which a capitalised word names a place or a thing: an article, a preposition of
// place, or "about" ("the North Star", "to Egypt", "in Paris", "of Class 4B", "a story about
// Egypt"), in any case.
bool is_place_word(const std::string& word) {
  static const std::vector<std::string> kPlaceWords = {
      "the",     "a",     "an",     "in",   "into",   "inside",  "outside", "to", "toward",
      "towards", "from",  "at",     "near", "across", "through", "of",      "on", "onto",
      "over",    "under", "around", "past", "beyond", "along",   "about"};
  return std::find(kPlaceWords.begin(), kPlaceWords.end(), lower_ascii(word)) != kPlaceWords.end();
}

// A capitalised word that makes the next one part of a longer proper noun: not a title or family
// word ("Mrs Okafor", "Aunt May" are names), nor "I".
bool is_proper_noun_part(const std::string& word) {
  return starts_with_capital(word) && !is_title_or_date(word) && !is_i_word(word);
}

// Does the capitalised words[w] stand where a character's name stands? Inside a sentence, and
// neither after an article or a preposition of place ("to Egypt", "the North"; "in old Egypt":
// a preposition other than "to" and one small word), nor right after
// another capitalised word that is no title ("North Star", "New York": the second word of a longer
// proper noun; a word that starts its sentence says nothing by its capital), nor by a number
// ("Class 4B", "14 Elm Street").
bool stands_as_name(const std::vector<TextWord>& words, std::size_t w) {
  const TextWord& word = words[w];
  if (word.starts_sentence || word.by_number) return false;
  if (!word.joins_previous) return true;
  const TextWord& previous = words[w - 1];
  if (is_place_word(previous.text)) return false;
  if (!previous.starts_sentence && is_proper_noun_part(previous.text)) return false;
  // A preposition and one small word before the name ("in old Egypt", "of ancient Rome"), but not
  // after "to" ("to find Max") or an article ("the dog Max"): those words are characters' too.
  if (previous.joins_previous && !starts_with_capital(previous.text)) {
    const std::string before = lower_ascii(words[w - 2].text);
    return !(is_place_word(before) && before != "to" && before != "the" && before != "a" &&
             before != "an");
  }
  return true;
}
}  // namespace

std::vector<std::string> names_in_text(const std::string& text) {
  const std::vector<TextWord> words = text_words(text);
  std::vector<std::string> order;  // capitalised words, by first mention
  struct Seen {
    int mentions = 0;      // capitalised, anywhere
    bool inside = false;   // once at least where no sentence starts
    bool as_name = false;  // once at least where a name stands (stands_as_name)
  };
  std::map<std::string, Seen> capitalised;
  std::set<std::string> inside;  // the different words met where no sentence starts
  for (std::size_t w = 0; w < words.size(); ++w) {
    const TextWord& word = words[w];
    if (!word.starts_sentence) inside.insert(word.text);
    if (!starts_with_capital(word.text)) continue;
    Seen& seen = capitalised[word.text];
    if (seen.mentions == 0) order.push_back(word.text);
    ++seen.mentions;
    seen.inside = seen.inside || !word.starts_sentence;
    seen.as_name = seen.as_name || stands_as_name(words, w);
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
    if (seen.mentions >= 2 && seen.as_name && may_be_name(word)) names.push_back(word);
  }
  return names;
}

bool has_letters_without_capitals(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, i, &c);
    i += length == 0 ? 1 : length;
    // Letters from Hebrew (U+0590) on, but for the blocks of Georgian, phonetic letters, Latin and
    // Greek extended, Glagolitic to Cyrillic Extended, Latin ligatures and full-width Latin.
    const bool cased = c < 0x590 || (c >= 0x10A0 && c <= 0x10FF) || (c >= 0x1C80 && c <= 0x1CBF) ||
                       (c >= 0x1D00 && c <= 0x1FFF) || (c >= 0x2C00 && c <= 0x2DFF) ||
                       (c >= 0xA640 && c <= 0xA7FF) || (c >= 0xAB30 && c <= 0xAB6F) ||
                       (c >= 0xFB00 && c <= 0xFB06) || (c >= 0xFF21 && c <= 0xFF5A);
    if (length > 0 && is_name_letter(c) && !cased) return true;
  }
  return false;
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
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const std::size_t length = utf8_sequence(text, i, &c);
    if (length == 0 || !is_name_letter(c) || !word_boundary(text, i)) {
      i += length == 0 ? 1 : length;
      continue;
    }
    // The longest listed name written here whole: a word_boundary (or a possessive 's) after it.
    std::size_t found = name_tokens.names.size(), end = i;
    for (std::size_t k = 0; k < name_tokens.names.size(); ++k) {
      const std::string& name = name_tokens.names[k];
      if (name.size() <= end - i || text.compare(i, name.size(), name) != 0) continue;
      const std::size_t name_end = i + name.size();
      if (word_boundary(text, name_end) || possessive_length(text, name_end) > 0) {
        found = k;
        end = name_end;
      }
    }
    if (found == name_tokens.names.size()) {
      i += length;
      continue;
    }
    const std::size_t first = token_at[i], last = token_at[end - 1];
    // Whole tokens: the first starts at the name or at the space before it; the last ends with it.
    const bool whole = (start[first] == i || (start[first] + 1 == i && text[i - 1] == ' ')) &&
                       start[last + 1] == end;
    const std::string& name = name_tokens.names[found];
    if (whole) {
      out.mentions.push_back({found, first, last});
    } else if (std::find(out.unusable.begin(), out.unusable.end(), name) == out.unusable.end()) {
      out.unusable.push_back(name);
    }
    i = end;
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
