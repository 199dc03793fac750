// test_tokenizer.cpp: llama2.c's byte-pair tokenizer (tokenizer.hpp).
//
// A small synthetic vocabulary built below gives exact worked examples of each encoding rule; the
// real tok512.bin (H2O_MODELS_DIR, skipped with a SKIPPED note when absent) gives ids computed
// with llama2.c's algorithm, and decodes the reference greedy run to its expected text. Round
// trips cover ASCII, multi-byte UTF-8, emoji, and bytes no vocabulary entry holds. The fast encoder
// is compared token for token with run.c's own quadratic algorithm (tokenizer_reference.hpp) on
// thousands of seeded random vocabularies and texts, and on tok512.
#include <unistd.h>

#include "h2o_catch.hpp"
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/text/tokenizer.hpp"
#include "test_support.hpp"
#include "tokenizer_reference.hpp"

using namespace h2o;
using h2o_catch::Contains;
using h2o_test::error_of;
using h2o_test::model_file;
using h2o_test::read_bytes;
using h2o_test::reference_encode;
using h2o_test::TempDir;
using h2o_test::write_bytes;

namespace {

bool have_real_tokenizer() { return std::filesystem::exists(model_file("tok512.bin")); }

// The 259 entries every llama2.c vocabulary starts with: <unk>, BOS, EOS, <0x00>..<0xFF>.
void add_base_entries(std::vector<std::string>& pieces, std::vector<float>& scores) {
  pieces = h2o::Tokenizer::base_pieces();
  scores.assign(pieces.size(), 0.0f);
}

// Ids of the synthetic vocabulary's own entries, in the order small_tokenizer adds them.
enum : int { kSpace = 259, kA, kB, kC, kE_acute, kAB, kBC, kABC, kSpaceA, kSpaceABC, kAA, kWide };

// 259 base entries, then: " ", "a", "b", "c", "é", and merges with their scores:
//   "ab" 5, "bc" 7, "abc" 9, " a" 1, " abc" 2, "aa" 3, and "ÿþ" made of two bytes (never merged:
//   the byte tokens' pieces are "<0xFF>" and "<0xFE>", not the bytes themselves).
Tokenizer small_tokenizer() {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  add_base_entries(pieces, scores);
  const std::pair<const char*, float> extra[] = {
      {" ", 0},  {"a", 0},   {"b", 0},  {"c", 0},    {"\xC3\xA9", 0}, {"ab", 5},
      {"bc", 7}, {"abc", 9}, {" a", 1}, {" abc", 2}, {"aa", 3},       {"\xFF\xFE", 4}};
  for (const auto& [piece, score] : extra) {
    pieces.push_back(piece);
    scores.push_back(score);
  }
  return Tokenizer(pieces, scores);
}

// A random string: any bytes (0..255) when `any_bytes`, else words mixing ASCII, multi-byte UTF-8
// letters, emoji, newlines and punctuation.
std::string random_text(Rng& rng, bool any_bytes) {
  const std::size_t length = rng.below(40);
  std::string text;
  if (any_bytes) {
    for (std::size_t i = 0; i < length; ++i) text.push_back(static_cast<char>(rng.below(256)));
    return text;
  }
  const char* const words[] = {"Once",
                               " upon",
                               " a",
                               " time",
                               "Lily",
                               "'s",
                               "\n",
                               ",",
                               " ",
                               "caf\xC3\xA9",
                               "na\xC3\xAFve",
                               "\xE2\x80\x9Chi\xE2\x80\x9D",
                               "\xF0\x9F\x99\x82",
                               "\xE6\x97\xA5\xE6\x9C\xAC",
                               "  ",
                               "!",
                               "42"};
  for (std::size_t i = 0; i < length; ++i) {
    text += words[rng.below(sizeof(words) / sizeof(words[0]))];
  }
  return text;
}

}  // namespace

