// knorm_policy.hpp: keep the tokens whose keys are SHORTEST (Devoto et al., 2024, "A Simple and
// Effective L2 Norm-Based Strategy for KV Cache Compression").
//
// Dimension legend: G = KV heads, S = slot capacity, D = head_dim.
//
// The paper found that a key with a small L2 norm tends to draw MORE attention (queries align
// with it), so the norm of a cached key predicts its importance without computing any attention.
// This policy keeps, per layer and KV head, the last `recent` tokens plus the `heavy` older tokens
// with the smallest key norms: each token's score is minus its key's L2 norm, computed once when
// the token arrives, and selection.hpp's rule evicts the lowest score outside the recent window
// (on a tie the newer token goes; norms are compared at about 0.1%, see rounded_key_norm). Heads
// keep different tokens. Prompt-time compression cuts once
// by the same rule.
//
// Compared with the anchors: the paper's code (alessiodevoto/l2compress, cache.py l2_compress)
// and kvpress's KnormPress both keep the shortest keys of the whole cache per KV head, protecting
// no recent window; the paper's code can also leave chosen layers uncompressed (skip_layers). Here
// the last `recent` tokens are protected, as for every policy of this project compared at an equal
// budget (with recent = 0 it is exactly their rule), and every layer gets the same budget. The norm
// is summed in double precision (each product exact), so no build flag changes a score.
#pragma once

#include <cstddef>
#include <string>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/scored_policy.hpp"

namespace h2o {

class KeyNormPolicy final : public ScoredPolicy {
 public:
  // Keeps budget.heavy shortest keys + the last budget.recent tokens per layer and KV head.
  explicit KeyNormPolicy(CacheBudget budget, const LayerShape& shape = {});

  std::string name() const override { return "knorm"; }
  // "key norm, heavy 45 + recent 46 = 91 tokens, the longest keys evicted"
  std::string describe() const override;
  std::string scores() const override { return "key-norm scores"; }
  // Gives the newest token (the last slot, just appended) its score: minus its key's L2 norm.
  void score(LayerKVCache& cache, const StepAttention& attention) override;

  const CacheBudget& budget() const { return budget_; }

 private:
  CacheBudget budget_;
};

// The L2 norm of a key row (D,), summed in double precision: every product is exact, so the
// result does not depend on whether the compiler fuses multiply and add.
double key_norm(const float* key, std::size_t head_dim);

// The norm as the policy compares it: rounded to kNormBits significant bits (about 0.1%). The
// same token at two positions has keys of the same length (RoPE rotates a key without stretching
// it), so their norms differ only by rounding noise, which differs again between the decoder's
// token-by-token and batched products; rounded, they tie, and the rule's tie-break (the newer
// token goes) decides instead of the noise.
constexpr int kNormBits = 10;
double rounded_key_norm(const float* key, std::size_t head_dim);

}  // namespace h2o
