// test_name_recall.cpp: which tokens are names, which steps count, and how recall is scored
// (name_recall.hpp), on a small hand-made vocabulary and hand-written texts.
#include <algorithm>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/base/random.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/text/tokenizer.hpp"
#include "h2o_catch.hpp"
#include "test_support.hpp"

namespace {

// <unk>, BOS, EOS, the 256 byte tokens, then a few pieces of our own at ids 259...
h2o::Tokenizer small_tokenizer() {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  // ... and the characters and pieces encode() builds " Mia" and " Tom" from (llama2.c merges
  // two pieces only into a piece of the vocabulary), after them.
  for (const char* piece :
       {" Mia", "Mia", " Tom", " the", " dog", " Sam", "\n", " Lil", "y,", " ",
        "M",    "i",   "a",    "T",    "o",    "m",    " M", " Mi",  " T", " To"}) {
    pieces.push_back(piece);
  }
  return h2o::Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
}

constexpr int kSpaceMia = 259, kMia = 260, kTom = 261, kThe = 262, kDog = 263, kSam = 264,
              kNewline = 265, kLil = 266, kYComma = 267;
// Byte tokens (ids 3..258) for " Zoe", a name this vocabulary spells letter by letter.
constexpr int kSpace = 3 + ' ', kZ = 3 + 'Z', kO = 3 + 'o', kE = 3 + 'e';

}  // namespace

TEST_CASE("names are spelled in tokens, split names in several", "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Mia", "Tom", "Zoe"});
  CHECK(names.names == std::vector<std::string>{"Mia", "Tom", "Zoe"});
  CHECK(names.tokens_per_name == std::vector<std::size_t>{1, 1, 4});  // " Zoe": 4 byte tokens
  // Both spellings of Mia (after a space, at the start of a line) are mentions; "Sam" is a piece
  // but not on the list; "the" is no name.
  const std::vector<int> tokens = {1, kSpaceMia, kThe, kSam, kNewline, kMia, kDog};
  const h2o::NameMentions found = h2o::find_name_mentions(tokens, names);
  REQUIRE(found.mentions.size() == 2);
  CHECK(found.mentions[0].name == 0);
  CHECK(found.mentions[0].first == 1);
  CHECK(found.mentions[0].last == 1);
  CHECK(found.mentions[1].first == 5);
  CHECK(found.unusable.empty());
}

TEST_CASE("a name of several tokens counts when all its tokens are predicted", "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Zoe"});
  //                                0  1       2   3   4   5     6     7       8   9   10
  const std::vector<int> tokens = {1, kSpace, kZ, kO, kE, kThe, kDog, kSpace, kZ, kO, kE};
  // After BOS the space is the dummy prefix: the first mention is "Zoe" at 2..4, the second
  // at 8..10.
  const h2o::NameMentions found = h2o::find_name_mentions(tokens, names);
  REQUIRE(found.mentions.size() == 2);
  CHECK(found.mentions[0].first == 2);
  CHECK(found.mentions[0].last == 4);
  CHECK(found.mentions[1].first == 8);
  CHECK(found.mentions[1].last == 10);
  CHECK(h2o::long_gap_name_steps(tokens, names, 5) == std::vector<std::size_t>{7});  // 6 > 5
  CHECK(h2o::long_gap_name_steps(tokens, names, 6).empty());
  std::vector<int> top1(tokens.begin() + 1, tokens.end());  // every prediction right
  CHECK(h2o::name_recall(tokens, top1, names, 5).correct == 1);
  for (std::size_t wrong : {7, 8, 9}) {  // one token of the name wrong: not recalled
    std::vector<int> almost = top1;
    almost[wrong] = kThe;
    CHECK(h2o::name_recall(tokens, almost, names, 5).correct == 0);
  }
  std::vector<int> before = top1;  // a wrong step before or after the name does not matter
  before[6] = kThe;
  CHECK(h2o::name_recall(tokens, before, names, 5).correct == 1);
}

