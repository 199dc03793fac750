// fuzz_tokenizer.cpp: libFuzzer harness for the llama2.c tokenizer loader and encode/decode
// (tokenizer.hpp).
//
// Input: 1 byte of flags (bit 0: BOS, bit 1: EOS), a little-endian uint16 vocabulary size (the
// model's, which the loader checks the file against), a little-endian uint16 text length, that
// many bytes of text (cut short if the input ends), then the bytes of a tokenizer file.
//
// The loader must refuse a bad file with std::runtime_error (one line). For a file it accepts,
// encoding any text must:
//   - give ids inside the vocabulary, at least min_tokens() of them;
//   - give exactly the tokens of run.c's quadratic algorithm (tests/tokenizer_reference.hpp), for
//     texts of up to 512 bytes (the reference is too slow beyond);
//   - decode back to the text when the vocabulary is shaped like llama2.c's (see below);
//   - agree with encode_at_most() at any limit.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "h2o/text/tokenizer.hpp"
#include "tokenizer_reference.hpp"

namespace {

using h2o::Tokenizer;

// "<0xHH>", the piece llama2.c gives byte token HH.
std::string byte_name(int byte) {
  static const char digits[] = "0123456789ABCDEF";
  return std::string("<0x") + digits[byte >> 4] + digits[byte & 15] + ">";
}

// True when `piece` is two non-empty pieces of the vocabulary glued together: a merge can make it.
bool mergeable(const Tokenizer& t, const std::string& piece) {
  for (std::size_t cut = 1; cut < piece.size(); ++cut) {
    if (t.find(piece.substr(0, cut)) >= 0 && t.find(piece.substr(cut)) >= 0) return true;
  }
  return false;
}

// A vocabulary under which decode(encode(text, true, eos)) == text for every text. Sufficient:
//   - " " is a piece (so the dummy prefix is a space decode can drop after BOS);
//   - ids 3..258 are the byte names "<0xHH>", and no other piece contains "<0x" (so only byte
//     fallback makes byte tokens, and no merge swallows a byte token, whose piece is its name);
//   - no piece but BOS's own starts with BOS's piece (BOS never merges with the text);
//   - no text can become a piece decode treats specially (BOS, EOS: dropped; byte names: turned
//     into one byte): such a piece, if find() returns its own id, is neither a single code point
//     (4 bytes at most) nor two vocabulary pieces glued together.
bool llama2_shaped(const Tokenizer& t) {
  if (t.find(" ") < 0) return false;
  const auto v = static_cast<int>(t.vocab_size());
  for (int b = 0; b < 256; ++b) {
    if (t.piece(Tokenizer::kFirstByteToken + b) != byte_name(b)) return false;
  }
  const std::string& bos = t.piece(Tokenizer::kBos);
  if (bos.empty()) return false;
  for (int id = 0; id < v; ++id) {
    const std::string& piece = t.piece(id);
    const bool byte_token =
        id >= Tokenizer::kFirstByteToken && id < Tokenizer::kFirstByteToken + 256;
    if (!byte_token && piece.find("<0x") != std::string::npos) return false;
    if (id != Tokenizer::kBos && piece.compare(0, bos.size(), bos) == 0) return false;
    const bool special = byte_token || id == Tokenizer::kBos || id == Tokenizer::kEos;
    if (special && t.find(piece) == id && (piece.size() <= 4 || mergeable(t, piece))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const bool bos = (data[0] & 1) != 0, eos = (data[0] & 2) != 0;
  const std::size_t vocab = data[1] | (static_cast<std::size_t>(data[2]) << 8);
  std::size_t text_size = data[3] | (static_cast<std::size_t>(data[4]) << 8);
  text_size = std::min(text_size, size - 5);
  const std::string text(reinterpret_cast<const char*>(data + 5), text_size);
  h2o_fuzz::write_scratch(data + 5 + text_size, size - 5 - text_size);

  std::vector<int> tokens;
  try {
    const Tokenizer t = Tokenizer::load(h2o_fuzz::scratch_file(), vocab);
    if (t.vocab_size() != vocab) h2o_fuzz::broken("the tokenizer has another size than asked");
    tokens = t.encode(text, bos, eos);
    for (const int id : tokens) {
      if (id < 0 || static_cast<std::size_t>(id) >= vocab) h2o_fuzz::broken("id out of range");
    }
    if (tokens.size() < t.min_tokens(text.size(), bos, eos)) {
      h2o_fuzz::broken("fewer tokens than min_tokens promises");
    }
    if (text.size() <= 512 && tokens != h2o_test::reference_encode(t, text, bos, eos)) {
      h2o_fuzz::broken("encode differs from run.c's algorithm");
    }
    if (llama2_shaped(t) && t.decode(t.encode(text, true, eos)) != text) {
      h2o_fuzz::broken("decode(encode(text)) is not the text");
    }
    // encode_at_most: the same tokens when they fit, TooManyTokens when they do not.
    for (const std::size_t limit : {tokens.size(), tokens.size() - (tokens.empty() ? 0 : 1)}) {
      try {
        if (t.encode_at_most(text, bos, eos, limit) != tokens) {
          h2o_fuzz::broken("encode_at_most differs from encode");
        }
        if (tokens.size() > limit) h2o_fuzz::broken("encode_at_most let too many tokens through");
      } catch (const h2o::TooManyTokens& e) {
        if (tokens.size() <= limit) h2o_fuzz::broken("encode_at_most refused tokens that fit");
        if (e.tokens > tokens.size()) h2o_fuzz::broken("TooManyTokens overstates the count");
      }
    }
    // Decoding any ids of the vocabulary, in any order, must work.
    std::vector<int> any_ids;
    for (std::size_t i = 0; i < text.size(); ++i) {
      any_ids.push_back(static_cast<unsigned char>(text[i]) % static_cast<int>(vocab));
    }
    (void)t.decode(any_ids);
  } catch (const std::runtime_error&) {
    // A refused file: the documented outcome, with a one-line message.
  }
  return 0;
}
