#include "h2o/model/decoder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include "h2o/base/xtensor.hpp"

#include "h2o/attention/attention.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/attention/row_threads.hpp"
#include "h2o/base/vector_math.hpp"
#include "h2o/model/rmsnorm.hpp"
#include "h2o/model/rope.hpp"
#include "h2o/model/swiglu.hpp"

namespace h2o {

Decoder::Decoder(std::shared_ptr<const DecoderWeights> weights, std::unique_ptr<CachePolicy> policy,
                 std::size_t max_positions, const KvFormat& kv_format)
    : Decoder(weights ? view_of(*weights) : WeightView{}, weights, std::move(policy),
              max_positions, kv_format) {}

Decoder::Decoder(const WeightView& weights, std::shared_ptr<const void> owner,
                 std::unique_ptr<CachePolicy> policy, std::size_t max_positions,
                 const KvFormat& kv_format)
    : weights_(weights),
      owner_(std::move(owner)),
      policy_(std::move(policy)),
      weights_unchecked_(static_cast<bool>(weights.name_non_finite_weight)),
      kv_format_(kv_format) {
  if (!owner_ || weights_.token_embedding == nullptr) {
    throw std::invalid_argument("Decoder: no weights");
  }
  if (!policy_) throw std::invalid_argument("Decoder: no cache policy");
  check_kv_format(kv_format_);
  const ModelConfig& c = weights_.config;
  c.validate();
  max_positions_ = max_positions == 0 ? c.seq_len : max_positions;
  if (max_positions_ > ModelConfig::kMaxSeqLen) {
    throw std::invalid_argument("Decoder: max_positions " + std::to_string(max_positions_) +
                                " is absurdly large");
  }

  // Each layer's own policy object, which owns the layer's budgets and whatever it remembers.
  // One slot more than it keeps between steps: the incoming token lands there first. Every layer
  // gets the slots of the layer and KV head that may hold the most (a policy whose budgets differ
  // by layer or head leaves some unused; live_kv_bytes counts what is held).
  std::size_t kept = 0;
  for (std::size_t layer = 0; layer < c.n_layers; ++layer) {
    layers_.push_back(policy_->for_layer({layer, c.n_layers, c.n_kv_heads, max_positions_}));
    kept = std::max(kept, layers_.back()->head_capacity());
  }
  kept = std::min(kept, max_positions_);
  allocate_caches(std::min(kept + 1, max_positions_));
  records_.resize(c.n_layers);

  x_ = xt::zeros<float>({c.dim});
  xb_ = xt::zeros<float>({c.dim});
  xb2_ = xt::zeros<float>({c.dim});
  q_ = xt::zeros<float>({c.dim});
  k_ = xt::zeros<float>({c.kv_dim()});
  v_ = xt::zeros<float>({c.kv_dim()});
  hb_ = xt::zeros<float>({c.hidden_dim});
  hb2_ = xt::zeros<float>({c.hidden_dim});
  logits_ = xt::zeros<float>({c.vocab_size});
  rope_cos_ = xt::zeros<float>({c.head_dim() / 2});
  rope_sin_ = xt::zeros<float>({c.head_dim() / 2});
}

std::uint64_t Decoder::cache_memory_bytes(const ModelConfig& config, std::size_t capacity,
                                          const KvFormat& format, std::size_t max_positions) {
  // The constructor's caches_ and att_: everything whose size grows with the capacity.
  return config.n_layers * LayerKVCache::bytes_for(config.n_kv_heads, config.head_dim(), capacity,
                                                   format, max_positions) +
         static_cast<std::uint64_t>(config.n_heads) * capacity * sizeof(float);
}

void Decoder::allocate_caches(std::size_t capacity) {
  const ModelConfig& c = weights_.config;
  // Refuse a cache that could not sensibly fit in memory before allocating any of it.
  const auto cache_bytes =
      static_cast<double>(cache_memory_bytes(c, capacity, kv_format_, max_positions_));
  if (cache_bytes > kMaxCacheBytes) {
    // Rounded up: a need just over the limit must not read as "4096 MiB (limit 4096 MiB)".
    throw std::invalid_argument(
        "a KV cache for " + std::to_string(capacity) + " positions would need " +
        std::to_string(static_cast<long long>(std::ceil(cache_bytes / (1024.0 * 1024.0)))) +
        " MiB (limit " +
        std::to_string(static_cast<long long>(kMaxCacheBytes / (1024.0 * 1024.0))) +
        " MiB); ask for fewer positions or use a smaller H2O budget");
  }
  caches_.clear();
  caches_.reserve(c.n_layers);
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    caches_.emplace_back(c.n_kv_heads, c.head_dim(), capacity, kv_format_, max_positions_);
  }
  att_ = xt::zeros<float>({c.n_heads, capacity});
  kv_rows_ = xt::zeros<float>({c.n_kv_heads, c.head_dim()});
}

