// cache_trace.hpp: what every cache of a decoder did at every step of a text, compactly, so that a
// page (report/explorer_page.hpp) can replay it: which positions each layer and KV head kept,
// when each was evicted, the scores the policy held and the attention of every step.
//
// The text is read with teacher forcing (teacher_forcing.hpp, one token at a time), and after each
// step the trace notes, for every layer l and KV head g:
//   evicted_at[p]  the step at which position p left the cache (kNeverEvicted while it stays).
//                  A position enters at its own step and never comes back, so this one number per
//                  position gives the kept set of every step: {p <= t : evicted_at[p] > t}.
//   attention[t]   the attention of step t over the positions the cache held before the step's
//                  eviction (the kept set of step t plus the one evicted at t), in position order:
//                  the mean over the KV head's query heads (head_scores.hpp's per-head rule), as a
//                  shade level 0..kShadeLevels-1 relative to that row's largest weight, which is
//                  kept as a number (attention_max[t]).
//   score[t]       the policy's per-slot score after step t (H2O: accumulated attention) over the
//                  kept set of step t, in position order, as levels relative to score_max[t].
// and, once per step for the whole decoder, kv_bytes[t]: the key/value bytes all layers hold after
// step t's eviction, as stored (Decoder::live_kv_bytes: float32 rows, or a quantised cache's
// codes, scales and zeros), one sum over the layers' counters.
// Levels, not floats, keep a 1,000-token story's trace (and the page) a few MB: one byte per
// position and step instead of four (about the page's own size, which the explorer estimates
// before tracing: report/explorer_page.hpp's explorer_page_bytes).
//
// Dimension legend: N = tokens of the text (BOS first), S = N - 1 steps, L = layers, G = KV heads,
// K_t = positions a cache holds after step t, H = query heads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/decoder.hpp"

namespace h2o {

// Shades a level can take: 0 (nothing) .. kShadeLevels - 1 (the row's largest value).
constexpr int kShadeLevels = 64;

// evicted_at of a position still in the cache after the last step.
constexpr std::int32_t kNeverEvicted = -1;

struct HeadTrace {
  std::vector<std::int32_t> evicted_at;              // (N,) step, or kNeverEvicted
  std::vector<std::vector<std::uint8_t>> attention;  // (S, K_t + evicted at t) levels
  std::vector<float> attention_max;                  // (S,) largest weight of each row
  std::vector<std::vector<std::uint8_t>> score;      // (S, K_t) levels
  std::vector<float> score_max;                      // (S,) largest score (0: no scores kept)
};

struct CacheTrace {
  std::size_t layers = 0, kv_heads = 0, steps = 0;
  std::vector<std::vector<HeadTrace>> heads;  // (L, G)
  std::vector<std::size_t> kv_bytes;          // (S,) Decoder::live_kv_bytes() after step t
  TeacherForcedRun reading;                   // the teacher-forced predictions of the run
  // (S,) whether step t's most likely next token is the reference's (empty without reference).
  std::vector<bool> agrees;
};


// The level of `value` in a row whose largest value is `max`: round((levels - 1) * value / max),
// clamped to 0..kShadeLevels-1; 0 when max <= 0.
std::uint8_t shade_level(float value, float max);

// Reads tokens (N >= 2) with teacher forcing from a fresh decoder and traces every cache; with a
// reference run (the full cache's), `agrees` says per step whether the top-1 tokens match and
// reading.agreements counts them. Throws std::invalid_argument as read_with_teacher_forcing does.
// Switches the decoder's attention recording on. after_step, when given, is called after each
// step's trace with the step's index, e.g. to look at the caches too.
CacheTrace trace_cache(Decoder& decoder, const std::vector<int>& tokens,
                       const TeacherForcedRun* reference = nullptr,
                       const std::function<void(std::size_t step)>& after_step = {});

}  // namespace h2o
