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

TEST_CASE("names are spelled in tokens and split names are reported", "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Mia", "Tom", "Zoe"});
  CHECK(names.names == std::vector<std::string>{"Mia", "Tom", "Zoe"});
  CHECK(names.tokens_per_name == std::vector<std::size_t>{1, 1, 4});  // " Zoe": 4 byte tokens
  CHECK(names.split_names() == std::vector<std::string>{"Zoe (4 tokens)"});
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
                                "Ann\xC3\x97", "Ann\xE2\x80\x94Lee", "Ann.", "\xEF\xBB\xBF"}) {
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

TEST_CASE("seeded random texts: every name found recurs inside a sentence", "[name_recall]") {
  // Invariants over random stories built from a few words: a found name is a capitalised word of
  // the text, met at least twice, once at least after a word in the same sentence.
  const std::vector<std::string> vocabulary = {"the", "dog",  "ran",  "Ada",   "Tilo", "I",
                                               "Mom", "Once", "said", "Quill", "and",  "to"};
  h2o::Rng rng(36);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    std::vector<std::pair<std::string, bool>> words;  // (word, first in its sentence)
    bool first = true;
    for (std::size_t w = 0, n = 3 + rng.below(40); w < n; ++w) {
      const std::string& word =
          vocabulary[rng.below(static_cast<std::uint32_t>(vocabulary.size()))];
      text += (text.empty() ? "" : " ") + word;
      words.push_back({word, first});
      first = rng.below(5) == 0;
      if (first) text += ".";
    }
    const std::vector<std::string> found = h2o::names_in_text(text);
    INFO(text);
    for (const std::string& name : found) {
      std::size_t mentions = 0;
      bool inside = false;
      for (const auto& [word, starts] : words) {
        if (word != name) continue;
        ++mentions;
        inside = inside || !starts;
      }
      CHECK(mentions >= 2);
      CHECK(inside);
      CHECK(name != "I");  // never I or Mom ("Once" inside a sentence is as good as a name)
      CHECK(name != "Mom");
    }
    // And every such word of the text is found, unless a capitalised word met only once says the
    // text capitalises more than names (as German does its nouns).
    bool lone_capital = false;
    for (const std::string word : {"Ada", "Tilo", "Quill", "I", "Mom", "Once"}) {
      lone_capital = lone_capital || std::count_if(words.begin(), words.end(), [&](const auto& w) {
                                       return w.first == word;
                                     }) == 1;
    }
    if (lone_capital) continue;
    for (const std::string name : {"Ada", "Tilo", "Quill", "Once"}) {
      std::size_t mentions = 0;
      bool inside = false;
      for (const auto& [word, starts] : words) {
        if (word != name) continue;
        ++mentions;
        inside = inside || !starts;
      }
      const bool expected = mentions >= 2 && inside;
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
