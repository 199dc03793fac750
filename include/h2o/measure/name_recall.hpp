// name_recall.hpp: can a model (with a given cache) still name a character it last saw long ago?
//
// The project's own stories introduce characters early and name them again much later, so that
// predicting the name needs the early context - exactly what a cache that forgets old tokens
// loses. Name recall measures it on a teacher-forced reading (teacher_forcing.hpp):
//   counted positions: steps t whose next token, tokens[t + 1], is a character's name, and whose
//     previous mention of that same name lies more than `min_gap` tokens back:
//     (t + 1) - p > min_gap, p = the previous position holding that name (first mentions and
//     names never seen before do not count);
//   name recall = the share of counted positions at which the model's top-1 prediction at step t
//     is that name's token.
// A name may be one token or several: a mention is a run of whole tokens whose text is the name,
// written as a word of its own. Where a word begins and ends, Unicode letters decide (the letters
// read_names accepts, any script): a word is letters, combining marks after a letter, digits, and
// ' or - (or U+2019) between two letters, so "Zoë", "Łukasz", "O'Brien" and "Мария" are whole
// words, "Zoëy", "Mia3" and the "Brien" of "O'Brien" no mention of Zoë, Mia or Brien, and a
// possessive 's after the name ("Zoë's") still a mention. Scripts written without spaces (Han,
// Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) have no spaces to bound a word: there a listed
// name matches wherever its letters occur ("中村" in "中村さんは", and in "田中村" too), as long as
// it is a run of whole tokens. Where several listed names fit, the longest counts. Names are
// matched byte for byte as written (a name in decomposed form, "Zoe" + U+0308, matches only text
// written the same way). " Mia" is one token of the project's own tokenizer, " L" + "il" + "y"
// three of stories260K's, and a name the tokenizer spells in byte tokens ("中村": six) is a run of
// whole tokens too. The rule for a mention of T tokens (positions f .. f + T - 1):
//   counted when its previous mention starts more than `min_gap` tokens before it
//     (f - p > min_gap, p = the previous mention's first position);
//   predicted when the run's top-1 is right at every one of its T steps (f - 1 .. f + T - 2),
//     so "Lily" counts as recalled only when " L", "il" and "y" are all the most likely tokens.
// A name written in the text whose first or last token also holds text around it (a vocabulary
// piece such as "y," or "e L") is not a run of whole tokens: it cannot be counted, and
// find_name_mentions lists it as unusable.
//
// Dimension legend: N = tokens in the text, S = N - 1 steps, K = names on the list,
// V = vocabulary size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/text/tokenizer.hpp"

