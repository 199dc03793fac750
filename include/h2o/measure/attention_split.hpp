// attention_split.hpp: where the full cache's attention fell, split by which of two policies'
// caches held each position at that step. It explains a verdict from its own run: when the first
// policy reads a text better than the second, the full model's attention should have fallen on
// tokens the first kept and the second had already evicted, and the reverse when it reads worse.
//
// At step t the full cache attends over positions 0..t; a policy's cache at step t holds the
// positions its trace kept through step t - 1 plus the new one, i.e. {p <= t : evicted_at[p] is
// kNeverEvicted or >= t} (cache_trace.hpp: a position evicted at step t was still attended at t).
// For every step, layer and query head h (its KV head g = h / (H / G)), the full cache's weights
// w(p) (which add up to 1 over 0..t) are split into
//   first only   sum of w(p) over p held by the first policy's KV head g and not by the second's
//   second only  the reverse
// and the split's numbers are means over all steps, layers and query heads (shares of a step's
// attention, 0..1). Per position: its weights summed over every row added, divided by the number
// of rows (steps x layers x query heads), so that the positions' numbers add up to the means.
//
// Dimension legend: N = tokens (BOS first), S = N - 1 steps, L = layers, G = KV heads,
// H = query heads.
#pragma once

#include <cstddef>
#include <vector>

#include "h2o/attention/query_groups.hpp"
#include "h2o/measure/cache_trace.hpp"
#include "h2o/model/decoder.hpp"

namespace h2o {

struct AttentionSplit {
  std::size_t steps = 0;
  double first_only = 0.0;                   // mean share on positions only the first held
  double second_only = 0.0;                  // mean share on positions only the second held
  std::vector<double> first_only_by_layer;   // (L,) the same mean within each layer
  std::vector<double> second_only_by_layer;  // (L,)
  std::vector<double> first_only_at;         // (N,) each position's part of first_only
  std::vector<double> second_only_at;        // (N,) each position's part of second_only
};

// Adds the full cache's attention step by step; the kept sets come from two traces of the same
// text (cache_trace.hpp), of the same model shape (L, G).
class AttentionSplitter {
 public:
  // Throws std::invalid_argument when the traces differ in layers, KV heads or steps, or
  // query_heads is not a positive multiple of their KV heads.
  AttentionSplitter(const CacheTrace& first, const CacheTrace& second, std::size_t query_heads);

  // The full cache's weights at step t, layer l, query head h over positions[0..count) (the
  // positions it held, any order; weights (count,)). Throws std::invalid_argument for a step,
  // layer or head out of range, or a position after t.
  void add(std::size_t t, std::size_t l, std::size_t h, const Position* positions,
           const float* weights, std::size_t count);

  // The means over every (step, layer, query head) added.
  AttentionSplit result() const;

 private:
  // Whether the trace's layer l, KV head g held position p when step t attended.
  static bool held(const CacheTrace& trace, std::size_t l, std::size_t g, std::size_t p,
                   std::size_t t);
  const CacheTrace& first_;
  const CacheTrace& second_;
  QueryGroups groups_;                                    // which KV head each query head reads
  std::vector<double> first_by_layer_, second_by_layer_;  // (L,) sums
  std::vector<double> first_at_, second_at_;              // (N,) sums
  std::vector<std::size_t> rows_by_layer_;                // (L,) rows added
};

// Reads `tokens` with the full cache of `full` (a fresh decoder that evicts nothing), recording
// its attention, and splits it by the kept sets of `first` and `second` (traces of the same
// tokens). Throws std::invalid_argument as the splitter and read_with_teacher_forcing do.
AttentionSplit split_full_attention(Decoder& full, const std::vector<int>& tokens,
                                    const CacheTrace& first, const CacheTrace& second);

}  // namespace h2o
