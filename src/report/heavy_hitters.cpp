// heavy_hitters.cpp: the old tokens an H2O cache kept, names joined (heavy_hitters.hpp).
#include "h2o/report/heavy_hitters.hpp"

#include <map>
#include <stdexcept>

#include "h2o/text/token_text.hpp"

namespace h2o {

std::string heavy_hitters_text(const std::vector<std::vector<Position>>& kept,
                               const Tokenizer& tokenizer, const std::vector<int>& tokens,
                               std::size_t recent, const NameTokens& names) {
  const std::size_t n = tokens.size();
  std::vector<bool> is_name(n, false);  // (N,) positions inside a name's mention
  for (const NameMention& m : find_name_mentions(tokens, names).mentions) {
    for (std::size_t p = m.first; p <= m.last; ++p) is_name[p] = true;
  }
  const std::size_t first_recent = n - 1 > recent ? n - 1 - recent : 0;
  std::string text;
  std::size_t heavy_total = 0, heavy_near_start = 0;
  for (std::size_t l = 0; l < kept.size(); ++l) {
    std::size_t in_layer = 0;
    std::map<std::size_t, std::size_t> name_pieces;  // a kept name's first position -> pieces kept
    for (Position kept_at : kept[l]) {
      if (kept_at < 0 || static_cast<std::size_t>(kept_at) >= n) {
        throw std::invalid_argument("heavy_hitters_text: position " + std::to_string(kept_at) +
                                    " is outside a text of " + std::to_string(n) + " tokens");
      }
      const auto p = static_cast<std::size_t>(kept_at);
      if (p >= first_recent) continue;  // the recent window, kept for being new
      ++in_layer;
      heavy_near_start += p < 10 ? 1 : 0;
      if (is_name[p]) ++name_pieces[word_at(tokenizer, tokens, p).begin];
    }
    std::string kept_names;
    for (const auto& [first, pieces] : name_pieces) {
      const TokenSpan word = word_at(tokenizer, tokens, first);
      std::size_t length = 0;  // the word's name tokens ("Priya's": those of "Priya")
      for (std::size_t p = word.begin; p < word.end; ++p) length += is_name[p] ? 1 : 0;
      const std::string entry =
          shown_word(tokenizer, tokens, word) + "[" + std::to_string(first) + "]" +
          (pieces < length ? "(" + std::to_string(pieces) + " of " + std::to_string(length) + ")"
                           : "");
      if (kept_names.size() + entry.size() < 66) kept_names += " " + entry;  // 100 columns
    }
    heavy_total += in_layer;
    text += "  layer " + std::to_string(l) + ": " + std::to_string(in_layer) +
            " old tokens; names:" + (kept_names.empty() ? " none" : kept_names) + "\n";
  }
  return text + "  " + std::to_string(heavy_near_start) + " of the " +
         std::to_string(heavy_total) +
         " heavy hitters sit in the first 10 positions: early tokens collect\n"
         "  attention from every later step (a bias the H2O paper notes).\n";
}

}  // namespace h2o
