// test_decoder.cpp: the cached one-token-at-a-time decoder (decoder.hpp), plus RoPE (rope.hpp).
//
// The main check compares the decoder with a from-scratch reference written below with plain
// loops in double precision: it runs the whole sequence causally, layer by layer, with no cache at
// all, exactly as the llama2.c format describes the model. The cached decoder must give the same
// logits at every position.
//
// Dimension legend: T = sequence length, C = dim, F = hidden_dim, H = query heads, G = KV heads,
// D = head_dim, KV = G * D, V = vocab, L = layers.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "h2o/attention/row_threads.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/rope.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

namespace {

using Row = std::vector<double>;

// =============================================================================================
// The reference: a causal forward over the whole sequence, no cache, plain loops, double.

// out (rows,) = W (rows, cols) @ x (cols,), W given as row-major floats.
Row reference_matvec(const float* w, const Row& x, std::size_t rows) {
  Row out(rows, 0.0);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = w + r * x.size();
    for (std::size_t i = 0; i < x.size(); ++i) out[r] += static_cast<double>(row[i]) * x[i];
  }
  return out;
}

Row reference_rmsnorm(const Row& x, const float* gain) {
  double mean_square = 0.0;
  for (double v : x) mean_square += v * v;
  mean_square /= static_cast<double>(x.size());
  const double inverse_rms = 1.0 / std::sqrt(mean_square + 1e-5);
  Row out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = gain[i] * x[i] * inverse_rms;
  return out;
}

// Rotates each adjacent pair (i, i+1) by position * 10000^(-(i mod D) / D).
void reference_rope(Row& v, std::size_t head_dim, std::size_t position) {
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    const double exponent = static_cast<double>(i % head_dim) / static_cast<double>(head_dim);
    const double angle = static_cast<double>(position) * std::pow(10000.0, -exponent);
    const double a = v[i], b = v[i + 1];
    v[i] = a * std::cos(angle) - b * std::sin(angle);
    v[i + 1] = a * std::sin(angle) + b * std::cos(angle);
  }
}

struct ReferenceRun {
  std::vector<Row> logits;                  // (T, V)
  std::vector<std::vector<Row>> attention;  // (L, H) rows over positions 0..T-1 of the last token
};

// Which earlier positions a query sees: position t's query heads that read KV head g of layer l
// attend over the positions s <= t with visible(l, g, t, s) (every one, by default: the full
// cache). A cache policy that keeps different tokens per head is one such rule.
using Visibility =
    std::function<bool(std::size_t l, std::size_t g, std::size_t t, std::size_t s)>;