const Vector& Decoder::read_prompt_compressed(const std::vector<int>& tokens, Matrix* all_logits) {
  if (position_ != 0) {
    throw std::logic_error("read_prompt_compressed: the prompt must come first (position 0)");
  }
  if (tokens.empty()) throw std::invalid_argument("read_prompt_compressed: no tokens");
  if (tokens.size() > max_positions_) {
    throw std::length_error("the prompt has " + std::to_string(tokens.size()) +
                            " tokens; the decoder reads at most " + std::to_string(max_positions_));
  }
  // Nothing is evicted while the prompt is read, so every cache must hold all of it.
  if (caches_.front().capacity() < tokens.size()) allocate_caches(tokens.size());
  observe_only_ = true;
  try {
    forward_batch(tokens, all_logits);
  } catch (...) {
    observe_only_ = false;
    throw;
  }
  observe_only_ = false;
  // The one cut: every layer back to the policy's budget, by the policy's own rule.
  const std::size_t n_layers = caches_.size();
  for (std::size_t layer = 0; layer < n_layers; ++layer) {
    layers_[layer]->compress(caches_[layer], layers_[layer]->keep());
  }
  return logits_;
}

void Decoder::attend_through_cache(std::size_t layer, const float* q, const float* k,
                                   const float* v, Position position, float* out) {
  const ModelConfig& c = weights_.config;
  const std::size_t D = c.head_dim(), H = c.n_heads;
  const QueryGroups groups = c.query_groups();
  const std::size_t stride = att_.shape()[1];
  LayerKVCache& cache = caches_[layer];
  cache.append(k, v, position);
  // KV head g's query group reads it, all in one kernel call. The KV heads are independent, so
  // --threads N shares them out like a product's rows (same bits).
  struct Heads {
    const float* q;
    const LayerKVCache* cache;
    const QueryGroups* groups;
    std::size_t D, stride;
    float* att;
    float* out;
    float* rows;  // (G, D): a quantised cache's dequantised row, one per KV head
    static void run(void* context, std::size_t first, std::size_t last) {
      const Heads& p = *static_cast<const Heads*>(context);
      for (std::size_t g = first; g < last; ++g) {
        const std::size_t h = p.groups->first(g);
        attend_cached_group(*p.cache, g, p.q + h * p.D, p.groups->size(), p.att + h * p.stride,
                            p.stride, p.out + h * p.D, p.rows + g * p.D);
      }
    }
  } heads{q, &cache, &groups, D, stride, &att_(0, 0), out, kv_rows_.data()};
  const std::size_t floats_read = 2 * cache.total_size() * D;  // keys and values
  for_row_blocks(c.n_kv_heads, floats_read >= kMinFloatsToShare, &Heads::run, &heads);
  if (record_attention_) {
    AttentionRecord& record = records_[layer];
    record.positions.assign(c.n_kv_heads, {});
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      record.positions[g].assign(cache.positions(g), cache.positions(g) + cache.size(g));
    }
    record.weights = xt::zeros<float>({H, cache.max_size()});
    for (std::size_t h = 0; h < H; ++h) {
      std::copy_n(&att_(h, 0), cache.size(groups.kv_head_of(h)), &record.weights(h, 0));
    }
  }
  // The policy's turn: after_attention, or only observe while a prompt is read to be compressed.
  const StepAttention attention{att_.data(), H, stride};
  if (observe_only_) {
    layers_[layer]->observe(cache, attention);  // reading a prompt to compress: scores only
  } else {
    layers_[layer]->after_attention(cache, attention);
    if (step_observer_) step_observer_(layer, cache);
  }
}

void Decoder::reset() {
  for (auto& cache : caches_) cache.clear();
  position_ = 0;
}

