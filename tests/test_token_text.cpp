// test_token_text.cpp: tokens as a reader sees them (text/token_text.hpp): byte tokens decoded to
// UTF-8 across tokens, control characters and broken bytes shown visibly, pieces joined into
// words, and tokens and words as tables show them (also on the shipped tokenizer).
#include <algorithm>

#include "h2o_catch.hpp"
#include <string>
#include <vector>

#include "h2o/text/token_text.hpp"
#include "test_support.hpp"

using namespace h2o;

namespace {

// <unk>, BOS, EOS, the 256 byte tokens (ids 3..258), then pieces of our own from id 259.
const std::vector<std::string> kPieces = {" P", "ri", "y", "a", " caf", " said", ",",
                                          " the", "\n", " \"", "Hello", " don", "'t", " "};
constexpr int kP = 259, kRi = 260, kY = 261, kA = 262, kCaf = 263, kSaid = 264, kComma = 265,
              kThe = 266, kNewline = 267, kQuote = 268, kHello = 269, kDon = 270,
              kApostropheT = 271, kSpace = 272;
constexpr int byte(unsigned char b) { return Tokenizer::kFirstByteToken + b; }

Tokenizer tokenizer() {
  std::vector<std::string> pieces = Tokenizer::base_pieces();
  pieces.insert(pieces.end(), kPieces.begin(), kPieces.end());
  return Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
}

// The words as their texts, "|" between a word's tokens.
std::vector<std::string> words_of(const Tokenizer& tok, const std::vector<int>& tokens) {
  std::vector<std::string> out;
  for (const TokenSpan& word : token_words(tok, tokens)) {
    std::string text;
    const auto shares = token_texts(tok, tokens, word.begin, word.end);
    for (std::size_t k = 0; k < shares.size(); ++k) text += (k ? "|" : "") + shares[k];
    out.push_back(text);
  }
  return out;
}

Tokenizer shipped() { return Tokenizer::load(std::string(H2O_DATA_DIR) + "/tokenizer.bin", 4096); }

}  // namespace

TEST_CASE("token_text decodes byte tokens to UTF-8 across tokens", "[token_text]") {
  const Tokenizer tok = tokenizer();
  // " café": " caf" then the two byte tokens of é (U+00E9 = C3 A9); BOS first drops the space.
  const std::vector<int> cafe = {Tokenizer::kBos, kCaf, byte(0xC3), byte(0xA9)};
  CHECK(token_text(tok, cafe, 0, 4) == "caf\xc3\xa9");
  CHECK(token_texts(tok, cafe, 0, 4) == std::vector<std::string>{"", "caf", "\xc3\xa9", ""});
  CHECK(token_text(tok, cafe, 1, 4) == "caf\xc3\xa9");  // the predecessor (BOS) still counts
  // One byte token alone is no character: shown as its byte, escaped.
  CHECK(token_text(tok, cafe, 2, 3) == "\\xc3");
  CHECK(token_text(tok, cafe, 3, 4) == "\\xa9");
  CHECK(token_text(tok, cafe, 2, 2) == "");
  // A four-byte character (U+1F600) from four byte tokens.
  const std::vector<int> smile = {kSpace, byte(0xF0), byte(0x9F), byte(0x98), byte(0x80)};
  CHECK(token_text(tok, smile, 0, 5) == " \xf0\x9f\x98\x80");
  CHECK(token_texts(tok, smile, 0, 5) ==
        std::vector<std::string>{" ", "\xf0\x9f\x98\x80", "", "", ""});
  // Cut short, or not UTF-8 at all: each byte visible.
  CHECK(token_text(tok, smile, 0, 3) == " \\xf0\\x9f");
  CHECK(token_text(tok, {byte(0xFF), byte('a')}, 0, 2) == "\\xffa");
  // Names split into pieces read as written.
  CHECK(token_text(tok, {kP, kRi, kY, kA}, 0, 4) == " Priya");
}

TEST_CASE("token_text shows control characters visibly", "[token_text]") {
  const Tokenizer tok = tokenizer();
  const std::vector<int> control = {byte(0x01), byte(0x1B), byte('\r'), byte(0x7F), byte('\t'),
                                    kNewline,   byte(0xC2), byte(0x85)};  // C1 NEL: U+0085
  CHECK(token_text(tok, control, 0, control.size()) == "\\x01\\x1b\\r\\x7f\t\n\\xc2\\x85");
  // BOS and EOS are no text.
  CHECK(token_text(tok, {Tokenizer::kBos, Tokenizer::kEos}, 0, 2) == "");
}

