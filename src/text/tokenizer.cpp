#include "h2o/text/tokenizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <numeric>
#include <queue>
#include <stdexcept>

#include "h2o/base/files.hpp"
#include "h2o/base/output_file.hpp"

namespace h2o {

namespace {

std::string tokenizer_named(const std::string& path) { return "tokenizer '" + path + "'"; }

// "<0xHH>" -> HH as a byte value; -1 for any other piece.
int byte_of_piece(const std::string& piece) {
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = piece[static_cast<std::size_t>(i)];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

bool is_utf8_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// run.c's starting "best score": a pair whose piece scores this or less never merges.
constexpr float kNeverMerges = -1e10f;

}  // namespace

TooManyTokens::TooManyTokens(std::size_t tokens_, bool at_least_, std::size_t limit_)
    : std::length_error("the text needs " + std::string(at_least_ ? "at least " : "") +
                        std::to_string(tokens_) + " tokens, more than the " +
                        std::to_string(limit_) + " allowed"),
      tokens(tokens_),
      at_least(at_least_),
      limit(limit_) {}

std::string TooManyTokens::count_text() const {
  return (at_least ? "at least " : "") + std::to_string(tokens) + " tokens";
}

Tokenizer::Tokenizer(std::vector<std::string> pieces, std::vector<float> scores)
    : pieces_(std::move(pieces)), scores_(std::move(scores)) {
  if (pieces_.size() != scores_.size()) {
    throw std::invalid_argument("Tokenizer: " + std::to_string(pieces_.size()) + " pieces but " +
                                std::to_string(scores_.size()) + " scores");
  }
  if (pieces_.size() < kMinVocab) {
    throw std::invalid_argument(
        "Tokenizer: a vocabulary needs at least " + std::to_string(kMinVocab) +
        " entries (<unk>, BOS, EOS, 256 byte tokens), got " + std::to_string(pieces_.size()));
  }
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    if (!std::isfinite(scores_[i])) {
      throw std::invalid_argument("Tokenizer: entry " + std::to_string(i) +
                                  " has a non-finite score");
    }
    max_token_length_ = std::max(max_token_length_, pieces_[i].size());
  }
  for (int b = 0; b < 256; ++b) {
    if (pieces_[static_cast<std::size_t>(kFirstByteToken + b)].empty()) empty_byte_piece_ = true;
  }
  sorted_ids_.resize(pieces_.size());
  std::iota(sorted_ids_.begin(), sorted_ids_.end(), 0);
  // Equal pieces keep id order, so find() returns the smallest id: deterministic on duplicates.
  std::stable_sort(sorted_ids_.begin(), sorted_ids_.end(), [&](int a, int b) {
    return pieces_[static_cast<std::size_t>(a)] < pieces_[static_cast<std::size_t>(b)];
  });
}

Tokenizer Tokenizer::load(const std::string& path, std::size_t vocab_size) {
  std::ifstream in;
  const std::uint64_t size = open_binary_file(path, tokenizer_named(path), in, kMaxFileBytes);
  if (vocab_size < kMinVocab) {
    throw std::runtime_error(tokenizer_named(path) + ": the model's vocabulary has " +
                             std::to_string(vocab_size) + " tokens, fewer than the " +
                             std::to_string(kMinVocab) + " a llama2.c tokenizer needs");
  }

  std::uint32_t max_length = 0;
  if (!read_exact(in, &max_length, sizeof(max_length))) {
    throw std::runtime_error(tokenizer_named(path) +
                             " is truncated: the header needs 4 bytes, the file has " +
                             std::to_string(size));
  }
  if (max_length == 0 || max_length > kMaxTokenLengthLimit) {
    throw std::runtime_error(tokenizer_named(path) + ": max_token_length is " + std::to_string(max_length) +
                             ", expected 1.." + std::to_string(kMaxTokenLengthLimit));
  }

  // Entry by entry, never trusting a length beyond the bytes the file still holds.
  std::vector<std::string> pieces;
  std::vector<float> scores;
  std::uintmax_t offset = sizeof(max_length);
  for (std::size_t i = 0; i < vocab_size; ++i) {
    if (offset == size) {
      throw std::runtime_error(tokenizer_named(path) + " holds only " + std::to_string(i) +
                               " entries but the model's vocabulary has " +
                               std::to_string(vocab_size) +
                               " tokens (wrong tokenizer for this model?)");
    }
    float score = 0.0f;
    std::int32_t length = 0;
    if (!read_exact(in, &score, sizeof(score)) || !read_exact(in, &length, sizeof(length))) {
      throw std::runtime_error(tokenizer_named(path) + " is truncated inside entry " + std::to_string(i) +
                               " of " + std::to_string(vocab_size));
    }
    offset += sizeof(score) + sizeof(length);
    if (length < 0) {
      throw std::runtime_error(tokenizer_named(path) + ": entry " + std::to_string(i) +
                               " has a negative length (" + std::to_string(length) + ")");
    }
    if (static_cast<std::uint32_t>(length) > max_length) {
      throw std::runtime_error(
          tokenizer_named(path) + ": entry " + std::to_string(i) + " is " + std::to_string(length) +
          " bytes long, more than its max_token_length " + std::to_string(max_length));
    }
    if (!std::isfinite(score)) {
      throw std::runtime_error(tokenizer_named(path) + ": entry " + std::to_string(i) +
                               " has a non-finite score");
    }
    std::string piece(static_cast<std::size_t>(length), '\0');
    if (!read_exact(in, piece.data(), piece.size())) {
      throw std::runtime_error(tokenizer_named(path) + " is truncated inside entry " + std::to_string(i) +
                               " of " + std::to_string(vocab_size));
    }
    offset += static_cast<std::uintmax_t>(length);
    pieces.push_back(std::move(piece));
    scores.push_back(score);
  }

  if (offset != size) {
    // Count the entries the rest of the file holds, to name the vocabulary it was made for.
    std::size_t extra = 0;
    std::uintmax_t at = offset;
    while (at + 8 <= size) {
      float score = 0.0f;
      std::int32_t length = 0;
      if (!read_exact(in, &score, sizeof(score)) || !read_exact(in, &length, sizeof(length))) break;
      const bool whole_entry = length >= 0 && static_cast<std::uint32_t>(length) <= max_length &&
                               at + 8 + static_cast<std::uintmax_t>(length) <= size;
      if (!whole_entry) break;
      in.seekg(length, std::ios::cur);
      at += 8 + static_cast<std::uintmax_t>(length);
      ++extra;
    }
    if (at == size) {
      throw std::runtime_error(tokenizer_named(path) + " holds " + std::to_string(vocab_size + extra) +
                               " entries but the model's vocabulary has " +
                               std::to_string(vocab_size) +
                               " tokens (wrong tokenizer for this model?)");
    }
    throw std::runtime_error(tokenizer_named(path) + " has " + std::to_string(size - offset) +
                             " unexpected bytes after its " + std::to_string(vocab_size) +
                             " entries");
  }
  return Tokenizer(std::move(pieces), std::move(scores));
}

void Tokenizer::save(const std::string& path) const {
  OutputFile out(path, "tokenizer");
  write(out.stream());
  out.commit();
}

void Tokenizer::write(std::ostream& out) const {
  const auto max_length = static_cast<std::uint32_t>(std::max<std::size_t>(max_token_length_, 1));
  out.write(reinterpret_cast<const char*>(&max_length), sizeof(max_length));
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const auto length = static_cast<std::int32_t>(pieces_[i].size());
    out.write(reinterpret_cast<const char*>(&scores_[i]), sizeof(float));
    out.write(reinterpret_cast<const char*>(&length), sizeof(length));
    out.write(pieces_[i].data(), length);
  }
}

