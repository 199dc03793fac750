#include "h2o/policy/adakv_policy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace h2o {

namespace {

// The tokens a head keeps outside its scorer's window: m.
std::size_t scored_part(CacheBudget budget, const ScoredPolicy& scorer) {
  const std::size_t window = scorer.rule().recent;
  return budget.total() > window ? budget.total() - window : 0;
}

// As kvpress: int(n_kept * alpha), rounded down.
std::size_t adakv_floor(CacheBudget budget, const ScoredPolicy& scorer, double safeguard) {
  if (!(safeguard >= 0.0 && safeguard <= 1.0)) {
    throw std::invalid_argument("Ada-KV: the safeguard share must be between 0 and 1");
  }
  return static_cast<std::size_t>(static_cast<double>(scored_part(budget, scorer)) * safeguard);
}

// r + G m - (G - 1) f: what one head holds when every other is at its floor f.
std::size_t adakv_head_capacity(CacheBudget budget, const ScoredPolicy& scorer, std::size_t floor,
                                std::size_t n_kv_heads) {
  if (scorer.shared()) return budget.total();
  const std::size_t others = n_kv_heads == 0 ? 0 : n_kv_heads - 1;
  const std::size_t most =
      scorer.rule().recent + n_kv_heads * scored_part(budget, scorer) - others * floor;
  return std::max(most, budget.total());
}

}  // namespace

AdaKVPolicy::Parts AdaKVPolicy::parts(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer,
                                      double safeguard, std::size_t n_kv_heads) {
  if (!scorer) throw std::invalid_argument("Ada-KV: no scored policy to share a budget out for");
  const std::size_t floor = adakv_floor(budget, *scorer, safeguard);
  const std::size_t capacity = adakv_head_capacity(budget, *scorer, floor, n_kv_heads);
  return {std::move(scorer), floor, capacity};
}

AdaKVPolicy::AdaKVPolicy(CacheBudget budget, Parts parts, const LayerShape& shape)
    : BudgetSpreadPolicy(shape, budget.total(), parts.head_capacity, std::move(parts.scorer)),
      budget_(budget),
      floor_(parts.floor) {}

AdaKVPolicy::AdaKVPolicy(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer, double safeguard,
                         const LayerShape& shape)
    : AdaKVPolicy(budget, parts(budget, std::move(scorer), safeguard, shape.n_kv_heads), shape) {}

AdaKVPolicy::AdaKVPolicy(CacheBudget budget, ScoringMode mode, H2OScore score, float decay,
                         double safeguard, const LayerShape& shape)
    : AdaKVPolicy(budget, std::make_unique<H2OPolicy>(budget, mode, score, 0, decay), safeguard,
                  shape) {}

std::string AdaKVPolicy::describe() const {
  std::string text = "Ada-KV, " + budget_.describe() +
                     " per KV head on average, a layer's heavy hitters shared by its KV heads (at "
                     "least " +
                     std::to_string(floor_) + " each), " + scorer().scores();
  if (scorer().shared()) text += " (every head alike: one budget for all)";
  return text;
}

bool AdaKVPolicy::evict_lowest(LayerKVCache& cache) {
  const EvictionRule& rule = scorer().rule();
  bool found = false;
  std::size_t victim_head = 0, victim_slot = 0;
  double victim_key = 0.0;
  Position victim_position = 0;
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const std::size_t n = cache.size(g);
    if (n <= rule.recent + floor_) continue;         // at its window and floor: nothing to give
    const Position* positions = cache.positions(g);  // (n,)
    const float* scores = cache.scores(g);           // (n,)
    const std::size_t slot = slot_to_evict(positions, scores, n, rule);
    const Position newest = *std::max_element(positions, positions + n);
    const double key = eviction_key(scores[slot], positions[slot], newest, rule);
    // The lowest key goes; on a tie the newer token, then the later head's.
    if (!found || key < victim_key || (key == victim_key && positions[slot] >= victim_position)) {
      found = true;
      victim_head = g;
      victim_slot = slot;
      victim_key = key;
      victim_position = positions[slot];
    }
  }
  if (found) cache.remove_slot(victim_head, victim_slot);
  return found;
}

void AdaKVPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  if (scorer().shared()) {  // every head alike: one decision for all
    LayerPolicy::after_attention(cache, attention);
    return;
  }
  const std::size_t G = cache.n_kv_heads();
  const std::size_t layer_budget = G * keep();
  // The decoder adds one token per head and step; more is a caller's bug (nothing moves).
  if (cache.total_size() > layer_budget + G) {
    throw std::logic_error("adakv policy: the cache is more than one token a head over budget");
  }
  observe(cache, attention);
  while (cache.total_size() > layer_budget) {
    if (!evict_lowest(cache)) {
      throw std::logic_error("Ada-KV: the layer is over budget with every head at its floor");
    }
  }
}

void AdaKVPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  if (scorer().shared()) {
    BudgetSpreadPolicy::compress(cache, keep);
    return;
  }
  const std::size_t G = cache.n_kv_heads();
  if (cache.total_size() <= G * keep) return;
  const EvictionRule& rule = scorer().rule();
  struct Candidate {
    double key;
    Position position;
    std::size_t head, slot;
  };
  // Better first: the higher key; on a tie the older token, then the earlier head's (the rule's
  // tie-break, as evict_lowest applies it one token at a time).
  const auto better = [](const Candidate& a, const Candidate& b) {
    if (a.key != b.key) return a.key > b.key;
    if (a.position != b.position) return a.position < b.position;
    return a.head < b.head;
  };
  std::vector<std::vector<std::size_t>> kept(G);  // (G,) x (kept slots,)
  std::vector<Candidate> shared;                  // what is left once every head has its floor
  std::size_t n_kept = 0;
  for (std::size_t g = 0; g < G; ++g) {
    const std::size_t n = cache.size(g);
    if (n == 0) continue;
    const Position* positions = cache.positions(g);  // (n,)
    const float* scores = cache.scores(g);           // (n,)
    const Position first_recent = first_recent_position(positions, n, rule.recent);
    const Position newest = *std::max_element(positions, positions + n);
    std::vector<Candidate> own;
    for (std::size_t s = 0; s < n; ++s) {
      if (positions[s] >= first_recent) {
        kept[g].push_back(s);
      } else {
        own.push_back({eviction_key(scores[s], positions[s], newest, rule), positions[s], g, s});
      }
    }
    std::sort(own.begin(), own.end(), better);
    const std::size_t floor = std::min(floor_, own.size());
    for (std::size_t i = 0; i < floor; ++i) kept[g].push_back(own[i].slot);
    shared.insert(shared.end(), own.begin() + static_cast<std::ptrdiff_t>(floor), own.end());
    n_kept += kept[g].size();
  }
  std::sort(shared.begin(), shared.end(), better);
  const std::size_t room = G * keep > n_kept ? G * keep - n_kept : 0;
  for (std::size_t i = 0; i < std::min(room, shared.size()); ++i) {
    kept[shared[i].head].push_back(shared[i].slot);
  }
  for (std::size_t g = 0; g < G; ++g) {
    const Position* positions = cache.positions(g);
    std::sort(kept[g].begin(), kept[g].end(),
              [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
  }
  cache.keep_per_head(kept);
}

}  // namespace h2o