ReferenceRun reference_forward(const DecoderWeights& w, const std::vector<int>& tokens,
                               const Visibility& visible = nullptr) {
  const ModelConfig& c = w.config;
  const std::size_t T = tokens.size(), C = c.dim, F = c.hidden_dim, H = c.n_heads;
  const std::size_t G = c.n_kv_heads, D = c.head_dim(), KV = c.kv_dim();
  ReferenceRun run;
  run.attention.assign(c.n_layers, std::vector<Row>(H));

  std::vector<Row> x(T, Row(C));  // (T, C) residual stream of every position
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t i = 0; i < C; ++i) x[t][i] = w.token_embedding(tokens[t], i);
  }
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    // Queries, keys and values of every position, keys and queries rotated by their position.
    std::vector<Row> q(T), k(T), v(T);  // (T, C), (T, KV), (T, KV)
    for (std::size_t t = 0; t < T; ++t) {
      const Row xn = reference_rmsnorm(x[t], &w.rms_att(l, 0));
      q[t] = reference_matvec(&w.wq(l, 0, 0), xn, C);
      k[t] = reference_matvec(&w.wk(l, 0, 0), xn, KV);
      v[t] = reference_matvec(&w.wv(l, 0, 0), xn, KV);
      reference_rope(q[t], D, t);
      reference_rope(k[t], D, t);
    }
    // Causal attention: position t sees positions 0..t; query head h reads KV head h / (H / G).
    std::vector<Row> mixed(T, Row(C, 0.0));  // (T, C) concatenated head outputs
    for (std::size_t t = 0; t < T; ++t) {
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t g = h / (H / G);
        Row weights(t + 1);
        std::vector<bool> seen(t + 1);
        double top = -1e300;
        for (std::size_t s = 0; s <= t; ++s) {
          seen[s] = !visible || visible(l, g, t, s);
          double dot = 0.0;
          for (std::size_t d = 0; d < D; ++d) dot += q[t][h * D + d] * k[s][g * D + d];
          weights[s] = dot / std::sqrt(static_cast<double>(D));
          if (seen[s]) top = std::max(top, weights[s]);
        }
        double sum = 0.0;
        for (std::size_t s = 0; s <= t; ++s) {
          weights[s] = seen[s] ? std::exp(weights[s] - top) : 0.0;
          sum += weights[s];
        }
        for (double& a : weights) a /= sum;
        for (std::size_t s = 0; s <= t; ++s) {
          for (std::size_t d = 0; d < D; ++d) mixed[t][h * D + d] += weights[s] * v[s][g * D + d];
        }
        if (t + 1 == T) run.attention[l][h] = weights;
      }
    }
    for (std::size_t t = 0; t < T; ++t) {
      const Row out = reference_matvec(&w.wo(l, 0, 0), mixed[t], C);
      for (std::size_t i = 0; i < C; ++i) x[t][i] += out[i];
    }
    // SwiGLU feed-forward block.
    for (std::size_t t = 0; t < T; ++t) {
      const Row xn = reference_rmsnorm(x[t], &w.rms_ffn(l, 0));
      Row gate = reference_matvec(&w.w1(l, 0, 0), xn, F);
      const Row up = reference_matvec(&w.w3(l, 0, 0), xn, F);
      for (std::size_t j = 0; j < F; ++j) gate[j] = gate[j] / (1.0 + std::exp(-gate[j])) * up[j];
      const Row down = reference_matvec(&w.w2(l, 0, 0), gate, C);
      for (std::size_t i = 0; i < C; ++i) x[t][i] += down[i];
    }
  }
  const Matrix& classifier = w.classifier();  // (V, C)
  for (std::size_t t = 0; t < T; ++t) {
    const Row xn = reference_rmsnorm(x[t], w.rms_final.data());
    run.logits.push_back(reference_matvec(classifier.data(), xn, c.vocab_size));
  }
  return run;
}

// =============================================================================================
// Helpers

ModelConfig small_config(std::size_t heads, std::size_t kv_heads, bool shared_classifier) {
  ModelConfig c;
  c.dim = 32;
  c.hidden_dim = 72;
  c.n_layers = 3;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.vocab_size = 97;
  c.seq_len = 48;
  c.shared_classifier = shared_classifier;
  return c;
}

std::unique_ptr<CachePolicy> full_cache() { return policy_of<FullCachePolicy>(); }

std::vector<float> copy_of(const Vector& v) { return std::vector<float>(v.begin(), v.end()); }

}  // namespace

// =============================================================================================
// The decoder against the reference

TEST_CASE("cached decoding equals a causal forward recomputed from scratch", "[decoder]") {
  struct Shape {
    const char* name;
    ModelConfig config;
  };
  ModelConfig stories = stories260k_shape();
  stories.seq_len = 40;
  ModelConfig stories_untied = stories;
  stories_untied.shared_classifier = false;
  const Shape shape = GENERATE_COPY(
      Shape{"stories260K shape tied", stories}, Shape{"stories260K shape untied", stories_untied},
      Shape{"MHA tied", small_config(4, 4, true)}, Shape{"MHA untied", small_config(4, 4, false)},
      Shape{"GQA 4 over 2 untied", small_config(4, 2, false)},
      Shape{"MQA 8 over 1 tied", small_config(8, 1, true)});
  const std::uint64_t seed = GENERATE(1, 2);
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(shape.config, seed));
  const std::size_t T = shape.config.seq_len;
  const std::vector<int> tokens = h2o_test::random_tokens(T, shape.config.vocab_size, seed + 100);
  const ReferenceRun expected = reference_forward(*weights, tokens);

  // Tolerance: |difference| < 1e-5 times the scale of the logits (at least 1).
  Decoder decoder(weights, full_cache());
  double worst = 0.0, scale = 1.0;
  for (std::size_t t = 0; t < T; ++t) {
    const Vector& logits = decoder.forward(tokens[t]);
    REQUIRE(logits.size() == shape.config.vocab_size);
    for (std::size_t v = 0; v < logits.size(); ++v) {
      worst = std::max(worst, std::abs(logits(v) - expected.logits[t][v]));
      scale = std::max(scale, std::abs(expected.logits[t][v]));
    }
  }
  INFO(shape.name << ", seed " << seed << ": max |diff| " << worst << ", scale " << scale);
  CHECK(worst < 1e-5 * scale);
  // The logits are not trivially small: the comparison means something.
  CHECK(scale > 1.0);
}

