// cache_policy.hpp: the one interface through which the decoder lets a policy shape its KV caches.
//
// Dimension legend: H = query heads, G = KV heads, S = slot capacity of a layer cache.
//
// Per layer and per token the decoder (1) appends the new key/value rows, (2) computes every query
// head's attention over the live slots (the new token sees itself), then (3) calls
// after_attention(), where the policy may update per-slot scores and evict. The decoder never
// knows which policy runs: every policy of policy_factory.hpp's table plugs in here. One policy
// object serves every layer; whatever it remembers per token lives in the cache's per-slot scores,
// so it moves with the token's rows.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>

#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

// One layer's attention weights for the newest token: H rows, row h starts at data + h * stride,
// and its first cache.size(g) entries are the weights over KV head g's slots [0, size(g)), where g
// is the KV head query head h reads.
// The layer it belongs to, of how many, and the decoder's longest sequence are told too: a policy
// whose budget differs by depth (PyramidKV) reads them; the others ignore them.
struct StepAttention {
  const float* data;         // (H, stride)
  std::size_t n_heads;       // H
  std::size_t stride;        // >= number of live slots
  std::size_t layer = 0;     // this layer's index, 0 = nearest the embedding
  std::size_t n_layers = 1;  // layers of the model
  // The most positions the decoder reads (its budgets are asked with it); 0: the cache's capacity.
  std::size_t max_positions = 0;
  std::size_t positions_or(std::size_t capacity) const {
    return max_positions > 0 ? max_positions : capacity;
  }
  const float* head(std::size_t h) const { return data + h * stride; }
};

class CachePolicy {
 public:
  virtual ~CachePolicy() = default;

  // Short name as typed on a command line: "full", "h2o".
  virtual std::string name() const = 0;
  // One line for people: "H2O, heavy 2 + recent 2 = 4 tokens, per-head scores".
  virtual std::string describe() const = 0;

  // The most tokens a layer cache holds between steps when the sequence may reach max_positions:
  // the policy's budget (given to the constructor below), or all of them when that is less. The
  // decoder preallocates one slot more, for the incoming token. (A wrapper around another policy
  // overrides it to pass the question on.)
  virtual std::size_t max_tokens(std::size_t max_positions) const {
    return std::min(budget_tokens_, max_positions);
  }

  // Tokens read token by token from the first on before the policy evicts anything: 0 for most;
  // FastGen profiles its heads over the first ones with every token kept. A fair comparison at
  // equal bytes gives its rival the same start (policy_sweep.hpp's read_at_equal_bytes).
  virtual std::size_t prompt_tokens() const { return 0; }

  // Budgets that differ by layer and by KV head. By default every layer and KV head keeps
  // max_tokens(); a policy may give layer `layer` of `n_layers` its own budget (PyramidKV: more
  // near the embedding, less deeper, max_tokens() on average over the layers), and may let the KV
  // heads of a layer share its budget unevenly (Ada-KV: a head holds what its scores earn).
  //   layer_tokens   tokens per KV head the layer keeps between steps, on average over its heads
  //                  (what compress() cuts it to; the layer's heads together keep G times this);
  //   head_capacity  the most tokens one KV head of that layer can hold between steps, the cache
  //                  slots the decoder preallocates (less the incoming token's).
  virtual std::size_t layer_tokens(std::size_t max_positions, std::size_t layer,
                                   std::size_t n_layers) const {
    (void)layer;
    (void)n_layers;
    return max_tokens(max_positions);
  }
  virtual std::size_t head_capacity(std::size_t max_positions, std::size_t layer,
                                    std::size_t n_layers, std::size_t n_kv_heads) const {
    (void)n_kv_heads;
    return layer_tokens(max_positions, layer, n_layers);
  }

  // Called once per layer per token, after attention; may update scores and evict slots. By
  // default: observe() the step, then, once the cache holds more than layer_tokens(), evict the
  // one slot per KV head that choose_victims() names. A policy may do both in one pass instead.
  virtual void after_attention(LayerKVCache& cache, const StepAttention& attention);

  // The two halves of a step, also used on their own by prompt-time compression
  // (Decoder::read_prompt_compressed: the whole prompt is observed, then compress() cuts once):
  //   observe         update the per-slot scores with this step's attention; evict nothing;
  //   choose_victims  the one slot per KV head to evict next, by the policy's rule, given the
  //                   cache as it stands: victims (G,).
  virtual void observe(LayerKVCache& cache, const StepAttention& attention) = 0;
  virtual void choose_victims(LayerKVCache& cache, std::size_t* victims) = 0;

  // Cuts the cache down to `keep` tokens per KV head in one go (prompt-time compression), by the
  // policy's rule applied once to the cache as it stands. By default the victims of
  // choose_victims() go one after another, which is the same cut for a rule that looks only at
  // positions (window, sinks) or draws at random; a policy that ranks tokens by a score overrides
  // it with cut_by_rule() (an evicted token must not change how the others are ranked).
  virtual void compress(LayerKVCache& cache, std::size_t keep);

  // True when each decision depends only on the cache and attention it is given, not on the order
  // of calls across layers: Decoder::forward_batch may then run a chunk of tokens layer by layer
  // (layer 0 for every token, then layer 1, ...). A policy with state shared by all layers (say,
  // one random generator drawing for every layer in turn) must say false, and forward_batch keeps
  // the token-by-token order for it. (The library's random eviction keeps one generator per
  // layer cache, so it can say true.)
  virtual bool decisions_independent_of_layer_order() const { return true; }

 protected:
  // A policy that keeps at most `budget_tokens` tokens per layer and KV head; by default every
  // token (the full cache, and wrappers that override max_tokens).
  explicit CachePolicy(std::size_t budget_tokens = std::numeric_limits<std::size_t>::max())
      : budget_tokens_(budget_tokens) {}

  // after_attention's victims live on the stack (a decode step allocates nothing) up to this many
  // KV heads, far more than any model here has.
  static constexpr std::size_t kMaxStackHeads = 64;

  // compress() for a policy that ranks tokens by the cache's scores: every KV head keeps
  // selection.hpp's plan_cut(positions, scores, rule, keep), re-packed in position order.
  static void cut_by_rule(LayerKVCache& cache, std::size_t keep, const EvictionRule& rule);

 private:
  std::size_t budget_tokens_;
};

// Keeps every token: exact attention, memory growing with the sequence.
class FullCachePolicy final : public CachePolicy {
 public:
  std::string name() const override { return "full"; }
  std::string describe() const override { return "full cache (keeps every token)"; }
  void after_attention(LayerKVCache&, const StepAttention&) override {}
  void observe(LayerKVCache&, const StepAttention&) override {}
  // Never asked: a full cache is never over its budget. The oldest, if it ever were.
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;
};

}  // namespace h2o
