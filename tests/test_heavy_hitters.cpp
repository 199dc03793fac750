// test_heavy_hitters.cpp: the old tokens an H2O cache kept, names joined
// (report/heavy_hitters.hpp): the recent window left out, a name's pieces joined into its word,
// a name kept in part said so, the first 10 positions counted; a position outside the text
// refused.
#include <string>
#include <vector>

#include "h2o/report/heavy_hitters.hpp"
#include "h2o_catch.hpp"

using h2o_catch::Contains;

namespace {
// <unk>, BOS, EOS, the 256 byte tokens (ids 3..258), then " the" and " dog" at 259 and 260:
// " Zoe" is spelled letter by letter, so a name of 3 tokens after its space.
h2o::Tokenizer heavy_hitters_tokenizer() {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  pieces.push_back(" the");
  pieces.push_back(" dog");
  return h2o::Tokenizer(pieces, std::vector<float>(pieces.size(), 0.0f));
}
constexpr int kHhThe = 259, kHhDog = 260;
constexpr int kHhSpace = 3 + ' ', kHhZ = 3 + 'Z', kHhO = 3 + 'o', kHhE = 3 + 'e';
}  // namespace

TEST_CASE("heavy hitters: old tokens per layer, names joined, the first positions counted",
          "[heavy_hitters]") {
  const h2o::Tokenizer tokenizer = heavy_hitters_tokenizer();
  const h2o::NameTokens names = h2o::names_as_tokens(tokenizer, {"Zoe"});
  //                                0  1         2    3    4    5       6       7       8
  const std::vector<int> tokens = {1, kHhSpace, kHhZ, kHhO, kHhE, kHhThe, kHhDog, kHhThe, kHhDog,
                                   kHhSpace, kHhZ, kHhO, kHhE, kHhThe, kHhDog};
  //                               9         10    11    12    13      14
  // 14 steps, a window of 2: positions 12 to 14 are recent (kept for being new), not heavy.
  const std::vector<std::vector<h2o::Position>> kept = {{0, 2, 3, 4, 5, 13, 14},
                                                        {3, 11, 12, 13, 14},
                                                        {6, 7, 13, 14}};
  const std::string text = h2o::heavy_hitters_text(kept, tokenizer, tokens, 2, names);
  INFO(text);
  // Layer 0 holds the whole first Zoe (positions 2-4), named once, at its word's first position
  // (the byte token of its space is a word of its own).
  CHECK_THAT(text, Contains("  layer 0: 5 old tokens; names: Zoe[2]\n"));
  // Layer 1 holds one piece of the first Zoe and one of the second (its last piece, 12, is recent).
  CHECK_THAT(text, Contains("  layer 1: 2 old tokens; names: Zoe[2](1 of 3) Zoe[10](1 of 3)\n"));
  CHECK_THAT(text, Contains("  layer 2: 2 old tokens; names: none\n"));
  // In the first 10 positions: 0, 2, 3, 4, 5 of layer 0, 3 of layer 1, 6 and 7 of layer 2.
  CHECK_THAT(text, Contains("  8 of the 9 heavy hitters sit in the first 10 positions"));
  CHECK_THROWS_WITH(h2o::heavy_hitters_text({{15}}, tokenizer, tokens, 2, names),
                    Contains("position 15 is outside a text of 15 tokens"));
}
