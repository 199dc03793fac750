// selection.hpp: H2O's eviction rule, written once in plain loops - which tokens are recent, which
// token goes, and which tokens a cut keeps. Lessons, tests, every policy that ranks tokens by a
// score (H2O, TOVA, key norm, SnapKV) and the slow path of the decoder's fast scan
// (eviction_scan.hpp) all call these functions; nothing else writes the rule.
//
// The rule (EvictionRule), for a cache of tokens with distinct original positions and a score each:
//   recent window  the `recent` tokens with the largest positions are never evicted;
//   start area     tokens at positions below `start_area` are never evicted either (OpenVINO
//                  GenAI's "start area", like StreamingLLM's attention sinks);
//   key            every other token competes by its key: the score itself (SUM), or with
//                  `normalise` the score per step in the cache, score / (newest - position + 1)
//                  where newest is the largest position in the cache (OpenVINO's NORM_SUM);
//   who goes       the lowest key; on a tie the NEWER token (larger position) goes and the older
//                  stays. Deterministic, and it matches the paper's observation that early tokens
//                  tend to matter.
// Special rules: recent = 0 protects nothing (TOVA's rule: the newest token must earn its place at
// once, or it goes); a rule whose only candidate is the oldest token is a sliding window.
//
// Dimension legend: T = tokens in the cache. "Slot" = a token's index in the cache's arrays, in
// any order (the decoder's caches are not in position order).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/budget.hpp"

namespace h2o {

struct EvictionRule {
  std::size_t recent = 0;      // the newest tokens, never evicted
  std::size_t start_area = 0;  // positions 0 .. start_area - 1, never evicted
  bool normalise = false;      // compare score / steps in the cache instead of the score
};

// Which slots are recent: a slot is in the recent window exactly when its position is >= the
// returned position (the `recent`-th largest; newest + 1 when recent is 0, so none is).
//   positions (T,), distinct, T >= 1. Allocates nothing.
Position first_recent_position(const Position* positions, std::size_t n, std::size_t recent);

// What a slot is compared by: its score, or its score per step in the cache (rule.normalise).
double eviction_key(float score, Position position, Position newest, const EvictionRule& rule);

// Which slot goes: the slot the rule evicts next from a cache of n slots.
//   positions (n,) scores (n,). Throws std::logic_error when every slot is protected. Allocates
//   nothing (the decoder may call it every step).
std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          const EvictionRule& rule);
// The same with only a recent window (the decoder's fast scan, eviction_scan.hpp, falls back on
// it for ties and gapped windows).
std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent);

// The decision for one cache. Every list holds slot indices, sorted by original position.
struct KeepPlan {
  std::vector<std::size_t> recent;   // protected by recency
  std::vector<std::size_t> heavy;    // kept for their score (and a start area's tokens)
  std::vector<std::size_t> kept;     // recent and heavy together, in position order
  std::vector<std::size_t> evicted;  // everything else, in position order
};

// Which slots stay when a cache is cut down to `keep` tokens in one go: the rule's protected
// tokens, plus the `keep - protected` best others by key, with every key computed once on the
// cache as it stands (the newest position is the cache's newest, never one left after a partial
// cut). This is what evicting one slot_to_evict after another gives whenever no key changes on the
// way, i.e. always, except when the normalised keys' newest token itself is evicted (recent = 0).
//   positions (T,) scores (T,). Throws std::invalid_argument on mismatched lengths and
//   std::logic_error when the protected tokens alone exceed `keep`.
KeepPlan plan_cut(const std::vector<Position>& positions, const std::vector<float>& scores,
                  const EvictionRule& rule, std::size_t keep);

// Lesson 01's question: keep the recent window plus the `heavy` highest scores among the older
// tokens: plan_cut with rule {budget.recent} and keep = budget.total() (nothing goes while the
// cache holds no more).
KeepPlan plan_keep(const std::vector<Position>& positions, const std::vector<float>& scores,
                   const CacheBudget& budget);

// The same for scores held in a tensor (T,), as lesson 07's h2o_scores.
KeepPlan plan_keep(const std::vector<Position>& positions, const Vector& scores,
                   const CacheBudget& budget);

// "Old importance + new attention = new importance": scores (T,) += attention (T,).
void accumulate_attention(std::vector<float>& scores, const std::vector<float>& attention);

}  // namespace h2o
