// test_bits_per_byte.cpp: bits per byte and the rule for a text beyond the model
// (measure/bits_per_byte.hpp), and what a program says it read (app/reading_report.hpp), on worked
// examples.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "h2o/app/reading_report.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/text/tokenizer.hpp"
#include "h2o_catch.hpp"

namespace {
// <unk>, BOS, EOS, the 256 byte tokens, then " Mia" (259), " the" (260), "\n" (261).
h2o::Tokenizer small_tokenizer() {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  for (const char* piece : {" Mia", " the", "\n"}) pieces.push_back(piece);
  return h2o::Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
}
constexpr int kBos = 1, kEos = 2, kMia = 259, kThe = 260, kNewline = 261, kByteA = 3 + 'a';
}  // namespace

TEST_CASE("the bytes of the predicted tokens are the text's, without BOS, EOS or dummy space",
          "[bits_per_byte]") {
  const h2o::Tokenizer tokenizer = small_tokenizer();
  // "Mia the\na": BOS is not predicted; after it " Mia" stands for "Mia" (the dummy space is no
  // text); EOS stands for nothing; a byte token for its one byte.
  const std::vector<int> tokens = {kBos, kMia, kThe, kNewline, kByteA, kEos};
  CHECK(h2o::predicted_bytes(tokenizer, tokens) == 9);
  CHECK(h2o::predicted_bytes(tokenizer, tokens) == tokenizer.decode(tokens).size());
  // Without BOS the first token is not predicted: its bytes do not count.
  CHECK(h2o::predicted_bytes(tokenizer, {kMia, kThe}) == 4);
  CHECK(h2o::predicted_bytes(tokenizer, {kBos}) == 0);
}

TEST_CASE("bits per byte is nats over ln 2 over bytes", "[bits_per_byte]") {
  CHECK(h2o::bits_per_byte(9 * std::log(2.0), 9) == Approx(1.0));
  CHECK(h2o::bits_per_byte(std::log(256.0), 1) == Approx(8.0));  // a uniform guess among bytes
  h2o::TeacherForcedRun run;
  run.token_nll = {std::log(2.0), std::log(4.0), std::log(8.0)};  // 1 + 2 + 3 bits
  CHECK(h2o::bits_per_byte(run, 4) == Approx(1.5));
  CHECK_THROWS_AS(h2o::bits_per_byte(1.0, 0), std::invalid_argument);
}

TEST_CASE("a text is beyond the model above the limit, and NaN is beyond too", "[bits_per_byte]") {
  // (The warning the programs print then: test_verdict_text.cpp.)
  CHECK_FALSE(h2o::beyond_model(0.15));
  CHECK_FALSE(h2o::beyond_model(h2o::kBeyondModelBitsPerByte));
  CHECK(h2o::beyond_model(h2o::kBeyondModelBitsPerByte + 0.01));
  CHECK(h2o::beyond_model(std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("a program says how many stories, tokens and name events it read", "[reading_report]") {
  CHECK(h2o::reading_summary("a.txt", 1, 1, 13, 912, 9, 64) ==
        "read 1 story of a.txt (13 paragraphs): 912 tokens, 9 name events (a name last seen more "
        "than 64\n  tokens back)");  // wrapped at 100 columns
  CHECK(h2o::reading_summary("b.txt", 1, 21, 1, 1, 1, 32) ==
        "read 1 of 21 stories of b.txt (1 paragraph): 1 token, 1 name event (a name last seen "
        "more than 32\n  tokens back)");
  CHECK(h2o::reading_summary("c.txt", 50, 50, 0, 35832, std::nullopt) ==
        "read 50 stories of c.txt: 35832 tokens");
}

TEST_CASE("the name notes list split names the text uses and names it could not use",
          "[reading_report]") {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  for (const char* piece : {" ", "L", "i", "l", "y", " L", "il", "y,", " the"}) {
    pieces.push_back(piece);
  }
  const h2o::Tokenizer tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
  const int kSpaceL = 264, kIl = 265, kLetterY = 263, kYComma = 266, kSpaceThe = 267;
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Lily", "Tom"});
  // "Lily the Lily,": the first is " L" + "il" + "y" (whole tokens), the second ends in "y,".
  const std::vector<int> tokens = {1, kSpaceL, kIl, kLetterY, kSpaceThe, kSpaceL, kIl, kYComma};
  const std::string notes = h2o::name_use_notes(names, {tokens}, "  ");
  CHECK_THAT(notes, h2o_catch::Contains("Names the tokenizer splits (recalled only when every "
                                        "token is predicted): Lily ("));
  CHECK_THAT(notes, h2o_catch::Contains("could not use (a token also holds text around them): "
                                        "Lily"));
  CHECK(h2o::name_use_notes(names, {{1, kSpaceThe}}, "  ") ==
        "  No name of the names list occurs in the text: name recall has nothing to count.\n");
}

TEST_CASE("a text in a script without capitals says only --names can name its characters",
          "[reading_report]") {
  // 中 in its three byte tokens (ids 3 + byte), after BOS: no listed name occurs, and the text's
  // script has no capitals to find one by.
  const h2o::Tokenizer tokenizer(h2o::Tokenizer::base_pieces(),
                                 std::vector<float>(h2o::Tokenizer::base_pieces().size(), 0.0f));
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Lily"});
  const std::vector<int> han = {1, 3 + 0xE4, 3 + 0xB8, 3 + 0xAD};
  const std::string note =
      "The text's script has no capitals to find names by: list its characters' names with "
      "--names.";
  CHECK(h2o::name_use_notes(names, {han}, "") ==  // wrapped at 100 columns
        "No name of the names list occurs in the text: name recall has nothing to count. The "
        "text's script\nhas no capitals to find names by: list its characters' names with "
        "--names.\n");
  CHECK(h2o::no_capitals_note({"\xE4\xB8\xAD"}, 0, "  ") == "  " + note + "\n");
  // Not for a text with capitals, nor once a name event counts.
  CHECK(h2o::no_capitals_note({"Zo\xC3\xAB and Tom"}, 0, "  ").empty());
  CHECK(h2o::no_capitals_note({"\xE4\xB8\xAD"}, 1, "  ").empty());
}
