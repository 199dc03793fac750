#include "h2o/measure/prompt_profile.hpp"

#include <algorithm>
#include <utility>

namespace h2o {

PromptProfiler::PromptProfiler(const ModelConfig& config, std::size_t prompt_tokens)
    : heads_(config.n_heads),
      kv_heads_(config.n_kv_heads),
      tokens_(prompt_tokens),
      rows_(config.n_layers, std::vector<float>(config.n_heads * prompt_tokens * prompt_tokens)) {}

void PromptProfiler::add_step(const Decoder& decoder, std::size_t t) {
  if (t >= tokens_) return;
  for (std::size_t l = 0; l < rows_.size(); ++l) {
    const Matrix& weights = decoder.attention(l).weights;  // (H, t + 1)
    for (std::size_t h = 0; h < heads_; ++h) {
      float* row = rows_[l].data() + (h * tokens_ + t) * tokens_;
      for (std::size_t k = 0; k <= t; ++k) row[k] = weights(h, k);
    }
  }
}

std::vector<std::vector<HeadProfile>> PromptProfiler::profiles(
    const HeadProfileOptions& sizes) const {
  std::vector<std::vector<HeadProfile>> out;
  for (const std::vector<float>& layer : rows_) {
    out.push_back(profile_heads({layer.data(), heads_, tokens_}, kv_heads_, sizes));
  }
  return out;
}

std::vector<std::vector<HeadProfile>> profile_text_heads(
    std::shared_ptr<const DecoderWeights> weights, const std::vector<int>& tokens,
    const HeadProfileOptions& sizes) {
  const std::size_t p = std::min(tokens.size(), kProfiledTokens);
  PromptProfiler profiler(weights->config, p);
  Decoder decoder(std::move(weights), policy_of<FullCachePolicy>(), p);
  decoder.set_record_attention(true);
  for (std::size_t t = 0; t < p; ++t) {
    decoder.forward(tokens[t]);
    profiler.add_step(decoder, t);
  }
  return profiler.profiles(sizes);
}

}  // namespace h2o