TEST_CASE("a name inside a token with other text is unusable, inside a longer word no name",
          "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Lily", "Tom"});
  // " Lil" + "y," : "Lily," whose last token also holds the comma. " Tom" + "y,": "Tomy", no name.
  const std::vector<int> tokens = {1, kThe, kLil, kYComma, kTom, kYComma, kDog};
  const h2o::NameMentions found = h2o::find_name_mentions(tokens, names);
  CHECK(found.mentions.empty());
  CHECK(found.unusable == std::vector<std::string>{"Lily"});
}

TEST_CASE("only names seen more than min_gap tokens before count", "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Mia", "Tom"});
  //                            0  1          2     3     4     5     6         7     8     9
  const std::vector<int> tokens = {1,    kSpaceMia, kThe, kTom, kDog,
                                   kThe, kNewline,  kMia, kTom, kThe};
  // Mia at 1, again (other spelling) at 7: gap 6. Tom at 3, again at 8: gap 5.
  CHECK(h2o::long_gap_name_steps(tokens, names, 4) == std::vector<std::size_t>{6, 7});
  CHECK(h2o::long_gap_name_steps(tokens, names, 5) == std::vector<std::size_t>{6});  // 5 is not > 5
  CHECK(h2o::long_gap_name_steps(tokens, names, 6).empty());
  CHECK(h2o::long_gap_name_steps(tokens, names, 0) == std::vector<std::size_t>{6, 7});

  // A run predicting Mia at step 6 but not Tom at step 7.
  std::vector<int> top1(tokens.size() - 1, kThe);
  top1[6] = kMia;
  const h2o::NameRecall recall = h2o::name_recall(tokens, top1, names, 4);
  CHECK(recall.steps == std::vector<std::size_t>{6, 7});
  CHECK(recall.correct == 1);
  CHECK(recall.recall() == Approx(0.5));
  // The other spelling of the right name is not the text's next token: not counted as correct.
  top1[6] = kSpaceMia;
  CHECK(h2o::name_recall(tokens, top1, names, 4).correct == 0);
  CHECK(h2o::name_recall(tokens, top1, names, 100).recall() == 0.0);  // nothing counted
  CHECK_THROWS_AS(h2o::name_recall(tokens, std::vector<int>(3, 0), names, 4),
                  std::invalid_argument);
}

TEST_CASE("the names file is read as one name per line and refused when it is not",
          "[name_recall]") {
  h2o_test::TempDir dir("names");
  const std::string good = dir.file("names.txt");
  h2o_test::write_bytes(good, {'M', 'i', 'a', '\n', '\n', 'T', 'o', 'm', '\r', '\n'});
  CHECK(h2o::read_names(good) == std::vector<std::string>{"Mia", "Tom"});

  const std::string two_words = dir.file("two_words.txt");
  h2o_test::write_bytes(two_words, {'M', 'a', 'r', 'y', ' ', 'A', 'n', 'n', '\n'});
  CHECK_THROWS_WITH(h2o::read_names(two_words), h2o_catch::Contains("line 1 ('Mary Ann')"));
  // What a person's name can hold: letters with marks, ' or - between letters; a byte-order mark
  // before the first line is skipped. (Written as bytes: "Zo\xC3\xAB" is Zoë, "\xC5\x81" is Ł.)
  // Not letters: signs as x, dashes, symbols (a star), full-width punctuation (!), private use.
  const std::string people = dir.file("people.txt");
  {
    std::ofstream out(people, std::ios::binary);
    out << "\xEF\xBB\xBFZo\xC3\xAB\n\xC5\x81ukasz\nO'Brien\nMary-Jane\nO\xE2\x80\x99Neil\n"
           "Zoe\xCC\x88\n";
  }
  CHECK(h2o::read_names(people) == std::vector<std::string>{"Zo\xC3\xAB", "\xC5\x81ukasz",
                                                            "O'Brien", "Mary-Jane",
                                                            "O\xE2\x80\x99Neil", "Zoe\xCC\x88"});
  for (const std::string bad : {"-Ann", "Ann-", "O''Brien", "Ann3", "\xCC\x88Zoe", "Mia\xC3",
                                "Ann\xC3\x97", "Ann\xE2\x80\x94Lee", "Ann.", "\xEF\xBB\xBF",
                                "Ann\xE2\x98\x85", "Ann\xEF\xBC\x81", "Ann\xEE\x80\x80"}) {
    const std::string file = dir.file("bad.txt");
    {
      std::ofstream out(file, std::ios::binary);
      out << "Mia\n" << bad << "\n";
    }
    INFO("line: " << bad);
    CHECK_THROWS_WITH(h2o::read_names(file),
                      h2o_catch::Contains("line 2") && h2o_catch::Contains("is not one name"));
  }
  const std::string blank = dir.file("blank.txt");
  h2o_test::write_bytes(blank, {'\n', '\n'});
  CHECK_THROWS_WITH(h2o::read_names(blank), h2o_catch::Contains("holds no names"));
  CHECK_THROWS_WITH(h2o::read_names(dir.file("missing.txt")),
                    h2o_catch::Contains("does not exist"));
  CHECK_THROWS_WITH(h2o::read_names("/dev/null"), h2o_catch::Contains("not a regular file"));
}