std::vector<std::string> Tokenizer::base_pieces() {
  std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n"};
  const char* const hex = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) pieces.push_back({'<', '0', 'x', hex[b / 16], hex[b % 16], '>'});
  return pieces;
}

int Tokenizer::find(const std::string& piece) const {
  const auto it = std::lower_bound(
      sorted_ids_.begin(), sorted_ids_.end(), piece,
      [&](int id, const std::string& key) { return pieces_[static_cast<std::size_t>(id)] < key; });
  if (it == sorted_ids_.end() || pieces_[static_cast<std::size_t>(*it)] != piece) return -1;
  return *it;
}

std::vector<int> Tokenizer::encode(const std::string& text, bool add_bos, bool add_eos) const {
  std::vector<int> tokens;
  if (add_bos) tokens.push_back(kBos);

  // Step 1: the dummy prefix, so "Once" at the start is encoded like " Once" anywhere else.
  if (!text.empty()) {
    const int space = find(" ");
    tokens.push_back(space >= 0 ? space : kFirstByteToken + ' ');
  }

  // Step 2: one token per UTF-8 code point, or one byte token per byte when the vocabulary lacks
  // it. A code point is a lead byte plus its continuation bytes (10xxxxxx), at most 4 bytes; stray
  // or invalid bytes simply end up as byte tokens.
  std::string code_point;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (!is_utf8_continuation(byte)) code_point.clear();
    code_point.push_back(static_cast<char>(byte));
    const bool more_follows =
        i + 1 < text.size() && is_utf8_continuation(static_cast<unsigned char>(text[i + 1]));
    if (more_follows && code_point.size() < 4) continue;
    const int id = find(code_point);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (const char c : code_point) {
        tokens.push_back(kFirstByteToken + static_cast<unsigned char>(c));
      }
    }
    code_point.clear();
  }

  // Step 3: merge the best-scoring adjacent pair until none merges.
  merge_pairs(tokens);

  if (add_eos) tokens.push_back(kEos);
  return tokens;
}