TEST_CASE("encoding applies the dummy space then the best scoring merges") {
  const Tokenizer t = small_tokenizer();
  REQUIRE(t.vocab_size() == 271);
  REQUIRE(t.find("abc") == kABC);
  // "abc": [BOS, " ", a, b, c]; "bc" (7) beats "ab" (5) -> [" ", a, bc]; "abc" (9) -> [" ", abc];
  // " abc" (2) -> [" abc"].
  CHECK(t.encode("abc", true, false) == std::vector<int>{Tokenizer::kBos, kSpaceABC});
  CHECK(t.encode("abc", false, false) == std::vector<int>{kSpaceABC});
  CHECK(t.encode("abc", true, true) ==
        std::vector<int>{Tokenizer::kBos, kSpaceABC, Tokenizer::kEos});
  // "b": no merge applies.
  CHECK(t.encode("b", false, false) == std::vector<int>{kSpace, kB});
  // Empty text: no dummy space at all.
  CHECK(t.encode("", true, true) == std::vector<int>{Tokenizer::kBos, Tokenizer::kEos});
  CHECK(t.encode("", false, false).empty());
}

TEST_CASE("on equal scores the leftmost pair merges first") {
  const Tokenizer t = small_tokenizer();
  // " aaa": pairs " a" (1), "aa" (3), "aa" (3). The leftmost "aa" merges: [" ", aa, a]; then
  // neither " aa" nor "aaa" is a piece. Merging the right "aa" first would have allowed " a".
  CHECK(t.encode("aaa", false, false) == std::vector<int>{kSpace, kAA, kA});
}

TEST_CASE("code points missing from the vocabulary fall back to byte tokens") {
  const Tokenizer t = small_tokenizer();
  // "é" (C3 A9) is a piece; "ü" (C3 BC) is not: two byte tokens, id = byte + 3.
  CHECK(t.encode("\xC3\xA9", false, false) == std::vector<int>{kSpace, kE_acute});
  CHECK(t.encode("\xC3\xBC", false, false) == std::vector<int>{kSpace, 0xC3 + 3, 0xBC + 3});
  // An emoji: four bytes, four byte tokens.
  CHECK(t.encode("\xF0\x9F\x99\x82", false, false) ==
        std::vector<int>{kSpace, 0xF0 + 3, 0x9F + 3, 0x99 + 3, 0x82 + 3});
  // Control bytes and invalid UTF-8: each byte on its own, and the "\xFF\xFE" piece is never
  // reached because byte tokens merge by their "<0xHH>" names.
  CHECK(t.encode("\x01", false, false) == std::vector<int>{kSpace, 0x01 + 3});
  CHECK(t.encode("\xFF\xFE", false, false) == std::vector<int>{kSpace, 0xFF + 3, 0xFE + 3});
  // A NUL byte inside the text is a byte like any other.
  CHECK(t.encode(std::string("a\0b", 3), false, false) == std::vector<int>{kSpaceA, 0 + 3, kB});
  // Five stray continuation bytes: grouped at most four at a time, all falling back to bytes.
  CHECK(t.encode("\x80\x80\x80\x80\x80", false, false).size() == 6);
}

TEST_CASE("decoding drops the space after BOS and turns byte tokens into bytes") {
  const Tokenizer t = small_tokenizer();
  CHECK(t.decode_piece(Tokenizer::kBos, kSpaceABC) == "abc");
  CHECK(t.decode_piece(kA, kSpaceABC) == " abc");
  CHECK(t.decode_piece(kA, 'A' + 3) == "A");
  CHECK(t.decode_piece(kA, 0 + 3) == std::string(1, '\0'));
  CHECK(t.decode_piece(kA, 0xFF + 3) == "\xFF");
  CHECK(t.decode_piece(Tokenizer::kBos, ' ' + 3) == " ");  // a byte token is not a dummy prefix
  CHECK(t.decode({Tokenizer::kBos, kSpaceABC, kSpaceA, Tokenizer::kEos}) == "abc a");
  CHECK_THROWS_AS(t.decode_piece(kA, 271), std::out_of_range);
}

