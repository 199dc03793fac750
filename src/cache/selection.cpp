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

KeepPlan plan_keep(const std::vector<Position>& positions, const Vector& scores,
                   const CacheBudget& budget) {
  return plan_keep(positions, std::vector<float>(scores.begin(), scores.end()), budget);
}

namespace {

#define H2O_INLINE inline __attribute__((always_inline))

// Partial results per lane let the compiler vectorise the reductions below without reordering
// anything it must not (see vector_math.hpp).
// GCC/Clang vector types: 8 floats or int32 (one AVX2 register, two SSE ones on the baseline
// build) and 4 int64 (one AVX2 register). The victim search mixes float scores with int64
// positions, a mix GCC does not vectorise well on its own, so this loop says what each
// instruction does; the baseline build emulates the int64 comparisons (correct, slower).
typedef float Floats8 __attribute__((vector_size(32)));
typedef std::int32_t Ints8 __attribute__((vector_size(32)));
typedef std::int64_t Longs4 __attribute__((vector_size(32)));

template <class Vector, class T>
H2O_INLINE Vector load_vector(const T* p) {
  Vector v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// The result of one pass over a head's slots. The window guess: the recent window is the slots
// whose position is >= first_recent = positions[n - 1] - recent + 1. Positions are distinct, so if
// exactly `recent` slots are that new, they ARE the `recent` newest, whatever else the cache
// holds: the guess is right exactly when old == n - recent.
struct WindowPick {
  std::size_t old = 0;   // slots older than the guessed window
  float lowest = 0.0f;   // the lowest score among them (+inf when there are none)
  std::size_t slot = 0;  // a slot holding it
  bool unique = false;   // no other old slot holds `lowest` (else: the tie-break decides)
};

// scores (n,) += each of rows[0..n_rows) (n,) times factor, in that order, one multiply and one
// add each (the same bits as add_step_attention adding them one by one); and the WindowPick of
// the result. Each of 8 lanes keeps its own lowest key (an old slot's score; +inf for a recent
// one), the first slot holding it, and whether a later slot of the lane ties with it. kRows is
// n_rows when known at compile time (0: read n_rows), so the common group sizes unroll.
template <std::size_t kRows>
H2O_INLINE WindowPick add_and_pick(const Position* positions, float* scores,
                                   const float* const* rows, std::size_t n_rows, float factor,
                                   std::size_t n, Position first_recent) {
  const std::size_t rows_count = kRows != 0 ? kRows : n_rows;
  const float inf = std::numeric_limits<float>::infinity();
  const Floats8 inf8 = {inf, inf, inf, inf, inf, inf, inf, inf};
  const Longs4 first4 = {first_recent, first_recent, first_recent, first_recent};
  const Ints8 eight = {8, 8, 8, 8, 8, 8, 8, 8};
  Floats8 lowest = inf8;
  Ints8 slot = {}, ties = {}, index = {0, 1, 2, 3, 4, 5, 6, 7};
  Longs4 old_count = {};
  const std::size_t whole = n / 8 * 8;
  for (std::size_t s = 0; s < whole; s += 8) {
    Floats8 score = load_vector<Floats8>(scores + s);
    for (std::size_t r = 0; r < rows_count; ++r) {
      score += load_vector<Floats8>(rows[r] + s) * factor;
    }
    if (rows_count > 0) std::memcpy(scores + s, &score, sizeof(score));
    const Longs4 old_low = first4 > load_vector<Longs4>(positions + s);  // -1 where old
    const Longs4 old_high = first4 > load_vector<Longs4>(positions + s + 4);
    old_count -= old_low;
    old_count -= old_high;
    const Ints8 old =
        __builtin_shufflevector((Ints8)old_low, (Ints8)old_high, 0, 2, 4, 6, 8, 10, 12, 14);
    const Floats8 key = old ? score : inf8;
    const Ints8 better = key < lowest;
    const Ints8 equal = key == lowest;
    ties = better ? Ints8{} : (ties | equal);
    slot = better ? index : slot;
    lowest = better ? key : lowest;
    index += eight;
  }
  // The last n mod 8 slots go into lanes 0.. by the same rule; then the lanes are merged. All
  // without branches on the scores (which would be mispredicted half the time).
  float lane_lowest[8];
  std::int32_t lane_slot[8], lane_ties[8];
  std::memcpy(lane_lowest, &lowest, sizeof(lane_lowest));
  std::memcpy(lane_slot, &slot, sizeof(lane_slot));
  std::memcpy(lane_ties, &ties, sizeof(lane_ties));
  WindowPick pick;
  pick.old = static_cast<std::size_t>(old_count[0] + old_count[1] + old_count[2] + old_count[3]);
  for (std::size_t s = whole, j = 0; s < n; ++s, ++j) {
    float score = scores[s];
    for (std::size_t r = 0; r < rows_count; ++r) score += rows[r][s] * factor;
    if (rows_count > 0) scores[s] = score;
    const bool old = positions[s] < first_recent;
    pick.old += old ? 1 : 0;
    const float key = old ? score : inf;
    const bool better = key < lane_lowest[j];
    lane_ties[j] = better ? 0 : (lane_ties[j] | (key == lane_lowest[j] ? -1 : 0));
    lane_slot[j] = better ? static_cast<std::int32_t>(s) : lane_slot[j];
    lane_lowest[j] = better ? key : lane_lowest[j];
  }
  float lowest_all = lane_lowest[0];
  for (int j = 1; j < 8; ++j)
    lowest_all = lane_lowest[j] < lowest_all ? lane_lowest[j] : lowest_all;
  int holders = 0, tied = 0;
  std::int32_t first_slot = 0;
  for (int j = 7; j >= 0; --j) {  // downwards, so the lowest-numbered holding lane wins
    const bool holds = lane_lowest[j] == lowest_all;
    holders += holds ? 1 : 0;
    tied |= holds ? lane_ties[j] : 0;
    first_slot = holds ? lane_slot[j] : first_slot;
  }
  pick.lowest = lowest_all;
  pick.slot = static_cast<std::size_t>(first_slot);
  pick.unique = holders == 1 && tied == 0 && lowest_all < inf;
  return pick;
}

// The fast path of slot_to_evict (no rows to add): the victim, or n when the window guess is
// wrong or the lowest score is tied or missing (the general path then decides).
H2O_VECTOR_CLONES
std::size_t victim_in_contiguous_window(const Position* positions, const float* scores,
                                        std::size_t n, std::size_t recent) {
  const Position first_recent = positions[n - 1] - static_cast<Position>(recent) + 1;
  const WindowPick pick =
      add_and_pick<0>(positions, const_cast<float*>(scores), nullptr, 0, 0.0f, n, first_recent);
  return pick.old == n - recent && pick.unique ? pick.slot : n;
}

H2O_VECTOR_CLONES
WindowPick add_rows_and_pick(const Position* positions, float* scores, const float* const* rows,
                             std::size_t n_rows, float factor, std::size_t n,
                             Position first_recent) {
  switch (n_rows) {  // the group sizes of common models, unrolled
    case 1:
      return add_and_pick<1>(positions, scores, rows, 1, factor, n, first_recent);
    case 2:
      return add_and_pick<2>(positions, scores, rows, 2, factor, n, first_recent);
    case 4:
      return add_and_pick<4>(positions, scores, rows, 4, factor, n, first_recent);
    default:
      return add_and_pick<0>(positions, scores, rows, n_rows, factor, n, first_recent);
  }
}

}  // namespace

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  // The recent window is the `recent` largest positions; positions are distinct, so a slot is
  // recent exactly when fewer than `recent` slots are newer than it. In the decoder one token
  // arrives per step and is appended last, so the window is [newest - recent + 1, newest] with
  // newest = positions[n - 1]: one vectorised pass checks that guess (exactly `recent` slots in
  // that range) and finds the lowest score outside it and where it is. A tie for the lowest score
  // (the tie-break rule decides) or any other cache (gaps, shuffled slots) takes the general path
  // below, which applies the definition directly: O(n^2) at worst, never in the decoder's loop.
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

std::size_t add_rows_and_pick_victim(const Position* positions, float* scores,
                                     const float* const* rows, std::size_t n_rows, float factor,
                                     std::size_t n, std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  const Position first_recent = positions[n - 1] - static_cast<Position>(recent) + 1;
  const WindowPick pick =
      add_rows_and_pick(positions, scores, rows, n_rows, factor, n, first_recent);
  if (pick.old == n - recent && pick.unique) return pick.slot;
  return slot_to_evict(positions, scores, n, recent);  // scores already hold the rows
}

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          const EvictionRule& rule) {
  if (rule.start_area == 0 && !rule.normalise) {
    return slot_to_evict(positions, scores, n, rule.recent);
  }
  if (n <= rule.recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  // The recent window: the `recent` largest positions (positions are distinct). In the decoder
  // they are the last `recent` positions without a gap (a recent token is never evicted), which
  // one count confirms without allocating; otherwise a sorted copy finds the smallest of them.
  Position newest = positions[0];
  for (std::size_t i = 1; i < n; ++i) newest = std::max(newest, positions[i]);
  Position first_recent = newest + 1;  // smallest recent position (none when recent is 0)
  if (rule.recent > 0) {
    const Position candidate = newest + 1 - static_cast<Position>(rule.recent);
    const auto at_or_after = static_cast<std::size_t>(
        std::count_if(positions, positions + n, [&](Position p) { return p >= candidate; }));
    if (at_or_after == rule.recent) {
      first_recent = candidate;
    } else {
      std::vector<Position> sorted(positions, positions + n);
      std::sort(sorted.begin(), sorted.end());
      first_recent = sorted[n - rule.recent];
    }
  }
  const auto start = static_cast<Position>(rule.start_area);
  auto key = [&](std::size_t i) {  // what the slots are compared by
    return rule.normalise
               ? static_cast<double>(scores[i]) / static_cast<double>(newest - positions[i] + 1)
               : static_cast<double>(scores[i]);
  };
  std::size_t victim = n;  // none yet
  for (std::size_t i = 0; i < n; ++i) {
    if (positions[i] >= first_recent || positions[i] < start) continue;  // protected
    if (victim == n || key(i) < key(victim) ||
        (key(i) == key(victim) && positions[i] > positions[victim])) {
      victim = i;
    }
  }
  if (victim == n) {
    throw std::logic_error("slot_to_evict: every slot is in the recent window or the start area");
  }
  return victim;
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
