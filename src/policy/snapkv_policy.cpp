#include "h2o/policy/snapkv_policy.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "h2o/cache/selection.hpp"

namespace h2o {

std::string to_string(SnapKVPool pool) { return pool == SnapKVPool::Max ? "max" : "avg"; }

SnapKVPool parse_snapkv_pool(const std::string& text) {
  if (text == "avg") return SnapKVPool::Average;
  if (text == "max") return SnapKVPool::Max;
  throw std::invalid_argument("unknown SnapKV pooling '" + text + "' (expected avg or max)");
}

std::string SnapKVPooling::describe() const {
  return std::string(pool == SnapKVPool::Max ? "max" : "average") + " pooling over " +
         std::to_string(kernel) + (kernel == 1 ? " position" : " positions");
}

void check_pool_kernel(std::size_t kernel) {
  if (kernel % 2 == 0 || kernel > kMaxPoolKernel) {
    throw std::invalid_argument(
        "SnapKV: the pooling kernel must be an odd number of positions from "
        "1 to " +
        std::to_string(kMaxPoolKernel) + " (centred on the token), got " + std::to_string(kernel));
  }
}

SnapKVPolicy::SnapKVPolicy(CacheBudget budget, ScoringMode mode, SnapKVPooling pooling,
                           const LayerShape& shape)
    : LayerPolicy(shape, budget.total()),
      budget_(budget),
      mode_(mode),
      pooling_(pooling),
      decoding_(budget, mode, H2OScore::Sum, /*start_area=*/0, kDefaultH2ODecay, shape) {
  check_pool_kernel(pooling.kernel);
  if (budget.recent == 0) {
    throw std::invalid_argument(
        "SnapKV: the observation window (recent) must be at least 1 token: its queries score the "
        "prompt");
  }
}

std::string SnapKVPolicy::describe() const {
  return "SnapKV, " + budget_.describe() + ", window " + std::to_string(budget_.recent) + ", " +
         pooling_.describe() + ", " + to_string(mode_) + " scores; decoding as H2O";
}

void SnapKVPolicy::after_attention(LayerKVCache& cache, const StepAttention& attention) {
  decoding_.after_attention(cache, attention);
}

void SnapKVPolicy::choose_victims(LayerKVCache& cache, std::size_t* victims) {
  decoding_.choose_victims(cache, victims);
}

void SnapKVPolicy::observe(LayerKVCache& cache, const StepAttention& attention) {
  decoding_.observe(cache, attention);
  const std::size_t n = cache.uniform_size();  // SnapKV gives every head the same budget
  if (n == 0) return;
  const std::size_t G = cache.n_kv_heads(), S = cache.capacity();
  // A cut keeps at most S - 1 tokens, so the window never needs more than S rows.
  const std::size_t rows = std::min(budget_.recent, S);
  if (window_rows_.size() != rows * G * S) {
    window_rows_.assign(rows * G * S, 0.0f);
    row_position_.assign(rows, -1);
  }
  const Position query = cache.positions(0)[n - 1];  // the newest token, appended last
  const std::size_t r = static_cast<std::size_t>(query) % rows;
  float* row = window_rows_.data() + r * G * S;  // (G, S)
  std::fill(row, row + G * S, 0.0f);
  add_step_attention(row, S, G, n, attention, mode_);
  row_position_[r] = query;
}

void SnapKVPolicy::compress(LayerKVCache& cache, std::size_t keep) {
  const std::size_t n = cache.uniform_size();
  if (n <= keep) return;
  const std::size_t w = std::min(budget_.recent, keep);  // the observation window, kept whole
  const std::size_t G = cache.n_kv_heads(), S = cache.capacity();
  const Position newest = *std::max_element(cache.positions(0), cache.positions(0) + n);
  // The rows of the window's queries, newest - w + 1 .. newest, all recorded by observe().
  std::vector<const float*> rows;
  for (std::size_t k = 0; k < w; ++k) {
    const Position query = newest - static_cast<Position>(k);
    const std::size_t r =
        row_position_.empty() ? 0 : static_cast<std::size_t>(query) % row_position_.size();
    if (row_position_.empty() || row_position_[r] != query) {
      throw std::logic_error("SnapKV: cutting a cache needs the attention of the prompt's last " +
                             std::to_string(w) +
                             " queries (read the prompt with Decoder::read_prompt_compressed)");
    }
    rows.push_back(window_rows_.data() + r * G * S);
  }
  std::vector<std::vector<std::size_t>> kept(G);
  for (std::size_t g = 0; g < G; ++g) {
    const Position* positions = cache.positions(g);  // (n,)
    float* scores = cache.scores(g);                 // (n,)
    // Step 1: every token's window attention (its score from now on).
    for (std::size_t s = 0; s < n; ++s) {
      float vote = 0.0f;
      for (const float* row : rows) vote += row[g * S + s];
      scores[s] = vote;
    }
    // Step 2: the older tokens' votes pooled over their neighbours in position order: the sum
    // (an average times K) or the largest of the votes within K / 2 places on either side.
    const Position first_window = first_recent_position(positions, n, w);
    std::vector<std::size_t> older;  // slots of the older tokens, by position
    for (std::size_t s = 0; s < n; ++s) {
      if (positions[s] < first_window) older.push_back(s);
    }
    std::sort(older.begin(), older.end(),
              [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
    std::vector<float> pooled(scores, scores + n);  // the window's own entries are protected
    const std::size_t half = pooling_.kernel / 2;
    for (std::size_t j = 0; j < older.size(); ++j) {
      float sum = 0.0f, largest = 0.0f;  // votes are attention weights: never below 0
      for (std::size_t i = j >= half ? j - half : 0; i <= j + half && i < older.size(); ++i) {
        sum += scores[older[i]];
        largest = std::max(largest, scores[older[i]]);
      }
      pooled[older[j]] = pooling_.pool == SnapKVPool::Max ? largest : sum;
    }
    // Step 3: the window plus the best pooled votes, by selection.hpp's rule.
    const std::vector<Position> slot_positions(positions, positions + n);
    kept[g] = plan_cut(slot_positions, pooled, EvictionRule{w, 0, false}, keep).kept;
  }
  cache.keep_per_head(kept);
}

}  // namespace h2o
