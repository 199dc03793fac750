#include "h2o/report/verdict_text.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"

namespace h2o {

std::string units_name(const std::vector<std::vector<double>>& nll_a, std::size_t units) {
  if (nll_a.size() >= kMinStoriesToResample) return std::to_string(units) + " stories";
  return std::to_string(units) + (units == 1 ? " block" : " blocks") + " of " +
         std::to_string(kBootstrapBlock) + " predictions";
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

std::string difference_units(const SweepRun& a, const PerplexityDifference& difference) {
  return units_name(a.token_nll(), difference.units);
}

std::string verdict_against(const SweepRun& a, const SweepRun& b, const std::string& b_name) {
  const PerplexityDifference d = difference(a, b);
  return verdict_sentence(b_name, d, difference_units(a, d));
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

std::string beyond_model_warning(double full_bits_per_byte) {
  const std::string text =
      "Warning: the model does not know text like this: even the full cache reads it at " +
      fixed(full_bits_per_byte, 2) + " bits per byte (the limit is " +
      fixed(kBeyondModelBitsPerByte, 1) +
      "; gzip needs 3.5 or more on a short story). Comparing caches on numbers like these means "
      "nothing, so no verdict is drawn. Try a text like the ones the model learned from.";
  return wrap_words(text, 100, "  ") + "\n";
}

}  // namespace h2o