// ------------------------------------------------------------------------------------------------
// The names a text shows (names_in_text) and the default names (app/default_files.hpp), on stories
// written for these tests: common names, invented ones, and words that only look like names.

TEST_CASE("a text shows its own characters' names, common and invented", "[name_recall]") {
  const std::string story =
      "Once upon a time Lily and her brother Tom had a dog called Max. The dog was small. "
      "\"Come here, Max!\" called Lily. Tom laughed, and Max ran to him.\n\n"
      "One day they met Brindlewick, an old owl who lived in the oak. Lily asked Brindlewick "
      "about the stars. The owl told them about Quenna, the brightest one, and Tom's eyes grew "
      "wide: he wanted to see Quenna too.";
  // In order of first mention; "Tom's" is Tom. Not names: Once, The, One (they start sentences),
  // Come (after an opening quote).
  CHECK(h2o::names_in_text(story) ==
        std::vector<std::string>{"Lily", "Tom", "Max", "Brindlewick", "Quenna"});
}

TEST_CASE("words that only look like names are not names", "[name_recall]") {
  // Sentence starts only: "Bob" twice, each time first in its sentence, or after a colon.
  CHECK(h2o::names_in_text("Bob went out. Bob came back! Note: Bob sat down.").empty());
  // Once is not enough.
  CHECK(h2o::names_in_text("the dog saw Pip and ran home").empty());
  CHECK(h2o::names_in_text("the dog saw Pip and Pip ran") == std::vector<std::string>{"Pip"});
  // I, I'm, capitals, titles and family words, days and months; a title's dot ends no sentence,
  // so Brown after "Mr." is inside a sentence.
  const std::string words =
      "Then I said I'm here and I'll stay, and we shouted STOP and STOP again. We saw Mr. Brown "
      "and Mr. Brown waved. Mom and Grandma came on Monday, and on Monday in December, and in "
      "December Dad and Grandpa came too with Mom, Dad, Grandma and Grandpa.";
  CHECK(h2o::names_in_text(words) == std::vector<std::string>{"Brown"});
  // Letters beyond ASCII: capitals with marks, and a name with an apostrophe inside.
  CHECK(h2o::names_in_text("we met \xC5\x81ukasz and Zo\xC3\xAB; \xC5\x81ukasz smiled at "
                           "Zo\xC3\xAB and O'Brien, and O'Brien waved") ==
        std::vector<std::string>{"\xC5\x81ukasz", "Zo\xC3\xAB", "O'Brien"});
  // A text that capitalises its nouns (German) tells nothing about names by its capitals.
  CHECK(h2o::names_in_text("Am Morgen sah Lena einen Vogel im Garten. Der Vogel sang, und Lena "
                           "holte ihre Mutter aus der Küche. Die Mutter sah den Vogel auch.")
            .empty());
  CHECK(h2o::names_in_text("").empty());
}

