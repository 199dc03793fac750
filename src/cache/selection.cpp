#include "h2o/cache/selection.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "h2o/base/vector_math.hpp"

namespace h2o {

KeepPlan plan_keep(const std::vector<Position>& positions, const std::vector<float>& scores,
                   const CacheBudget& budget) {
  if (positions.size() != scores.size()) {
    throw std::invalid_argument("plan_keep: " + std::to_string(positions.size()) +
                                " positions but " + std::to_string(scores.size()) + " scores");
  }
  const std::size_t n = positions.size();
  auto by_position = [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; };

  // Slots from oldest to newest.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), by_position);

  KeepPlan plan;
  const std::size_t n_recent = std::min(budget.recent, n);
  plan.recent.assign(order.end() - static_cast<std::ptrdiff_t>(n_recent), order.end());

  // Older slots, best first: higher score, then older position (the tie-break rule).
  std::vector<std::size_t> older(order.begin(),
                                 order.end() - static_cast<std::ptrdiff_t>(n_recent));
  std::stable_sort(older.begin(), older.end(), [&](std::size_t a, std::size_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return positions[a] < positions[b];
  });
  const std::size_t n_heavy = std::min(budget.heavy, older.size());
  plan.heavy.assign(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(n_heavy));
  plan.evicted.assign(older.begin() + static_cast<std::ptrdiff_t>(n_heavy), older.end());

  std::sort(plan.heavy.begin(), plan.heavy.end(), by_position);
  std::sort(plan.evicted.begin(), plan.evicted.end(), by_position);
  plan.kept = plan.heavy;
  plan.kept.insert(plan.kept.end(), plan.recent.begin(), plan.recent.end());
  std::sort(plan.kept.begin(), plan.kept.end(), by_position);
  return plan;
}

namespace {

#define H2O_INLINE inline __attribute__((always_inline))

// Partial results per lane let the compiler vectorise the reductions below without reordering
// anything it must not (see vector_math.hpp).
// GCC/Clang vector types: 4 floats (one SSE register), 4 int32 and 4 int64 (one AVX2 register).
// The victim search mixes float scores and int64 positions, a mix GCC does not vectorise well on
// its own, so these loops say what each instruction does; on the baseline build GCC emulates the
// int64 comparisons (correct, just slower), the AVX2 clone runs them as vpcmpgtq.
typedef float Floats4 __attribute__((vector_size(16)));
typedef std::int32_t Ints4 __attribute__((vector_size(16)));
typedef std::int64_t Longs4 __attribute__((vector_size(32)));

H2O_INLINE Floats4 load4(const float* p) {
  Floats4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
H2O_INLINE Longs4 load4(const Position* p) {
  Longs4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// What the two passes below learn, guessing that the recent window is [newest - recent + 1,
// newest] with newest = positions[n - 1] (the decoder appends the newest token last).
struct WindowPick {
  std::size_t newer = 0;     // slots whose position is above the guessed newest (0 if right)
  std::size_t in_range = 0;  // slots inside the guessed window
  Position position = -1;    // the victim's position (-1: none found)
  std::size_t slot = 0;      // the victim's slot
};

// Pass 1: (with kAdd) scores += weights * factor, one multiply and one add per slot, the same
// bits as add_step_attention; the counts that check the guess; the lowest score outside the
// window. Pass 2: the newest slot outside the window holding that score (the tie-break).
template <bool kAdd>
H2O_INLINE WindowPick pick_in_window(const Position* positions, float* scores,
                                     const float* weights, float factor, std::size_t n,
                                     std::size_t recent) {
  const Position newest = positions[n - 1];
  const Position first_recent = newest - static_cast<Position>(recent) + 1;
  const float inf = std::numeric_limits<float>::infinity();
  const Longs4 newest4 = {newest, newest, newest, newest};
  const Longs4 first4 = {first_recent, first_recent, first_recent, first_recent};
  const Floats4 inf4 = {inf, inf, inf, inf};
  const std::size_t whole = n / 4 * 4;

  Longs4 newer4 = {}, in_range4 = {};  // comparisons give -1 for true: subtracting counts
  Floats4 lowest4 = inf4;
  for (std::size_t s = 0; s < whole; s += 4) {
    Floats4 score = load4(scores + s);
    if (kAdd) {
      score += load4(weights + s) * factor;
      std::memcpy(scores + s, &score, sizeof(score));
    }
    const Longs4 p = load4(positions + s);
    newer4 -= p > newest4;
    const Longs4 is_recent = p >= first4;
    in_range4 -= is_recent;
    const Floats4 key = __builtin_convertvector(is_recent, Ints4) ? inf4 : score;
    lowest4 = key < lowest4 ? key : lowest4;
  }
  WindowPick pick;
  float lowest = inf;
  for (int j = 0; j < 4; ++j) {
    pick.newer += static_cast<std::size_t>(newer4[j]);
    pick.in_range += static_cast<std::size_t>(in_range4[j]);
    lowest = lowest4[j] < lowest ? lowest4[j] : lowest;
  }
  for (std::size_t s = whole; s < n; ++s) {
    float score = scores[s];
    if (kAdd) {
      score += weights[s] * factor;
      scores[s] = score;
    }
    const Position p = positions[s];
    pick.newer += p > newest ? 1 : 0;
    const bool is_recent = p >= first_recent;
    pick.in_range += is_recent ? 1 : 0;
    const float key = is_recent ? inf : score;
    lowest = key < lowest ? key : lowest;
  }
  if (pick.newer != 0 || pick.in_range != recent) return pick;  // the guess was wrong

  const Floats4 lowest_all = {lowest, lowest, lowest, lowest};
  const Longs4 none = {-1, -1, -1, -1}, step = {4, 4, 4, 4};
  Longs4 best = none, best_slot = none, slot = {0, 1, 2, 3};
  for (std::size_t s = 0; s < whole; s += 4) {
    const Longs4 p = load4(positions + s);
    const Longs4 holds_lowest = __builtin_convertvector(load4(scores + s) == lowest_all, Longs4);
    const Longs4 candidate = ((p < first4) & holds_lowest) ? p : none;
    const Longs4 better = candidate > best;
    best = better ? candidate : best;
    best_slot = better ? slot : best_slot;
    slot += step;
  }
  for (int j = 0; j < 4; ++j) {
    if (best[j] > pick.position) {
      pick.position = best[j];
      pick.slot = static_cast<std::size_t>(best_slot[j]);
    }
  }
  for (std::size_t s = whole; s < n; ++s) {
    const Position p = positions[s];
    if (p < first_recent && scores[s] == lowest && p > pick.position) {
      pick.position = p;
      pick.slot = s;
    }
  }
  return pick;
}

// The fast path of slot_to_evict: the victim, or n when the guessed window is wrong or no slot
// qualifies (then the general path decides).
H2O_VECTOR_CLONES
std::size_t victim_in_contiguous_window(const Position* positions, const float* scores,
                                        std::size_t n, std::size_t recent) {
  const WindowPick pick = pick_in_window<false>(positions, const_cast<float*>(scores), nullptr,
                                                0.0f, n, recent);
  return pick.newer == 0 && pick.in_range == recent && pick.position >= 0 ? pick.slot : n;
}

H2O_VECTOR_CLONES
WindowPick add_and_pick_in_window(const Position* positions, float* scores, const float* weights,
                                  float factor, std::size_t n, std::size_t recent) {
  return pick_in_window<true>(positions, scores, weights, factor, n, recent);
}

}  // namespace

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  // The recent window is the `recent` largest positions; positions are distinct, so a slot is
  // recent exactly when fewer than `recent` slots are newer than it. In the decoder one token
  // arrives per step and is appended last, so the window is [newest - recent + 1, newest] with
  // newest = positions[n - 1]: one vectorised pass checks that guess (no slot newer, exactly
  // `recent` slots in the range) and finds the lowest score outside it, a second the newest slot
  // holding that score (the tie-break). Any other cache (gaps, shuffled slots) takes the general
  // path below, which applies the definition directly: O(n^2), but never in the decoder's loop.
  const std::size_t fast = victim_in_contiguous_window(positions, scores, n, recent);
  if (fast < n) return fast;

  Position newest = positions[0];
  for (std::size_t i = 1; i < n; ++i) newest = std::max(newest, positions[i]);
  const Position first_recent = newest - static_cast<Position>(recent) + 1;
  std::size_t in_range = 0;
  for (std::size_t i = 0; i < n; ++i) in_range += positions[i] >= first_recent ? 1 : 0;
  const bool contiguous = in_range == recent;
  auto is_recent = [&](std::size_t i) {
    if (recent == 0) return false;
    if (contiguous) return positions[i] >= first_recent;
    std::size_t newer = 0;
    for (std::size_t j = 0; j < n; ++j) newer += positions[j] > positions[i] ? 1 : 0;
    return newer < recent;
  };

  std::size_t victim = n;  // none yet
  for (std::size_t i = 0; i < n; ++i) {
    if (is_recent(i)) continue;
    if (victim == n || scores[i] < scores[victim] ||
        (scores[i] == scores[victim] && positions[i] > positions[victim])) {
      victim = i;
    }
  }
  if (victim == n) {
    throw std::logic_error(
        "slot_to_evict: no slot outside the recent window (positions must be distinct)");
  }
  return victim;
}

std::size_t add_row_and_pick_victim(const Position* positions, float* scores, const float* weights,
                                    float factor, std::size_t n, std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  const WindowPick pick = add_and_pick_in_window(positions, scores, weights, factor, n, recent);
  if (pick.newer == 0 && pick.in_range == recent && pick.position >= 0) return pick.slot;
  return slot_to_evict(positions, scores, n, recent);  // scores already hold the row
}

void accumulate_attention(std::vector<float>& scores, const std::vector<float>& attention) {
  if (scores.size() != attention.size()) {
    throw std::invalid_argument("accumulate_attention: " + std::to_string(scores.size()) +
                                " scores but " + std::to_string(attention.size()) +
                                " attention weights");
  }
  for (std::size_t i = 0; i < scores.size(); ++i) scores[i] += attention[i];
}

}  // namespace h2o
