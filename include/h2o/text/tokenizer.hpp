// tokenizer.hpp: llama2.c's byte-pair tokenizer (tokenizer.bin / tok512.bin), text <-> token ids.
//
// Dimension legend: V = vocabulary size (taken from the model, the file does not store it).
//
// File layout (little-endian): uint32 max_token_length, then V entries of
//   float32 score, int32 byte length, that many bytes (the piece, no terminator).
// Ids by convention: 0 <unk>, 1 BOS, 2 EOS, 3..258 the byte tokens <0x00>..<0xFF>.
//
// Encoding (as llama2.c run.c does it):
//   1. BOS if asked; then, for non-empty text, the token of a single space " " (SentencePiece's
//      "dummy prefix", so the first word looks like every later word, which follows a space);
//   2. each UTF-8 code point (1 to 4 bytes) becomes its own token when the vocabulary has it, else
//      one byte token per byte ("byte fallback": byte b -> id b + 3), so NO text is unencodable;
//   3. repeatedly merge the adjacent pair whose concatenated piece is in the vocabulary with the
//      highest score (the leftmost pair on a tie) until no pair merges; EOS last if asked.
// Decoding one token after the previous one: after BOS a leading space is dropped (it was the dummy
// prefix), and a byte token "<0xHH>" becomes that raw byte.
//
// Lookups go through a sorted copy of the vocabulary (binary search), so encoding costs
// O(log V) per lookup rather than a scan of the whole vocabulary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace h2o {

class Tokenizer {
 public:
  static constexpr int kUnknown = 0;
  static constexpr int kBos = 1;
  static constexpr int kEos = 2;
  static constexpr int kFirstByteToken = 3;      // id of <0x00>; byte b has id b + 3
  static constexpr std::size_t kMinVocab = 259;  // <unk>, BOS, EOS and the 256 byte tokens
  static constexpr std::uint32_t kMaxTokenLengthLimit = 1024;  // sanity limit for a piece's bytes
  static constexpr std::uint64_t kMaxFileBytes = 64ull << 20;  // largest tokenizer file read

  // pieces (V,) and scores (V,). Throws std::invalid_argument on mismatched sizes, V < kMinVocab,
  // or a non-finite score.
  Tokenizer(std::vector<std::string> pieces, std::vector<float> scores);

  // Reads a llama2.c tokenizer file for a model with `vocab_size` tokens. Throws a one-line
  // std::runtime_error naming the file: missing, empty, truncated, made for another vocabulary
  // size, negative or oversized piece lengths, non-finite scores.
  static Tokenizer load(const std::string& path, std::size_t vocab_size);

  // Writes the same format (for tests and tools that build small tokenizers of their own).
  void save(const std::string& path) const;

  std::vector<int> encode(const std::string& text, bool add_bos, bool add_eos) const;

  // The bytes run.c prints for `token` when it follows `previous_token` (see the rules above).
  std::string decode_piece(int previous_token, int token) const;

  // All tokens' text, each decoded after its predecessor. BOS and EOS mark the sequence's ends and
  // are not text, so they decode to nothing. decode(encode(text, true, x)) == text for any bytes.
  std::string decode(const std::vector<int>& tokens) const;

  // Id of a piece, or -1 when the vocabulary does not hold it (binary search).
  int find(const std::string& piece) const;

  std::size_t vocab_size() const { return pieces_.size(); }
  const std::string& piece(int id) const { return pieces_.at(static_cast<std::size_t>(id)); }
  float score(int id) const { return scores_.at(static_cast<std::size_t>(id)); }
  std::size_t max_token_length() const { return max_token_length_; }

 private:
  std::vector<std::string> pieces_;  // (V,)
  std::vector<float> scores_;        // (V,) merge priority: higher merges first
  std::size_t max_token_length_ = 0;
  std::vector<int> sorted_ids_;  // (V,) ids ordered by piece bytes, then id (for find)
};

}  // namespace h2o