TEST_CASE("encode then decode gives back any text with the synthetic vocabulary") {
  const std::uint64_t seed = GENERATE(range(1, 41));
  const bool any_bytes = GENERATE(true, false);
  const Tokenizer t = small_tokenizer();
  Rng rng(seed);
  for (int i = 0; i < 20; ++i) {
    const std::string text = random_text(rng, any_bytes);
    INFO("text of " << text.size() << " bytes, seed " << seed);
    CHECK(t.decode(t.encode(text, true, false)) == text);
    CHECK(t.decode(t.encode(text, true, true)) == text);
    for (int id : t.encode(text, false, false)) {
      CHECK(id >= 0);
      CHECK(id < 271);
    }
  }
}

TEST_CASE("find uses the sorted vocabulary and returns the smallest id of duplicates") {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  add_base_entries(pieces, scores);
  pieces.push_back("dup");
  pieces.push_back("zz");
  pieces.push_back("dup");
  scores.resize(pieces.size(), 0.0f);
  const Tokenizer t(pieces, scores);
  CHECK(t.find("dup") == 259);
  CHECK(t.find("zz") == 260);
  CHECK(t.find("<0x41>") == 'A' + 3);
  CHECK(t.find("\n<s>\n") == Tokenizer::kBos);
  CHECK(t.find("missing") == -1);
  CHECK(t.find("") == -1);
}

TEST_CASE("the tokenizer constructor refuses inconsistent vocabularies") {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  add_base_entries(pieces, scores);
  scores.pop_back();
  CHECK_THROWS_WITH(Tokenizer(pieces, scores), Contains("259 pieces but 258 scores"));
  add_base_entries(pieces, scores);
  pieces.pop_back();
  scores.pop_back();
  CHECK_THROWS_WITH(Tokenizer(pieces, scores), Contains("at least 259 entries"));
  add_base_entries(pieces, scores);
  scores[100] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH(Tokenizer(pieces, scores), Contains("entry 100 has a non-finite score"));
}

TEST_CASE("save and load round trip a synthetic tokenizer") {
  TempDir dir("tokenizer_roundtrip");
  const Tokenizer t = small_tokenizer();
  t.save(dir.file("tok.bin"));
  const Tokenizer loaded = Tokenizer::load(dir.file("tok.bin"), 271);
  REQUIRE(loaded.vocab_size() == 271);
  CHECK(loaded.max_token_length() == 6);  // "\n</s>\n" and the "<0xHH>" pieces
  for (int id = 0; id < 271; ++id) {
    CHECK(loaded.piece(id) == t.piece(id));
    CHECK(loaded.score(id) == t.score(id));
  }
  CHECK(loaded.encode("abc aaa", true, false) == t.encode("abc aaa", true, false));
}

