// policy_comparison.hpp: compare_policies' results as text. The table of every run at every
// budget (best first), the lines that weigh the runs of each budget against each other, and what
// each policy still holds after the last step.
//
// Which two policies are weighed at every budget besides the best and the runner-up comes from
// the factory (policy_factory.hpp: subject_policy(), baseline_policy()), so nothing here names a
// policy, and a policy added to the factory appears in the table and the lines by itself.
//
// Dimension legend: B = budgets, P = policies run at a budget, S = decoding steps.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"

namespace h2o {

// The runs of one budget.
struct BudgetRuns {
  int percent = 0;
  std::size_t tokens = 0;             // the budget in the first story, per layer and KV head
  std::vector<const SweepRun*> runs;  // (P,) in the factory's order
  // The runs whose bytes are an outcome of their rules (FastGen), each with the baseline (the
  // window) reading the same stories at the bytes it held, story by story.
  std::vector<std::pair<const SweepRun*, const SweepRun*>> equal_bytes;
  // Quantised (PolicyComparison::quantised_bits): each run that held the budget, but the
  // baseline's own, with the baseline reading the same stories at the bytes it held
  // (read_at_equal_bytes): at the same tokens, scattered tokens pay more bytes.
  std::vector<std::pair<const SweepRun*, const SweepRun*>> at_bytes;
};

// Everything the table and the lines read.
struct PolicyComparison {
  const SweepRun* full = nullptr;            // the float32 full cache: the reference
  const SweepRun* full_quantised = nullptr;  // --kv-bits: every token kept, quantised; or none
  unsigned quantised_bits = 0;               // the evicting policies' storage (0: float32)
  std::vector<BudgetRuns> budgets;           // (B,)
  // The full cache does not know the text (bits_per_byte.hpp's rule): no best is named.
  bool no_verdict = false;
};

// Whether the runs' name recall can be compared: the text has long-gap names and the full cache
// (the reference) recalls some of them.
bool names_comparable(const PolicyComparison& comparison);

// "+4.2%": a perplexity's change against the full cache's.
std::string change_text(double perplexity, double full_perplexity);

// The table: the reference (and the quantised full cache), then per budget its runs from the
// lowest perplexity up, then the runs that held other bytes than the budget (FastGen: marked
// "by rule", never best), refused runs last, the best marked "<- best" (quantised, none: the same
// tokens are not the same bytes, and budget_verdicts weighs each at its bytes). Columns: budget,
// policy, kept, perplexity, bits per byte (quantised: the KV bytes' share of the float32 full
// cache's), vs full, top-1 = full, names ("-" for the policies when !names_comparable), KV bytes.
std::string comparison_table(const PolicyComparison& comparison);

// Per budget, the lines that weigh its runs: the best and the worst against the full cache, the
// best against the runner-up and the subject against its baseline, each with its 95% interval
// (verdict.hpp); quantised, instead, each run of BudgetRuns::at_bytes against the window at its
// bytes; one line when every policy refused the budget or none evicted anything; and each run of
// BudgetRuns::equal_bytes against the window at its bytes.
std::vector<std::string> budget_verdicts(const PolicyComparison& comparison);

// Sorted positions as ranges: "0-2 5 17 345-382" ("(none)" for none).
std::string position_ranges(const std::vector<Position>& sorted);

// One character per `per_char` of `steps` positions: '#' all of them kept, '+' some, '.' none.
std::string kept_strip(const std::vector<Position>& sorted, std::size_t steps,
                       std::size_t per_char);

}  // namespace h2o
