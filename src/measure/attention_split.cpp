#include "h2o/measure/attention_split.hpp"

#include <stdexcept>
#include <string>

#include "h2o/measure/teacher_forcing.hpp"

namespace h2o {

namespace {
// The query groups of two traces of the same text and model (std::invalid_argument otherwise).
QueryGroups groups_of(const CacheTrace& first, const CacheTrace& second, std::size_t query_heads) {
  if (first.layers != second.layers || first.kv_heads != second.kv_heads ||
      first.steps != second.steps || first.heads.size() != first.layers ||
      second.heads.size() != second.layers) {
    throw std::invalid_argument(
        "attention split: the two traces are not of the same text and "
        "model (layers, KV heads or steps differ)");
  }
  return QueryGroups(query_heads, first.kv_heads, "attention split");
}
}  // namespace

AttentionSplitter::AttentionSplitter(const CacheTrace& first, const CacheTrace& second,
                                     std::size_t query_heads)
    : first_(first), second_(second), groups_(groups_of(first, second, query_heads)) {
  first_by_layer_.assign(first.layers, 0.0);
  second_by_layer_.assign(first.layers, 0.0);
  rows_by_layer_.assign(first.layers, 0);
  const std::size_t n = first.steps + 1;
  first_at_.assign(n, 0.0);
  second_at_.assign(n, 0.0);
}

bool AttentionSplitter::held(const CacheTrace& trace, std::size_t l, std::size_t g, std::size_t p,
                             std::size_t t) {
  const std::int32_t evicted = trace.heads[l][g].evicted_at[p];
  return p <= t && (evicted == kNeverEvicted || static_cast<std::size_t>(evicted) >= t);
}

void AttentionSplitter::add(std::size_t t, std::size_t l, std::size_t h, const Position* positions,
                            const float* weights, std::size_t count) {
  if (t >= first_.steps || l >= first_.layers || h >= groups_.n_heads()) {
    throw std::invalid_argument("attention split: step " + std::to_string(t) + ", layer " +
                                std::to_string(l) + ", query head " + std::to_string(h) +
                                " is out of range");
  }
  const std::size_t g = groups_.kv_head_of(h);
  for (std::size_t s = 0; s < count; ++s) {
    if (positions[s] < 0 || static_cast<std::size_t>(positions[s]) > t) {
      throw std::invalid_argument("attention split: position " + std::to_string(positions[s]) +
                                  " at step " + std::to_string(t));
    }
    const auto p = static_cast<std::size_t>(positions[s]);
    const bool in_first = held(first_, l, g, p, t), in_second = held(second_, l, g, p, t);
    if (in_first && !in_second) {
      first_by_layer_[l] += weights[s];
      first_at_[p] += weights[s];
    } else if (in_second && !in_first) {
      second_by_layer_[l] += weights[s];
      second_at_[p] += weights[s];
    }
  }
  ++rows_by_layer_[l];
}

AttentionSplit AttentionSplitter::result() const {
  AttentionSplit split;
  split.steps = first_.steps;
  std::size_t rows = 0;
  for (std::size_t l = 0; l < first_.layers; ++l) {
    rows += rows_by_layer_[l];
    const double in_layer = static_cast<double>(rows_by_layer_[l]);
    split.first_only_by_layer.push_back(in_layer == 0 ? 0.0 : first_by_layer_[l] / in_layer);
    split.second_only_by_layer.push_back(in_layer == 0 ? 0.0 : second_by_layer_[l] / in_layer);
    split.first_only += first_by_layer_[l];
    split.second_only += second_by_layer_[l];
  }
  const double all = rows == 0 ? 1.0 : static_cast<double>(rows);
  split.first_only /= all;
  split.second_only /= all;
  for (double mass : first_at_) split.first_only_at.push_back(mass / all);
  for (double mass : second_at_) split.second_only_at.push_back(mass / all);
  return split;
}

AttentionSplit split_full_attention(Decoder& full, const std::vector<int>& tokens,
                                    const CacheTrace& first, const CacheTrace& second) {
  const std::size_t L = full.config().n_layers, H = full.config().n_heads;
  AttentionSplitter splitter(first, second, H);
  if (tokens.size() != first.steps + 1) {
    throw std::invalid_argument("attention split: the text has " + std::to_string(tokens.size()) +
                                " tokens, the traces " + std::to_string(first.steps + 1));
  }
  full.set_record_attention(true);
  const QueryGroups groups(H, full.config().n_kv_heads, "attention split");
  TeacherForcingOptions options;
  options.after_step = [&](std::size_t t) {
    for (std::size_t l = 0; l < L; ++l) {
      const AttentionRecord& record = full.attention(l);
      for (std::size_t h = 0; h < H; ++h) {
        const std::vector<Position>& held = record.positions[groups.kv_head_of(h)];  // (T,)
        splitter.add(t, l, h, held.data(), &record.weights(h, 0), held.size());
      }
    }
  };
  read_with_teacher_forcing(full, tokens, options);
  return splitter.result();
}

}  // namespace h2o
