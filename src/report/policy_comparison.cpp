#include "h2o/report/policy_comparison.hpp"

#include <algorithm>
#include <sstream>

#include "h2o/base/format.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"

namespace h2o {

namespace {

// True for a run whose bytes are an outcome of its rules, not the budget (FastGen).
bool own_bytes(const SweepRun& run) {
  return run.kind != nullptr && !run.kind->sized_by_budget;
}

// A budget's runs from the lowest perplexity up, then those that held their own bytes, refused
// runs last (stable: the factory's order among equals).
std::vector<const SweepRun*> ranked(const BudgetRuns& budget) {
  std::vector<const SweepRun*> rows = budget.runs;
  const auto rank = [](const SweepRun* r) { return !r->refused.empty() ? 2 : own_bytes(*r) ? 1 : 0; };
  std::stable_sort(rows.begin(), rows.end(), [&](const SweepRun* a, const SweepRun* b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a->refused.empty() && a->perplexity() < b->perplexity();
  });
  return rows;
}

// The runs that held the budget (the ones a best and a worst are named among).
std::vector<const SweepRun*> budgeted(const std::vector<const SweepRun*>& rows) {
  std::vector<const SweepRun*> out;
  for (const SweepRun* r : rows) {
    if (!own_bytes(*r)) out.push_back(r);
  }
  return out;
}

// "  64 tokens:  ": where a budget's lines start.
std::string budget_lead(const BudgetRuns& budget) {
  return "  " + pad_right(std::to_string(budget.tokens) + " tokens:", 12);
}

// A verdict line under a budget's first, wrapped at 100 columns.
std::string weighed(const std::string& sentence) {
  return wrap_words(std::string(14, ' ') + sentence, 100, std::string(16, ' '));
}

// The run of the policy `name` at this budget, if it ran.
const SweepRun* measured(const std::vector<const SweepRun*>& rows, const std::string& name) {
  for (const SweepRun* run : rows) {
    if (run->refused.empty() && run->policy == name) return run;
  }
  return nullptr;
}

}  // namespace

bool names_comparable(const PolicyComparison& comparison) {
  return comparison.full->name_events > 0 && comparison.full->names_correct > 0;
}

std::string change_text(double perplexity, double full_perplexity) {
  const double change = 100.0 * (perplexity / full_perplexity - 1.0);
  const std::string text = fixed(change, 1);
  return (text[0] == '-' ? "" : "+") + text + "%";
}

std::string comparison_table(const PolicyComparison& comparison) {
  const SweepRun& full = *comparison.full;
  const bool quantised = comparison.quantised_bits != 0;
  const double full_perplexity = full.perplexity();
  Table table({"budget", "policy", "kept", "perplexity", quantised ? "KV share" : "bits/byte",
               "vs full", "agrees", "names", "KV bytes", ""});
  const bool names = names_comparable(comparison);
  auto add_row = [&](const std::string& budget_text, const SweepRun& run, bool best) {
    // A run whose bytes its rules decided (FastGen) is weighed at its bytes, never ranked best.
    const bool by_rule = own_bytes(run) && run.refused.empty();
    const std::string mark = best ? "<- best" : by_rule ? "by rule" : "";
    if (!run.refused.empty()) {
      table.add({budget_text, run.policy, "", "", "", "", "", "", "", "refused (see above)"});
      return;
    }
    const double perplexity = run.perplexity();
    const double kv_share =
        static_cast<double>(run.live_kv_bytes) / static_cast<double>(full.live_kv_bytes);
    table.add({budget_text, run.policy, std::to_string(run.kept), fixed(perplexity, 3),
               quantised ? fixed(100.0 * kv_share, 1) + "%" : fixed(run.bits_per_byte(), 3),
               &run == &full ? "-" : change_text(perplexity, full_perplexity),
               fixed(100.0 * run.agreement(), 1) + "%",
               run.name_events == 0 || (!names && &run != &full)
                   ? "-"
                   : fixed(100.0 * run.recall(), 1) + "%",
               std::to_string(run.live_kv_bytes), mark});
  };
  add_row("reference", full, false);
  if (comparison.full_quantised != nullptr) {
    add_row(std::to_string(comparison.quantised_bits) + "-bit all", *comparison.full_quantised,
            false);
  }
  for (const BudgetRuns& budget : comparison.budgets) {
    const std::vector<const SweepRun*> rows = ranked(budget);
    if (rows.empty()) continue;
    const bool any_measured = rows.front()->refused.empty() && !own_bytes(*rows.front());
    const double best = rows.front()->perplexity();
    bool first = true;
    for (const SweepRun* run : rows) {
      add_row(first ? std::to_string(budget.percent) + "% = " + std::to_string(budget.tokens) : "",
              *run,
              !comparison.no_verdict && !quantised && any_measured && run->refused.empty() &&
                  !own_bytes(*run) && run->perplexity() == best);
      first = false;
    }
  }
  std::ostringstream out;
  table.print(out);
  return out.str();
}

namespace {
// Each run that held its own bytes, against the window at those bytes: "FastGen held 36.5% of the
// full cache's KV bytes (its rules', not the budget's); perplexity -2.1% against the window at the
// same bytes (95% interval ...): no difference within noise".
std::vector<std::string> equal_bytes_lines(const PolicyComparison& comparison,
                                           const BudgetRuns& budget) {
  std::vector<std::string> lines;
  for (const auto& [run, window] : budget.equal_bytes) {
    if (!run->refused.empty() || !window->refused.empty()) continue;
    const double share = 100.0 * static_cast<double>(run->stories_kv_bytes) /
                         static_cast<double>(comparison.full->stories_kv_bytes);
    const std::string prose = run->kind->prose_name;
    lines.push_back(weighed(prose + " held " + fixed(share, 1) +
                            "% of the full cache's KV bytes (its rules', not the budget's); " +
                            prose + "'s " +
                            verdict_against(*run, *window,
                                            baseline_policy().prose_name + "'s at the same bytes")));
  }
  return lines;
}

// Quantised: each run that held the budget against the window at its bytes: "h2o held 4.3% of
// the full cache's KV bytes; h2o's perplexity +12.7% against the window's at those bytes, 162
// tokens (95% interval ...): worse".
std::vector<std::string> at_bytes_lines(const PolicyComparison& comparison,
                                        const BudgetRuns& budget) {
  std::vector<std::string> lines;
  for (const auto& [run, window] : budget.at_bytes) {
    if (!run->refused.empty() || !window->refused.empty()) continue;
    const double share = 100.0 * static_cast<double>(run->stories_kv_bytes) /
                         static_cast<double>(comparison.full->stories_kv_bytes);
    const std::string& name = run->policy;
    lines.push_back(weighed(name + " held " + fixed(share, 1) + "% of the full cache's KV bytes; " +
                            name + (name.back() == 's' ? "' " : "'s ") +
                            verdict_against(*run, *window,
                                            baseline_policy().prose_name + "'s at those bytes, " +
                                                std::to_string(window->tokens) + " tokens")));
  }
  return lines;
}
}  // namespace

std::vector<std::string> budget_verdicts(const PolicyComparison& comparison) {
  const double full_perplexity = comparison.full->perplexity();
  const std::string& subject = subject_policy().name;
  const std::string& baseline = baseline_policy().name;
  std::vector<std::string> lines;
  for (const BudgetRuns& budget : comparison.budgets) {
    std::vector<std::string> own = equal_bytes_lines(comparison, budget);
    const std::vector<const SweepRun*> rows = budgeted(ranked(budget));
    const std::string at = budget_lead(budget);
    if (rows.empty()) {
      if (!own.empty()) own.front().replace(0, at.size(), at);
      lines.insert(lines.end(), own.begin(), own.end());
      continue;
    }
    if (!rows.front()->refused.empty()) {
      lines.push_back(at + "every policy refused this budget");
      continue;
    }
    const bool none_evicted = std::all_of(rows.begin(), rows.end(), [](const SweepRun* r) {
      return r->refused.empty() && r->evicted == 0;
    });
    if (none_evicted) {
      const bool exact = std::all_of(rows.begin(), rows.end(), [&](const SweepRun* r) {
        return r->perplexity() == full_perplexity;
      });
      lines.push_back(at + "nothing was evicted: every policy equals the full cache" +
                      (exact                            ? " exactly"
                       : comparison.quantised_bits != 0 ? " but for the quantisation"
                                                        : " (NOT exactly: check the policies)"));
      continue;
    }
    if (comparison.quantised_bits != 0) {  // the same tokens, not the same bytes: no best
      lines.push_back(wrap_words(at + "at " + std::to_string(comparison.quantised_bits) +
                                     "-bit the same tokens are not the same bytes (KV share), so "
                                     "none is named best: each policy against " +
                                     baseline_policy().prose_name + " at the bytes it held",
                                 100, std::string(16, ' ')));
      const std::vector<std::string> each = at_bytes_lines(comparison, budget);
      lines.insert(lines.end(), each.begin(), each.end());
      lines.insert(lines.end(), own.begin(), own.end());
      continue;
    }
    const SweepRun& best = *rows.front();
    std::string line = at + "best " + best.policy + " (" +
                       change_text(best.perplexity(), full_perplexity) + " vs full)";
    const SweepRun* worst = &best;
    for (const SweepRun* r : rows) {
      if (r->refused.empty()) worst = r;
    }
    if (worst != &best) {
      line += ", worst " + worst->policy + " (" +
              change_text(worst->perplexity(), full_perplexity) + ")";
    }
    lines.push_back(line);
    // Is the best one better than the runner-up beyond noise? The same 95% interval as below
    // (left out when the two are the subject and its baseline: the next line says it).
    const SweepRun* runner_up = rows.size() > 1 && rows[1]->refused.empty() ? rows[1] : nullptr;
    const auto pair_is = [&](const SweepRun* a, const SweepRun* b) {
      return a->policy == subject && b->policy == baseline;
    };
    if (runner_up != nullptr && !pair_is(&best, runner_up) && !pair_is(runner_up, &best)) {
      lines.push_back(weighed("best against the runner-up: " +
                              verdict_against(best, *runner_up, runner_up->policy)));
    }
    // The subject against its baseline, with its 95% interval (measure/verdict.hpp).
    const SweepRun* subject_run = measured(rows, subject);
    const SweepRun* baseline_run = measured(rows, baseline);
    if (subject_run != nullptr && baseline_run != nullptr) {
      lines.push_back(weighed(
          subject_policy().prose_name + "'s " +
          verdict_against(*subject_run, *baseline_run, baseline_policy().prose_name + "'s")));
    }
    lines.insert(lines.end(), own.begin(), own.end());
  }
  return lines;
}

std::string position_ranges(const std::vector<Position>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : " ") + std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out.empty() ? "(none)" : out;
}

std::string kept_strip(const std::vector<Position>& sorted, std::size_t steps,
                       std::size_t per_char) {
  std::vector<std::size_t> kept_in_bucket((steps + per_char - 1) / per_char, 0);
  for (Position p : sorted) ++kept_in_bucket[static_cast<std::size_t>(p) / per_char];
  std::string out;
  for (std::size_t b = 0; b < kept_in_bucket.size(); ++b) {
    const std::size_t size = std::min(per_char, steps - b * per_char);
    out += kept_in_bucket[b] == size ? '#' : kept_in_bucket[b] > 0 ? '+' : '.';
  }
  return out;
}

}  // namespace h2o
