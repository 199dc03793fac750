// model_config.hpp: the shape of a Llama-style decoder, as a llama2.c checkpoint header states it.
//
// Dimension legend: C = dim, F = hidden_dim, L = n_layers, H = n_heads, G = n_kv_heads,
// V = vocab_size, D = head_dim = C / H, kv_dim = G * D.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "h2o/attention/query_groups.hpp"

namespace h2o {

struct ModelConfig {
  std::size_t dim = 0;            // C: width of the residual stream
  std::size_t hidden_dim = 0;     // F: width of the SwiGLU feed-forward layer
  std::size_t n_layers = 0;       // L
  std::size_t n_heads = 0;        // H: query heads
  std::size_t n_kv_heads = 0;     // G: key/value heads; H / G query heads share each one
  std::size_t vocab_size = 0;     // V
  std::size_t seq_len = 0;        // the longest sequence the model was trained for
  bool shared_classifier = true;  // logits use the token-embedding matrix (tied weights)

  std::size_t head_dim() const { return dim / n_heads; }          // D
  std::size_t kv_dim() const { return n_kv_heads * head_dim(); }  // G * D
  // Which query heads read which KV head (query_groups.hpp owns the rule). Call only after
  // validate(), which makes H a multiple of G.
  QueryGroups query_groups() const { return QueryGroups(n_heads, n_kv_heads, "model"); }

  // Number of float32 weights the llama2.c format stores for this shape, including the two unused
  // RoPE tables and the classifier when it is not shared. Call only after validate().
  std::uint64_t checkpoint_float_count() const;

  // Throws std::invalid_argument with a one-line message naming the first problem: a zero size,
  // heads not dividing the width, KV heads not dividing the heads, an odd head size (RoPE rotates
  // pairs), or a size beyond the sanity limits below (protects against giant allocations).
  void validate() const;

  // "dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512, seq_len 512"
  std::string describe() const;

  // Sanity limits: far above any model this project can run on a laptop, far below overflow.
  static constexpr std::size_t kMaxDim = 16384;
  static constexpr std::size_t kMaxLayers = 512;
  static constexpr std::size_t kMaxVocab = 1u << 20;
  static constexpr std::size_t kMaxSeqLen = 1u << 20;
};

// The shape of karpathy's stories260K model, used for random decoders in lessons and benchmarks.
ModelConfig stories260k_shape();
// The shapes of llama2.c's stories15M (dim 288, 6 layers, seq_len 256) and stories110M (dim 768,
// 12 layers, seq_len 1024) models, vocabulary 32000, for speed measurements with random weights.
ModelConfig stories15m_shape();
ModelConfig stories110m_shape();
// "260k", "15m" or "110m" -> that shape; anything else throws std::invalid_argument.
ModelConfig story_shape(const std::string& name);

}  // namespace h2o
