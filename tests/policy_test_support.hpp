// policy_test_support.hpp: hand-written attention for the eviction-policy tests.
// Include after "h2o_catch.hpp" (score_of uses FAIL).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o_test {

using h2o::LayerKVCache;
using h2o::Position;
using h2o::StepAttention;

// A random decoder shaped like stories260K that can run seq_len tokens.
inline std::shared_ptr<const h2o::DecoderWeights> random_model(std::size_t seq_len,
                                                               std::uint64_t seed) {
  h2o::ModelConfig config = h2o::stories260k_shape();
  config.seq_len = seq_len;
  return std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
}

// A random decoder of stories15M's widths (dim 288, hidden 768) with one layer: weight products
// big enough to be shared between threads (row_threads.hpp), seq_len tokens.
inline std::shared_ptr<const h2o::DecoderWeights> random_shared_products_model(
    std::size_t seq_len, std::uint64_t seed) {
  h2o::ModelConfig config = h2o::stories260k_shape();
  config.dim = 288;
  config.hidden_dim = 768;
  config.n_layers = 1;
  config.n_heads = 6;
  config.n_kv_heads = 6;
  config.seq_len = seq_len;
  return std::make_shared<const h2o::DecoderWeights>(h2o::random_weights(config, seed));
}

// Appends position t to the cache with every key and value number equal to t: (G * D,) rows of t.
inline void append_token(LayerKVCache& cache, Position t) {
  const std::vector<float> rows(cache.n_kv_heads() * cache.head_dim(), static_cast<float>(t));
  cache.append(rows.data(), rows.data(), t);
}

// n seeded random token ids below vocab.
inline std::vector<int> random_tokens(std::size_t n, std::size_t vocab, std::uint64_t seed) {
  h2o::Rng rng(seed);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = static_cast<int>(rng.below(static_cast<std::uint32_t>(vocab)));
  return tokens;
}

// Every policy of the factory that evicts (all but the full cache): the property tests run them
// all, so a new policy is tested the moment its row exists.
inline std::vector<std::string> evicting_policy_names() {
  std::vector<std::string> names;
  for (const h2o::PolicyKind& kind : h2o::policy_kinds()) {
    if (kind.evicts) names.push_back(kind.name);
  }
  return names;
}

// The evicting policies that hold the budget they are given (all but those whose heads keep what
// the rules chosen from their profiles keep, FastGen and DuoAttention: their own tests test them).
inline std::vector<std::string> budgeted_policy_names() {
  std::vector<std::string> names;
  for (const std::string& name : evicting_policy_names()) {
    if (h2o::policy_kind(name).sized_by_budget) names.push_back(name);
  }
  return names;
}

// Layer 0 of `policy` as the class it is (nullptr when it is another), for a test that reads the
// settings a factory row gave it.
template <class Layer>
std::unique_ptr<const Layer> layer_as(const h2o::CachePolicy& policy) {
  std::unique_ptr<h2o::LayerPolicy> layer = policy.for_layer({});
  if (dynamic_cast<const Layer*>(layer.get()) == nullptr) return nullptr;
  return std::unique_ptr<const Layer>(static_cast<const Layer*>(layer.release()));
}

// One layer of `policy` on its own (layer 0 of 1, G KV heads, no limit on positions): what a
// test that drives a single cache by hand steps through.
inline std::unique_ptr<h2o::LayerPolicy> single_layer(const h2o::CachePolicy& policy,
                                                      std::size_t n_kv_heads = 1) {
  return policy.for_layer({0, 1, n_kv_heads, h2o::kNoPositionLimit});
}

// One step's attention rows, written by hand: H rows of `stride` numbers.
struct CraftedAttention {
  std::size_t n_heads, stride;
  std::vector<float> data;  // (H, stride)
  CraftedAttention(std::size_t heads, std::size_t row_stride)
      : n_heads(heads), stride(row_stride), data(heads * row_stride, 0.0f) {}
  void set_row(std::size_t h, const std::vector<float>& row) {
    std::copy(row.begin(), row.end(), data.begin() + static_cast<std::ptrdiff_t>(h * stride));
  }
  StepAttention view() const { return StepAttention{data.data(), n_heads, stride}; }
};

// Score of the slot holding `position` in KV head g.
inline float score_of(const LayerKVCache& cache, std::size_t g, Position position) {
  for (std::size_t s = 0; s < cache.uniform_size(); ++s) {
    if (cache.positions(g)[s] == position) return cache.scores(g)[s];
  }
  FAIL("position " << position << " is not in head " << g);
  return 0.0f;
}

