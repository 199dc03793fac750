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
//   the layer's policy: after_attention(cache, weights)         (H2O scores and evicts here)
//   x += wo @ concat(head outputs);  x += w2 @ swiglu(w1 RMSNorm(x), w3 RMSNorm(x))
// then logits (V,) = classifier @ RMSNorm(x).
//
// Weights that are not checked for NaN and infinity yet (WeightView::name_non_finite_weight, from
// MappedCheckpoint::open with FiniteCheck::by_first_token) are checked by the first token's
// logits: forward() looks at them, and forward_batch() runs its first token alone to do so.
//
// Every buffer and cache is allocated in the constructor: forward() allocates nothing unless
// attention recording is switched on.
//
// A prompt (or a text read with teacher forcing) can go through forward_batch() instead: the same
// computation for many tokens, chunk by chunk (up to kChunkTokens at a time), where each layer
// applies its weight matrices to the whole chunk at once (one matrix-matrix product per weight,
// m = chunk tokens) while attention, scoring and eviction still run token by token, each token
// over the cache as it stood after the previous one:
//   X (m, C) -> RMSNorm -> Q (m, C), K (m, KV), V (m, KV) = X Wq^T, X Wk^T, X Wv^T; RoPE per row
//   for each token i of the chunk, in order: append K[i], V[i]; attend with Q[i]; policy
//   X += (attention outputs (m, C)) Wo^T;  X += W2 swiglu(W1 ..., W3 ...) the same way
// So every policy sees each token's attention over the cache as it stood, as token by token, and
// makes the same decisions (each layer has its own LayerPolicy, so the order in which layers are
// called changes nothing); logits, cache contents and scores agree with forward() up to the order
// of float additions inside the products (within 1e-5 relative; tests/test_batched_decoder.cpp).
// A single token goes through forward() (a one-row matrix product is slower than forward()'s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "h2o/cache/kv_cache.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

// One layer's attention for the last token, copied out for lessons and tests.
// T_g = live slots of KV head g, T = the largest of them.
struct AttentionRecord {
  std::vector<std::vector<Position>> positions;  // (G, T_g): the position in each KV head's slots
  // (H, T): query head h over its KV head g's slots, in its first T_g entries (0 beyond them).
  Matrix weights;
};

class Decoder {
 public:
  // Largest cache memory a decoder will allocate (cache_memory_bytes): a corrupt or hostile
  // header asking for millions of positions gets a clear error, not an out-of-memory kill.
  static constexpr double kMaxCacheBytes = 4.0 * 1024 * 1024 * 1024;

  // Bytes the constructor allocates for `capacity` slots per layer: every layer's cache arrays
  // (keys, values, positions, scores: LayerKVCache::bytes_for) and the attention weights of every
  // query head over the slots. This is what kMaxCacheBytes bounds, checked before allocating.
  static std::uint64_t cache_memory_bytes(const ModelConfig& config, std::size_t capacity,
                                          const KvFormat& format = {},
                                          std::size_t max_positions = 0);

  // max_positions: how many tokens this decoder may process (0 = the model's seq_len).
  // kv_format: how every layer cache stores keys and values (kv_cache.hpp; default float32).
  Decoder(std::shared_ptr<const DecoderWeights> weights, std::unique_ptr<CachePolicy> policy,
          std::size_t max_positions = 0, const KvFormat& kv_format = {});
  // Weights that live elsewhere (a memory-mapped checkpoint): `owner` keeps them alive as long as
  // the decoder.
  Decoder(const WeightView& weights, std::shared_ptr<const void> owner,
          std::unique_ptr<CachePolicy> policy, std::size_t max_positions = 0,
          const KvFormat& kv_format = {});

  // Processes `token` at position position() and returns the logits (V,) for the next token.
  // The reference stays valid until the next call. Throws on a bad token id or a full sequence.
  const Vector& forward(int token);

  // Tokens processed together by forward_batch (one chunk): enough rows for the products to run
  // at matrix-matrix speed, few enough that the chunk's buffers stay small.
  static constexpr std::size_t kChunkTokens = 64;

  // Processes tokens (n,) at positions position() .. position() + n - 1, with the same results as
  // n calls of forward() (see above), and returns the logits (V,) after the last token. When
  // all_logits is not null it receives every token's logits: (n, V), row i after tokens[i]. Checks
  // every token id and the room left before processing any. Allocates the chunk buffers on first
  // use. n = 0 is refused (there would be no logits to return).
  const Vector& forward_batch(const std::vector<int>& tokens, Matrix* all_logits = nullptr);

  // Prompt-time compression (the H2O paper's and kvpress's way with a prompt): reads the prompt
  // (n,) from position 0 with nothing evicted - every policy only scores, CachePolicy::observe -
  // then cuts every cache back to the policy's budget once (CachePolicy::compress: for H2O the
  // recent window plus the highest accumulated scores of each head). Decoding then goes on token
  // by token with the usual per-step eviction. Returns the logits after the last prompt token;
  // all_logits gets every prompt token's, as forward_batch. The caches grow to hold the whole
  // prompt if they must (allocating, once); the prompt's logits are the full cache's.
  const Vector& read_prompt_compressed(const std::vector<int>& tokens,
                                       Matrix* all_logits = nullptr);

