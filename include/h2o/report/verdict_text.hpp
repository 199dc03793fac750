// verdict_text.hpp: the words every program prints for a verdict (measure/verdict.hpp), and for
// why none is drawn on a text beyond the model (measure/bits_per_byte.hpp).
//
// The measure layer decides: the change, its 95% interval, the Verdict. This header only says it,
// so that every lesson, tool and page says it in the same words: "perplexity -2.6% against the
// window (95% interval -4.1% to -1.0%, 28 blocks of 32 predictions): better".
//
// Dimension legend: S = predictions of a story, U = units (stories or blocks).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/measure/verdict.hpp"

namespace h2o {

struct SweepRun;  // measure/policy_sweep.hpp

// What the units of readings nll_a (stories,) x (S,) are, for a sentence: "12 stories",
// "28 blocks of 32 predictions" (paired_units' rule, U = units).
std::string units_name(const std::vector<std::vector<double>>& nll_a, std::size_t units);

// "better", "worse", "no difference within noise".
std::string verdict_word(Verdict verdict);

// A change as a signed percentage, "+4.1%", "-0.0%" (the sign is the value's own even where it
// rounds to 0.0, so an interval's ends show on which side of 0 they lie).
std::string signed_percent(double change);

// The sentence every program prints for A against B:
//   "perplexity -2.6% against the window (95% interval -4.1% to -1.0%, 28 blocks of 32
//    predictions): better"
// and, without an interval: "... (too few units for an interval: 2 stories): no difference
// within noise"; with no prediction at all: "nothing to compare". `against` names B, `units` the
// units (units_name).
std::string verdict_sentence(const std::string& against, const PerplexityDifference& difference,
                             const std::string& units);

// A against B of a policy sweep (same stories): the units of their difference (units_name), and
// verdict_sentence of A against B, e.g. "perplexity -2.6% against the window (95% interval ...):
// better".
std::string difference_units(const SweepRun& a, const PerplexityDifference& difference);
std::string verdict_against(const SweepRun& a, const SweepRun& b, const std::string& b_name);

// "6 against 3 of 9 long-gap names"; "" when there is no name event to count (events == 0),
// so that no sentence compares zero counts.
std::string names_against(std::size_t correct_a, std::size_t correct_b, std::size_t events);

// The verdicts of several budgets in one phrase, zero counts left out:
//   "better at 2, no difference within noise at 4 of 6 budgets"; "" for no verdicts.
std::string verdict_tally(const std::vector<Verdict>& verdicts);

// "perplexity better at 1, no difference within noise at 5 of 6 budgets; name recall higher at
// 2, lower at 1" (a count of 0 left out) - "name recall the same at every budget" when both are 0,
// nothing on names when `names_counted` is false (no name events); "(no budget below 100% to
// compare)" without verdicts.
std::string budget_comparison_sentence(const BudgetComparison& comparison, bool names_counted);

// "better at 5%, 10%; no difference within noise at 2%": the budgets of each verdict (better,
// worse, within noise; a verdict with none left out), `budget_names` (the comparison's budgets,
// in its order) naming them. "" without verdicts; std::invalid_argument on a different count.
std::string budgets_by_verdict(const BudgetComparison& comparison,
                               const std::vector<std::string>& budget_names);

// The one plain warning the programs print when beyond_model() (measure/bits_per_byte.hpp): what
// was measured and why no verdict follows. Lines of at most 100 columns, each ending in "\n".
std::string beyond_model_warning(double full_bits_per_byte);

}  // namespace h2o