TEST_CASE("bad tokenizer files are refused with one line naming the file and the problem") {
  TempDir dir("tokenizer_bad");
  const Tokenizer t = small_tokenizer();
  t.save(dir.file("good.bin"));
  const std::vector<char> good = read_bytes(dir.file("good.bin"));
  const auto message_for = [&](const std::vector<char>& bytes, std::size_t vocab) {
    write_bytes(dir.file("bad.bin"), bytes);
    const std::string message =
        error_of<std::runtime_error>([&] { Tokenizer::load(dir.file("bad.bin"), vocab); });
    CHECK(message.find('\n') == std::string::npos);
    CHECK_THAT(message, Contains("bad.bin"));
    return message;
  };
  const auto with_int32_at = [&](std::size_t offset, std::int32_t value) {
    std::vector<char> bytes = good;
    std::memcpy(bytes.data() + offset, &value, sizeof(value));
    return bytes;
  };

  CHECK_THAT(error_of<std::runtime_error>([&] { Tokenizer::load(dir.file("none.bin"), 271); }),
             Contains("none.bin") && Contains("does not exist"));
  CHECK_THAT(message_for({}, 271), Contains("is empty"));
  CHECK_THAT(message_for({7, 0}, 271),
             Contains("truncated: the header needs 4 bytes, the file has 2"));
  CHECK_THAT(message_for(with_int32_at(0, 0), 271), Contains("max_token_length is 0"));
  CHECK_THAT(message_for(with_int32_at(0, 1 << 30), 271),
             Contains("max_token_length is 1073741824"));
  // Entry 0 ("<unk>") starts at byte 4: its score, then its length at byte 8.
  CHECK_THAT(message_for(with_int32_at(8, -5), 271),
             Contains("entry 0 has a negative length (-5)"));
  CHECK_THAT(message_for(with_int32_at(8, 1000), 271),
             Contains("entry 0 is 1000 bytes long, more than its max_token_length 6"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<char> nan_score = good;
  std::memcpy(nan_score.data() + 4, &nan, sizeof(nan));
  CHECK_THAT(message_for(nan_score, 271), Contains("entry 0 has a non-finite score"));
  // Cut inside the last entry.
  CHECK_THAT(message_for(std::vector<char>(good.begin(), good.end() - 2), 271),
             Contains("truncated inside entry 270 of 271"));
  // Made for another vocabulary size than the model's.
  CHECK_THAT(message_for(good, 300),
             Contains("holds only 271 entries but the model's vocabulary has 300 tokens"));
  CHECK_THAT(message_for(good, 260),
             Contains("holds 271 entries but the model's vocabulary has 260"));
  CHECK_THAT(message_for(good, 100), Contains("fewer than the 259"));
  std::vector<char> junk_tail = good;
  junk_tail.push_back(1);
  CHECK_THAT(message_for(junk_tail, 271), Contains("1 unexpected bytes after its 271 entries"));
}

TEST_CASE("tok512 encodes like llama2.c") {
  if (!have_real_tokenizer()) {
    WARN("SKIPPED: " << model_file("tok512.bin") << " is absent");
    return;
  }
  const Tokenizer t = Tokenizer::load(model_file("tok512.bin"), 512);
  CHECK(t.max_token_length() == 7);
  CHECK(t.piece(403) == " Once");
  // Expected ids computed with run.c's encode() algorithm over the same file.
  CHECK(t.encode("Once upon a time", true, false) == std::vector<int>{1, 403, 407, 261, 378});
  CHECK(t.encode("Lily's mom said, \"hi\"", true, false) ==
        std::vector<int>{1, 317, 439, 419, 357, 336, 432, 313, 415, 417, 436});
  // "é" is a piece of tok512 (485); the emoji is not: four byte tokens.
  CHECK(t.encode("caf\xC3\xA9 \xF0\x9F\x99\x82", true, false) ==
        std::vector<int>{1, 280, 412, 431, 485, 410, 243, 162, 156, 133});
}

TEST_CASE("tok512 round trips text and decodes the reference run to its text") {
  if (!have_real_tokenizer()) {
    WARN("SKIPPED: " << model_file("tok512.bin") << " is absent");
    return;
  }
  const Tokenizer t = Tokenizer::load(model_file("tok512.bin"), 512);
  Rng rng(2024);
  for (int i = 0; i < 200; ++i) {
    const std::string text = random_text(rng, i % 2 == 0);
    CHECK(t.decode(t.encode(text, true, false)) == text);
  }
  const std::string long_text(5000, 'x');
  CHECK(t.decode(t.encode(long_text, true, false)) == long_text);

  std::ifstream ids_file(model_file("expected_greedy_ids_n200.txt"));
  const std::vector<int> ids{std::istream_iterator<int>(ids_file), std::istream_iterator<int>()};
  const std::vector<char> expected = read_bytes(model_file("expected_greedy_n200.txt"));
  REQUIRE(!ids.empty());
  // run.c prints every piece after the first token, then one newline.
  CHECK(t.decode(ids) + "\n" == std::string(expected.begin(), expected.end()));
}

TEST_CASE("tok512 refuses a model vocabulary of another size") {
  if (!have_real_tokenizer()) {
    WARN("SKIPPED: " << model_file("tok512.bin") << " is absent");
    return;
  }
  CHECK_THROWS_WITH(Tokenizer::load(model_file("tok512.bin"), 32000),
                    Contains("holds only 512 entries but the model's vocabulary has 32000 tokens"));
  CHECK_THROWS_WITH(Tokenizer::load(model_file("tok512.bin"), 300),
                    Contains("holds 512 entries but the model's vocabulary has 300 tokens"));
}

// =============================================================================================
// The fast encoder against run.c's algorithm, and encoding with a token limit

namespace {

// The text symbols random vocabularies and texts are made of: ASCII, a space, a newline, "é"
// (2 bytes), an emoji (4 bytes), a stray continuation byte and a byte token's name.
const char* const kSymbols[] = {"a",    "b",     "c", " ", "\n", "\xC3\xA9", "\xF0\x9F\x99\x82",
                                "\x80", "<0x61>"};
constexpr std::uint32_t kSymbolCount = sizeof(kSymbols) / sizeof(kSymbols[0]);

std::string random_symbols(Rng& rng, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += kSymbols[rng.below(kSymbolCount)];
  return out;
}

// A vocabulary built to exercise every corner of the merge rule: scores drawn from a few values
// (many ties), pieces at and around run.c's -1e10 cut, duplicate pieces, pieces that extend BOS
// or byte-token names, and sometimes byte tokens whose pieces are not "<0xHH>" (even empty).
Tokenizer random_vocabulary(Rng& rng) {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  add_base_entries(pieces, scores);
  const float score_choices[] = {0.0f, 1.0f, 2.0f, 3.0f, -1.0f, -0.0f, -1e10f, -2e10f, -9.9e9f};
  if (rng.below(4) == 0) {
    for (int k = 0; k < 3; ++k) {
      const std::size_t byte = rng.below(2) == 0 ? 'a' : rng.below(256);
      pieces[Tokenizer::kFirstByteToken + byte] = rng.below(3) == 0 ? "" : random_symbols(rng, 1);
    }
  }
  const std::size_t extra = 1 + rng.below(150);
  for (std::size_t i = 0; i < extra; ++i) {
    std::string piece;
    switch (rng.below(8)) {
      case 0:  // a duplicate of an earlier piece
        piece = pieces[rng.below(static_cast<std::uint32_t>(pieces.size()))];
        break;
      case 1:  // BOS followed by text: lets BOS merge, as run.c allows
        piece = pieces[Tokenizer::kBos] + random_symbols(rng, 1);
        break;
      case 2:  // byte-token names glued together
        piece =
            pieces[Tokenizer::kFirstByteToken + 0xC3] + pieces[Tokenizer::kFirstByteToken + 0xBC];
        break;
      case 3:
        piece = rng.below(8) == 0 ? "" : random_symbols(rng, 1);
        break;
      default:
        piece = random_symbols(rng, 1 + rng.below(4));
    }
    pieces.push_back(piece);
    scores.push_back(rng.below(6) == 0
                         ? rng.uniform(-5.0f, 5.0f)
                         : score_choices[rng.below(sizeof(score_choices) / sizeof(float))]);
  }
  return Tokenizer(pieces, scores);
}

// Random symbols, and now and then any bytes at all.
std::string random_merge_text(Rng& rng) {
  if (rng.below(5) == 0) {
    std::string bytes;
    for (std::size_t i = rng.below(30); i > 0; --i)
      bytes.push_back(static_cast<char>(rng.below(256)));
    return bytes;
  }
  return random_symbols(rng, rng.below(60));
}

}  // namespace

TEST_CASE("the fast encoder gives run.c's tokens on random vocabularies and texts") {
  const std::uint64_t seed = GENERATE(range(1, 201));
  Rng rng(seed * 7919);
  const Tokenizer t = random_vocabulary(rng);
  for (int i = 0; i < 25; ++i) {
    const std::string text = random_merge_text(rng);
    const bool bos = rng.below(2) == 0, eos = rng.below(2) == 0;
    INFO("seed " << seed << ", text " << i << " (" << text.size() << " bytes)");
    const std::vector<int> fast = t.encode(text, bos, eos);
    REQUIRE(fast == reference_encode(t, text, bos, eos));
    // The lower bound that lets programs refuse long texts before encoding them holds too.
    CHECK(fast.size() >= t.min_tokens(text.size(), bos, eos));
  }
}

TEST_CASE("the fast encoder gives run.c's tokens with the synthetic vocabulary") {
  const Tokenizer t = small_tokenizer();
  Rng rng(31);
  for (int i = 0; i < 400; ++i) {
    const std::string text = random_text(rng, i % 3 == 0) + random_symbols(rng, rng.below(20));
    CHECK(t.encode(text, true, false) == reference_encode(t, text, true, false));
  }
}

TEST_CASE("tok512: the fast encoder gives run.c's tokens") {
  if (!have_real_tokenizer()) {
    WARN("SKIPPED: " << model_file("tok512.bin") << " is absent");
    return;
  }
  const Tokenizer t = Tokenizer::load(model_file("tok512.bin"), 512);
  Rng rng(77);
  for (int i = 0; i < 300; ++i) {
    const std::string text = random_text(rng, i % 4 == 0);
    CHECK(t.encode(text, true, false) == reference_encode(t, text, true, false));
  }
  // A few thousand bytes of story-like text: hundreds of merges, each order-sensitive.
  std::string story;
  while (story.size() < 6000) {
    story += "Once upon a time, Lily's mom said \"hi\" to the big dog. They played in the park.\n";
  }
  CHECK(t.encode(story, true, false) == reference_encode(t, story, true, false));
}

TEST_CASE("encoding a long text takes time in proportion to its length, not its square") {
  // 256 KB: run.c's rescan after every merge took 13 s for this text on the 2-core development
  // machine, the priority queue 0.05 s. The bound leaves room for slow or sanitized builds on
  // either side.
  const Tokenizer t = small_tokenizer();
  std::string text;
  while (text.size() < (256u << 10)) text += "abc aaa bc a\xC3\xA9 ";
  const auto start = std::chrono::steady_clock::now();
  const std::vector<int> tokens = t.encode(text, true, false);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(tokens.size() > 130000);
  CHECK(t.decode(tokens) == text);
  CHECK(seconds < 2.0);
}

TEST_CASE("min_tokens bounds the token count from the byte count alone") {
  const Tokenizer t = small_tokenizer();  // max_token_length 6
  CHECK(t.min_tokens(0, false, false) == 0);
  CHECK(t.min_tokens(0, true, false) == 1);
  CHECK(t.min_tokens(0, true, true) == 2);
  CHECK(t.min_tokens(5, false, false) == 1);  // 5 bytes + the dummy space fit in one 6-byte piece
  CHECK(t.min_tokens(5, true, false) == 1);   // BOS might have merged into that piece
  CHECK(t.min_tokens(6, false, false) == 2);
  CHECK(t.min_tokens(6, false, true) == 3);
  CHECK(t.min_tokens(1u << 20, true, false) == ((1u << 20) + 1 + 5) / 6);
  // The longest merge the synthetic vocabulary has: " abc", 4 bytes for 3 of text.
  CHECK(t.encode("abc", false, false).size() >= t.min_tokens(3, false, false));
}

TEST_CASE("an empty byte-token piece voids the byte bound, and min_tokens says so") {
  // Byte 'a' has the empty piece: "" + "" = "" merges every 'a' away, so 100 bytes can become
  // 2 tokens, fewer than any bound from max_token_length (6 here) could allow.
  std::vector<std::string> pieces;
  std::vector<float> scores;
  add_base_entries(pieces, scores);
  pieces[Tokenizer::kFirstByteToken + 'a'] = "";
  pieces.push_back("x");
  scores.push_back(0.0f);
  const Tokenizer t(pieces, scores);
  const std::string text = std::string(100, 'a') + "x";
  const std::vector<int> tokens = t.encode(text, false, false);
  CHECK(tokens == reference_encode(t, text, false, false));
  CHECK(tokens.size() == 2);
  CHECK(t.min_tokens(text.size(), false, false) == 1);
  CHECK(t.min_tokens(text.size(), false, true) == 2);
  // With an empty dummy space too, BOS swallows the whole text: [BOS] and nothing else.
  pieces[Tokenizer::kFirstByteToken + ' '] = "";
  const Tokenizer swallowing(pieces, scores);
  CHECK(swallowing.encode("aaaa", true, false) == std::vector<int>{Tokenizer::kBos});
  CHECK(reference_encode(swallowing, "aaaa", true, false) == std::vector<int>{Tokenizer::kBos});
  CHECK(swallowing.min_tokens(4, true, false) == 1);
}

TEST_CASE("encode_at_most refuses a long text before encoding it, and a near miss after") {
  const Tokenizer t = small_tokenizer();
  // 1 MiB against 512 tokens: the byte count alone proves it, nothing is encoded.
  const std::string huge(1u << 20, 'b');
  const auto start = std::chrono::steady_clock::now();
  try {
    t.encode_at_most(huge, true, false, 512);
    FAIL("expected TooManyTokens");
  } catch (const TooManyTokens& e) {
    CHECK(e.at_least);
    CHECK(e.tokens == t.min_tokens(huge.size(), true, false));
    CHECK(e.limit == 512);
    CHECK(e.count_text() == "at least " + std::to_string(e.tokens) + " tokens");
    CHECK_THAT(e.what(), Contains("more than the 512 allowed"));
  }
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < 0.5);
  // "bbbbbbbbbb": 10 one-byte tokens + the dummy space + BOS = 12 tokens; the bound says 2.
  const std::string ten(10, 'b');
  try {
    t.encode_at_most(ten, true, false, 11);
    FAIL("expected TooManyTokens");
  } catch (const TooManyTokens& e) {
    CHECK_FALSE(e.at_least);
    CHECK(e.tokens == 12);
    CHECK(e.count_text() == "12 tokens");
  }
  CHECK(t.encode_at_most(ten, true, false, 12) == t.encode(ten, true, false));
  CHECK(t.encode_at_most("", true, true, 2).size() == 2);
}

TEST_CASE("base_pieces are the 259 entries at the ids the tokenizer expects") {
  const std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  REQUIRE(pieces.size() == h2o::Tokenizer::kMinVocab);
  CHECK(pieces[h2o::Tokenizer::kUnknown] == "<unk>");
  CHECK(pieces[h2o::Tokenizer::kBos] == "\n<s>\n");
  CHECK(pieces[h2o::Tokenizer::kEos] == "\n</s>\n");
  CHECK(pieces[h2o::Tokenizer::kFirstByteToken] == "<0x00>");
  CHECK(pieces[h2o::Tokenizer::kFirstByteToken + 0x0A] == "<0x0A>");
  CHECK(pieces.back() == "<0xFF>");
  // Each byte token is found under its name and decodes to its byte.
  const h2o::Tokenizer tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
  for (int b = 0; b < 256; ++b) {
    const int id = h2o::Tokenizer::kFirstByteToken + b;
    INFO("byte " << b);
    CHECK(tokenizer.find(pieces[static_cast<std::size_t>(id)]) == id);
    CHECK(tokenizer.decode_piece(h2o::Tokenizer::kEos, id) == std::string(1, static_cast<char>(b)));
  }
}