namespace h2o {

// The gap the programs count by default: a name last seen more than 64 tokens back.
constexpr std::size_t kNameGap = 64;

// The character names of the project's stories, one per line (data/names.txt by default).
// A name is letters (with marks), and ' or - between two of them: "Zoë", "O'Brien", "Mary-Jane";
// a byte-order mark before the first line is skipped (read_text_file, as for every text). Throws
// std::runtime_error naming the file when it cannot be read, holds no name, or holds a line that
// is not one name.
std::vector<std::string> read_names(const std::string& path);

// The names a text itself shows: a capitalised word that comes at least twice, once at least where
// a name stands. A name stands inside a sentence (so "Once" and "The" are no names, "Lily" and
// "Max" are; a sentence starts the text, a line, and follows . ! ? : or an opening quote mark), and
// not where a place or a thing does:
//   not after "the", "a", "an", "about" or a preposition of place (in, into, inside, outside, to,
//     toward(s), from, at, near, across, through, of, on, onto, over, under, around, past, beyond,
//     along): "to Egypt", "in Egypt", "a story about Egypt", "the North Star", and not after such a
//     preposition (but "to") and one small word: "in old Egypt" ("to find Max" and "the dog Max"
//     are where names stand); so a word met only there is a place or a thing;
//   not right after another capitalised word (only spaces between) that is no title and does not
//     start its sentence: "North Star", "New York" are one longer proper noun, its second word no
//     name there ("Mrs Okafor" and "Aunt May" are names; "Anna Okafor" counts Anna, and Okafor
//     where Okafor also stands alone);
//   not right before or after a number: "Class 4B", "Room 12", "14 Elm Street".
// "said Sam", "with Sam and Leila", "Mrs Okafor" are where names stand. Capitals are those of
// Latin (Latin-1, Latin Extended-A, the simple runs of Latin Extended-B, Vietnamese), Greek,
// Cyrillic and Armenian. Not names either: "I" and "I'm"-like words, words in capitals ("STOP"),
// words with digits, titles and family words (Mr, Mrs, Miss, Dr, Mom, Dad, Grandma, Grandpa, Aunt,
// Uncle, King, ...: how a character is called, not a name to recall; a dot after Mr, Mrs, Ms, Miss,
// Dr or St ends no sentence), the days, and the months that are not also names (January,
// February, March, July, September to December); "Tom's" counts as "Tom". A text where one
// different word in eight is capitalised inside a sentence and met only once (German nouns, the
// words of titles; a name comes back) shows no names by this rule: its capitals say little about
// names there. Scripts without capitals (Han, Kana, Thai, Arabic, Hebrew, ...) show no names by
// this rule at all: only a names list (--names) can name their characters
// (has_letters_without_capitals tells a program to say so). In order of first mention.
std::vector<std::string> names_in_text(const std::string& text);

// True when the text holds letters of a script without capitals (Han, Kana, Thai, Arabic, Hebrew,
// Devanagari, ...), whose names names_in_text cannot find.
bool has_letters_without_capitals(const std::string& text);

// The names of the list, as the tokenizer spells them.
struct NameTokens {
  std::vector<std::string> names;            // (K,) the names of the list, in its order
  std::vector<std::size_t> tokens_per_name;  // (K,) tokens of " Name" (1 = a single token)
  std::vector<std::string> token_text;       // (V,) each token's text when it follows a word
                                             //      ("" for BOS and EOS)
};

// Which names, spelled how, for this tokenizer.
NameTokens names_as_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& names);

struct NameMention {
  std::size_t name = 0;   // index into NameTokens::names
  std::size_t first = 0;  // position of its first token
  std::size_t last = 0;   // position of its last token (first + T - 1)
};

struct NameMentions {
  std::vector<NameMention> mentions;  // in text order
  std::vector<std::string> unusable;  // names written in the text but not as whole tokens
};

// Every mention of a listed name in tokens (N,), by the rule above.
NameMentions find_name_mentions(const std::vector<int>& tokens, const NameTokens& name_tokens);

// The counted mentions of a text (independent of any run): tokens (N,).
std::vector<NameMention> long_gap_mentions(const std::vector<int>& tokens,
                                           const NameTokens& name_tokens, std::size_t min_gap);

// The first step of each counted mention (the step that predicts its first token).
std::vector<std::size_t> long_gap_name_steps(const std::vector<int>& tokens,
                                             const NameTokens& name_tokens, std::size_t min_gap);

// Did a run with top-1 predictions top1 (S,) predict every token of the mention?
bool name_predicted(const NameMention& mention, const std::vector<int>& tokens,
                    const std::vector<int>& top1);

struct NameRecall {
  std::size_t min_gap = 0;
  std::vector<NameMention> counted;  // the counted mentions
  std::vector<std::size_t> steps;    // the first step of each (tokens[t + 1] begins the name)
  std::size_t correct = 0;           // of them, how many the run predicted (every token top-1)
  double recall() const {
    return steps.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(steps.size());
  }
};

// Name recall of a run's top-1 predictions top1 (S,) over tokens (N,).
NameRecall name_recall(const std::vector<int>& tokens, const std::vector<int>& top1,
                       const NameTokens& name_tokens, std::size_t min_gap);

}  // namespace h2o
