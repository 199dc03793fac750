// selection.hpp: which tokens H2O keeps — the recent window plus the heavy hitters.
//
// Given each cached token's original position and accumulated attention score:
//   recent = the `recent` tokens with the largest positions (always kept, whatever their score);
//   heavy  = among the other, older tokens, the `heavy` with the largest scores;
//   every other token is evicted. Nothing is evicted while the cache holds <= heavy + recent
//   tokens.
//
// Tie-break rule: when two older tokens have equal scores, the OLDER one (smaller position) stays.
// It is deterministic, and it matches the paper's observation that early tokens tend to matter.
//
// Special budgets: heavy = 0 is a pure sliding window of the last `recent` tokens; recent = 0 keeps
// only heavy hitters (the newest token must then earn its place at once, or it is evicted).
// A budget of heavy + recent = 0 cannot be made (budget.hpp).
//
// Dimension legend: T = tokens in the cache. "Slot" = a token's index in the cache's arrays.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/cache/budget.hpp"

namespace h2o {

// The decision for one cache. Every list holds slot indices, sorted by original position.
struct KeepPlan {
  std::vector<std::size_t> recent;   // protected by recency
  std::vector<std::size_t> heavy;    // kept for their score
  std::vector<std::size_t> kept;     // recent and heavy together, in position order
  std::vector<std::size_t> evicted;  // everything else, in position order
};

// positions (T,), scores (T,): positions must be distinct. Throws on mismatched lengths.
KeepPlan plan_keep(const std::vector<Position>& positions, const std::vector<float>& scores,
                   const CacheBudget& budget);

// The same for scores held in a tensor (T,), as lesson 07's h2o_scores.
KeepPlan plan_keep(const std::vector<Position>& positions, const Vector& scores,
                   const CacheBudget& budget);

// The one slot to evict when a cache of n slots holds exactly one token too many, without
// allocating (the decoder's hot path). Same rule as plan_keep: among the slots that are not in the
// recent window, the lowest score goes; on a tie, the newer of them goes.
//   positions (n,)  scores (n,)   Requires n > recent.
std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent);

// scores (n,) += rows[r] (n,) * factor for r = 0 .. n_rows - 1, in that order (one multiply and
// one add each, exactly as add_step_attention adds query heads' rows), then
// slot_to_evict(positions, scores, n, recent): the same scores and the same slot as the two steps
// one after the other, but in one vectorised pass over the slots when the recent window is the
// newest positions with the newest in slot n - 1 (always so in the decoder). H2O's eviction step.
std::size_t add_rows_and_pick_victim(const Position* positions, float* scores,
                                     const float* const* rows, std::size_t n_rows, float factor,
                                     std::size_t n, std::size_t recent);

// H2O's eviction with the options production implementations add (OpenVINO GenAI's cache
// eviction has both): besides the recent window,
//   start_area  the first start_area positions are never evicted either (a protected "start
//               area", like StreamingLLM's attention sinks);
//   normalise   slots are compared by score / (newest - position + 1), the attention a token
//               received per step it has been in the cache (NORM_SUM), not by the plain sum (SUM),
//               so old tokens lose the head start of having been summed over more steps.
// With start_area 0 and no normalising this is exactly slot_to_evict above. Ties: the newer goes.
struct EvictionRule {
  std::size_t recent = 0;
  std::size_t start_area = 0;
  bool normalise = false;
};
// positions (n,) scores (n,). Requires a slot outside the recent window and the start area.
std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          const EvictionRule& rule);

// "Old importance + new attention = new importance": scores (T,) += attention (T,).
void accumulate_attention(std::vector<float>& scores, const std::vector<float>& attention);

}  // namespace h2o
