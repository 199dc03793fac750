// duo_attention_policy.hpp: DuoAttention (Xiao et al., ICLR 2025, "DuoAttention: Efficient
// Long-Context LLM Inference with Retrieval and Streaming Heads"): a few KV heads keep every
// token (retrieval heads), the others only the attention sinks and a recent window (streaming
// heads).
//
// Dimension legend: G = KV heads of a layer, H = query heads, S = slot capacity, P = profiled
// tokens, s = sink tokens, r = recent window, q = sparsity (the share of streaming heads).
//
// The paper's observation: only some heads look far back for what they need (retrieval heads);
// the rest attend to the first tokens and the last few (streaming heads, StreamingLLM's cache),
// and lose nothing when they keep only those. Its code (mit-han-lab/duo-attention) learns a gate
// per KV head on synthetic passkey data, then `sparsify_attention_heads` (duo_attn/utils.py)
// makes the heads whose gate is at least np.quantile(gates, q) retrieval heads, and its cache
// (duo_attn/patch/static_kv_cache.py, DuoAttentionStaticKVCache.compress) cuts every streaming
// head to its first s and last r tokens.
//
// Here the gate is measured, not learned (the training-free variant): the layer reads its first P
// tokens with every token kept, and each KV head's score is the mean share of its query group's
// attention that falls OUTSIDE the first s positions and the last r, over the rows t >= s + r
// (the rows where some token is outside them): what a streaming head would have missed. At the
// P-th token the heads are split by the published rule (duo_retrieval_heads below), every
// streaming head is cut to its sinks and its window, and from then on a streaming head evicts
// its oldest token that is not a sink (as the sinks policy does) while a retrieval head keeps
// everything (profiled_policy.hpp has these steps, shared with FastGen). So what the layer holds
// is an outcome of the profile: (1 - q) G heads grow with the
// text, q G stay at s + r.
//
// Where it differs from the paper, and why: the gates are a profile of the text's own first
// tokens instead of weights trained on passkey retrieval (training is out of this project's
// reach); the quantile is taken over each layer's G heads, where the paper's code takes it over
// all layers' heads together, so that a layer decides when its own profile ends (and layers stay
// independent of each other); the tie-breaking noise of uniform(0, 1e-6) the code adds to the
// gates is left out (ties go to retrieval, as >= puts them). tests/duo_anchor.py replays the
// published selection and cut on the C++'s scores and caches.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/profiled_policy.hpp"

namespace h2o {

// Which of the heads with `scores` (G,) are retrieval heads: those whose score is at least the
// q-quantile of the scores (numpy's linear interpolation, as np.quantile computes it); q >= 1:
// none, q <= 0: all, as sparsify_attention_heads. Throws std::invalid_argument for an empty list or
// a q that is not a number.
std::vector<bool> duo_retrieval_heads(const std::vector<double>& scores, double sparsity);

class DuoAttentionPolicy final : public ProfiledPolicy {
 public:
  // The factory's default share of streaming heads: half of each layer's KV heads stream.
  static constexpr double kDefaultSparsity = 0.5;

  // A streaming head keeps the first `sinks` tokens and the last `recent` (at least 1); `sparsity`
  // q in [0, 1]; `profile_tokens` P read with every token kept (more than sinks + recent, so that
  // some row is profiled). Bad values throw std::invalid_argument naming them. `mode`: whose
  // attention scores a head (head_scores.hpp; per-head: its own query group).
  DuoAttentionPolicy(std::size_t sinks, std::size_t recent, double sparsity,
                     std::size_t profile_tokens, ScoringMode mode = ScoringMode::PerHead,
                     const LayerShape& shape = {});

  std::string name() const override { return "duo"; }
  // "DuoAttention: per layer, the 50% of KV heads with the least attention on 4 sinks + the last
  // 12 over the first 32 tokens keep every token, the others the sinks and the window; per-head
  // scores"
  std::string describe() const override;

  // Each KV head's score (the mean share of attention outside the sinks and the window; empty
  // before the split) and whether it is a retrieval head (empty before the split): (G,) each.
  const std::vector<double>& scores() const { return scores_; }
  const std::vector<bool>& retrieval() const { return retrieval_; }
  std::size_t sinks() const { return sinks_; }
  std::size_t recent() const { return recent_; }
  double sparsity() const { return sparsity_; }

 private:
  // ProfiledPolicy's steps: the profile is each head's attention outside the sinks and the
  // window; the decision splits the heads (duo_retrieval_heads); a streaming head keeps its sinks
  // and window and loses its oldest token that is not a sink (so does any head when asked).
  void start(const LayerKVCache& cache) override;
  void profile(const LayerKVCache& cache, const StepAttention& attention) override;
  void decide(std::size_t n_kv_heads) override;
  void cut(LayerKVCache& cache) const override;
  std::size_t keeps(std::size_t g) const override;
  std::size_t victim(const LayerKVCache& cache, std::size_t g) const override;

  std::size_t sinks_, recent_;
  double sparsity_;
  ScoringMode mode_;
  std::size_t rows_ = 0;              // profiled rows so far
  std::vector<double> outside_sums_;  // (G,) attention outside sinks and window, summed
  std::vector<double> scores_;        // (G,) once split
  std::vector<bool> retrieval_;       // (G,) once split
};

}  // namespace h2o
