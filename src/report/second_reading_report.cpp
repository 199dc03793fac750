#include "h2o/report/second_reading_report.hpp"

#include <algorithm>

#include "h2o/base/format.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/table.hpp"

namespace h2o {

namespace {

// "+1.5" or "-58.0": a change of share in points (percentage points), one decimal.
std::string points_change_text(double change) {
  const std::string text = fixed(100.0 * change, 1);
  return text[0] == '-' || text == "0.0" ? text : "+" + text;
}

// True for a run whose rules, not the budget, decide what it holds (FastGen, DuoAttention).
bool held_by_rule(const SecondReading& run) {
  return is_policy_name(run.policy) && !policy_kind(run.policy).sized_by_budget;
}

// A budget's runs from the highest second-reading share down, then those that held what their
// rules keep, refused runs last (stable: the factory's order among equals).
std::vector<const SecondReading*> ranked_by_second(const SecondReadingResults& results,
                                                   std::size_t b) {
  std::vector<const SecondReading*> rows;
  for (const std::vector<SecondReading>& by_budget : results.runs) rows.push_back(&by_budget.at(b));
  const auto rank = [](const SecondReading* r) {
    return !r->refused.empty() ? 2 : held_by_rule(*r) ? 1 : 0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const SecondReading* a, const SecondReading* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a->refused.empty() && a->second.mean > b->second.mean;
  });
  return rows;
}

// The run of policy `name` at budget b; nullptr when it was not asked for or was refused.
const SecondReading* second_reading_of(const SecondReadingResults& results, const std::string& name,
                                       std::size_t b) {
  for (const std::vector<SecondReading>& by_budget : results.runs) {
    const SecondReading& run = by_budget.at(b);
    if (run.policy == name && run.refused.empty()) return &run;
  }
  return nullptr;
}

}  // namespace

std::string share_text(double share) { return fixed(100.0 * share, 1) + "%"; }

std::string second_reading_table(const SecondReadingResults& results) {
  Table table(
      {"budget", "policy", "kept", "1st reading", "2nd reading", "95% interval", "vs full", ""});
  const auto add = [&](const std::string& budget, const SecondReading& run) {
    if (!run.refused.empty()) {
      table.add({budget, run.label, "", "", "refused", "", "", ""});
      return;
    }
    const std::string interval = run.second.has_interval() ? share_text(run.second.low) + " to " +
                                                                 share_text(run.second.high)
                                                           : "-";
    const bool reference = &run == &results.full;
    table.add({budget, run.label, std::to_string(run.kept), share_text(run.first.mean),
               share_text(run.second.mean), interval,
               reference ? "" : points_change_text(run.second.mean - results.full.second.mean),
               held_by_rule(run) ? "by rule" : ""});
  };
  add("reference", results.full);
  for (std::size_t b = 0; b < results.percents.size(); ++b) {
    const std::string budget =
        std::to_string(results.percents[b]) + "% = " + std::to_string(results.budget_tokens.at(b));
    bool first = true;
    for (const SecondReading* run : ranked_by_second(results, b)) {
      add(first ? budget : "", *run);
      first = false;
    }
  }
  return table.text();
}

std::vector<std::string> second_reading_findings(const SecondReadingResults& results) {
  const SecondReading& full = results.full;
  std::vector<std::string> lines;
  if (!copies(full)) {
    lines.push_back(wrap_words(
        "The full cache predicts " + share_text(full.second.mean) +
            " of the second reading, against " + share_text(full.first.mean) +
            " of the first: not " + fixed(100.0 * kCopyMargin, 0) +
            " points more beyond noise, so this model does not copy what it has read. No policy "
            "then has anything to keep: the rows say nothing of what a cache is for.",
        100, ""));
    return lines;
  }
  lines.push_back(wrap_words("The full cache copies what it has read: it predicts " +
                                 share_text(full.second.mean) + " of the second reading, against " +
                                 share_text(full.first.mean) + " of the first.",
                             100, ""));
  const PolicyKind& window = baseline_policy();
  const PolicyKind& subject = subject_policy();
  for (std::size_t b = 0; b < results.percents.size(); ++b) {
    const std::size_t tokens = results.budget_tokens.at(b);
    if (tokens >= results.text_tokens) continue;  // nothing evicted: every policy is the full cache
    std::vector<std::string> parts;
    if (const SecondReading* run = second_reading_of(results, window.name, b)) {
      const bool reaches = tokens >= results.distance;
      parts.push_back(window.prose_name + ", whose last " + std::to_string(tokens) +
                      (reaches ? " tokens still reach" : " tokens no longer reach") +
                      " back to the first reading (" + std::to_string(results.distance) +
                      " back), predicts " + share_text(run->second.mean) +
                      (copies(*run) ? " (it copies)" : " (it does not copy)"));
    }
    if (const SecondReading* run = second_reading_of(results, subject.name, b)) {
      const double lost = full.second.mean - run->second.mean;
      parts.push_back(
          subject.prose_name +
          ", which chose what to keep before the passage came back, predicts " +
          share_text(run->second.mean) +
          (lost >= kCopyMargin
               ? " (" + fixed(100.0 * lost, 1) + " points below the full cache)"
               : " (within " + fixed(100.0 * kCopyMargin, 0) + " points of the full cache)"));
    }
    const SecondReading* best = nullptr;
    for (const SecondReading* run : ranked_by_second(results, b)) {
      if (run->refused.empty() && policy_kind(run->policy).sized_by_budget) {
        best = run;
        break;
      }
    }
    if (best != nullptr && best->policy != window.name && best->policy != subject.name) {
      parts.push_back("the most, " + best->label + ", " + share_text(best->second.mean));
    }
    if (parts.empty()) continue;
    std::string line =
        "At " + std::to_string(tokens) + " tokens (" + std::to_string(results.percents[b]) + "%): ";
    for (std::size_t i = 0; i < parts.size(); ++i) {
      line += (i == 0 ? "" : i + 1 == parts.size() ? "; and " : "; ") + parts[i];
    }
    lines.push_back(wrap_words(line + ".", 100, "  "));
  }
  return lines;
}

}  // namespace h2o
