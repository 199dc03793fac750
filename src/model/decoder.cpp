#include "h2o/model/decoder.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <xtensor/xbuilder.hpp>

#include "h2o/attention/attention.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/model/rmsnorm.hpp"
#include "h2o/model/rope.hpp"
#include "h2o/model/swiglu.hpp"

namespace h2o {

Decoder::Decoder(std::shared_ptr<const DecoderWeights> weights, std::unique_ptr<CachePolicy> policy,
                 std::size_t max_positions)
    : weights_(std::move(weights)), policy_(std::move(policy)) {
  if (!weights_) throw std::invalid_argument("Decoder: no weights");
  if (!policy_) throw std::invalid_argument("Decoder: no cache policy");
  const ModelConfig& c = weights_->config;
  c.validate();
  max_positions_ = max_positions == 0 ? c.seq_len : max_positions;
  if (max_positions_ > ModelConfig::kMaxSeqLen) {
    throw std::invalid_argument("Decoder: max_positions " + std::to_string(max_positions_) +
                                " is absurdly large");
  }

  // One slot more than the policy keeps between steps: the incoming token lands there first.
  const std::size_t kept = std::min(policy_->max_tokens(max_positions_), max_positions_);
  const std::size_t capacity = std::min(kept + 1, max_positions_);
  // Refuse a cache that could not sensibly fit in memory before allocating any of it.
  const auto cache_bytes = static_cast<double>(cache_memory_bytes(c, capacity));
  if (cache_bytes > kMaxCacheBytes) {
    throw std::invalid_argument(
        "a KV cache for " + std::to_string(capacity) + " positions would need " +
        std::to_string(static_cast<long long>(cache_bytes / (1024.0 * 1024.0))) + " MiB (limit " +
        std::to_string(static_cast<long long>(kMaxCacheBytes / (1024.0 * 1024.0))) +
        " MiB); ask for fewer positions or use a smaller H2O budget");
  }
  caches_.reserve(c.n_layers);
  for (std::size_t l = 0; l < c.n_layers; ++l)
    caches_.emplace_back(c.n_kv_heads, c.head_dim(), capacity);
  records_.resize(c.n_layers);

  x_ = xt::zeros<float>({c.dim});
  xb_ = xt::zeros<float>({c.dim});
  xb2_ = xt::zeros<float>({c.dim});
  q_ = xt::zeros<float>({c.dim});
  k_ = xt::zeros<float>({c.kv_dim()});
  v_ = xt::zeros<float>({c.kv_dim()});
  att_ = xt::zeros<float>({c.n_heads, capacity});
  hb_ = xt::zeros<float>({c.hidden_dim});
  hb2_ = xt::zeros<float>({c.hidden_dim});
  logits_ = xt::zeros<float>({c.vocab_size});
}

std::uint64_t Decoder::cache_memory_bytes(const ModelConfig& config, std::size_t capacity) {
  // The constructor's caches_ and att_: everything whose size grows with the capacity.
  return config.n_layers * LayerKVCache::bytes_for(config.n_kv_heads, config.head_dim(), capacity) +
         static_cast<std::uint64_t>(config.n_heads) * capacity * sizeof(float);
}

void Decoder::reset() {
  for (auto& cache : caches_) cache.clear();
  position_ = 0;
}

const Vector& Decoder::forward(int token) {
  const ModelConfig& c = weights_->config;
  const DecoderWeights& w = *weights_;
  if (token < 0 || static_cast<std::size_t>(token) >= c.vocab_size) {
    throw std::out_of_range("token id " + std::to_string(token) +
                            " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) +
                            ")");
  }
  if (static_cast<std::size_t>(position_) >= max_positions_) {
    throw std::length_error("the sequence is full: " + std::to_string(max_positions_) +
                            " positions");
  }
  const std::size_t C = c.dim, F = c.hidden_dim, KV = c.kv_dim(), D = c.head_dim();
  const std::size_t H = c.n_heads, group = c.heads_per_kv_head();

  std::copy_n(&w.token_embedding(token, 0), C, x_.data());

  for (std::size_t l = 0; l < c.n_layers; ++l) {
    // Attention block.
    rmsnorm(xb_.data(), x_.data(), &w.rms_att(l, 0), C);
    matvec(q_.data(), &w.wq(l, 0, 0), xb_.data(), C, C);
    matvec(k_.data(), &w.wk(l, 0, 0), xb_.data(), KV, C);
    matvec(v_.data(), &w.wv(l, 0, 0), xb_.data(), KV, C);
    rope_rotate(q_.data(), C, D, position_);
    rope_rotate(k_.data(), KV, D, position_);

    LayerKVCache& cache = caches_[l];
    cache.append(k_.data(), v_.data(), position_);
    const std::size_t live = cache.size();
    const std::size_t stride = att_.shape()[1];
    for (std::size_t h = 0; h < H; ++h) {
      const std::size_t g = h / group;  // query head h reads KV head h / (H / G)
      attend_into(&q_(h * D), cache.keys(g), cache.values(g), live, D, &att_(h, 0), &xb_(h * D));
    }
    if (record_attention_) {
      AttentionRecord& record = records_[l];
      record.positions.assign(c.n_kv_heads, {});
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        record.positions[g].assign(cache.positions(g), cache.positions(g) + live);
      }
      record.weights = xt::zeros<float>({H, live});
      for (std::size_t h = 0; h < H; ++h) std::copy_n(&att_(h, 0), live, &record.weights(h, 0));
    }
    policy_->after_attention(cache, StepAttention{att_.data(), H, stride});

    matvec(xb2_.data(), &w.wo(l, 0, 0), xb_.data(), C, C);
    for (std::size_t i = 0; i < C; ++i) x_(i) += xb2_(i);

    // Feed-forward block.
    rmsnorm(xb_.data(), x_.data(), &w.rms_ffn(l, 0), C);
    matvec(hb_.data(), &w.w1(l, 0, 0), xb_.data(), F, C);
    matvec(hb2_.data(), &w.w3(l, 0, 0), xb_.data(), F, C);
    swiglu_inplace(hb_.data(), hb2_.data(), F);
    matvec(xb_.data(), &w.w2(l, 0, 0), hb_.data(), C, F);
    for (std::size_t i = 0; i < C; ++i) x_(i) += xb_(i);
  }

  rmsnorm(x_.data(), x_.data(), w.rms_final.data(), C);
  matvec(logits_.data(), w.classifier().data(), x_.data(), c.vocab_size, C);
  ++position_;
  return logits_;
}

std::size_t Decoder::live_kv_bytes() const {
  std::size_t total = 0;
  for (const auto& cache : caches_) total += cache.live_kv_bytes();
  return total;
}

std::size_t Decoder::reserved_kv_bytes() const {
  std::size_t total = 0;
  for (const auto& cache : caches_) total += cache.reserved_kv_bytes();
  return total;
}

std::size_t Decoder::evicted_tokens(std::size_t layer) const {
  return static_cast<std::size_t>(position_) - caches_.at(layer).size();
}

}  // namespace h2o
