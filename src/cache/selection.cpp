#include "h2o/cache/selection.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace h2o {

Position first_recent_position(const Position* positions, std::size_t n, std::size_t recent) {
  if (n == 0) throw std::logic_error("first_recent_position: the cache is empty");
  const Position newest = *std::max_element(positions, positions + n);
  if (recent == 0) return newest + 1;
  if (recent >= n) return *std::min_element(positions, positions + n);
  // The decoder's case: the window is the last `recent` positions without a gap, which one count
  // confirms (positions are distinct, so exactly `recent` of them that new ARE the newest).
  const Position guess = newest - static_cast<Position>(recent) + 1;
  const auto at_or_after =
      std::count_if(positions, positions + n, [&](Position p) { return p >= guess; });
  if (static_cast<std::size_t>(at_or_after) == recent) return guess;
  // Any other cache: step down from the newest position, one position at a time.
  Position bound = newest;
  for (std::size_t k = 1; k < recent; ++k) {
    Position below = bound;
    for (std::size_t i = 0; i < n; ++i) {
      if (positions[i] < bound && (below == bound || positions[i] > below)) below = positions[i];
    }
    bound = below;
  }
  return bound;
}

double eviction_key(float score, Position position, Position newest, const EvictionRule& rule) {
  return rule.normalise ? static_cast<double>(score) / static_cast<double>(newest - position + 1)
                        : static_cast<double>(score);
}

namespace {
// True when slot a goes before slot b: the lower key, and on a tie the newer position.
bool goes_first(double key_a, Position position_a, double key_b, Position position_b) {
  return key_a < key_b || (key_a == key_b && position_a > position_b);
}
}  // namespace

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          const EvictionRule& rule) {
  if (n == 0) throw std::logic_error("slot_to_evict: the cache is empty");
  const Position newest = *std::max_element(positions, positions + n);
  const Position first_recent = first_recent_position(positions, n, rule.recent);
  const auto start = static_cast<Position>(rule.start_area);
  std::size_t victim = n;  // none yet
  double victim_key = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (positions[i] >= first_recent || positions[i] < start) continue;  // protected
    const double key = eviction_key(scores[i], positions[i], newest, rule);
    if (victim == n || goes_first(key, positions[i], victim_key, positions[victim])) {
      victim = i;
      victim_key = key;
    }
  }
  if (victim == n) {
    throw std::logic_error(
        "slot_to_evict: every slot is in the recent window or the start area (positions must be "
        "distinct)");
  }
  return victim;
}

std::size_t slot_to_evict(const Position* positions, const float* scores, std::size_t n,
                          std::size_t recent) {
  return slot_to_evict(positions, scores, n, EvictionRule{recent, 0, false});
}

KeepPlan plan_cut(const std::vector<Position>& positions, const std::vector<float>& scores,
                  const EvictionRule& rule, std::size_t keep) {
  if (positions.size() != scores.size()) {
    throw std::invalid_argument("plan_cut: " + std::to_string(positions.size()) +
                                " positions but " + std::to_string(scores.size()) + " scores");
  }
  const std::size_t n = positions.size();
  KeepPlan plan;
  if (n == 0) return plan;
  const Position newest = *std::max_element(positions.begin(), positions.end());
  const Position first_recent = first_recent_position(positions.data(), n, rule.recent);
  const auto start = static_cast<Position>(rule.start_area);
  std::vector<std::size_t> candidates;
  std::vector<std::size_t> protected_start;
  for (std::size_t i = 0; i < n; ++i) {
    if (positions[i] >= first_recent) {
      plan.recent.push_back(i);
    } else if (positions[i] < start) {
      protected_start.push_back(i);
    } else {
      candidates.push_back(i);
    }
  }
  const std::size_t protected_count = plan.recent.size() + protected_start.size();
  if (n > keep && protected_count > keep) {
    throw std::logic_error("plan_cut: " + std::to_string(protected_count) +
                           " protected tokens do not fit in " + std::to_string(keep));
  }
  // Every key once, on the cache as it stands; the candidates in the order they would go.
  std::vector<double> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = eviction_key(scores[i], positions[i], newest, rule);
  std::stable_sort(candidates.begin(), candidates.end(), [&](std::size_t a, std::size_t b) {
    return goes_first(keys[a], positions[a], keys[b], positions[b]);
  });
  const std::size_t goes = n > keep ? n - keep : 0;
  plan.evicted.assign(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(goes));
  plan.heavy.assign(candidates.begin() + static_cast<std::ptrdiff_t>(goes), candidates.end());
  plan.heavy.insert(plan.heavy.end(), protected_start.begin(), protected_start.end());

  auto by_position = [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; };
  std::sort(plan.recent.begin(), plan.recent.end(), by_position);
  std::sort(plan.heavy.begin(), plan.heavy.end(), by_position);
  std::sort(plan.evicted.begin(), plan.evicted.end(), by_position);
  plan.kept = plan.heavy;
  plan.kept.insert(plan.kept.end(), plan.recent.begin(), plan.recent.end());
  std::sort(plan.kept.begin(), plan.kept.end(), by_position);
  return plan;
}

KeepPlan plan_keep(const std::vector<Position>& positions, const std::vector<float>& scores,
                   const CacheBudget& budget) {
  if (positions.size() != scores.size()) {
    throw std::invalid_argument("plan_keep: " + std::to_string(positions.size()) +
                                " positions but " + std::to_string(scores.size()) + " scores");
  }
  return plan_cut(positions, scores, EvictionRule{budget.recent, 0, false}, budget.total());
}

KeepPlan plan_keep(const std::vector<Position>& positions, const Vector& scores,
                   const CacheBudget& budget) {
  return plan_keep(positions, std::vector<float>(scores.begin(), scores.end()), budget);
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
