// sweep_report.hpp: a policy sweep (measure/policy_sweep.hpp) as tables, CSV and charts.
//
// Each takes the measures from sweep_measures(), so a measure added there appears in all three.
//
// Dimension legend: P = policies of the sweep, B = budgets.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/base/output_file.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/prompt_time.hpp"

namespace h2o {

// One measure as a table: a row per policy (P), a column per budget (B), the values scaled and
// rounded as the measure says, under a title line "  perplexity (full 1.582)" (shares in %; name
// recall also says how many names there are and how many points one is worth).
std::string sweep_table(const PolicySweep& sweep, const SweepMeasure& measure);

// Lesson 11's Step 3 list: one line a policy, "  h2o           20%", the smallest budget from which
// on its perplexity stays within `limit` (first_good_budget), or "none of these"; where only a
// budget that evicts nothing was good enough, why, with the largest evicting budget's excess.
std::string smallest_budget_lines(const PolicySweep& sweep, double limit);

// Every measure of every run, one row per policy and budget, 6 decimals, shares as fractions:
// policy,budget_percent,budget_tokens,<each measure's csv_column>,name_gap.
std::string sweep_csv(const PolicySweep& sweep, std::size_t name_gap);

// One line chart per measure that has a chart_file: x = budget (percent, log axis), a line per
// policy. The files for write_output_files (all or none), in `dir`; `about` is the subtitle.
std::vector<FileToWrite> sweep_charts(const PolicySweep& sweep, const std::string& dir,
                                      const std::string& command, const std::string& about);

// A continuation shorter than this (in predictions) is too short to judge a policy by.
constexpr std::size_t kMinContinuation = 16;

// The prompt-time comparison of a story of n tokens: "At a budget of 10% = 91 tokens", with
// `with_verdict` how often each way agrees more with the full cache, then a table: per prompt
// length P the full cache, then each policy with "token by token | cut once" in every cell; then a
// note for each prompt that leaves fewer than kMinContinuation predictions.
std::string prompt_time_report(const PromptTimeComparison& comparison, std::size_t n,
                               bool with_verdict);

// The sentence the programs print about the context gain (policy_sweep.hpp's context_gain), one
// line to wrap: "How much the model uses its cache: context gain 1.110, the perplexity with only
// the last 64 tokens over the full cache's (...)."
std::string context_gain_sentence(double gain, std::size_t window = kContextGainWindow);

}  // namespace h2o
