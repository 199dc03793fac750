// equal_bytes.hpp: lesson 12's answer to "evict or quantise?" at equal KV bytes, as text and as
// a picture. Each point is one storage format (float32, 8, 4 or 2 bits) at one H2O budget, read
// over the same stories; the bytes are what each cache holds at the end of each story, summed.
// At a byte target the best point of each storage format (lowest perplexity within the bytes) is
// weighed against the best of all, with measure/verdict.hpp's change and 95% interval.
//
// Dimension legend: P = points (formats x budgets), M = storage formats.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"

namespace h2o {

struct BytesPoint {  // one storage format at one H2O budget, over every story
  unsigned bits = 32;
  int percent = 100;         // H2O budget, percent of each story's tokens (100: the full cache)
  SweepRun run;              // its readings of every story (measure/policy_sweep.hpp)
  double share = 0;          // KV bytes at each story's end, summed, over the full float32 cache's
  std::size_t residual = 0;  // KIVI's residual window (KvFormat::residual); 0: one group
  double perplexity() const { return run.perplexity(); }
};

// "fp32" or "4-bit"; "4-bit, all tokens" or "fp32, h2o 25%"; with a residual window R,
// "4-bit, all, R 128" (R: the newest 128 tokens float32).
std::string storage_name(unsigned bits);
std::string point_label(unsigned bits, int percent, std::size_t residual = 0);
inline std::string point_label(const BytesPoint& p) {
  return point_label(p.bits, p.percent, p.residual);
}

// The best (lowest perplexity) point within `share` of the float32 bytes (1% over allowed: a
// budget's tokens are rounded up), of one storage format (or any: bits = 0); nullptr if none.
// Points with a residual window are left out: the answer weighs the storage formats as such.
//   points (P,)
const BytesPoint* best_within(const std::vector<BytesPoint>& points, double share, unsigned bits);

// The answer at 25% and 12.5% of the bytes: per storage format (formats (M,)) its best point,
// its change against the closest one's with a 95% interval, and whether the closest is clearly
// closer than evicting alone in float32. points.front() is the float32 full cache; `counted`
// names the stories ("6 stories"), the step title comes first.
void print_equal_bytes_answer(std::ostream& out, const std::string& title,
                              const std::vector<BytesPoint>& points,
                              const std::vector<unsigned>& formats, const std::string& counted);

// dir/evict_or_quantise.svg: perplexity against KV bytes, one line per storage format (points
// with a residual window left out).
void write_equal_bytes_picture(const std::string& dir, const std::vector<BytesPoint>& points,
                               const std::vector<unsigned>& formats, const std::string& about);

}  // namespace h2o
