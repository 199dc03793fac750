// test_token_text.cpp: tokens as a reader sees them (text/token_text.hpp): byte tokens decoded to
// UTF-8 across tokens, control characters and broken bytes shown visibly, and pieces joined into
// words.
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
