#include "h2o/measure/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"

namespace h2o {

std::vector<PairedUnit> paired_units(const std::vector<std::vector<double>>& nll_a,
                                     const std::vector<std::vector<double>>& nll_b) {
  if (nll_a.size() != nll_b.size()) {
    throw std::invalid_argument("paired_units: the two readings have different stories");
  }
  const bool per_story = nll_a.size() >= kMinStoriesToResample;
  std::vector<PairedUnit> units;
  for (std::size_t s = 0; s < nll_a.size(); ++s) {
    if (nll_a[s].size() != nll_b[s].size()) {
      throw std::invalid_argument("paired_units: story " + std::to_string(s + 1) +
                                  " has different lengths in the two readings");
    }
    for (std::size_t t = 0; t < nll_a[s].size(); ++t) {
      if (t == 0 || (!per_story && t % kBootstrapBlock == 0)) units.push_back({});
      units.back().nll_difference += nll_a[s][t] - nll_b[s][t];
      ++units.back().predictions;
    }
  }
  return units;
}

std::string units_name(const std::vector<std::vector<double>>& nll_a, std::size_t units) {
  if (nll_a.size() >= kMinStoriesToResample) return std::to_string(units) + " stories";
  return std::to_string(units) + (units == 1 ? " block" : " blocks") + " of " +
         std::to_string(kBootstrapBlock) + " predictions";
}

namespace {
// change = exp(mean difference) - 1 of the units drawn.
double change_of(double nll_difference, std::size_t predictions) {
  return predictions == 0 ? 0.0 : std::expm1(nll_difference / static_cast<double>(predictions));
}
}  // namespace

PerplexityDifference perplexity_difference(const std::vector<PairedUnit>& units,
                                           std::size_t resamples, std::uint64_t seed) {
  PerplexityDifference result;
  double total = 0.0;
  for (const PairedUnit& unit : units) {
    total += unit.nll_difference;
    result.predictions += unit.predictions;
  }
  result.units = units.size();
  result.change = change_of(total, result.predictions);
  result.low = result.high = result.change;
  if (!result.has_interval() || resamples == 0) return result;
  Rng rng(seed);
  std::vector<double> changes(resamples);  // (resamples,)
  const auto U = static_cast<std::uint32_t>(units.size());
  for (double& change : changes) {
    double sum = 0.0;
    std::size_t predictions = 0;
    for (std::uint32_t i = 0; i < U; ++i) {
      const PairedUnit& unit = units[rng.below(U)];
      sum += unit.nll_difference;
      predictions += unit.predictions;
    }
    change = change_of(sum, predictions);
  }
  std::sort(changes.begin(), changes.end());
  const std::size_t tail = resamples * 25 / 1000;  // 2.5% of the draws on each side
  result.low = changes[tail];
  result.high = changes[resamples - 1 - tail];
  return result;
}

Verdict verdict_of(const PerplexityDifference& difference) {
  if (!difference.has_interval()) return Verdict::WithinNoise;
  if (difference.high < 0.0) return Verdict::Better;
  if (difference.low > 0.0) return Verdict::Worse;
  return Verdict::WithinNoise;
}

std::string verdict_word(Verdict verdict) {
  switch (verdict) {
    case Verdict::Better:
      return "better";
    case Verdict::Worse:
      return "worse";
    case Verdict::WithinNoise:
      break;
  }
  return "no difference within noise";
}

std::string signed_percent(double change) {
  // The sign is the value's own, also where it rounds to 0.0: an interval from -0.0% to +0.1%
  // holds 0, one from +0.0% to +0.1% does not, as the verdict after it says.
  return (change < 0 ? "-" : "+") + fixed(100.0 * std::fabs(change), 1) + "%";
}

std::string verdict_sentence(const std::string& against, const PerplexityDifference& difference,
                             const std::string& units) {
  if (difference.predictions == 0) return "nothing to compare against " + against;
  std::string sentence = "perplexity " + signed_percent(difference.change) + " against " + against;
  if (difference.has_interval()) {
    sentence += " (95% interval " + signed_percent(difference.low) + " to " +
                signed_percent(difference.high) + ", " + units + ")";
  } else {
    sentence += " (too few units for an interval: " + units + ")";
  }
  return sentence + ": " + verdict_word(verdict_of(difference));
}

std::string names_against(std::size_t correct_a, std::size_t correct_b, std::size_t events) {
  if (events == 0) return "";
  return std::to_string(correct_a) + " against " + std::to_string(correct_b) + " of " +
         std::to_string(events) + " long-gap names";
}

std::string verdict_tally(const std::vector<Verdict>& verdicts) {
  std::string text;
  for (Verdict kind : {Verdict::Better, Verdict::Worse, Verdict::WithinNoise}) {
    const auto count = std::count(verdicts.begin(), verdicts.end(), kind);
    if (count == 0) continue;
    text += (text.empty() ? "" : ", ") + verdict_word(kind) + " at " + std::to_string(count);
  }
  if (text.empty()) return "";
  return text + " of " + std::to_string(verdicts.size()) +
         (verdicts.size() == 1 ? " budget" : " budgets");
}

std::size_t BudgetComparison::count(Verdict verdict) const {
  return static_cast<std::size_t>(std::count(verdicts.begin(), verdicts.end(), verdict));
}

std::string budget_comparison_sentence(const BudgetComparison& comparison, bool names_counted) {
  if (comparison.verdicts.empty()) return "(no budget below 100% to compare)";
  std::string sentence = "perplexity " + verdict_tally(comparison.verdicts);
  if (!names_counted) return sentence;
  if (comparison.more_names + comparison.fewer_names == 0) {
    return sentence + "; name recall the same at every budget";
  }
  std::string names;  // zero counts left out
  if (comparison.more_names > 0) names = "higher at " + std::to_string(comparison.more_names);
  if (comparison.fewer_names > 0) {
    names += (names.empty() ? "" : ", ") + std::string("lower at ") +
             std::to_string(comparison.fewer_names);
  }
  return sentence + "; name recall " + names;
}

std::string budgets_by_verdict(const BudgetComparison& comparison,
                               const std::vector<std::string>& budget_names) {
  if (budget_names.size() != comparison.verdicts.size()) {
    throw std::invalid_argument("budgets_by_verdict: a name for each budget's verdict");
  }
  std::string sentence;
  for (Verdict verdict : {Verdict::Better, Verdict::Worse, Verdict::WithinNoise}) {
    std::string budgets;
    for (std::size_t i = 0; i < budget_names.size(); ++i) {
      if (comparison.verdicts[i] == verdict)
        budgets += (budgets.empty() ? "" : ", ") + budget_names[i];
    }
    if (!budgets.empty())
      sentence += (sentence.empty() ? "" : "; ") + verdict_word(verdict) + " at " + budgets;
  }
  return sentence;
}

}  // namespace h2o
