// prompt_profile.hpp: every KV head's profile (policy/head_profile.hpp) over a text's first tokens
// as a full cache reads them - lesson 10's Step 7, and the reason the explorer page gives for its
// verdict, measured the same way so that both say the same.
//
// A full-cache decoder reads the text one token at a time with its attention recorded; for the
// first P tokens (the "prompt") each layer's rows are copied into an (H, P, P) matrix, row t
// holding query t's weights over positions 0..t, and profile_heads reads each KV head off it.
//
// Dimension legend: L = layers, H = query heads, G = KV heads, P = profiled tokens.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "h2o/model/decoder.hpp"
#include "h2o/policy/head_profile.hpp"

namespace h2o {

// The tokens a profile reads: the first 256 of the text (all of a shorter one).
constexpr std::size_t kProfiledTokens = 256;

// Collects the rows while a full-cache decoder (attention recorded) reads the text.
class PromptProfiler {
 public:
  // `prompt_tokens` = P; `config` gives L, H and G.
  PromptProfiler(const ModelConfig& config, std::size_t prompt_tokens);
  // Copies step t's rows of every layer from `decoder` (steps t >= P are ignored). The decoder
  // must hold every position so far (a full cache): its slot k is then position k.
  void add_step(const Decoder& decoder, std::size_t t);
  // (L,) x (G,) the profile of every KV head over the P rows. Throws std::invalid_argument as
  // profile_heads does (P <= r + s: no row to average).
  std::vector<std::vector<HeadProfile>> profiles(
      const HeadProfileOptions& sizes = kKindSizes) const;

 private:
  std::size_t heads_, kv_heads_, tokens_;
  std::vector<std::vector<float>> rows_;  // (L,) x (H * P * P)
};

// A full cache reading the first min(N, kProfiledTokens) tokens of `tokens` (N,): the profile of
// every KV head, (L,) x (G,).
std::vector<std::vector<HeadProfile>> profile_text_heads(
    std::shared_ptr<const DecoderWeights> weights, const std::vector<int>& tokens,
    const HeadProfileOptions& sizes = kKindSizes);

}  // namespace h2o