  Position position() const { return position_; }  // tokens processed so far
  std::size_t max_positions() const { return max_positions_; }
  void reset();  // empties every cache; position back to 0

  const ModelConfig& config() const { return weights_.config; }
  const CachePolicy& policy() const { return *policy_; }
  // Layer `layer`'s own policy object: its budgets and what it has found (FastGen's rules).
  const LayerPolicy& layer_policy(std::size_t layer) const { return *layers_.at(layer); }
  const LayerKVCache& cache(std::size_t layer) const { return caches_.at(layer); }

  const KvFormat& kv_format() const { return kv_format_; }
  // Live key/value bytes over all layers (LayerKVCache::live_kv_bytes: exact in every format),
  // and the bytes reserved for them.
  std::size_t live_kv_bytes() const;
  std::size_t reserved_kv_bytes() const;
  // Tokens evicted so far from every KV head of a layer, when its heads hold as many tokens
  // (LayerKVCache::uniform_size), and from KV head g of a layer.
  std::size_t evicted_tokens(std::size_t layer) const;
  std::size_t evicted_tokens(std::size_t layer, std::size_t g) const;

  // Called after each token's step through a layer, once the layer's policy has evicted (not
  // while read_prompt_compressed reads its prompt): what a layer holds after every step, for a
  // program that records it (compare_policies' picture). Each layer's steps come in order, but
  // not interleaved with the other layers': a chunk of tokens read at once (teacher forcing)
  // goes through layer 0, then layer 1, so count steps per layer. Empty: nothing is called.
  using StepObserver = std::function<void(std::size_t layer, const LayerKVCache& cache)>;
  void set_step_observer(StepObserver observer) { step_observer_ = std::move(observer); }

  // When on, forward() keeps a copy of every layer's attention (before eviction).
  void set_record_attention(bool on) { record_attention_ = on; }
  const AttentionRecord& attention(std::size_t layer) const { return records_.at(layer); }

 private:
  void allocate_caches(std::size_t capacity);  // every layer's cache and att_, memory-checked
  // One token through layer `layer`'s cache, the same in forward() and forward_batch(): append its
  // key and value, attend every query head over the cache (weights into att_, recorded when asked),
  // then the policy's turn: after_attention, or only observe while read_prompt_compressed reads
  // its prompt.  q (C,)  k, v (KV,)  out (C,): the attention output of every head.
  void attend_through_cache(std::size_t layer, const float* q, const float* k, const float* v,
                            Position position, float* out);

  // After the first token's forward pass, when the weights are not checked yet: finite logits
  // mean finite weights; otherwise weights_.name_non_finite_weight() names the bad tensor.
  void check_weights_with_first_logits();

  WeightView weights_;
  std::shared_ptr<const void> owner_;  // what keeps weights_ alive
  std::unique_ptr<CachePolicy> policy_;
  std::vector<std::unique_ptr<LayerPolicy>> layers_;  // (L,) policy_->for_layer of each layer
  StepObserver step_observer_;
  bool weights_unchecked_;  // until the first token's logits have checked them
  std::size_t max_positions_;
  KvFormat kv_format_;
  Position position_ = 0;
  std::vector<LayerKVCache> caches_;  // (L,)
  bool record_attention_ = false;
  bool observe_only_ = false;  // reading a prompt for read_prompt_compressed: no eviction
  std::vector<AttentionRecord> records_;  // (L,)

  // Scratch buffers, allocated once.
  Vector x_;         // (C,) residual stream
  Vector xb_;        // (C,) normalised input, then attention output
  Vector xb2_;       // (C,)
  Vector q_;         // (C,)
  Vector k_;         // (KV,)
  Vector v_;         // (KV,)
  Matrix att_;       // (H, S) attention weights of each query head
  Matrix kv_rows_;   // (G, D) each KV head's row dequantised for attention (quantised caches)
  Vector hb_;        // (F,)
  Vector hb2_;       // (F,)
  Vector logits_;    // (V,)
  Vector rope_cos_;  // (D / 2,) this position's RoPE rotation, shared by q, k and every layer
  Vector rope_sin_;  // (D / 2,)

  // forward_batch's buffers for one chunk of m <= kChunkTokens tokens (allocated on first use).
  void run_chunk(const int* tokens, std::size_t m, float* logits_out);
  Matrix chunk_x_;    // (m, C) residual stream of each token
  Matrix chunk_xb_;   // (m, C) normalised input, then feed-forward output
  Matrix chunk_q_;    // (m, C)
  Matrix chunk_k_;    // (m, KV)
  Matrix chunk_v_;    // (m, KV)
  Matrix chunk_att_;  // (m, C) attention outputs, then Wo's output
  Matrix chunk_xb2_;  // (m, C)
  Matrix chunk_hb_;   // (m, F)
  Matrix chunk_hb2_;  // (m, F)
  Matrix chunk_cos_;  // (m, D / 2) RoPE rotation of each token's position
  Matrix chunk_sin_;  // (m, D / 2)
};

}  // namespace h2o
