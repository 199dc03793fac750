#include "h2o/policy/pyramid_policy.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/base/format.hpp"

namespace h2o {

namespace {
// The line's sum over layers 0 .. l - 1 (real numbers), from `high` in layer 0 down to `low` in
// layer L - 1: l high - step l (l - 1) / 2.
double line_sum_before(double high, double low, std::size_t l, std::size_t n_layers) {
  const double step = n_layers == 1 ? 0.0 : (high - low) / static_cast<double>(n_layers - 1);
  const double n = static_cast<double>(l);
  return n * high - step * n * (n - 1.0) / 2.0;
}
}  // namespace

std::size_t pyramid_heavy_budget(std::size_t heavy, std::size_t layer, std::size_t n_layers,
                                 double beta, std::size_t most) {
  if (!(beta >= 1.0)) throw std::invalid_argument("PyramidKV: beta must be at least 1");
  if (n_layers == 0 || layer >= n_layers) {
    throw std::invalid_argument("PyramidKV: layer " + std::to_string(layer) + " of " +
                                std::to_string(n_layers));
  }
  if (heavy >= most) return most;  // every layer is full: there is nothing to move
  const double mean = static_cast<double>(heavy), cap = static_cast<double>(most);
  double low = mean / beta, high = 2.0 * mean - low;
  if (high > cap) {  // kvpress: the first layer capped, the last raised, the total kept
    high = cap;
    low = 2.0 * mean - cap;
  }
  if (n_layers == 1) return heavy;
  const double before = std::round(line_sum_before(high, low, layer, n_layers));
  const double through = std::round(line_sum_before(high, low, layer + 1, n_layers));
  return static_cast<std::size_t>(std::max(0.0, through - before));
}

namespace {
// recent + heavy_l, heavy_l capped at max_positions - recent (no layer keeps more heavy hitters
// than the sequence has tokens outside the window).
std::size_t pyramid_layer_tokens(CacheBudget budget, double beta, const LayerShape& shape) {
  const std::size_t positions = shape.max_positions;
  const std::size_t most = positions > budget.recent ? positions - budget.recent : 0;
  return budget.recent +
         pyramid_heavy_budget(budget.heavy, shape.layer, shape.n_layers, beta, most);
}
}  // namespace

PyramidKVPolicy::PyramidKVPolicy(CacheBudget budget, std::unique_ptr<ScoredPolicy> scorer,
                                 double beta, const LayerShape& shape)
    : BudgetSpreadPolicy(shape, pyramid_layer_tokens(budget, beta, shape),
                         pyramid_layer_tokens(budget, beta, shape), std::move(scorer)),
      budget_(budget),
      beta_(beta) {
  if (!(beta >= 1.0)) throw std::invalid_argument("PyramidKV: beta must be at least 1");
  if (budget.recent == 0) {
    // The deepest layers may keep no heavy hitter at all: without a window they would hold nothing.
    throw std::invalid_argument(
        "PyramidKV: every layer keeps a recent window; recent must be >= 1");
  }
}

PyramidKVPolicy::PyramidKVPolicy(CacheBudget budget, ScoringMode mode, H2OScore score, float decay,
                                 double beta, const LayerShape& shape)
    : PyramidKVPolicy(budget, std::make_unique<H2OPolicy>(budget, mode, score, 0, decay), beta,
                      shape) {}

std::string PyramidKVPolicy::describe() const {
  return "PyramidKV, " + budget_.describe() +
         " per layer on average, heavy hitters shrinking with depth (beta " + fixed(beta_, 0) +
         "), " + scorer().scores();
}

}  // namespace h2o