TEST_CASE("seeded random texts: every name found recurs where a name stands", "[name_recall]") {
  // Invariants over random stories built from a few words: a found name is a capitalised word of
  // the text, met at least twice, once at least inside a sentence after neither "the" nor "to"
  // and after no other capitalised word of that sentence that is no title (Mom is one; "I" and a
  // word that starts its sentence join nothing).
  const std::vector<std::string> vocabulary = {"the", "dog",  "ran",  "Ada",   "Tilo", "I",
                                               "Mom", "Once", "said", "Quill", "and",  "to"};
  const auto joins = [](const std::string& word) {
    return word == "Ada" || word == "Tilo" || word == "Quill" || word == "Once";
  };
  h2o::Rng rng(36);
  for (int round = 0; round < 300; ++round) {
    std::string text;
    struct Placed {
      std::string word;
      bool starts = false;  // first in its sentence
    };
    std::vector<Placed> words;
    bool first = true;
    for (std::size_t w = 0, n = 3 + rng.below(40); w < n; ++w) {
      const std::string& word =
          vocabulary[rng.below(static_cast<std::uint32_t>(vocabulary.size()))];
      text += (text.empty() ? "" : " ") + word;
      words.push_back({word, first});
      first = rng.below(5) == 0;
      if (first) text += ".";
    }
    // Where a name stands, by the rule restated for these words.
    const auto stands = [&](std::size_t w) {
      if (words[w].starts) return false;
      const Placed& before = words[w - 1];  // in the same sentence
      if (before.word == "the" || before.word == "to") return false;
      return before.starts || !joins(before.word);
    };
    const std::vector<std::string> found = h2o::names_in_text(text);
    INFO(text);
    for (const std::string& name : found) {
      std::size_t mentions = 0;
      bool as_name = false;
      for (std::size_t w = 0; w < words.size(); ++w) {
        if (words[w].word != name) continue;
        ++mentions;
        as_name = as_name || stands(w);
      }
      CHECK(mentions >= 2);
      CHECK(as_name);
      CHECK(name != "I");  // never I or Mom ("Once" inside a sentence is as good as a name)
      CHECK(name != "Mom");
    }
    // And every such word of the text is found, unless a capitalised word met only once inside a
    // sentence says the text capitalises more than names (as German does its nouns).
    bool lone_capital = false;
    for (const std::string word : {"Ada", "Tilo", "Quill", "I", "Mom", "Once"}) {
      lone_capital =
          lone_capital || std::count_if(words.begin(), words.end(),
                                        [&](const Placed& w) { return w.word == word; }) == 1;
    }
    if (lone_capital) continue;
    for (const std::string name : {"Ada", "Tilo", "Quill", "Once"}) {
      std::size_t mentions = 0;
      bool as_name = false;
      for (std::size_t w = 0; w < words.size(); ++w) {
        if (words[w].word != name) continue;
        ++mentions;
        as_name = as_name || stands(w);
      }
      const bool expected = mentions >= 2 && as_name;
      const bool listed = std::find(found.begin(), found.end(), name) != found.end();
      CHECK(listed == expected);
    }
  }
}

