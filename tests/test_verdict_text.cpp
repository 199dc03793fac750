// test_verdict_text.cpp: the words for a verdict (report/verdict_text.hpp): the units' names, the
// sentence with an interval, without one and with nothing to compare, the three verdict words, the
// tallies over budgets without zero counts, and the warning for a text beyond the model.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o_catch.hpp"

using namespace h2o;
using h2o_catch::Contains;

namespace {
// A sweep run of one story whose predictions each cost `nll` nats.
SweepRun run_of(std::size_t predictions, double nll) {
  SweepRun run;
  run.readings.emplace_back();
  run.readings.back().token_nll.assign(predictions, nll);
  return run;
}
}  // namespace

TEST_CASE("units are named as stories or as blocks of 32 predictions", "[verdict_text]") {
  // One story of 70 predictions: 32 + 32 + 6, three blocks.
  CHECK(units_name({std::vector<double>(70, 1.0)}, 3) == "3 blocks of 32 predictions");
  CHECK(units_name({std::vector<double>(20, 1.0)}, 1) == "1 block of 32 predictions");
  // From kMinStoriesToResample stories on, each story is one unit.
  const std::vector<std::vector<double>> many(kMinStoriesToResample, std::vector<double>(40, 1.0));
  CHECK(units_name(many, kMinStoriesToResample) == "8 stories");
  // Two sweep runs of that one story, A 0.5 nats worse than B at each prediction: three blocks,
  // too few for an interval.
  const SweepRun a = run_of(70, 1.5), b = run_of(70, 1.0);
  CHECK(difference_units(a, difference(a, b)) == "3 blocks of 32 predictions");
  CHECK(verdict_against(a, b, "the window") ==
        "perplexity +64.9% against the window (too few units for an interval: 3 blocks of 32 "
        "predictions): no difference within noise");
}

TEST_CASE("the verdict sentence: with an interval, too few units, nothing to compare",
          "[verdict_text]") {
  // Four one-prediction units, +1 and -1 nats twice each (test_verdict.cpp's worked example):
  // change 0, interval e^-1 - 1 to e^1 - 1.
  const PerplexityDifference wide = perplexity_difference({{1, 1}, {1, 1}, {-1, 1}, {-1, 1}});
  CHECK(verdict_sentence("the window", wide, "4 blocks of 32 predictions") ==
        "perplexity +0.0% against the window (95% interval -63.2% to +171.8%, 4 blocks of 32 "
        "predictions): no difference within noise");
  const PerplexityDifference none = perplexity_difference({});
  CHECK(verdict_sentence("the window", none, "0 blocks of 32 predictions") ==
        "nothing to compare against the window");
  // Fewer than kMinUnits units: a change, but no interval, and so no "better".
  const PerplexityDifference few = perplexity_difference({{-1, 10}, {-2, 10}});
  CHECK(verdict_sentence("the window", few, "2 blocks of 32 predictions") ==
        "perplexity -13.9% against the window (too few units for an interval: 2 blocks of 32 "
        "predictions): no difference within noise");
  PerplexityDifference d;
  d.units = kMinUnits;
  d.predictions = 100;
  d.change = -0.05, d.low = -0.08, d.high = -0.01;
  CHECK(verdict_sentence("the window", d, "12 stories") ==
        "perplexity -5.0% against the window (95% interval -8.0% to -1.0%, 12 stories): better");
  d.change = 0.05, d.low = -0.0001, d.high = 0.08;  // the sign shows where it rounds to 0.0
  CHECK(verdict_sentence("the window", d, "12 stories") ==
        "perplexity +5.0% against the window (95% interval -0.0% to +8.0%, 12 stories): no "
        "difference within noise");
  CHECK(signed_percent(0.041) == "+4.1%");
  CHECK(signed_percent(-0.0001) == "-0.0%");
}

TEST_CASE("the three verdict words, and tallies without zero counts", "[verdict_text]") {
  CHECK(verdict_word(Verdict::Better) == "better");
  CHECK(verdict_word(Verdict::Worse) == "worse");
  CHECK(verdict_word(Verdict::WithinNoise) == "no difference within noise");
  CHECK(names_against(0, 0, 0) == "");
  CHECK(names_against(6, 3, 9) == "6 against 3 of 9 long-gap names");
  CHECK(verdict_tally({}) == "");
  CHECK(verdict_tally({Verdict::WithinNoise, Verdict::Better, Verdict::WithinNoise}) ==
        "better at 1, no difference within noise at 2 of 3 budgets");
  CHECK(verdict_tally({Verdict::Worse}) == "worse at 1 of 1 budget");
  BudgetComparison comparison{{Verdict::Better, Verdict::WithinNoise}, 0, 0};
  CHECK(budget_comparison_sentence(comparison, true) ==
        "perplexity better at 1, no difference within noise at 1 of 2 budgets; name recall the "
        "same at every budget");  // never "higher at 0, lower at 0"
  CHECK(budget_comparison_sentence(comparison, false) ==
        "perplexity better at 1, no difference within noise at 1 of 2 budgets");
  comparison.fewer_names = 1;
  CHECK(budget_comparison_sentence(comparison, true) ==
        "perplexity better at 1, no difference within noise at 1 of 2 budgets; name recall lower "
        "at 1");
  comparison.more_names = 2;
  CHECK(budget_comparison_sentence(comparison, true) ==
        "perplexity better at 1, no difference within noise at 1 of 2 budgets; name recall higher "
        "at 2, lower at 1");
  CHECK(budget_comparison_sentence({}, true) == "(no budget below 100% to compare)");
  // The budgets of each verdict, better first, then worse, then within noise.
  const BudgetComparison mixed{
      {Verdict::WithinNoise, Verdict::Better, Verdict::Worse, Verdict::Better}, 0, 0};
  CHECK(budgets_by_verdict(mixed, {"2%", "5%", "10%", "20%"}) ==
        "better at 5%, 20%; worse at 10%; no difference within noise at 2%");
  CHECK(budgets_by_verdict({}, {}) == "");
  CHECK_THROWS_AS(budgets_by_verdict(mixed, {"2%"}), std::invalid_argument);
}

TEST_CASE("the warning for a text beyond the model says why no verdict is drawn",
          "[verdict_text]") {
  const std::string warning = beyond_model_warning(6.346);
  CHECK_THAT(warning, Contains("6.35 bits per byte"));
  CHECK_THAT(warning, Contains("no verdict is drawn"));
  std::istringstream lines(warning);
  std::string line;
  while (std::getline(lines, line)) CHECK(line.size() <= 100);
  CHECK(warning.back() == '\n');
}