// After the decoder's step `step` (0-based) under a policy that keeps `total` tokens per layer
// and KV head on average: every layer holds exactly n_kv_heads * min(step + 1, its budget)
// tokens, its budget its LayerPolicy's keep() (`total` for a uniform budget; the layers' budgets
// add up to L x `total` when they differ); every KV head min(step + 1, that budget) of them unless
// the layer lets a head hold more (head_capacity() above keep(): the heads share the layer's
// budget unevenly, each at most its head_capacity); all distinct positions from 0..step; the
// eviction count adds up, and the live bytes match. A policy whose heads keep what their rules
// keep (FastGen, DuoAttention: not sized by the budget) is held to the bounds only.
inline void require_bounded_caches(const h2o::Decoder& decoder, std::size_t step,
                                   std::size_t total) {
  const h2o::ModelConfig& c = decoder.config();
  const h2o::CachePolicy& policy = decoder.policy();
  // The tests' own policies (not in the factory's table) hold their budgets.
  const bool sized_by_budget =
      !h2o::is_policy_name(policy.name()) || h2o::policy_kind(policy.name()).sized_by_budget;
  const auto newest = static_cast<Position>(step);
  std::size_t held = 0, layer_budgets = 0;
  for (std::size_t l = 0; l < c.n_layers; ++l) {
    const h2o::LayerPolicy& layer = decoder.layer_policy(l);
    const std::size_t budget = layer.keep();
    layer_budgets += budget;
    const std::size_t expected_size = std::min(step + 1, budget);
    const LayerKVCache& cache = decoder.cache(l);
    // A policy whose heads keep what their rules keep (FastGen) has no budget to hold: only the
    // bounds below apply to it (test_fastgen_policy.cpp checks each head against its rule).
    if (sized_by_budget) {
      REQUIRE(cache.total_size() == c.n_kv_heads * expected_size);
    }
    if (sized_by_budget && layer.head_capacity() == layer.keep()) {
      REQUIRE(cache.uniform_size() == expected_size);
      REQUIRE(decoder.evicted_tokens(l) == step + 1 - expected_size);
    }
    held += cache.total_size();
    for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
      const std::vector<Position> kept = cache.sorted_positions(g);
      REQUIRE(kept.size() <= layer.head_capacity());
      REQUIRE(decoder.evicted_tokens(l, g) == step + 1 - kept.size());
      REQUIRE(std::adjacent_find(kept.begin(), kept.end()) == kept.end());  // distinct
      REQUIRE(kept.front() >= 0);
      REQUIRE(kept.back() <= newest);
    }
  }
  if (sized_by_budget && total <= decoder.max_positions()) {
    REQUIRE(layer_budgets == c.n_layers * total);
  }
  REQUIRE(decoder.live_kv_bytes() == 2 * held * c.head_dim() * sizeof(float));
}

// The replay tests' loop: the decoder reads `tokens` with its attention recorded, and after each
// step check(step, layer, g, record, cache) runs for every layer and KV head g, with the step's
// recorded attention (over the slots before eviction) and the layer's cache after the step.
template <class Check>
void replay_each_head(h2o::Decoder& decoder, const std::vector<int>& tokens, Check check) {
  decoder.set_record_attention(true);
  const h2o::ModelConfig& c = decoder.config();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    decoder.forward(tokens[i]);
    for (std::size_t l = 0; l < c.n_layers; ++l) {
      for (std::size_t g = 0; g < c.n_kv_heads; ++g) {
        check(i, l, g, decoder.attention(l), decoder.cache(l));
      }
    }
  }
}

// A policy's score update for KV head g, replayed from the decoder's recorded attention (the
// tests' oracle): every query head that scores g - its own group per-head, all H heads shared -
// adds its row to `scores`, one addition per slot, in head order: the same float operations as
// add_step_attention, so the result must equal the cache's scores exactly.
//   record.weights (H, T) over the slots of record.positions[g]; scores (T,), updated in place.
inline void add_recorded_attention(std::vector<float>& scores, const h2o::AttentionRecord& record,
                                   std::size_t g, h2o::ScoringMode mode) {
  const std::size_t n_heads = record.weights.shape()[0];
  const std::size_t group = n_heads / record.positions.size();  // query heads per KV head
  const std::size_t first = mode == h2o::ScoringMode::PerHead ? g * group : 0;
  const std::size_t count = mode == h2o::ScoringMode::PerHead ? group : n_heads;
  for (std::size_t h = first; h < first + count; ++h) {
    for (std::size_t s = 0; s < scores.size(); ++s) scores[s] += record.weights(h, s);
  }
}

// The blog's append-then-filter H2O, as a reference for H2OPolicy: the same scores, then
// plan_keep's full rule (not slot_to_evict's one-victim shortcut) chooses the kept slots of every
// KV head, and LayerKVCache::keep_per_head re-packs them in position order. It allocates every
// step, which is why it lives in the tests: it exists to show that the decoder's in-place policy
// makes exactly the same decisions.
class FilterRowsH2OPolicy final : public h2o::LayerPolicy {
 public:
  FilterRowsH2OPolicy(h2o::CacheBudget budget, h2o::ScoringMode mode,
                      const h2o::LayerShape& shape = {})
      : LayerPolicy(shape, budget.total()), budget_(budget), mode_(mode) {}
  std::string name() const override { return "h2o-filter-rows"; }
  std::string describe() const override { return "H2O (filter rows), " + budget_.describe(); }
  void observe(LayerKVCache& cache, const StepAttention& attention) override {
    h2o::add_step_attention(cache, attention, mode_);
  }
  void choose_victims(LayerKVCache&, std::size_t*) override {
    throw std::logic_error("FilterRowsH2OPolicy filters rows: it never chooses single victims");
  }
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override {
    h2o::add_step_attention(cache, attention, mode_);
    const std::size_t n = cache.uniform_size();
    if (n <= budget_.total()) return;
    std::vector<std::vector<std::size_t>> kept(cache.n_kv_heads());
    for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
      const std::vector<Position> positions(cache.positions(g), cache.positions(g) + n);
      const std::vector<float> scores(cache.scores(g), cache.scores(g) + n);
      kept[g] = h2o::plan_keep(positions, scores, budget_).kept;
    }
    cache.keep_per_head(kept);
  }

 private:
  h2o::CacheBudget budget_;
  h2o::ScoringMode mode_;
};

// H2O evicting in place (the library's H2OPolicy) or by filtering rows (the reference above).
enum class EvictionStyle { OverwriteSlot, FilterRows };

inline std::unique_ptr<h2o::CachePolicy> h2o_policy_in_style(h2o::CacheBudget budget,
                                                             h2o::ScoringMode mode,
                                                             EvictionStyle style) {
  if (style == EvictionStyle::FilterRows) {
    return h2o::policy_of<FilterRowsH2OPolicy>(budget, mode);
  }
  return h2o::policy_of<h2o::H2OPolicy>(budget, mode);
}

}  // namespace h2o_test
