#include "h2o/cache/budget.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace h2o {

CacheBudget::CacheBudget(std::size_t heavy_slots, std::size_t recent_slots)
    : heavy(heavy_slots), recent(recent_slots) {
  if (heavy > std::numeric_limits<std::size_t>::max() - recent) {
    throw std::invalid_argument("heavy + recent is too large");
  }
  if (heavy + recent == 0) {
    throw std::invalid_argument(
        "heavy + recent must be at least 1 (a cache of 0 tokens cannot attend)");
  }
}

std::string CacheBudget::describe() const {
  return "heavy " + std::to_string(heavy) + " + recent " + std::to_string(recent) + " = " +
         std::to_string(total()) + " tokens";
}

std::size_t tokens_for_percent(std::size_t n, int percent) {
  if (percent < 1 || percent > 100) {
    throw std::invalid_argument("a budget share must be 1 to 100 percent, got " +
                                std::to_string(percent));
  }
  return std::max<std::size_t>(2, (n * static_cast<std::size_t>(percent) + 50) / 100);
}

}  // namespace h2o