TEST_CASE("the default names are the project's lists and the text's own", "[name_recall]") {
  const std::vector<std::string> files = h2o::default_names_files();
  // data/handwritten_names.txt, heldout_names.txt, names.txt, unseen_names.txt
  CHECK(files.size() == 4);
  std::vector<std::string> lists;
  for (const std::string& file : files) {
    for (const std::string& name : h2o::read_names(file)) {
      if (std::find(lists.begin(), lists.end(), name) == lists.end()) lists.push_back(name);
    }
  }
  const std::string story = "Lily found Brindlewick in the garden, and Lily and Brindlewick sang.";
  const std::vector<std::string> names = h2o::default_names({story});
  // The lists first, each name once, then what the text adds (Lily is listed already).
  REQUIRE(names.size() == lists.size() + 1);
  CHECK(std::vector<std::string>(names.begin(), names.end() - 1) == lists);
  CHECK(names.back() == "Brindlewick");
  CHECK(std::find(lists.begin(), lists.end(), "Lily") != lists.end());
  CHECK(std::find(lists.begin(), lists.end(), "Max") != lists.end());
  CHECK(std::find(lists.begin(), lists.end(), "Tom") != lists.end());

  // --names decides alone; without it the defaults.
  h2o_test::TempDir dir("default_names");
  {
    std::ofstream out(dir.file("names.txt"));
    out << "Quenna\n";
  }
  const auto parsed = [](const std::vector<std::string>& words) {
    h2o::ArgParser args("test", "names");
    h2o::add_names_option(args);
    std::vector<const char*> argv = {"test"};
    for (const std::string& word : words) argv.push_back(word.c_str());
    args.parse(static_cast<int>(argv.size()), argv.data());
    return args;
  };
  CHECK(h2o::names_from_options(parsed({"--names", dir.file("names.txt")}), {story}) ==
        std::vector<std::string>{"Quenna"});
  CHECK(h2o::names_from_options(parsed({}), {story}) == names);
}

// ------------------------------------------------------------------------------------------------
// Names in any script, on the project's own tokenizer (data/tokenizer.bin), which spells a letter
// it has no piece for in byte tokens.

namespace {

h2o::Tokenizer shipped_tokenizer() {
  return h2o::Tokenizer::load(std::string(H2O_DATA_DIR) + "/tokenizer.bin", 4096);
}

// How often each listed name is mentioned in `text` (encoded with BOS, as the programs read it),
// checking that every mention's tokens spell the name.
std::vector<std::size_t> mention_counts(const h2o::Tokenizer& tokenizer,
                                        const std::vector<std::string>& names,
                                        const std::string& text,
                                        std::vector<std::string>* unusable = nullptr) {
  const h2o::NameTokens name_tokens = h2o::names_as_tokens(tokenizer, names);
  const std::vector<int> tokens = tokenizer.encode(text, true, false);
  const h2o::NameMentions found = h2o::find_name_mentions(tokens, name_tokens);
  std::vector<std::size_t> counts(names.size(), 0);
  for (const h2o::NameMention& mention : found.mentions) {
    std::string spelled;
    for (std::size_t p = mention.first; p <= mention.last; ++p) {
      spelled += name_tokens.token_text[static_cast<std::size_t>(tokens[p])];
    }
    if (!spelled.empty() && spelled[0] == ' ') spelled.erase(0, 1);
    CHECK(spelled == names[mention.name]);
    ++counts[mention.name];
  }
  if (unusable != nullptr) *unusable = found.unusable;
  return counts;
}

}  // namespace

TEST_CASE("names with marks, apostrophes and other scripts are whole words", "[name_recall]") {
  const h2o::Tokenizer tokenizer = shipped_tokenizer();
  // Zoë, Łukasz, José, O'Brien, O’Neil, 中村, Мария, Ελένη (UTF-8 written as bytes).
  const std::vector<std::string> names = {"Zo\xC3\xAB",
                                          "\xC5\x81ukasz",
                                          "Jos\xC3\xA9",
                                          "O'Brien",
                                          "O\xE2\x80\x99Neil",
                                          "\xE4\xB8\xAD\xE6\x9D\x91",
                                          "\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F",
                                          "\xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7"};
  // Zoë three times (once as "Zoë's"), but not in "Zoëy"; Łukasz twice; José once, and not in
  // "Joséphine"; O'Brien twice ("O'Brien's" too), not "O'Briens"; O’Neil once.
  const std::string latin =
      "Zo\xC3\xAB ran to \xC5\x81ukasz. \"Zo\xC3\xAB!\" called Jos\xC3\xA9 and O'Brien. "
      "Zo\xC3\xAB's kite and O'Brien's hat flew. Zo\xC3\xAB"
      "y and Jos\xC3\xA9phine and the "
      "O'Briens laughed with \xC5\x81ukasz and O\xE2\x80\x99Neil.";
  CHECK(mention_counts(tokenizer, names, latin) ==
        std::vector<std::size_t>{3, 2, 1, 2, 1, 0, 0, 0});
  // An apostrophe or hyphen between letters is inside the word: no Brien in "O'Brien", no Mary in
  // "Mary-Jane"; a quote mark around a name is no part of it.
  CHECK(mention_counts(tokenizer, {"Brien", "Mary", "Mary-Jane"},
                       "O'Brien met Mary-Jane and 'Mary', and Brien's dog.") ==
        std::vector<std::size_t>{1, 1, 1});
  // Cyrillic and Greek words are bounded by their own letters: not in "Марияна".
  const std::string other =
      "\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F and \xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7 met "
      "\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F\xD0\xBD\xD0\xB0; \xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8"
      "\xD1\x8F, \xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7.";
  CHECK(mention_counts(tokenizer, names, other) ==
        std::vector<std::size_t>{0, 0, 0, 0, 0, 0, 2, 2});
}

