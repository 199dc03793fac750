#include "h2o/model/model_config.hpp"

#include <stdexcept>

namespace h2o {

namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}
}  // namespace

void ModelConfig::validate() const {
  require(dim > 0, "model dim must be positive");
  require(hidden_dim > 0, "model hidden_dim must be positive");
  require(n_layers > 0, "model n_layers must be positive");
  require(n_heads > 0, "model n_heads must be positive");
  require(n_kv_heads > 0, "model n_kv_heads must be positive");
  require(vocab_size > 0, "model vocab_size must be positive");
  require(seq_len > 0, "model seq_len must be positive");
  require(dim <= kMaxDim, "model dim " + std::to_string(dim) + " is absurdly large (limit " +
                              std::to_string(kMaxDim) + ")");
  require(hidden_dim <= 4 * kMaxDim, "model hidden_dim " + std::to_string(hidden_dim) +
                                         " is absurdly large (limit " +
                                         std::to_string(4 * kMaxDim) + ")");
  require(n_layers <= kMaxLayers, "model n_layers " + std::to_string(n_layers) +
                                      " is absurdly large (limit " + std::to_string(kMaxLayers) +
                                      ")");
  require(vocab_size <= kMaxVocab, "model vocab_size " + std::to_string(vocab_size) +
                                       " is absurdly large (limit " + std::to_string(kMaxVocab) +
                                       ")");
  require(seq_len <= kMaxSeqLen, "model seq_len " + std::to_string(seq_len) +
                                     " is absurdly large (limit " + std::to_string(kMaxSeqLen) +
                                     ")");
  require(n_heads <= dim,
          "model n_heads " + std::to_string(n_heads) + " exceeds dim " + std::to_string(dim));
  require(dim % n_heads == 0, "model n_heads " + std::to_string(n_heads) + " does not divide dim " +
                                  std::to_string(dim));
  require(n_kv_heads <= n_heads && n_heads % n_kv_heads == 0,
          "model n_kv_heads " + std::to_string(n_kv_heads) + " does not divide n_heads " +
              std::to_string(n_heads));
  require(head_dim() % 2 == 0, "model head size " + std::to_string(head_dim()) +
                                   " is odd; rotary embeddings rotate pairs of numbers");
}

std::uint64_t ModelConfig::checkpoint_float_count() const {
  const std::uint64_t C = dim, F = hidden_dim, L = n_layers, V = vocab_size, KV = kv_dim();
  std::uint64_t count = V * C;                                // token_embedding
  count += L * C;                                             // rms_att
  count += L * C * C + 2 * L * KV * C + L * C * C;            // wq, wk, wv, wo
  count += L * C;                                             // rms_ffn
  count += 3 * L * F * C;                                     // w1, w2, w3
  count += C;                                                 // rms_final
  count += static_cast<std::uint64_t>(seq_len) * head_dim();  // two unused RoPE tables, half each
  if (!shared_classifier) count += V * C;                     // wcls
  return count;
}

std::string ModelConfig::describe() const {
  return "dim " + std::to_string(dim) + ", hidden " + std::to_string(hidden_dim) + ", " +
         std::to_string(n_layers) + " layers, " + std::to_string(n_heads) + " heads, " +
         std::to_string(n_kv_heads) + " KV heads, vocab " + std::to_string(vocab_size) +
         ", seq_len " + std::to_string(seq_len);
}

ModelConfig stories260k_shape() {
  ModelConfig config;
  config.dim = 64;
  config.hidden_dim = 172;
  config.n_layers = 5;
  config.n_heads = 8;
  config.n_kv_heads = 4;
  config.vocab_size = 512;
  config.seq_len = 512;
  config.shared_classifier = true;
  return config;
}

ModelConfig stories15m_shape() {
  ModelConfig config;
  config.dim = 288;
  config.hidden_dim = 768;
  config.n_layers = 6;
  config.n_heads = 6;
  config.n_kv_heads = 6;
  config.vocab_size = 32000;
  config.seq_len = 256;
  config.shared_classifier = true;
  return config;
}

ModelConfig stories110m_shape() {
  ModelConfig config;
  config.dim = 768;
  config.hidden_dim = 2048;
  config.n_layers = 12;
  config.n_heads = 12;
  config.n_kv_heads = 12;
  config.vocab_size = 32000;
  config.seq_len = 1024;
  config.shared_classifier = true;
  return config;
}

ModelConfig story_shape(const std::string& name) {
  if (name == "260k") return stories260k_shape();
  if (name == "15m") return stories15m_shape();
  if (name == "110m") return stories110m_shape();
  throw std::invalid_argument("unknown model shape '" + name + "' (expected 260k, 15m or 110m)");
}

}  // namespace h2o
