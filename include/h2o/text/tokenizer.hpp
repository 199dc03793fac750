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
//      highest score (the leftmost pair on a tie; pieces scored <= -1e10 never merge) until no
//      pair merges; EOS last if asked. BOS takes part in the merging, as in run.c.
// Decoding one token after the previous one: after BOS a leading space is dropped (it was the dummy
// prefix), and a byte token "<0xHH>" becomes that raw byte.
//
// Lookups go through a sorted copy of the vocabulary (binary search), so encoding costs
// O(log V) per lookup rather than a scan of the whole vocabulary. run.c rescans every pair after
// each merge (quadratic: 300 KB of text took 20 s to a minute); here the candidate merges wait in a
// priority queue over a linked list of tokens, so a text of n bytes costs O(n log n) and gives
// exactly run.c's tokens (the tests compare it with run.c's algorithm on many random cases).
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace h2o {

// Thrown by Tokenizer::encode_at_most(): the text needs more tokens than the caller allows.
struct TooManyTokens : std::length_error {
  TooManyTokens(std::size_t tokens, bool at_least, std::size_t limit);
  // "at least 68 tokens" or "102 tokens": the count, for the caller's own message.
  std::string count_text() const;

  std::size_t tokens;  // the token count, or (at_least) a lower bound of it
  bool at_least;       // refused from the text's byte count alone, before any encoding work
  std::size_t limit;   // the most tokens allowed
};

class Tokenizer {
 public:
  static constexpr int kUnknown = 0;
  static constexpr int kBos = 1;
  static constexpr int kEos = 2;
  static constexpr int kFirstByteToken = 3;      // id of <0x00>; byte b has id b + 3
  static constexpr std::size_t kMinVocab = 259;  // <unk>, BOS, EOS and the 256 byte tokens
  static constexpr std::uint32_t kMaxTokenLengthLimit = 1024;  // sanity limit for a piece's bytes
  static constexpr std::uint64_t kMaxFileBytes = 64ull << 20;  // largest tokenizer file read

  // The kMinVocab pieces every llama2.c vocabulary starts with, in id order: "<unk>", "\n<s>\n",
  // "\n</s>\n" (as llama2.c's export writes them), then the byte tokens "<0x00>".."<0xFF>". For
  // code that builds a vocabulary (tools, tests, the fuzz seeds).
  static std::vector<std::string> base_pieces();

  // pieces (V,) and scores (V,). Throws std::invalid_argument on mismatched sizes, V < kMinVocab,
  // or a non-finite score.
  Tokenizer(std::vector<std::string> pieces, std::vector<float> scores);

  // Reads a llama2.c tokenizer file for a model with `vocab_size` tokens. Throws a one-line
  // std::runtime_error naming the file: missing, empty, truncated, made for another vocabulary
  // size, negative or oversized piece lengths, non-finite scores.
  static Tokenizer load(const std::string& path, std::size_t vocab_size);

  // Writes the same format (for tests and tools that build small tokenizers of their own): save()
  // as an OutputFile (base/output_file.hpp: complete or not at all), write() to a stream the
  // caller checks.
  void save(const std::string& path) const;
  void write(std::ostream& out) const;

  std::vector<int> encode(const std::string& text, bool add_bos, bool add_eos) const;

  // encode() for a text that must fit in max_tokens (a model's seq_len): throws TooManyTokens,
  // before encoding anything when min_tokens() already exceeds the limit (a 1 MB text against a
  // 512-token model is refused at once), else after encoding.
  std::vector<int> encode_at_most(const std::string& text, bool add_bos, bool add_eos,
                                  std::size_t max_tokens) const;

  // The fewest tokens encode(text, add_bos, add_eos) can return for any text of `text_bytes`
  // bytes. Every token stands for at most max_token_length() bytes of the text with its dummy
  // space (a piece is at least as long as the bytes it stands for), so that is at least
  // ceil((text_bytes + 1) / max_token_length()) tokens, BOS possibly among them (a vocabulary may
  // merge BOS with the text), plus EOS. A vocabulary whose byte tokens (ids 3..258) include an
  // empty piece breaks the rule (any number of bytes can vanish into one token); then only one
  // token is promised for a non-empty text.
  std::size_t min_tokens(std::size_t text_bytes, bool add_bos, bool add_eos) const;

  // The bytes run.c prints for `token` when it follows `previous_token` (see the rules above).
  std::string decode_piece(int previous_token, int token) const;

  // All tokens' text, each decoded after its predecessor. BOS and EOS mark the sequence's ends and
  // are not text, so they decode to nothing. decode(encode(text, true, x)) == text for any bytes
  // with a vocabulary shaped like llama2.c's: a " " piece, byte tokens named "<0xHH>", and no text
  // that can merge into BOS, EOS or a byte name (fuzz/fuzz_tokenizer.cpp states it exactly).
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
  std::vector<int> sorted_ids_;    // (V,) ids ordered by piece bytes, then id (for find)
  bool empty_byte_piece_ = false;  // a byte token (ids 3..258) has an empty piece: see min_tokens

  // Step 3 of encoding: merges `tokens` in place, exactly in run.c's order.
  void merge_pairs(std::vector<int>& tokens) const;
};

}  // namespace h2o