void Tokenizer::merge_pairs(std::vector<int>& tokens) const {
  // run.c scans every adjacent pair for the best merge, merges it, and scans again: quadratic.
  // The same choice, made fast: tokens form a doubly linked list over their starting index, and
  // every pair that may merge waits in a priority queue ordered by score, then by index (a token
  // keeps its index when it absorbs its right neighbour, so index order is text order: the
  // smallest index is run.c's leftmost pair). A merge changes only the two pairs around it; their
  // new candidates are pushed, and outdated ones are recognised and skipped when they come up.
  const std::size_t n = tokens.size();
  if (n < 2) return;
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> prev(n), next(n);  // (n,) neighbours in the list, kNone at the ends
  std::vector<bool> alive(n, true);           // (n,) false once merged into its left neighbour
  for (std::size_t i = 0; i < n; ++i) {
    prev[i] = i == 0 ? kNone : i - 1;
    next[i] = i + 1 == n ? kNone : i + 1;
  }

  struct Candidate {
    float score;            // score of the merged piece
    std::size_t left;       // index of the left token (the merged token keeps it)
    std::size_t right;      // index of the right token
    int left_id, right_id;  // the two tokens when this candidate was made
    int merged_id;          // the piece they make together
  };
  // The queue's top is the best candidate: higher score first, then the smaller (leftmost) index.
  auto comes_later = [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score < b.score : a.left > b.left;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(comes_later)> queue(comes_later);
  std::string joined;
  const auto consider = [&](std::size_t left, std::size_t right) {
    const std::string& a = pieces_[static_cast<std::size_t>(tokens[left])];
    const std::string& b = pieces_[static_cast<std::size_t>(tokens[right])];
    if (a.size() + b.size() > max_token_length_) return;  // longer than every piece
    joined.assign(a).append(b);
    const int id = find(joined);
    // Strictly greater, as run.c compares with its starting best score.
    if (id < 0 || !(scores_[static_cast<std::size_t>(id)] > kNeverMerges)) return;
    queue.push(
        {scores_[static_cast<std::size_t>(id)], left, right, tokens[left], tokens[right], id});
  };

  for (std::size_t i = 0; i + 1 < n; ++i) consider(i, i + 1);
  while (!queue.empty()) {
    const Candidate best = queue.top();
    queue.pop();
    // Outdated: the left token was merged away, has another neighbour now, or either token has
    // changed since (a changed pair was pushed again when it changed).
    if (!alive[best.left] || next[best.left] != best.right || tokens[best.left] != best.left_id ||
        tokens[best.right] != best.right_id) {
      continue;
    }
    tokens[best.left] = best.merged_id;
    alive[best.right] = false;
    next[best.left] = next[best.right];
    if (next[best.left] != kNone) prev[next[best.left]] = best.left;
    if (prev[best.left] != kNone) consider(prev[best.left], best.left);
    if (next[best.left] != kNone) consider(best.left, next[best.left]);
  }

  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (alive[i]) tokens[kept++] = tokens[i];
  }
  tokens.resize(kept);
}

std::size_t Tokenizer::min_tokens(std::size_t text_bytes, bool add_bos, bool add_eos) const {
  std::size_t text_tokens = 0;  // tokens standing for the text (and perhaps BOS merged in)
  if (text_bytes > 0 && empty_byte_piece_) {
    text_tokens = 1;
  } else if (text_bytes > 0) {
    // Pieces are at most max_token_length_ bytes; a vocabulary has at least one non-empty piece.
    const std::size_t per_token = std::max<std::size_t>(max_token_length_, 1);
    text_tokens = (text_bytes + 1 + per_token - 1) / per_token;  // + 1: the dummy space
  }
  return std::max<std::size_t>(text_tokens, add_bos ? 1 : 0) + (add_eos ? 1 : 0);
}

std::vector<int> Tokenizer::encode_at_most(const std::string& text, bool add_bos, bool add_eos,
                                           std::size_t max_tokens) const {
  const std::size_t at_least = min_tokens(text.size(), add_bos, add_eos);
  if (at_least > max_tokens) throw TooManyTokens(at_least, true, max_tokens);
  std::vector<int> tokens = encode(text, add_bos, add_eos);
  if (tokens.size() > max_tokens) throw TooManyTokens(tokens.size(), false, max_tokens);
  return tokens;
}

std::string Tokenizer::decode_piece(int previous_token, int token) const {
  const std::string& piece = pieces_.at(static_cast<std::size_t>(token));
  // After BOS the leading space was SentencePiece's dummy prefix, not part of the text.
  if (previous_token == kBos && !piece.empty() && piece[0] == ' ') return piece.substr(1);
  const int byte = byte_of_piece(piece);
  if (byte >= 0) return std::string(1, static_cast<char>(byte));
  return piece;
}

std::string Tokenizer::decode(const std::vector<int>& tokens) const {
  std::string text;
  int previous = -1;
  for (const int token : tokens) {
    if (token != kBos && token != kEos) text += decode_piece(previous, token);
    previous = token;
  }
  return text;
}

}  // namespace h2o
