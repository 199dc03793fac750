// decoder.hpp: a tiny Llama-style decoder that runs one token at a time against per-layer KV
// caches.
//
// Dimension legend: C = dim, F = hidden_dim, H = query heads, G = KV heads, D = head_dim,
// KV = G * D, V = vocab, S = slot capacity of each layer's cache, T = live slots.
//
// Per layer, for the token at position p (llama2.c's forward, with a pluggable cache policy):
//   xn = RMSNorm(x); q = wq xn (C,); k = wk xn (KV,); v = wv xn (KV,); RoPE(q, k, p)
//   append k, v to the layer cache                              (the new token sees itself)
//   query head h attends over KV head h / (H / G): weights (T,), output (D,)
//   policy.after_attention(cache, weights)                      (H2O scores and evicts here)
//   x += wo @ concat(head outputs);  x += w2 @ swiglu(w1 RMSNorm(x), w3 RMSNorm(x))
// then logits (V,) = classifier @ RMSNorm(x).
//
// Every buffer and cache is allocated in the constructor: forward() allocates nothing unless
// attention recording is switched on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "h2o/cache/kv_cache.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

// One layer's attention for the last token, copied out for lessons and tests.
struct AttentionRecord {
  std::vector<std::vector<Position>> positions;  // (G, T): the position in each KV head's slots
  Matrix weights;                                // (H, T): query head h over its KV head's slots
};

class Decoder {
 public:
  // Largest cache memory a decoder will allocate (cache_memory_bytes): a corrupt or hostile
  // header asking for millions of positions gets a clear error, not an out-of-memory kill.
  static constexpr double kMaxCacheBytes = 4.0 * 1024 * 1024 * 1024;

  // Bytes the constructor allocates for `capacity` slots per layer: every layer's cache arrays
  // (keys, values, positions, scores: LayerKVCache::bytes_for) and the attention weights of every
  // query head over the slots. This is what kMaxCacheBytes bounds, checked before allocating.
  static std::uint64_t cache_memory_bytes(const ModelConfig& config, std::size_t capacity);

  // max_positions: how many tokens this decoder may process (0 = the model's seq_len).
  Decoder(std::shared_ptr<const DecoderWeights> weights, std::unique_ptr<CachePolicy> policy,
          std::size_t max_positions = 0);

  // Processes `token` at position position() and returns the logits (V,) for the next token.
  // The reference stays valid until the next call. Throws on a bad token id or a full sequence.
  const Vector& forward(int token);

  Position position() const { return position_; }  // tokens processed so far
  std::size_t max_positions() const { return max_positions_; }
  void reset();  // empties every cache; position back to 0

  const ModelConfig& config() const { return weights_->config; }
  const CachePolicy& policy() const { return *policy_; }
  const LayerKVCache& cache(std::size_t layer) const { return caches_.at(layer); }

  // Live key/value bytes over all layers (float32), and slots reserved for them.
  std::size_t live_kv_bytes() const;
  std::size_t reserved_kv_bytes() const;
  // Tokens evicted so far from each KV head of a layer (all heads evict equally).
  std::size_t evicted_tokens(std::size_t layer) const;

  // When on, forward() keeps a copy of every layer's attention (before eviction).
  void set_record_attention(bool on) { record_attention_ = on; }
  const AttentionRecord& attention(std::size_t layer) const { return records_.at(layer); }

 private:
  std::shared_ptr<const DecoderWeights> weights_;
  std::unique_ptr<CachePolicy> policy_;
  std::size_t max_positions_;
  Position position_ = 0;
  std::vector<LayerKVCache> caches_;  // (L,)
  bool record_attention_ = false;
  std::vector<AttentionRecord> records_;  // (L,)

  // Scratch buffers, allocated once.
  Vector x_;       // (C,) residual stream
  Vector xb_;      // (C,) normalised input, then attention output
  Vector xb2_;     // (C,)
  Vector q_;       // (C,)
  Vector k_;       // (KV,)
  Vector v_;       // (KV,)
  Matrix att_;     // (H, S) attention weights of each query head
  Vector hb_;      // (F,)
  Vector hb2_;     // (F,)
  Vector logits_;  // (V,)
};

}  // namespace h2o