namespace {
// A policy whose KV heads keep windows of different lengths: between steps head g of every
// layer keeps its last 2 + 3 g tokens, evicting the oldest from that head alone. It exercises
// caches whose heads hold different numbers of tokens.
class UnevenWindows final : public LayerPolicy {
 public:
  explicit UnevenWindows(const LayerShape& shape)
      : LayerPolicy(shape, window(shape.n_kv_heads - 1)) {}
  static std::size_t window(std::size_t g) { return 2 + 3 * g; }
  std::string name() const override { return "uneven-windows"; }
  std::string describe() const override { return "windows of 2 + 3 g tokens"; }
  void observe(LayerKVCache&, const StepAttention&) override {}
  void choose_victims(LayerKVCache&, std::size_t*) override {
    throw std::logic_error("UnevenWindows evicts per head in after_attention");
  }
  void after_attention(LayerKVCache& cache, const StepAttention&) override {
    for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
      while (cache.size(g) > window(g)) {
        const Position* positions = cache.positions(g);
        const auto oldest = std::min_element(positions, positions + cache.size(g)) - positions;
        cache.remove_slot(g, static_cast<std::size_t>(oldest));
      }
    }
  }
};
}  // namespace

TEST_CASE("heads that keep different numbers of tokens decode as attention over what each keeps",
          "[decoder]") {
  // GQA and MHA shapes; every KV head of every layer its own window, so the caches' heads hold
  // 2, 5, 8, ... tokens. The reference sees exactly those positions per head.
  const ModelConfig config = GENERATE(small_config(4, 2, false), small_config(4, 4, true),
                                      small_config(8, 2, true));
  const std::uint64_t seed = GENERATE(1, 2, 3);
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, seed));
  const std::size_t T = 30;
  const std::vector<int> tokens = h2o_test::random_tokens(T, config.vocab_size, seed + 7);
  const ReferenceRun expected =
      reference_forward(*weights, tokens, [](std::size_t, std::size_t g, std::size_t t,
                                             std::size_t s) {
        return t - s <= UnevenWindows::window(g);  // the window, and the token just read
      });
  Decoder decoder(weights, policy_of<UnevenWindows>());
  double worst = 0.0, scale = 1.0;
  for (std::size_t t = 0; t < T; ++t) {
    const Vector& logits = decoder.forward(tokens[t]);
    for (std::size_t v = 0; v < logits.size(); ++v) {
      worst = std::max(worst, std::abs(logits(v) - expected.logits[t][v]));
      scale = std::max(scale, std::abs(expected.logits[t][v]));
    }
    for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
      REQUIRE(decoder.cache(1).size(g) == std::min(t + 1, UnevenWindows::window(g)));
      REQUIRE(decoder.evicted_tokens(1, g) == t + 1 - decoder.cache(1).size(g));
    }
  }
  INFO("seed " << seed << ": max |diff| " << worst << ", scale " << scale);
  CHECK(worst < 1e-5 * scale);
  CHECK(scale > 1.0);
  CHECK_THROWS_AS(decoder.evicted_tokens(0), std::logic_error);  // the heads differ
  // The attention record holds each head's own slots.
  decoder.set_record_attention(true);
  decoder.reset();
  for (std::size_t t = 0; t < 12; ++t) decoder.forward(tokens[t]);
  const AttentionRecord& record = decoder.attention(2);
  const std::size_t group = config.n_heads / config.n_kv_heads;
  for (std::size_t h = 0; h < config.n_heads; ++h) {
    // Recorded before the step's eviction: the window and the newest token.
    const std::size_t g = h / group, held = std::min<std::size_t>(12, UnevenWindows::window(g) + 1);
    REQUIRE(record.positions[g].size() == held);
    double sum = 0.0;
    for (std::size_t s = 0; s < record.weights.shape()[1]; ++s) {
      if (s >= held) REQUIRE(record.weights(h, s) == 0.0f);
      sum += record.weights(h, s);
    }
    CHECK(sum == Approx(1.0).margin(1e-5));
  }
}