TEST_CASE("in a script written without spaces a listed name matches wherever it occurs",
          "[name_recall]") {
  const h2o::Tokenizer tokenizer = shipped_tokenizer();
  // 中村 and 中: the longer listed name counts where both fit.
  const std::vector<std::string> names = {"\xE4\xB8\xAD\xE6\x9D\x91", "\xE4\xB8\xAD"};
  // "中村さんは学校へ行った。田中村の中村。" : 中村 before Hiragana, inside 田中村 (no spaces to
  // tell words there), after の and before 。 - three times; 中 alone nowhere.
  const std::string text =
      "\xE4\xB8\xAD\xE6\x9D\x91\xE3\x81\x95\xE3\x82\x93\xE3\x81\xAF\xE5\xAD\xA6\xE6\xA0\xA1\xE3"
      "\x81\xB8\xE8\xA1\x8C\xE3\x81\xA3\xE3\x81\x9F\xE3\x80\x82\xE7\x94\xB0\xE4\xB8\xAD\xE6\x9D"
      "\x91\xE3\x81\xAE\xE4\xB8\xAD\xE6\x9D\x91\xE3\x80\x82";
  CHECK(mention_counts(tokenizer, names, text) == std::vector<std::size_t>{3, 0});
  // Beside Latin letters too ("中村Tom" is 中村 then Tom), and 中 alone when no 村 follows.
  CHECK(mention_counts(tokenizer, names,
                       "\xE4\xB8\xAD\xE6\x9D\x91Tom \xE4\xB8\xAD and \xE4\xB8\xAD!") ==
        std::vector<std::size_t>{1, 2});
  // The project's tokenizer spells 中村 in byte tokens: six of them, a run of whole tokens.
  CHECK(h2o::names_as_tokens(tokenizer, names).tokens_per_name[0] >= 6);
}

TEST_CASE("long-gap events count for names in any script, and never for a name met once",
          "[name_recall]") {
  const h2o::Tokenizer tokenizer = shipped_tokenizer();
  const std::vector<std::string> names = {"Zo\xC3\xAB", "O'Brien", "\xE4\xB8\xAD\xE6\x9D\x91",
                                          "\xC5\x81ukasz"};
  std::string filler;  // 12 sentences of plain words, far more than 64 tokens
  for (int i = 0; i < 12; ++i) filler += " The dog ran down the long road to the old red barn.";
  // Zoë, O'Brien, 中村 come back after the filler; Łukasz is met once.
  const std::string text =
      "Zo\xC3\xAB met O'Brien and \xE4\xB8\xAD\xE6\x9D\x91 and \xC5\x81ukasz." + filler +
      " Then Zo\xC3\xAB saw O'Brien and \xE4\xB8\xAD\xE6\x9D\x91.";
  const h2o::NameTokens name_tokens = h2o::names_as_tokens(tokenizer, names);
  const std::vector<int> tokens = tokenizer.encode(text, true, false);
  const std::vector<h2o::NameMention> events =
      h2o::long_gap_mentions(tokens, name_tokens, h2o::kNameGap);
  REQUIRE(events.size() == 3);
  CHECK(events[0].name == 0);
  CHECK(events[1].name == 1);
  CHECK(events[2].name == 2);
  // A text where each name is met only once has no event at any gap; a text without names none.
  const std::string once = "Zo\xC3\xAB met O'Brien." + filler + " \xC5\x81ukasz came.";
  CHECK(h2o::long_gap_mentions(tokenizer.encode(once, true, false), name_tokens, 0).empty());
  const std::vector<int> plain = tokenizer.encode(filler, true, false);
  CHECK(h2o::find_name_mentions(plain, name_tokens).mentions.empty());
  CHECK(h2o::long_gap_mentions(plain, name_tokens, 0).empty());
  CHECK(h2o::names_in_text(filler).empty());
}

