#include "h2o/policy/fastgen_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

namespace {

// The position of the token the decoder just appended (every head's last live slot).
Position newest_position(const LayerKVCache& cache) {
  return cache.positions(0)[cache.size(0) - 1];
}

}  // namespace

FastGenPolicy::FastGenPolicy(CacheBudget budget, std::size_t sinks, double target,
                             std::size_t profile_tokens, ScoringMode mode)
    : CachePolicy(),
      budget_(budget),
      sizes_{budget.recent, budget.heavy, sinks},
      target_(target),
      profile_tokens_(profile_tokens),
      mode_(mode),
      heavy_rule_{budget.recent} {
  if (budget.recent == 0) {
    throw std::invalid_argument("FastGen: the recent window must be at least 1 token");
  }
  if (!(target > 0.0 && target <= 1.0)) {
    throw std::invalid_argument("FastGen: the target share must be above 0 and at most 1, got " +
                                fixed(target, 3));
  }
  if (profile_tokens <= budget.recent + sinks) {
    throw std::invalid_argument("FastGen: a profile of " + std::to_string(profile_tokens) +
                                " tokens has no row past the window and sinks (needs more than " +
                                std::to_string(budget.recent + sinks) + ")");
  }
}

std::string FastGenPolicy::describe() const {
  return "FastGen: each KV head's cheapest rule recovering " + fixed(100.0 * target_, 0) +
         "% of its attention over the first " + std::to_string(profile_tokens_) +
         " tokens: window " + std::to_string(sizes_.recent) + ", sink+window " +
         std::to_string(sizes_.sinks) + " + " + std::to_string(sizes_.recent) + ", heavy+window " +
         std::to_string(sizes_.heavy) + " + " + std::to_string(sizes_.recent) + ", or full; " + to_string(mode_) + " scores";
}

std::size_t FastGenPolicy::rule_tokens(HeadRule rule) const {
  return ::h2o::rule_tokens(rule, sizes_, std::numeric_limits<std::size_t>::max());
}

FastGenPolicy::LayerState& FastGenPolicy::state_for(const LayerKVCache& cache,
                                                    const StepAttention* attention) {
  LayerState* state = nullptr;
  for (LayerState& s : layers_) {
    if (s.cache == &cache) state = &s;
  }
  if (state == nullptr) {
    if (attention == nullptr) {
      throw std::logic_error("FastGen: compress() on a cache whose prompt it never saw");
    }
    layers_.emplace_back();
    state = &layers_.back();
    state->cache = &cache;
    state->ranked.reserve(cache.capacity());
  }
  if (attention != nullptr) state->layer = attention->layer;
  const std::size_t G = cache.n_kv_heads();
  if (state->sums.size() != G || (cache.size(0) > 0 && newest_position(cache) == 0)) {
    state->sums.assign(G, HeadProfileSums{});
    state->profiles.clear();
    state->rules.clear();
  }
  return *state;
}

void FastGenPolicy::profile_row(LayerState& state, const LayerKVCache& cache,
                                const StepAttention& attention) {
  const std::size_t G = cache.n_kv_heads(), H = attention.n_heads;
  if (G == 0 || H % G != 0) {
    throw std::invalid_argument("FastGen: the query heads are not a multiple of the KV heads");
  }
  const std::size_t group = H / G;
  const auto t = static_cast<std::size_t>(newest_position(cache));
  if (!HeadProfileSums::counts(t, sizes_)) return;
  const auto first_recent = static_cast<Position>(t + 1 - sizes_.recent);
  const auto sinks = static_cast<Position>(sizes_.sinks);
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);  // t + 1: nothing is evicted while the prompt is read
    const Position* positions = cache.positions(g);  // (n,)
    const float* scores = cache.scores(g);           // (n,) sums of the rows before t
    // Slot j's weight in the head's row: its query group's mean, as profile_heads takes it.
    const auto weight = [&](std::size_t j) {
      double w = 0;
      for (std::size_t h = g * group; h < (g + 1) * group; ++h) w += attention.head(h)[j];
      return w / static_cast<double>(group);
    };
    double sink = 0, local = 0, heavy = 0;
    state.ranked.clear();
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] < sinks) sink += weight(j);
      if (positions[j] >= first_recent) {
        local += weight(j);
      } else {
        state.ranked.push_back(j);
      }
    }
    // The heavy hitters: the k best scores outside the window (ties: the earlier position).
    const std::size_t kept = std::min(sizes_.heavy, state.ranked.size());
    std::nth_element(state.ranked.begin(), state.ranked.begin() + static_cast<std::ptrdiff_t>(kept),
                     state.ranked.end(), [&](std::size_t a, std::size_t b) {
                       return scores[a] > scores[b] ||
                              (scores[a] == scores[b] && positions[a] < positions[b]);
                     });
    for (std::size_t i = 0; i < kept; ++i) heavy += weight(state.ranked[i]);
    state.sums[g].add(t, sizes_, sink, local, heavy);
  }
}