TEST_CASE("token_text refuses spans and ids outside the text", "[token_text]") {
  const Tokenizer tok = tokenizer();
  const std::vector<int> tokens = {kP, kRi};
  CHECK(h2o_test::error_of<std::out_of_range>([&] { token_text(tok, tokens, 1, 3); }) ==
        "tokens [1, 3) of a text of 2");
  CHECK(h2o_test::error_of<std::out_of_range>([&] { token_text(tok, tokens, 2, 1); }) ==
        "tokens [2, 1) of a text of 2");
  CHECK(h2o_test::error_of<std::out_of_range>([&] { token_texts(tok, {kP, 9999}, 0, 2); }) ==
        "token id 9999 is outside the vocabulary");
}

TEST_CASE("token_words joins the pieces of a word", "[token_text]") {
  const Tokenizer tok = tokenizer();
  const std::vector<int> tokens = {Tokenizer::kBos, kP,     kRi,        kY,         kA,
                                   kSaid,           kComma, kCaf,       byte(0xC3), byte(0xA9),
                                   kNewline,        kQuote, kHello,     kDon,       kApostropheT,
                                   kThe,            byte(0xE2), byte(0x80), byte(0x9C), kHello};
  CHECK(words_of(tok, tokens) ==
        std::vector<std::string>{"", "P|ri|y|a", " said", ",", " caf|\xc3\xa9|", "\n", " \"",
                                 "Hello", " don|'t", " the", "\xe2\x80\x9c||", "Hello"});
  // Every token in exactly one word, in order.
  std::size_t next = 0;
  for (const TokenSpan& word : token_words(tok, tokens)) {
    CHECK(word.begin == next);
    CHECK(word.end > word.begin);
    next = word.end;
  }
  CHECK(next == tokens.size());
  CHECK(token_words(tok, {}).empty());
}

TEST_CASE("a token is shown with its space, BOS as <BOS>", "[token_text]") {
  const Tokenizer tokenizer = shipped();
  const std::vector<int> tokens = tokenizer.encode("Tom ran.\nThe end", true, false);
  CHECK(shown_token(tokenizer, tokens, 0) == "<BOS>");
  std::string all;
  for (std::size_t p = 1; p < tokens.size(); ++p) all += shown_token(tokenizer, tokens, p);
  CHECK(all == "Tom_ran./The_end");
}

TEST_CASE("a token shown alone: a byte of a character escaped, EOS named", "[token_text]") {
  const Tokenizer tok = tokenizer();
  const std::vector<int> cafe = {Tokenizer::kBos, kCaf, byte(0xC3), byte(0xA9), kNewline,
                                 byte(0x1B), Tokenizer::kEos};
  CHECK(shown_token(tok, cafe, 1) == "caf");
  CHECK(shown_token(tok, cafe, 2) == "\\xc3");
  CHECK(shown_token(tok, cafe, 4) == "/");
  CHECK(shown_token(tok, cafe, 5) == "\\x1b");
  CHECK(shown_token(tok, cafe, 6) == "<EOS>");
  CHECK(h2o_test::error_of<std::out_of_range>([&] { shown_token(tok, cafe, 7); }) ==
        "tokens [7, 8) of a text of 7");
}

TEST_CASE("a word's pieces are joined, whichever piece is asked for", "[token_text]") {
  const Tokenizer tokenizer = shipped();
  const std::string text = "The girl Xiomara ate a crêpe at the café, then left.";
  const std::vector<int> tokens = tokenizer.encode(text, true, false);
  std::vector<std::string> words;  // each word once, in order
  for (std::size_t p = 1; p < tokens.size();) {
    const TokenSpan word = word_at(tokenizer, tokens, p);
    CHECK(word.begin == p);  // a word starts where the last one ended
    for (std::size_t q = word.begin; q < word.end; ++q) {
      CHECK(word_at(tokenizer, tokens, q).begin == word.begin);
      CHECK(word_at(tokenizer, tokens, q).end == word.end);
    }
    words.push_back(shown_word(tokenizer, tokens, word));
    p = word.end;
  }
  // (This tokenizer spells " Xiomara" as " " + "X" + "i" + "om" + "ar" + "a".)
  CHECK(std::find(words.begin(), words.end(), "Xiomara") != words.end());
  CHECK(std::find(words.begin(), words.end(), "_crêpe") != words.end());
  CHECK(std::find(words.begin(), words.end(), "_café") != words.end());
  std::string joined;
  for (const std::string& word : words) joined += word;
  CHECK(joined == "The_girl_Xiomara_ate_a_crêpe_at_the_café,_then_left.");
  CHECK(shown_word(tokenizer, tokens, word_at(tokenizer, tokens, 0)) == "<BOS>");
  CHECK(h2o_test::error_of<std::out_of_range>([&] { word_at(tokenizer, tokens, tokens.size()); }) ==
        "token " + std::to_string(tokens.size()) + " of a text of " +
            std::to_string(tokens.size()));
}
