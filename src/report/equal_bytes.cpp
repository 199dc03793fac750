#include "h2o/report/equal_bytes.hpp"

#include <ostream>

#include "h2o/base/format.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/verdict_text.hpp"

namespace h2o {

std::string storage_name(unsigned bits) {
  return bits == 32 ? "fp32" : std::to_string(bits) + "-bit";
}

std::string point_label(unsigned bits, int percent, std::size_t residual) {
  const std::string budget = percent == 100 ? "all" : "h2o " + std::to_string(percent) + "%";
  if (residual != 0) return storage_name(bits) + ", " + budget + ", R " + std::to_string(residual);
  return storage_name(bits) + (percent == 100 ? ", all tokens" : ", " + budget);
}

const BytesPoint* best_within(const std::vector<BytesPoint>& points, double share, unsigned bits) {
  const BytesPoint* best = nullptr;
  for (const BytesPoint& p : points) {
    if (p.residual != 0 || p.share > 1.01 * share || (bits != 0 && p.bits != bits)) continue;
    if (best == nullptr || p.perplexity() < best->perplexity()) best = &p;
  }
  return best;
}

void print_equal_bytes_answer(std::ostream& out, const std::string& title,
                              const std::vector<BytesPoint>& points,
                              const std::vector<unsigned>& formats, const std::string& counted) {
  const SweepRun& full = points.front().run;
  out << title
      << ": which cache is closest to the full float32 cache for the same KV bytes?\n        "
         "(perplexity; the best point of each storage within the bytes, 1% over allowed)\n";
  // What the bootstrap draws: the same units for every pair (the same stories).
  const std::string units = difference_units(full, difference(full, full));
  for (double target : {0.25, 0.125}) {
    out << "  at " << fixed(100 * target, 1) << "% of the bytes:\n";
    const BytesPoint* winner = best_within(points, target, 0);
    for (unsigned bits : formats) {
      const BytesPoint* p = best_within(points, target, bits);
      out << "    " << pad_right(storage_name(bits), 7) << (p == nullptr ? "nothing fits\n" : "");
      if (p == nullptr) continue;
      out << pad_right(point_label(*p), 20) << pad_left(fixed(100 * p->share, 1), 5)
          << "% bytes  perplexity " << fixed(p->perplexity(), 3);
      if (p != winner) {  // measure/verdict.hpp's change and 95% interval
        const PerplexityDifference d = difference(p->run, winner->run);
        out << "  " << signed_percent(d.change) << " [" << signed_percent(d.low) << ", "
            << signed_percent(d.high) << "]";
      }
      out << (p == winner ? "  <- closest" : "") << "\n";
    }
    const BytesPoint* evict = best_within(points, target, 32);
    if (winner != nullptr && evict != nullptr && evict != winner) {
      const bool clear = verdict_of(difference(evict->run, winner->run)) == Verdict::Worse;
      out << "    => " << point_label(*winner) << ": " << (clear ? "clearly" : "not clearly")
          << " closer than evicting alone in float32\n";
    }
  }
  out << "  (+x% [lo, hi]: perplexity against the closest one's, with a 95% bootstrap "
         "interval over\n   "
      << units << " of the " << counted << "; an interval that holds 0 is no clear difference.)\n";
}

void write_equal_bytes_picture(const std::string& dir, const std::vector<BytesPoint>& points,
                               const std::vector<unsigned>& formats, const std::string& about) {
  LineChart chart{{"Perplexity against KV bytes: evict, quantise or both",
                   {"H2O budgets from each line's right (all tokens) to its left; " + about},
                   "12_evict_or_quantise --pictures " + dir},
                  "KV bytes at the end of a story (% of the full float32 cache's)",
                  "perplexity",
                  true,
                  false,
                  {},
                  720,
                  440};
  for (unsigned bits : formats) {
    chart.series.push_back({storage_name(bits) + " + H2O", {}, {}, false, true});
    for (const BytesPoint& p : points) {
      if (p.bits != bits || p.residual != 0) continue;
      chart.series.back().x.push_back(100 * p.share);
      chart.series.back().y.push_back(p.perplexity());
    }
  }
  save_svg(dir + "/evict_or_quantise.svg", line_chart_svg(chart));
}

}  // namespace h2o
