#include "h2o/cache/selection.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

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

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent) {
  if (n <= recent) throw std::logic_error("slot_to_evict: every slot is in the recent window");
  // The recent window is the `recent` largest positions; positions are distinct, so a slot is
  // recent exactly when fewer than `recent` slots are newer than it. With one token arriving per
  // step the window is contiguous: position > newest - recent. Count the slots in that range to be
  // sure; if some are missing (gaps, e.g. a cache cut some other way), fall back to the definition,
  // which is O(n^2) but never runs in the decoder's one-token-a-step loop.
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

void accumulate_attention(std::vector<float>& scores, const std::vector<float>& attention) {
  if (scores.size() != attention.size()) {
    throw std::invalid_argument("accumulate_attention: " + std::to_string(scores.size()) +
                                " scores but " + std::to_string(attention.size()) +
                                " attention weights");
  }
  for (std::size_t i = 0; i < scores.size(); ++i) scores[i] += attention[i];
}

}  // namespace h2o