TEST_CASE("query head h reads kv head h over the group size", "[decoder]") {
  ModelConfig c = small_config(8, 2, true);
  CHECK(c.query_groups().size() == 4);
  for (std::size_t h = 0; h < 8; ++h) CHECK(c.query_groups().kv_head_of(h) == h / 4);
  c.n_kv_heads = 8;
  for (std::size_t h = 0; h < 8; ++h) CHECK(c.query_groups().kv_head_of(h) == h);
  c.n_kv_heads = 1;
  for (std::size_t h = 0; h < 8; ++h) CHECK(c.query_groups().kv_head_of(h) == 0);
  const QueryGroups stories = stories260k_shape().query_groups();
  CHECK(stories.kv_head_of(0) == 0);
  CHECK(stories.kv_head_of(1) == 0);
  CHECK(stories.kv_head_of(2) == 1);
  CHECK(stories.kv_head_of(7) == 3);
  CHECK(stories.first(3) == 6);
  CHECK(stories.end(3) == 8);
  c.n_kv_heads = 3;  // 8 query heads cannot share 3 KV heads evenly
  CHECK_THROWS_WITH(c.query_groups(), "model: 8 query heads are not a multiple of 3 KV heads");

  // Zero the key weights of one KV head in every layer: all its keys are 0, so every query head
  // that reads it sees equal scores and attends uniformly (exactly 1/T); the others do not.
  ModelConfig config = small_config(8, 4, true);
  config.seq_len = 12;
  DecoderWeights w = random_weights(config, 5);
  const std::size_t D = config.head_dim(), blank = 2;
  for (std::size_t l = 0; l < config.n_layers; ++l) {
    for (std::size_t r = blank * D; r < (blank + 1) * D; ++r) {
      for (std::size_t i = 0; i < config.dim; ++i) w.wk(l, r, i) = 0.0f;
    }
  }
  const auto weights = std::make_shared<const DecoderWeights>(std::move(w));
  Decoder decoder(weights, full_cache());
  decoder.set_record_attention(true);
  const std::vector<int> tokens = h2o_test::random_tokens(config.seq_len, config.vocab_size, 6);
  for (int token : tokens) decoder.forward(token);
  const ReferenceRun expected = reference_forward(*weights, tokens);
  const std::size_t T = config.seq_len;
  for (std::size_t l = 0; l < config.n_layers; ++l) {
    const AttentionRecord& record = decoder.attention(l);
    REQUIRE(record.weights.shape()[0] == config.n_heads);
    REQUIRE(record.weights.shape()[1] == T);
    for (std::size_t h = 0; h < config.n_heads; ++h) {
      bool uniform = true;
      for (std::size_t s = 0; s < T; ++s) {
        if (record.weights(h, s) != 1.0f / static_cast<float>(T)) uniform = false;
        // A full cache holds the positions in order, so slot s is position s.
        CHECK(record.weights(h, s) == Approx(expected.attention[l][h][s]).margin(1e-5));
      }
      INFO("layer " << l << ", query head " << h);
      CHECK(uniform == (config.query_groups().kv_head_of(h) == blank));
    }
    for (std::size_t g = 0; g < config.n_kv_heads; ++g) {
      for (std::size_t s = 0; s < T; ++s) CHECK(record.positions[g][s] == static_cast<Position>(s));
    }
  }
}

TEST_CASE("h2o with room for every token gives the full cache logits exactly", "[decoder]") {
  // No eviction ever happens, so both decoders run the same float operations in the same order.
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  using h2o_test::EvictionStyle;
  const EvictionStyle style = GENERATE(EvictionStyle::OverwriteSlot, EvictionStyle::FilterRows);
  const std::size_t heavy = GENERATE(0, 10, 64), T = 64;
  const std::size_t spare = GENERATE(0, 50);  // budget exactly T, or well beyond it
  ModelConfig config = stories260k_shape();
  config.seq_len = T;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 9));
  Decoder full(weights, full_cache());
  const CacheBudget budget{heavy, T - heavy + spare};
  Decoder h2o(weights, h2o_test::h2o_policy_in_style(budget, mode, style));
  const std::vector<int> tokens = h2o_test::random_tokens(T, config.vocab_size, 10);
  for (std::size_t t = 0; t < T; ++t) {
    const std::vector<float> expected = copy_of(full.forward(tokens[t]));
    const std::vector<float> got = copy_of(h2o.forward(tokens[t]));
    INFO("position " << t);
    REQUIRE(got == expected);
  }
  CHECK(h2o.evicted_tokens(0) == 0);
  CHECK(h2o.live_kv_bytes() == full.live_kv_bytes());
}