void FastGenPolicy::set_rules(LayerState& state, std::size_t n_kv_heads) {
  state.profiles.clear();
  state.rules.clear();
  for (std::size_t g = 0; g < n_kv_heads; ++g) {
    state.profiles.push_back(state.sums[g].profile(g, sizes_));  // rules, no kind
    state.rules.push_back(cheapest_rule(state.profiles.back(), target_));
  }
}

std::size_t FastGenPolicy::victim(HeadRule rule, const LayerKVCache& cache, std::size_t g) const {
  const std::size_t n = cache.size(g);
  const Position* positions = cache.positions(g);  // (n,)
  if (rule == HeadRule::Window || rule == HeadRule::SinkWindow) {
    // The oldest token (sink+window: the oldest that is not a sink).
    const Position first = rule == HeadRule::SinkWindow ? static_cast<Position>(sizes_.sinks) : 0;
    std::size_t oldest = n;
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] >= first && (oldest == n || positions[j] < positions[oldest])) oldest = j;
    }
    if (oldest == n) throw std::logic_error("FastGen: no token outside the sinks to evict");
    return oldest;
  }
  return slot_to_evict(positions, cache.scores(g), n, heavy_rule_);
}

void FastGenPolicy::cut_to_rules(const LayerState& state, LayerKVCache& cache) const {
  const std::size_t G = cache.n_kv_heads();
  std::vector<std::vector<std::size_t>> kept(G);  // (G,) x (slots kept,)
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);
    const HeadRule rule = state.rules[g];
    if (n <= rule_tokens(rule)) {
      for (std::size_t j = 0; j < n; ++j) kept[g].push_back(j);
      continue;
    }
    const Position* positions = cache.positions(g);  // (n,)
    if (rule == HeadRule::HeavyWindow) {
      const std::vector<Position> p(positions, positions + n);
      const std::vector<float> s(cache.scores(g), cache.scores(g) + n);
      kept[g] = plan_cut(p, s, heavy_rule_, rule_tokens(rule)).kept;
      continue;
    }
    const Position first_recent = first_recent_position(positions, n, sizes_.recent);
    const auto sinks = static_cast<Position>(rule == HeadRule::SinkWindow ? sizes_.sinks : 0);
    for (std::size_t j = 0; j < n; ++j) {
      if (positions[j] < sinks || positions[j] >= first_recent) kept[g].push_back(j);
    }
  }
  cache.keep_per_head(kept);
}

void FastGenPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  LayerState& state = state_for(cache, &attention);
  if (state.rules.empty()) profile_row(state, cache, attention);
  add_step_attention(cache, attention, mode_);
}

void FastGenPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  LayerState& state = state_for(cache, &attention);
  if (state.rules.empty()) {
    profile_row(state, cache, attention);
    add_step_attention(cache, attention, mode_);
    if (static_cast<std::size_t>(newest_position(cache)) + 1 >= profile_tokens_) {
      set_rules(state, cache.n_kv_heads());
      cut_to_rules(state, cache);
    }
    return;
  }
  add_step_attention(cache, attention, mode_);
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    if (cache.size(g) > rule_tokens(state.rules[g])) {
      cache.remove_slot(g, victim(state.rules[g], cache, g));
    }
  }
}

void FastGenPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  const LayerState* state = nullptr;
  for (const LayerState& s : layers_) {
    if (s.cache == &cache) state = &s;
  }
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const bool ruled = state != nullptr && !state->rules.empty();
    victims[g] = victim(ruled ? state->rules[g] : HeadRule::HeavyWindow, cache, g);
  }
}

void FastGenPolicy::compress(LayerKVCache& cache, std::size_t) {
  LayerState& state = state_for(cache, nullptr);
  if (state.rules.empty()) set_rules(state, cache.n_kv_heads());
  cut_to_rules(state, cache);
}

const std::vector<HeadRule>& FastGenPolicy::rules(std::size_t layer) const {
  for (const LayerState& s : layers_) {
    if (s.layer == layer) return s.rules;
  }
  static const std::vector<HeadRule> none;
  return none;
}

const std::vector<HeadProfile>& FastGenPolicy::profiles(std::size_t layer) const {
  for (const LayerState& s : layers_) {
    if (s.layer == layer) return s.profiles;
  }
  static const std::vector<HeadProfile> none;
  return none;
}

}  // namespace h2o
