// weights.hpp: every weight of the decoder, in the order and layout of a llama2.c checkpoint.
//
// Dimension legend: V = vocab, C = dim, F = hidden_dim, L = layers, KV = kv_dim (KV heads * D).
// Matrices are row-major [out][in], as llama2.c stores them, so `matvec(out, w, x)` reads them as
// is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "h2o/base/tensor.hpp"
#include "h2o/model/model_config.hpp"

namespace h2o {

struct DecoderWeights {
  ModelConfig config;
  Matrix token_embedding;  // (V, C)
  Matrix rms_att;          // (L, C)   RMSNorm gains before attention
  Tensor3 wq;              // (L, C, C)
  Tensor3 wk;              // (L, KV, C)
  Tensor3 wv;              // (L, KV, C)
  Tensor3 wo;              // (L, C, C)
  Matrix rms_ffn;          // (L, C)   RMSNorm gains before the feed-forward layer
  Tensor3 w1;              // (L, F, C)  gate
  Tensor3 w2;              // (L, C, F)  down
  Tensor3 w3;              // (L, F, C)  up
  Vector rms_final;        // (C,)
  Matrix wcls;             // (V, C) when !config.shared_classifier, else (0, C)

  // The classifier matrix the logits use: wcls, or token_embedding when the weights are tied.
  const Matrix& classifier() const { return config.shared_classifier ? token_embedding : wcls; }
};

// Read-only pointers to every weight the decoder reads, wherever they live: in a DecoderWeights
// (view_of) or in a memory-mapped checkpoint file (checkpoint.hpp's MappedCheckpoint), so that a
// large model is used straight from the file, not copied. Same layouts as DecoderWeights; the
// accessors give one layer's block.
struct WeightView {
  ModelConfig config;
  const float* token_embedding = nullptr;  // (V, C)
  const float* rms_att_all = nullptr;      // (L, C)
  const float* wq_all = nullptr;           // (L, C, C)
  const float* wk_all = nullptr;           // (L, KV, C)
  const float* wv_all = nullptr;           // (L, KV, C)
  const float* wo_all = nullptr;           // (L, C, C)
  const float* rms_ffn_all = nullptr;      // (L, C)
  const float* w1_all = nullptr;           // (L, F, C)
  const float* w2_all = nullptr;           // (L, C, F)
  const float* w3_all = nullptr;           // (L, F, C)
  const float* rms_final = nullptr;        // (C,)
  const float* classifier = nullptr;       // (V, C): wcls, or token_embedding when tied

  // Empty for weights already checked for NaN and infinity (load_checkpoint's, and a
  // MappedCheckpoint opened with FiniteCheck::at_open). Set when that check was left to the first
  // token (FiniteCheck::by_first_token, checkpoint.hpp says why that is enough): the Decoder then
  // runs its first token on its own and, if any of that token's logits is NaN or infinite, calls
  // this. It throws std::runtime_error naming the tensor that holds a NaN or infinity, or returns
  // when every weight is finite (only the arithmetic overflowed).
  std::function<void()> name_non_finite_weight;

  const float* embedding(std::size_t token) const { return token_embedding + token * config.dim; }
  const float* rms_att(std::size_t l) const { return rms_att_all + l * config.dim; }
  const float* rms_ffn(std::size_t l) const { return rms_ffn_all + l * config.dim; }
  const float* wq(std::size_t l) const { return wq_all + l * config.dim * config.dim; }
  const float* wk(std::size_t l) const { return wk_all + l * config.kv_dim() * config.dim; }
  const float* wv(std::size_t l) const { return wv_all + l * config.kv_dim() * config.dim; }
  const float* wo(std::size_t l) const { return wo_all + l * config.dim * config.dim; }
  const float* w1(std::size_t l) const { return w1_all + l * config.hidden_dim * config.dim; }
  const float* w2(std::size_t l) const { return w2_all + l * config.dim * config.hidden_dim; }
  const float* w3(std::size_t l) const { return w3_all + l * config.hidden_dim * config.dim; }
};

// The view of weights held in memory (valid while `weights` lives).
WeightView view_of(const DecoderWeights& weights);

// Zero-filled weights of the right shapes (validates the config first).
DecoderWeights allocate_weights(const ModelConfig& config);

// Deterministic random weights for lessons, tests and benchmarks: matrices ~ N(0, 1/fan_in) so
// activations keep their size through the layers; embedding ~ N(0, 1); RMSNorm gains 1.
DecoderWeights random_weights(const ModelConfig& config, std::uint64_t seed);

}  // namespace h2o
