// heavy_hitters.hpp: what an H2O cache kept for its score at the end of a text, as lesson 09's
// last step shows it: for KV head 0 of every layer, how many old tokens (older than the recent
// window) it held, the character names among them (a word's pieces joined, its position in
// brackets), and how many sit in the text's first 10 positions (the old-token bias of
// accumulated scores the H2O paper notes).
//
// Dimension legend: L = layers, N = tokens of the text (BOS first).
#pragma once

#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

// Lines, each ending in "\n" and at most 100 columns: one per layer of `kept` (L,) x (kept,)
// positions of KV head 0 at the end of `tokens` (N,) (SweepRun::kept_at_end), every position in
// the last `recent` of the N - 1 steps being the window, not a heavy hitter; then the count in
// the first 10 positions. A name is shown as "_Noufem[17]", and "(2 of 3)" when the cache kept
// only some of its tokens. std::invalid_argument for a position outside the text.
std::string heavy_hitters_text(const std::vector<std::vector<Position>>& kept,
                               const Tokenizer& tokenizer, const std::vector<int>& tokens,
                               std::size_t recent, const NameTokens& names);

}  // namespace h2o