// =============================================================================================
// RoPE

TEST_CASE("rope keeps the length of every head", "[decoder]") {
  const std::uint64_t seed = GENERATE(range(1, 11));
  Rng rng(seed);
  const std::size_t D = 2 * (1 + rng.below(16)), heads = 1 + rng.below(4), n = D * heads;
  std::vector<float> v(n);
  for (float& x : v) x = rng.normal();
  const std::vector<float> original = v;
  const Position position = static_cast<Position>(rng.below(2000));
  rope_rotate(v.data(), n, D, position);
  for (std::size_t h = 0; h < heads; ++h) {
    double before = 0.0, after = 0.0;
    for (std::size_t d = h * D; d < (h + 1) * D; ++d) {
      before += static_cast<double>(original[d]) * original[d];
      after += static_cast<double>(v[d]) * v[d];
    }
    CHECK(std::sqrt(after) == Approx(std::sqrt(before)).epsilon(1e-5));
  }
  // Position 0 rotates by angle 0: nothing changes.
  std::vector<float> same = original;
  rope_rotate(same.data(), n, D, 0);
  CHECK(same == original);
}

TEST_CASE("rope dot products depend only on the position difference", "[decoder]") {
  // q rotated to m and k rotated to n: their dot product is a function of m - n. Tolerance 1e-4
  // times |q||k| covers float rounding of angles up to position ~300.
  const std::uint64_t seed = GENERATE(range(1, 21));
  Rng rng(seed);
  const std::size_t D = 2 * (1 + rng.below(8));
  std::vector<float> q(D), k(D);
  for (float& x : q) x = rng.normal();
  for (float& x : k) x = rng.normal();
  double qq = 0.0, kk = 0.0;
  for (std::size_t d = 0; d < D; ++d) {
    qq += static_cast<double>(q[d]) * q[d];
    kk += static_cast<double>(k[d]) * k[d];
  }
  auto rotated_dot = [&](Position m, Position n) {
    std::vector<float> a = q, b = k;
    rope_rotate(a.data(), D, D, m);
    rope_rotate(b.data(), D, D, n);
    double dot = 0.0;
    for (std::size_t d = 0; d < D; ++d) dot += static_cast<double>(a[d]) * b[d];
    return dot;
  };
  const Position m = static_cast<Position>(rng.below(100));
  const Position n = static_cast<Position>(rng.below(100));
  const Position shift = static_cast<Position>(1 + rng.below(200));
  const double base = rotated_dot(m, n);
  INFO("D " << D << ", m " << m << ", n " << n << ", shift " << shift);
  CHECK(rotated_dot(m + shift, n + shift) == Approx(base).margin(1e-4 * std::sqrt(qq * kk)));
  // ...and it does depend on the difference (else the check above would prove nothing).
  CHECK(std::abs(rotated_dot(m + 3, n) - base) > 1e-3 * std::sqrt(qq * kk));
}

// =============================================================================================
// Errors, bookkeeping and reset

TEST_CASE("decoder refuses bad tokens and sequences that are too long", "[decoder]") {
  ModelConfig config = small_config(4, 2, true);
  config.seq_len = 6;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 3));
  Decoder decoder(weights, full_cache());
  CHECK(decoder.max_positions() == 6);
  CHECK_THROWS_AS(decoder.forward(-1), std::out_of_range);
  CHECK_THROWS_AS(decoder.forward(97), std::out_of_range);
  CHECK_THROWS_WITH(decoder.forward(97), h2o_catch::Contains("token id 97"));
  CHECK(decoder.position() == 0);  // a refused token changes nothing
  for (int i = 0; i < 6; ++i) decoder.forward(i);
  CHECK(decoder.position() == 6);
  CHECK_THROWS_AS(decoder.forward(0), std::length_error);
  CHECK_THROWS_WITH(decoder.forward(0), h2o_catch::Contains("6 positions"));
  CHECK(decoder.position() == 6);

  // A smaller limit than seq_len is honoured too; H2O does not lift the limit (RoPE positions).
  Decoder short_decoder(weights, policy_of<H2OPolicy>(CacheBudget{1, 1}), 3);
  for (int i = 0; i < 3; ++i) short_decoder.forward(i);
  CHECK_THROWS_AS(short_decoder.forward(0), std::length_error);

  CHECK_THROWS_AS(Decoder(nullptr, full_cache()), std::invalid_argument);
  CHECK_THROWS_AS(Decoder(weights, nullptr), std::invalid_argument);
  CHECK_THROWS_AS(Decoder(weights, full_cache(), ModelConfig::kMaxSeqLen + 1),
                  std::invalid_argument);
}