TEST_CASE("a names file with a byte-order mark and a name in decomposed form", "[name_recall]") {
  const h2o::Tokenizer tokenizer = shipped_tokenizer();
  h2o_test::TempDir dir("names_bom");
  const std::string path = dir.file("names.txt");
  {
    std::ofstream out(path, std::ios::binary);  // BOM, 中村, Мария, then Zoë as Zoe + U+0308
    out << "\xEF\xBB\xBF\xE4\xB8\xAD\xE6\x9D\x91\r\n\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F\r\n"
           "Zoe\xCC\x88\r\n";
  }
  const std::vector<std::string> names = h2o::read_names(path);
  REQUIRE(names == std::vector<std::string>{"\xE4\xB8\xAD\xE6\x9D\x91",
                                            "\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F",
                                            "Zoe\xCC\x88"});
  // The byte-order mark is no part of the first name: 中村 is found.
  CHECK(mention_counts(tokenizer, names,
                       "\xE4\xB8\xAD\xE6\x9D\x91 and \xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F") ==
        std::vector<std::size_t>{1, 1, 0});
  // A name is matched as written: the decomposed Zoë matches the decomposed text, not "Zoë"
  // written as one letter; and the decomposed text is no mention of "Zoe" (a mark follows it).
  CHECK(mention_counts(tokenizer, names, "Zoe\xCC\x88 and Zo\xC3\xAB") ==
        std::vector<std::size_t>{0, 0, 1});
  CHECK(mention_counts(tokenizer, {"Zoe"}, "Zoe\xCC\x88 and Zoe ran") ==
        std::vector<std::size_t>{1});
}

TEST_CASE("a text shows names in Greek and Cyrillic, and no names in a script without capitals",
          "[name_recall]") {
  // Мария and Ελένη each twice inside sentences; Ελένη once more at a sentence start.
  const std::string story =
      "Once \xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F met \xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7"
      " by the sea. \xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7 waved, and \xD0\x9C\xD0\xB0\xD1\x80"
      "\xD0\xB8\xD1\x8F waved back at the boat with \xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7.";
  CHECK(h2o::names_in_text(story) ==
        std::vector<std::string>{"\xD0\x9C\xD0\xB0\xD1\x80\xD0\xB8\xD1\x8F",
                                 "\xCE\x95\xCE\xBB\xCE\xAD\xCE\xBD\xCE\xB7"});
  CHECK_FALSE(h2o::has_letters_without_capitals(story));
  // 中村さんは...: no capitals to find a name by; the programs say only --names can name them.
  const std::string han =
      "\xE4\xB8\xAD\xE6\x9D\x91\xE3\x81\x95\xE3\x82\x93\xE3\x81\xAF "
      "\xE4\xB8\xAD\xE6\x9D\x91\xE3\x81\x95\xE3\x82\x93.";
  CHECK(h2o::names_in_text(han).empty());
  CHECK(h2o::has_letters_without_capitals(han));
  CHECK_FALSE(h2o::has_letters_without_capitals("Zo\xC3\xAB and \xC5\x81ukasz, Tom's dog"));
}

