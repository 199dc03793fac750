// weights.hpp: every weight of the decoder, in the order and layout of a llama2.c checkpoint.
//
// Dimension legend: V = vocab, C = dim, F = hidden_dim, L = layers, KV = kv_dim (KV heads * D).
// Matrices are row-major [out][in], as llama2.c stores them, so `matvec(out, w, x)` reads them as
// is.
#pragma once

#include <cstdint>

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

// Zero-filled weights of the right shapes (validates the config first).
DecoderWeights allocate_weights(const ModelConfig& config);

// Deterministic random weights for lessons, tests and benchmarks: matrices ~ N(0, 1/fan_in) so
// activations keep their size through the layers; embedding ~ N(0, 1); RMSNorm gains 1.
DecoderWeights random_weights(const ModelConfig& config, std::uint64_t seed);

}  // namespace h2o
