// cache_policy.hpp: the one interface through which the decoder lets a policy shape its KV caches.
//
// Dimension legend: L = layers, H = query heads, G = KV heads, S = slot capacity of a layer cache.
//
// A policy is one class derived from LayerPolicy: one object of it serves one layer. It is made
// for that layer (its LayerShape: which layer of how many, G, the longest sequence), so whatever
// differs by layer or head is a field it sets in its constructor: the tokens the layer keeps
// between steps (keep(); PyramidKV: more near the embedding) and the most one KV head may hold
// (head_capacity(); Ada-KV: a head holds what its scores earn, FastGen: what its rule keeps).
// Whatever the policy remembers about the layer (a random generator, FastGen's profile and rules,
// SnapKV's window rows) is a field too; what it remembers per token lives in the cache's per-slot
// scores, so it moves with the token's rows.
//
// Per layer and per token the decoder (1) appends the new key/value rows, (2) computes every query
// head's attention over the live slots (the new token sees itself), then (3) calls the layer's
// after_attention(), where it may update per-slot scores and evict. The decoder never knows which
// policy runs: a CachePolicy (below) makes each layer's object, and every policy of
// policy_factory.hpp's table plugs in so. No layer's object sees another's, so the decoder may
// run a chunk of tokens layer by layer (Decoder::forward_batch) and get the same decisions.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

struct PolicyKind;  // policy_factory.hpp

// One layer's attention weights for the newest token: H rows, row h starts at data + h * stride,
// and its first cache.size(g) entries are the weights over KV head g's slots [0, size(g)), where g
// is the KV head query head h reads.
struct StepAttention {
  const float* data;    // (H, stride)
  std::size_t n_heads;  // H
  std::size_t stride;   // >= number of live slots
  const float* head(std::size_t h) const { return data + h * stride; }
};

// The most positions a sequence may reach when nothing says: no limit.
constexpr std::size_t kNoPositionLimit = std::numeric_limits<std::size_t>::max();

// Where a layer sits and what it may have to hold: all a policy needs to size its budgets.
struct LayerShape {
  std::size_t layer = 0;                         // 0 = nearest the embedding
  std::size_t n_layers = 1;                      // L
  std::size_t n_kv_heads = 1;                    // G
  std::size_t max_positions = kNoPositionLimit;  // the longest sequence the decoder reads
};

class LayerPolicy {
 public:
  virtual ~LayerPolicy() = default;

  // Short name as typed on a command line: "full", "h2o".
  virtual std::string name() const = 0;
  // One line for people: "H2O, heavy 2 + recent 2 = 4 tokens, per-head scores".
  virtual std::string describe() const = 0;
  // Tokens read token by token from the first on before the policy evicts anything: 0 for most;
  // FastGen and DuoAttention profile their heads over the first ones with every token kept. A
  // fair comparison at equal bytes gives its rival the same start (policy_sweep.hpp's
  // read_at_equal_bytes).
  virtual std::size_t prompt_tokens() const { return 0; }

  // Tokens per KV head this layer keeps between steps, on average over its heads (what
  // compress() cuts it to; the layer's heads together keep G times this), never more than the
  // sequence. And the most tokens one KV head can hold between steps: the slots the decoder
  // preallocates (less the incoming token's). Both are fixed when the layer's object is made.
  std::size_t keep() const { return keep_; }
  std::size_t head_capacity() const { return head_capacity_; }
  const LayerShape& shape() const { return shape_; }

  // Called once per token, after attention; may update scores and evict slots. By default:
  // observe() the step, then, once the cache holds more than keep(), evict the one slot per KV
  // head that choose_victims() names. A policy may do both in one pass instead.
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

 protected:
  // A layer of `shape` that keeps `keep` tokens per KV head on average and at most
  // `head_capacity` in one head (both capped at the sequence's length).
  LayerPolicy(const LayerShape& shape, std::size_t keep, std::size_t head_capacity);
  // The same budget for every head.
  LayerPolicy(const LayerShape& shape, std::size_t keep) : LayerPolicy(shape, keep, keep) {}

  // after_attention's victims live on the stack (a decode step allocates nothing) up to this many
  // KV heads, far more than any model here has.
  static constexpr std::size_t kMaxStackHeads = 64;

  // compress() for a policy that ranks tokens by the cache's scores: every KV head keeps
  // selection.hpp's plan_cut(positions, scores, rule, keep), re-packed in position order.
  static void cut_by_rule(LayerKVCache& cache, std::size_t keep, const EvictionRule& rule);

 private:
  LayerShape shape_;
  std::size_t keep_, head_capacity_;
};

// A policy as the decoder holds it: how to make each layer's LayerPolicy, and what the policy is
// called (read off one layer made with no limit, its "prototype"). The factory makes one per
// row of its table (policy_of below); a program with a policy of its own makes one the same way.
class CachePolicy final {
 public:
  using MakeLayer = std::function<std::unique_ptr<LayerPolicy>(const LayerShape&)>;
  // `kind`: the factory's row of the policy (make_policy sets it), none for a program's own.
  explicit CachePolicy(MakeLayer make_layer, const PolicyKind* kind = nullptr);

  std::unique_ptr<LayerPolicy> for_layer(const LayerShape& shape) const { return make_(shape); }

  std::string name() const { return prototype_->name(); }
  std::string describe() const { return prototype_->describe(); }
  std::size_t prompt_tokens() const { return prototype_->prompt_tokens(); }
  // The tokens per layer and KV head the policy keeps on average when a sequence may reach
  // max_positions: its budget, or all of them when that is less (a policy that keeps what its
  // rules say, FastGen, may keep all of them).
  std::size_t max_tokens(std::size_t max_positions) const;
  // What the factory knows of it (whether it evicts, whether its budget sizes it, ...): the kind
  // it was made as; std::logic_error for a policy made outside the factory.
  const PolicyKind& kind() const;

 private:
  MakeLayer make_;
  std::unique_ptr<LayerPolicy> prototype_;
  const PolicyKind* kind_;
};

// A CachePolicy whose layers are `Layer`s built from `args` and each layer's shape (the shape is
// the constructor's last argument): policy_of<H2OPolicy>(CacheBudget{2, 2}).
template <class Layer, class... Args>
std::unique_ptr<CachePolicy> policy_of(Args... args) {
  return std::make_unique<CachePolicy>([args...](const LayerShape& shape) {
    return std::unique_ptr<LayerPolicy>(std::make_unique<Layer>(args..., shape));
  });
}

// Keeps every token: exact attention, memory growing with the sequence.
class FullCachePolicy final : public LayerPolicy {
 public:
  explicit FullCachePolicy(const LayerShape& shape = {}) : LayerPolicy(shape, kNoPositionLimit) {}
  std::string name() const override { return "full"; }
  std::string describe() const override { return "full cache (keeps every token)"; }
  void after_attention(LayerKVCache&, const StepAttention&) override {}
  void observe(LayerKVCache&, const StepAttention&) override {}
  // Never asked: a full cache is never over its budget. The oldest, if it ever were.
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;
};

}  // namespace h2o
