// test_name_recall.cpp: which tokens are names, which steps count, and how recall is scored
// (name_recall.hpp), on a small hand-made vocabulary and hand-written texts.
#include "h2o_catch.hpp"
#include <string>
#include <vector>

#include "h2o/measure/name_recall.hpp"
#include "h2o/text/tokenizer.hpp"
#include "test_support.hpp"

namespace {

// <unk>, BOS, EOS, the 256 byte tokens, then a few pieces of our own at ids 259...
h2o::Tokenizer small_tokenizer() {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  for (const char* piece : {" Mia", "Mia", " Tom", " the", " dog", " Sam", "\n"}) {
    pieces.push_back(piece);
  }
  return h2o::Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
}

constexpr int kSpaceMia = 259, kMia = 260, kTom = 261, kThe = 262, kDog = 263, kSam = 264,
              kNewline = 265;

}  // namespace

TEST_CASE("names become tokens in both spellings and split names are counted", "[name_recall]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Mia", "Tom", "Zoe"});
  REQUIRE(names.names == std::vector<std::string>{"Mia", "Tom"});
  CHECK(names.split_names == 1);  // "Zoe" is not a piece of this vocabulary
  CHECK(names.name_of_token[kSpaceMia] == 0);
  CHECK(names.name_of_token[kMia] == 0);  // at the start of a line: the same name
  CHECK(names.name_of_token[kTom] == 1);
  CHECK(names.name_of_token[kThe] == -1);
  CHECK(names.name_of_token[kSam] == -1);  // a piece, but not on the list
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
  const std::string blank = dir.file("blank.txt");
  h2o_test::write_bytes(blank, {'\n', '\n'});
  CHECK_THROWS_WITH(h2o::read_names(blank), h2o_catch::Contains("holds no names"));
  CHECK_THROWS_WITH(h2o::read_names(dir.file("missing.txt")), h2o_catch::Contains("does not exist"));
  CHECK_THROWS_WITH(h2o::read_names("/dev/null"), h2o_catch::Contains("not a regular file"));
}