TEST_CASE("words naming places and things are not characters' names", "[name_recall]") {
  // A class trip to Egypt: Egypt only after prepositions, the North Star after "the", Class 4B
  // before a number, New York as one longer proper noun.
  const std::string trip =
      "Class 4B went on a trip to Egypt. In Egypt the children of Class 4B saw the pyramids, and "
      "at night they looked for the North Star. Sam found the North Star first. \"Look!\" said "
      "Sam, and Leila laughed. Mrs Okafor, their teacher, came from New York. She told Sam and "
      "Leila about New York, and Anna Okafor, her sister, waved. Okafor is a name from Nigeria, "
      "said Mrs Okafor, and Leila wrote it down. They flew home from Egypt.";
  CHECK(h2o::names_in_text(trip) == std::vector<std::string>{"Sam", "Leila", "Okafor"});
  // Each rule alone: after an article or a place word; after another capital; by a number.
  CHECK(h2o::names_in_text("we went to Egypt and slept in Egypt").empty());
  CHECK(h2o::names_in_text("we saw the Moon and a Moon").empty());
  CHECK(h2o::names_in_text("a room of old Egypt, as cats in old Egypt").empty());
  CHECK(h2o::names_in_text("we flew to New York and lived in New York").empty());
  CHECK(h2o::names_in_text("we met Class 4B and Class 4B sang").empty());
  CHECK(h2o::names_in_text("call at 14 Elm Street or at 14 Elm Street").empty());
  // Characters still count: after a verb, beside "and", after a title, alone after a full name.
  CHECK(h2o::names_in_text("then said Sam, and Sam ran") == std::vector<std::string>{"Sam"});
  CHECK(h2o::names_in_text("we went to find Max with the dog Max") ==
        std::vector<std::string>{"Max"});
  CHECK(h2o::names_in_text("with Sam and Leila, then Leila and Sam") ==
        std::vector<std::string>{"Sam", "Leila"});
  CHECK(h2o::names_in_text("we met Mrs Okafor and Mrs Okafor smiled") ==
        std::vector<std::string>{"Okafor"});
  CHECK(h2o::names_in_text("we met Anna Okafor and Anna Okafor smiled") ==
        std::vector<std::string>{"Anna"});
  CHECK(h2o::names_in_text("we met Anna Okafor at the school gate and later Okafor smiled at "
                           "Anna") == std::vector<std::string>{"Anna", "Okafor"});
  // A word that starts its sentence joins nothing: "Then Tom" leaves Tom a name.
  CHECK(h2o::names_in_text("Then Tom ran. Then Tom sat.") == std::vector<std::string>{"Tom"});
}

TEST_CASE("seeded random texts: every name written as a word of its own is one mention",
          "[name_recall]") {
  // Random texts of names (with marks, an apostrophe, Han), words that hold a name without being
  // it, and punctuation, each word apart by a space: each name counts exactly where it was placed
  // alone or with a possessive 's glued on, and every mention's tokens spell the name.
  const h2o::Tokenizer tokenizer = shipped_tokenizer();
  const std::vector<std::string> names = {"Zo\xC3\xAB", "O'Brien", "\xE4\xB8\xAD\xE6\x9D\x91",
                                          "\xC5\x81ukasz"};
  const std::vector<std::string> others = {"the",
                                           "dog",
                                           "Zo\xC3\xAB"
                                           "y",
                                           "O'Briens",
                                           ",",
                                           "sat.",
                                           "Brien",
                                           "\xC5\x81uk",
                                           "and",
                                           "Zoe"};
  h2o::Rng rng(2026);
  for (int round = 0; round < 100; ++round) {
    std::string text;
    std::vector<std::size_t> expected(names.size(), 0);
    for (std::size_t w = 0, n = 3 + rng.below(30); w < n; ++w) {
      if (!text.empty()) text += " ";
      if (rng.below(3) == 0) {
        const std::size_t k = rng.below(static_cast<std::uint32_t>(names.size()));
        text += names[k] + (rng.below(4) == 0 ? "'s" : "");
        ++expected[k];
      } else {
        text += others[rng.below(static_cast<std::uint32_t>(others.size()))];
      }
    }
    INFO(text);
    std::vector<std::string> unusable;
    CHECK(mention_counts(tokenizer, names, text, &unusable) == expected);
    CHECK(unusable.empty());
  }
}