TEST_CASE("decoder counts live and reserved kv bytes", "[decoder]") {
  ModelConfig config = small_config(4, 2, true);
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 4));
  const std::size_t row_bytes = config.n_layers * 2 * config.kv_dim() * sizeof(float);  // a token
  Decoder full(weights, full_cache());
  Decoder h2o(weights, policy_of<H2OPolicy>(CacheBudget{3, 2}));
  CHECK(full.reserved_kv_bytes() == config.seq_len * row_bytes);
  CHECK(h2o.reserved_kv_bytes() == 6 * row_bytes);  // budget 5 + the incoming token
  for (int t = 0; t < 20; ++t) {
    full.forward(t);
    h2o.forward(t);
    const std::size_t n = static_cast<std::size_t>(t + 1);
    CHECK(full.live_kv_bytes() == n * row_bytes);
    CHECK(h2o.live_kv_bytes() == std::min<std::size_t>(n, 5) * row_bytes);
    CHECK(full.evicted_tokens(1) == 0);
    CHECK(h2o.evicted_tokens(1) == n - std::min<std::size_t>(n, 5));
  }
  CHECK(h2o.policy().name() == "h2o");
  CHECK(full.policy().name() == "full");
}

namespace {
// 224 layers of one tiny head: a cache of many bytes per position from almost no weights.
ModelConfig tall_thin_config() {
  ModelConfig config;
  config.dim = 2;
  config.hidden_dim = 2;
  config.n_layers = 224;
  config.n_heads = 1;
  config.n_kv_heads = 1;
  config.vocab_size = 4;
  return config;
}
}  // namespace

TEST_CASE("decoder refuses a cache whose keys and values fit but whose whole memory does not",
          "[decoder]") {
  // 224 layers of one KV head of size 2, 2^20 positions: keys and values alone are 3.5 GiB, under
  // the 4 GiB limit, but positions and scores bring the cache to 6.1 GiB (a guard counting only
  // keys and values let it allocate all of that). Refused before any cache memory is touched.
  ModelConfig config = tall_thin_config();
  config.seq_len = ModelConfig::kMaxSeqLen;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 3));
  const double keys_and_values = 2.0 * 224 * 2 * config.seq_len * sizeof(float);
  REQUIRE(keys_and_values < Decoder::kMaxCacheBytes);
  CHECK(static_cast<double>(Decoder::cache_memory_bytes(config, config.seq_len)) >
        Decoder::kMaxCacheBytes);
  CHECK_THROWS_WITH(Decoder(weights, full_cache()),
                    h2o_catch::Contains("a KV cache for 1048576 positions would need 6276 MiB") &&
                        h2o_catch::Contains("(limit 4096 MiB)"));
  // The same model with a budget that fits: accepted.
  Decoder small(weights, policy_of<H2OPolicy>(CacheBudget{8, 8}));
  CHECK(small.cache(0).capacity() == 17);
}

TEST_CASE("a cache just over the memory limit says it needs more than the limit", "[decoder]") {
  // The smallest capacity whose cache is over 4 GiB, by less than 1 MiB: the message rounds the
  // need up, so it never reads "would need 4096 MiB (limit 4096 MiB)".
  ModelConfig config = tall_thin_config();
  const std::uint64_t per_position =
      Decoder::cache_memory_bytes(config, 2) - Decoder::cache_memory_bytes(config, 1);
  auto capacity = static_cast<std::size_t>(Decoder::kMaxCacheBytes / per_position) - 2;
  while (static_cast<double>(Decoder::cache_memory_bytes(config, capacity)) <=
         Decoder::kMaxCacheBytes) {
    ++capacity;
  }
  REQUIRE(static_cast<double>(Decoder::cache_memory_bytes(config, capacity)) <
          Decoder::kMaxCacheBytes + 1024.0 * 1024.0);
  config.seq_len = capacity;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 3));
  CHECK_THROWS_WITH(Decoder(weights, full_cache()),
                    h2o_catch::Contains("would need 4097 MiB (limit 4096 MiB)"));
}