const Vector& Decoder::forward(int token) {
  const ModelConfig& c = weights_.config;
  const WeightView& w = weights_;
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
  // With --threads N: this token's products on the N threads or on this one (row_threads.hpp).
  const TokenThreads token_threads;

  std::copy_n(w.embedding(static_cast<std::size_t>(token)), C, x_.data());
  rope_angles(position_, D, rope_cos_.data(), rope_sin_.data());  // once for every layer

  for (std::size_t l = 0; l < c.n_layers; ++l) {
    // Attention block.
    rmsnorm(xb_.data(), x_.data(), w.rms_att(l), C);
    matvec(q_.data(), w.wq(l), xb_.data(), C, C);
    matvec(k_.data(), w.wk(l), xb_.data(), KV, C);
    matvec(v_.data(), w.wv(l), xb_.data(), KV, C);
    rope_rotate_with(q_.data(), C, D, rope_cos_.data(), rope_sin_.data());
    rope_rotate_with(k_.data(), KV, D, rope_cos_.data(), rope_sin_.data());

    attend_through_cache(l, q_.data(), k_.data(), v_.data(), position_, xb_.data());

    matvec(xb2_.data(), w.wo(l), xb_.data(), C, C);
    for (std::size_t i = 0; i < C; ++i) x_(i) += xb2_(i);

    // Feed-forward block.
    rmsnorm(xb_.data(), x_.data(), w.rms_ffn(l), C);
    matvec(hb_.data(), w.w1(l), xb_.data(), F, C);
    matvec(hb2_.data(), w.w3(l), xb_.data(), F, C);
    swiglu_inplace(hb_.data(), hb2_.data(), F);
    matvec(xb_.data(), w.w2(l), hb_.data(), C, F);
    for (std::size_t i = 0; i < C; ++i) x_(i) += xb_(i);
  }

  rmsnorm(x_.data(), x_.data(), w.rms_final, C);
  matvec(logits_.data(), w.classifier, x_.data(), c.vocab_size, C);
  ++position_;
  if (weights_unchecked_) check_weights_with_first_logits();
  return logits_;
}

void Decoder::check_weights_with_first_logits() {
  if (first_non_finite(logits_.data(), logits_.size()) < logits_.size()) {
    weights_.name_non_finite_weight();  // throws when a tensor holds a NaN or infinity
  }
  weights_unchecked_ = false;  // only now: after a throw the next token is checked again
}

const Vector& Decoder::forward_batch(const std::vector<int>& tokens, Matrix* all_logits) {
  const ModelConfig& c = weights_.config;
  const std::size_t n = tokens.size();
  if (n == 0) throw std::invalid_argument("forward_batch: no tokens");
  for (int token : tokens) {
    if (token < 0 || static_cast<std::size_t>(token) >= c.vocab_size) {
      throw std::out_of_range("token id " + std::to_string(token) +
                              " is outside the vocabulary (0.." + std::to_string(c.vocab_size - 1) +
                              ")");
    }
  }
  if (static_cast<std::size_t>(position_) + n > max_positions_) {
    throw std::length_error("the sequence is full: " + std::to_string(max_positions_) +
                            " positions");
  }
  if (all_logits != nullptr &&
      (all_logits->shape()[0] != n || all_logits->shape()[1] != c.vocab_size)) {
    *all_logits = xt::zeros<float>({n, c.vocab_size});
  }
  // A single token goes through forward(): a matrix-matrix product of one row costs more than the
  // matrix-vector one (BLAS repacks the whole weight matrix for it).
  if (n == 1) {
    for (std::size_t i = 0; i < n; ++i) {
      const Vector& logits = forward(tokens[i]);
      if (all_logits != nullptr) std::copy_n(logits.data(), c.vocab_size, &(*all_logits)(i, 0));
    }
    return logits_;
  }
  if (chunk_x_.size() == 0) {
    const std::size_t m = kChunkTokens, half = c.head_dim() / 2;
    chunk_x_ = xt::zeros<float>({m, c.dim});
    chunk_xb_ = xt::zeros<float>({m, c.dim});
    chunk_q_ = xt::zeros<float>({m, c.dim});
    chunk_k_ = xt::zeros<float>({m, c.kv_dim()});
    chunk_v_ = xt::zeros<float>({m, c.kv_dim()});
    chunk_att_ = xt::zeros<float>({m, c.dim});
    chunk_xb2_ = xt::zeros<float>({m, c.dim});
    chunk_hb_ = xt::zeros<float>({m, c.hidden_dim});
    chunk_hb2_ = xt::zeros<float>({m, c.hidden_dim});
    chunk_cos_ = xt::zeros<float>({m, half});
    chunk_sin_ = xt::zeros<float>({m, half});
  }
  std::size_t first = 0;  // the first token of the next chunk
  if (weights_unchecked_) {
    // Weights not checked yet: the first token runs alone, through forward(), whose logits are
    // the check (WeightView::name_non_finite_weight); the chunks start after it.
    const Vector& logits = forward(tokens[0]);
    if (all_logits != nullptr) std::copy_n(logits.data(), c.vocab_size, &(*all_logits)(0, 0));
    first = 1;
  }
  for (; first < n; first += kChunkTokens) {
    const std::size_t m = std::min(kChunkTokens, n - first);
    run_chunk(tokens.data() + first, m, all_logits != nullptr ? &(*all_logits)(first, 0) : nullptr);
  }
  return logits_;
}

