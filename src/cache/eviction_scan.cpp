#include "h2o/cache/eviction_scan.hpp"

#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "h2o/base/vector_math.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

namespace {

#define H2O_INLINE inline __attribute__((always_inline))

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

// scores (n,) += each of rows[0..n_rows) (n,), in that order, one addition each (the same bits as
// adding them one by one); and the WindowPick of the result. Each of 8 lanes keeps its own lowest
// key (an old slot's score; +inf for a recent one), the first slot holding it, and whether a later
// slot of the lane ties with it. kRows is n_rows when known at compile time (0: read n_rows), so
// the common group sizes unroll.
template <std::size_t kRows>
H2O_INLINE WindowPick add_and_pick(const Position* positions, float* scores,
                                   const float* const* rows, std::size_t n_rows, std::size_t n,
                                   Position first_recent) {
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
    for (std::size_t r = 0; r < rows_count; ++r) score += load_vector<Floats8>(rows[r] + s);
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
    for (std::size_t r = 0; r < rows_count; ++r) score += rows[r][s];
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

H2O_VECTOR_CLONES
WindowPick add_rows_and_pick(const Position* positions, float* scores, const float* const* rows,
                             std::size_t n_rows, std::size_t n, Position first_recent) {
  switch (n_rows) {  // the group sizes of common models, unrolled
    case 1:
      return add_and_pick<1>(positions, scores, rows, 1, n, first_recent);
    case 2:
      return add_and_pick<2>(positions, scores, rows, 2, n, first_recent);
    case 4:
      return add_and_pick<4>(positions, scores, rows, 4, n, first_recent);
    default:
      return add_and_pick<0>(positions, scores, rows, n_rows, n, first_recent);
  }
}

}  // namespace

std::size_t add_rows_and_pick_victim(const Position* positions, float* scores,
                                     const float* const* rows, std::size_t n_rows, std::size_t n,
                                     std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  const Position first_recent = positions[n - 1] - static_cast<Position>(recent) + 1;
  const WindowPick pick = add_rows_and_pick(positions, scores, rows, n_rows, n, first_recent);
  if (pick.old == n - recent && pick.unique) return pick.slot;
  // A tie for the lowest score, or a window with gaps: the plain rule decides (scores already
  // hold the rows).
  return slot_to_evict(positions, scores, n, recent);
}

}  // namespace h2o
