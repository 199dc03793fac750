// profiled_policy.hpp: a policy that gives each KV head its own rule, chosen from a profile of the
// sequence's first tokens (FastGen, DuoAttention).
//
// Dimension legend: G = KV heads of a layer, P = profiled tokens.
//
// Both read the first P tokens with every token kept, profiling every head as they go; then they
// decide once, per head, what it keeps (FastGen: the cheapest rule that recovers its attention;
// DuoAttention: every token, or sinks and a window), cut every head to that, and from then on
// evict from each head that is over what its decision keeps. What they share is written here once:
//   - the profile starts over at a new sequence (the cache's newest token at position 0) or a
//     new G;
//   - token by token (after_attention) the decision comes at the P-th token; from a prompt read
//     whole (observe, then compress) it comes at compress(), on the profile so far;
//   - compress(cache, keep) cuts every head to its decision, then any head still above `keep`
//     to `keep` by its own victims (the decoder passes keep(), the sequence's length, so the
//     decision alone speaks there; so does a `keep` of 0).
// Each policy writes only its profile, its decision, its cut and its victims.
#pragma once

#include <cstddef>

#include "h2o/policy/cache_policy.hpp"

namespace h2o {

class ProfiledPolicy : public LayerPolicy {
 public:
  // The profile: the first P tokens are read with every token kept.
  std::size_t prompt_tokens() const override { return profile_tokens_; }
  std::size_t profile_tokens() const { return profile_tokens_; }

  // While the first P tokens are read: profiles the row, scores, evicts nothing, and at the P-th
  // decides and cuts. After: scores, and every head over what it keeps loses its victim.
  void after_attention(LayerKVCache& cache, const StepAttention& attention) final;
  // Profiles the row (until the decision) and scores; evicts nothing (a prompt read to be cut).
  void observe(LayerKVCache& cache, const StepAttention& attention) final;
  // Each head's next victim (only asked by callers outside the policy's own steps).
  void choose_victims(LayerKVCache& cache, std::size_t* victims) final;
  // Decides from the profile so far (if not yet), cuts every head to its decision, and then any
  // head above `keep` (unless 0) to `keep`. std::logic_error on a cache whose prompt it never
  // observed, or when a head has no victim left above `keep` (its sinks or window).
  void compress(LayerKVCache& cache, std::size_t keep) final;

 protected:
  // Each head may keep every token, so keep() and head_capacity() are the sequence's length.
  ProfiledPolicy(const LayerShape& shape, std::size_t profile_tokens)
      : LayerPolicy(shape, kNoPositionLimit), profile_tokens_(profile_tokens) {}

  bool decided() const { return decided_; }

  // The hooks, called in this order for a sequence:
  //   start     a new sequence of a layer of `cache`'s G heads: the profile starts empty;
  //   profile   one row of the profile, the newest token's attention (every token still kept);
  //   score     every step: the per-slot scores the victims are chosen by (none by default);
  //   decide    the profile is over: each head's rule;
  //   cut       every head to what its rule keeps, at once;
  //   keeps     how many tokens head g keeps under its rule, and victim, which of them goes next.
  virtual void start(const LayerKVCache& cache) = 0;
  virtual void profile(const LayerKVCache& cache, const StepAttention& attention) = 0;
  virtual void score(LayerKVCache&, const StepAttention&) {}
  virtual void decide(std::size_t n_kv_heads) = 0;
  virtual void cut(LayerKVCache& cache) const = 0;
  virtual std::size_t keeps(std::size_t g) const = 0;
  virtual std::size_t victim(const LayerKVCache& cache, std::size_t g) const = 0;

 private:
  // A new sequence (the cache's newest token at position 0) or a new G: start() again.
  void start_if_new(const LayerKVCache& cache);
  void decide_and_cut(LayerKVCache& cache);

  std::size_t profile_tokens_;
  bool seen_ = false;           // a token of this layer was observed
  bool decided_ = false;        // the profile is over and every head has its rule
  std::size_t n_kv_heads_ = 0;  // G of the sequence being read
};

}  // namespace h2o