void Decoder::run_chunk(const int* tokens, std::size_t m, float* logits_out) {
  const ModelConfig& c = weights_.config;
  const WeightView& w = weights_;
  const std::size_t C = c.dim, F = c.hidden_dim, KV = c.kv_dim(), D = c.head_dim();

  for (std::size_t i = 0; i < m; ++i) {
    std::copy_n(w.embedding(static_cast<std::size_t>(tokens[i])), C, &chunk_x_(i, 0));
    rope_angles(position_ + static_cast<Position>(i), D, &chunk_cos_(i, 0), &chunk_sin_(i, 0));
  }

  for (std::size_t l = 0; l < c.n_layers; ++l) {
    // Attention block: the three projections for the whole chunk, one product each.
    for (std::size_t i = 0; i < m; ++i) rmsnorm(&chunk_xb_(i, 0), &chunk_x_(i, 0), w.rms_att(l), C);
    matmul_transposed(chunk_q_.data(), chunk_xb_.data(), w.wq(l), m, C, C);
    matmul_transposed(chunk_k_.data(), chunk_xb_.data(), w.wk(l), m, KV, C);
    matmul_transposed(chunk_v_.data(), chunk_xb_.data(), w.wv(l), m, KV, C);
    for (std::size_t i = 0; i < m; ++i) {
      rope_rotate_with(&chunk_q_(i, 0), C, D, &chunk_cos_(i, 0), &chunk_sin_(i, 0));
      rope_rotate_with(&chunk_k_(i, 0), KV, D, &chunk_cos_(i, 0), &chunk_sin_(i, 0));
    }

    // Token by token, as forward() does: the policy sees each token's attention over the cache as
    // the previous token left it.
    for (std::size_t i = 0; i < m; ++i) {
      attend_through_cache(l, &chunk_q_(i, 0), &chunk_k_(i, 0), &chunk_v_(i, 0),
                           position_ + static_cast<Position>(i), &chunk_att_(i, 0));
    }

    matmul_transposed(chunk_xb2_.data(), chunk_att_.data(), w.wo(l), m, C, C);
    for (std::size_t i = 0; i < m * C; ++i) chunk_x_.data()[i] += chunk_xb2_.data()[i];

    // Feed-forward block, for the whole chunk.
    for (std::size_t i = 0; i < m; ++i) rmsnorm(&chunk_xb_(i, 0), &chunk_x_(i, 0), w.rms_ffn(l), C);
    matmul_transposed(chunk_hb_.data(), chunk_xb_.data(), w.w1(l), m, F, C);
    matmul_transposed(chunk_hb2_.data(), chunk_xb_.data(), w.w3(l), m, F, C);
    swiglu_inplace(chunk_hb_.data(), chunk_hb2_.data(), m * F);
    matmul_transposed(chunk_xb_.data(), chunk_hb_.data(), w.w2(l), m, C, F);
    for (std::size_t i = 0; i < m * C; ++i) chunk_x_.data()[i] += chunk_xb_.data()[i];
  }

  // Logits: every row's when asked for, else only the last token's (all a prompt needs).
  const std::size_t V = c.vocab_size;
  if (logits_out != nullptr) {
    for (std::size_t i = 0; i < m; ++i) {
      rmsnorm(&chunk_x_(i, 0), &chunk_x_(i, 0), w.rms_final, C);
    }
    matmul_transposed(logits_out, chunk_x_.data(), w.classifier, m, V, C);
    std::copy_n(logits_out + (m - 1) * V, V, logits_.data());
  } else {
    float* last = &chunk_x_(m - 1, 0);
    rmsnorm(last, last, w.rms_final, C);
    matvec(logits_.data(), w.classifier, last, V, C);
  }
  position_ += static_cast<Position>(m);
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
  return static_cast<std::size_t>(position_) - caches_.at(layer).uniform_size();
}

std::size_t Decoder::evicted_tokens(std::size_t layer, std::size_t g) const {
  return static_cast<std::size_t>(position_) - caches_.at(layer).size(g);
}

}  // namespace h2o
