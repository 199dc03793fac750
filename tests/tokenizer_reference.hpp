// tokenizer_reference.hpp: llama2.c run.c's encode(), written as plainly as run.c writes it, as
// the reference the fast Tokenizer::encode must equal token for token (test_tokenizer.cpp, and
// the tokenizer fuzz harness in fuzz/).
//
// It uses only Tokenizer's public lookups (find, piece, score), so it shares no code with the
// encoder it checks. Merging rescans every adjacent pair after each merge: O(n^2) for n tokens,
// fine for test texts of a few thousand bytes, far too slow for programs.
#pragma once

#include <string>
#include <vector>

#include "h2o/text/tokenizer.hpp"

namespace h2o_test {

inline std::vector<int> reference_encode(const h2o::Tokenizer& t, const std::string& text,
                                         bool add_bos, bool add_eos) {
  using h2o::Tokenizer;
  std::vector<int> tokens;
  if (add_bos) tokens.push_back(Tokenizer::kBos);
  // The dummy prefix: the piece " ", or the byte token of a space.
  if (!text.empty()) {
    const int space = t.find(" ");
    tokens.push_back(space >= 0 ? space : Tokenizer::kFirstByteToken + ' ');
  }
  // One token per UTF-8 code point (a lead byte and at most 3 continuation bytes), else its bytes.
  const auto continuation = [](char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; };
  std::string code_point;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!continuation(text[i])) code_point.clear();
    code_point.push_back(text[i]);
    if (i + 1 < text.size() && continuation(text[i + 1]) && code_point.size() < 4) continue;
    const int id = t.find(code_point);
    if (id >= 0) {
      tokens.push_back(id);
    } else {
      for (const char c : code_point) {
        tokens.push_back(Tokenizer::kFirstByteToken + static_cast<unsigned char>(c));
      }
    }
    code_point.clear();
  }
  // run.c's loop: find the best pair (highest score, the leftmost on ties, better than -1e10),
  // merge it, start again.
  while (true) {
    float best_score = -1e10f;
    int best_id = -1;
    std::size_t best_index = 0;
    for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
      const int id = t.find(t.piece(tokens[i]) + t.piece(tokens[i + 1]));
      if (id != -1 && t.score(id) > best_score) {
        best_score = t.score(id);
        best_id = id;
        best_index = i;
      }
    }
    if (best_id == -1) break;
    tokens[best_index] = best_id;
    tokens.erase(tokens.begin() + static_cast<std::ptrdiff_t>(best_index) + 1);
  }
  if (add_eos) tokens.push_back(Tokenizer::kEos);
  return tokens;
}

}  // namespace h2o_test
