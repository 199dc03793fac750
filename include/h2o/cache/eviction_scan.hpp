// eviction_scan.hpp: the decoder's fast H2O step - add this step's attention to the scores and
// find the slot to evict, in one vectorised pass over the slots.
//
// It decides exactly as the plain rule of selection.hpp (slot_to_evict with a recent window);
// tests/test_eviction_scan.cpp checks that over many seeded caches with ties, gaps and every
// size. The pass answers only the common case itself - the recent window is the newest positions
// without a gap, the newest in the last slot (always so in the decoder), and one slot holds the
// lowest score - and hands every other cache to slot_to_evict.
//
// Dimension legend: n = live slots of one KV head's cache.
#pragma once

#include <cstddef>

#include "h2o/base/tensor.hpp"

namespace h2o {

// scores (n,) += rows[r] (n,) for r = 0 .. n_rows - 1, in that order (one float addition each,
// the same bits as adding them one by one: additions cannot be fused or reordered, so no compiler
// flag changes them), then the slot that slot_to_evict(positions, scores, n, recent) evicts.
//   positions (n,) distinct. Requires n > recent (std::logic_error otherwise).
std::size_t add_rows_and_pick_victim(const Position* positions, float* scores,
                                     const float* const* rows, std::size_t n_rows, std::size_t n,
                                     std::size_t recent);

}  // namespace h2o
