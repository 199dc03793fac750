#include "h2o/model/weights.hpp"

#include <cmath>
#include "h2o/base/xtensor.hpp"

#include "h2o/base/random.hpp"

namespace h2o {

DecoderWeights allocate_weights(const ModelConfig& config) {
  config.validate();
  const std::size_t V = config.vocab_size, C = config.dim, F = config.hidden_dim;
  const std::size_t L = config.n_layers, KV = config.kv_dim();
  DecoderWeights w;
  w.config = config;
  w.token_embedding = xt::zeros<float>({V, C});
  w.rms_att = xt::zeros<float>({L, C});
  w.wq = xt::zeros<float>({L, C, C});
  w.wk = xt::zeros<float>({L, KV, C});
  w.wv = xt::zeros<float>({L, KV, C});
  w.wo = xt::zeros<float>({L, C, C});
  w.rms_ffn = xt::zeros<float>({L, C});
  w.w1 = xt::zeros<float>({L, F, C});
  w.w2 = xt::zeros<float>({L, C, F});
  w.w3 = xt::zeros<float>({L, F, C});
  w.rms_final = xt::zeros<float>({C});
  w.wcls = xt::zeros<float>({config.shared_classifier ? std::size_t{0} : V, C});
  return w;
}

WeightView view_of(const DecoderWeights& w) {
  WeightView view;
  view.config = w.config;
  view.token_embedding = w.token_embedding.data();
  view.rms_att_all = w.rms_att.data();
  view.wq_all = w.wq.data();
  view.wk_all = w.wk.data();
  view.wv_all = w.wv.data();
  view.wo_all = w.wo.data();
  view.rms_ffn_all = w.rms_ffn.data();
  view.w1_all = w.w1.data();
  view.w2_all = w.w2.data();
  view.w3_all = w.w3.data();
  view.rms_final = w.rms_final.data();
  view.classifier = w.classifier().data();
  return view;
}

namespace {
template <class Container>
void fill_normal(Container& tensor, Rng& rng, float stddev) {
  for (auto& x : tensor) x = rng.normal() * stddev;
}
}  // namespace

DecoderWeights random_weights(const ModelConfig& config, std::uint64_t seed) {
  DecoderWeights w = allocate_weights(config);
  Rng rng(seed);
  const float C = static_cast<float>(config.dim), F = static_cast<float>(config.hidden_dim);
  fill_normal(w.token_embedding, rng, 1.0f);
  fill_normal(w.wq, rng, 1.0f / std::sqrt(C));
  fill_normal(w.wk, rng, 1.0f / std::sqrt(C));
  fill_normal(w.wv, rng, 1.0f / std::sqrt(C));
  fill_normal(w.wo, rng, 1.0f / std::sqrt(C));
  fill_normal(w.w1, rng, 1.0f / std::sqrt(C));
  fill_normal(w.w2, rng, 1.0f / std::sqrt(F));
  fill_normal(w.w3, rng, 1.0f / std::sqrt(C));
  fill_normal(w.wcls, rng, 1.0f / std::sqrt(C));
  w.rms_att.fill(1.0f);
  w.rms_ffn.fill(1.0f);
  w.rms_final.fill(1.0f);
  return w;
}

}  // namespace h2o
