// second_reading_report.hpp: compare_policies --twice / --secret as text: how much of a passage's
// second reading each policy predicts top-1, beside the first reading's
// (measure/second_reading.hpp), and what the numbers show, in sentences computed from them.
//
// The sentences read the full cache first: if it does not copy (measure/second_reading.hpp's
// copies()), no policy has anything to keep and that is all they say. If it copies, each budget
// that evicts gets one line: what the window predicts of the second reading (and whether its last
// tokens still reach back to the first reading), what the subject (H2O) predicts, whose heavy
// hitters were chosen before the passage came back, and which policy predicts the most. The two
// policies come from the factory (subject_policy(), baseline_policy()), so nothing here names one.
//
// Dimension legend: B = budgets, P = policies.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/measure/second_reading.hpp"

namespace h2o {

struct SecondReadingResults {
  SecondReading full;                            // the full cache: the reference
  std::vector<std::size_t> budget_tokens;        // (B,) each budget in the first text
  std::vector<int> percents;                     // (B,) ascending
  std::vector<std::vector<SecondReading>> runs;  // (P, B) the policies, in the factory's order
  std::size_t text_tokens = 0;  // N of the first text (a budget this big evicts nothing)
  std::size_t distance = 0;     // the first text's TwoReadings::distance()
};

// "13.8%": a share in percent with one decimal.
std::string share_text(double share);

// The table: the full cache, then per budget its runs from the highest second-reading share down
// (the factory's order on a tie), then the runs that held what their rules keep rather than the
// budget (FastGen, DuoAttention: marked "by rule"), refused runs last. Columns: budget
// ("10% = 96"), policy, kept, 1st reading, 2nd reading, its 95% interval ("-" without one), change
// against the full cache's second reading in points, the mark.
std::string second_reading_table(const SecondReadingResults& results);

// What the table shows, in sentences (each a line of at most 100 columns, wrapped with an indent):
// see the top of this file.
std::vector<std::string> second_reading_findings(const SecondReadingResults& results);

}  // namespace h2o