TEST_CASE("the memory guard's estimate is what the caches hold", "[decoder]") {
  const std::size_t capacity = GENERATE(1, 6, 81);
  ModelConfig config = stories260k_shape();
  config.seq_len = capacity;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 4));
  Decoder decoder(weights, full_cache());
  std::uint64_t in_caches = 0;
  for (std::size_t l = 0; l < config.n_layers; ++l) in_caches += decoder.cache(l).reserved_bytes();
  // Beyond the caches, only the attention weights of each query head grow with the capacity
  // (the allocation-counting test in test_no_allocation.cpp checks that from operator new).
  CHECK(Decoder::cache_memory_bytes(config, capacity) ==
        in_caches + config.n_heads * capacity * sizeof(float));
}

TEST_CASE("decoder reset starts the same sequence over", "[decoder]") {
  const bool use_h2o = GENERATE(false, true);
  ModelConfig config = stories260k_shape();
  config.seq_len = 80;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 13));
  std::unique_ptr<CachePolicy> policy =
      use_h2o ? policy_of<H2OPolicy>(CacheBudget{4, 4}) : full_cache();
  Decoder decoder(weights, std::move(policy));
  const std::vector<int> tokens = h2o_test::random_tokens(80, config.vocab_size, 14);
  std::vector<std::vector<float>> first;
  for (int token : tokens) first.push_back(copy_of(decoder.forward(token)));
  CHECK(decoder.position() == 80);

  decoder.reset();
  CHECK(decoder.position() == 0);
  CHECK(decoder.live_kv_bytes() == 0);
  for (std::size_t l = 0; l < config.n_layers; ++l) CHECK(decoder.cache(l).uniform_size() == 0);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    INFO("position " << t);
    REQUIRE(copy_of(decoder.forward(tokens[t])) == first[t]);
  }
}

TEST_CASE("decoder records attention rows that sum to one", "[decoder]") {
  ModelConfig config = stories260k_shape();
  config.seq_len = 30;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 15));
  Decoder decoder(weights, policy_of<H2OPolicy>(CacheBudget{5, 5}));
  decoder.set_record_attention(true);
  const std::vector<int> tokens = h2o_test::random_tokens(30, config.vocab_size, 16);
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    decoder.forward(tokens[t]);
    const std::size_t live = std::min<std::size_t>(t + 1, 11);  // the budget + the new token
    for (std::size_t l = 0; l < config.n_layers; ++l) {
      const AttentionRecord& record = decoder.attention(l);
      REQUIRE(record.weights.shape()[1] == live);
      REQUIRE(record.positions.size() == config.n_kv_heads);
      for (std::size_t h = 0; h < config.n_heads; ++h) {
        double sum = 0.0;
        for (std::size_t s = 0; s < live; ++s) sum += record.weights(h, s);
        REQUIRE(sum == Approx(1.0).margin(1e-5));
      }
      for (const auto& positions : record.positions) {
        REQUIRE(positions.size() == live);
        // The token being decoded always sees itself.
        REQUIRE(std::count(positions.begin(), positions.end(), static_cast<Position>(t)) == 1);
      }
    }
  }
}

TEST_CASE("a decoder on 2 threads gives 1 thread's logits, whichever threads each token ran on",
          "[decoder][token_threads]") {
  const auto weights = h2o_test::random_shared_products_model(96, 45);
  const ModelConfig& config = weights->config;
  std::vector<std::vector<float>> logits[2];
  for (std::size_t threads : {1, 2}) {
    set_row_threads(threads);
    Decoder decoder(weights, policy_of<FullCachePolicy>());
    for (std::size_t t = 0; t < config.seq_len; ++t) {
      const Vector& out = decoder.forward(static_cast<int>((7 * t + 3) % config.vocab_size));
      logits[threads - 1].emplace_back(out.begin(), out.end());
    }
  }
  set_row_threads(1);
  CHECK(logits[0] == logits[1]);
  const TokenThreadCounts counts = token_thread_counts();
  if (row_threads_available()) CHECK(counts.on_all + counts.on_one >= config.seq_len);
}
