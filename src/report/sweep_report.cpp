#include "h2o/report/sweep_report.hpp"

#include "h2o/base/format.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"

namespace h2o {

std::string smallest_budget_lines(const PolicySweep& sweep, double limit) {
  const std::vector<int>& percents = sweep.percents;
  const std::vector<std::size_t> evicting = sweep.evicting_budgets();
  const std::size_t largest_evicting = evicting.empty() ? percents.size() : evicting.back();
  std::string lines;
  for (const std::vector<SweepRun>& by_budget : sweep.runs) {
    const std::size_t needs = first_good_budget(by_budget, limit);
    std::string line =
        "  " + pad_right(by_budget.front().label, 14) +
        (needs < percents.size() ? std::to_string(percents[needs]) + "%" : "none of these");
    // Every budget that evicts anything was too small: say by how much.
    if ((needs == percents.size() || percents[needs] >= 100) &&
        largest_evicting < percents.size()) {
      const double over = by_budget[largest_evicting].perplexity() / sweep.full.perplexity() - 1;
      line += std::string(needs < percents.size() ? 2 : 0, ' ') +
              "  why: what it evicts is needed later; at " +
              std::to_string(percents[largest_evicting]) + "% still " + fixed(100 * over, 1) +
              "% over";
    }
    // Within the lessons' 100 columns even for a model far off (an excess of many digits).
    lines += wrap_words(line, 100, std::string(31, ' ')) + "\n";
  }
  return lines;
}

std::string sweep_table(const PolicySweep& sweep, const SweepMeasure& measure) {
  std::vector<std::string> titles = {"policy"};
  for (int percent : sweep.percents) titles.push_back(std::to_string(percent) + "%");
  Table table(titles);
  for (const std::vector<SweepRun>& by_budget : sweep.runs) {
    std::vector<std::string> row = {by_budget.front().label};
    for (const SweepRun& run : by_budget) {
      row.push_back(fixed(measure.scale * (run.*measure.value)(), measure.decimals));
    }
    table.add(row);
  }
  const std::string unit = measure.scale == 100.0 ? "%" : "";
  const std::size_t events = sweep.full.name_events;
  std::string title = "  " + measure.name + (unit.empty() ? "" : ", " + unit) + " (full " +
                      fixed(measure.scale * (sweep.full.*measure.value)(), measure.decimals) + unit;
  if (measure.needs_names && events > 0) {
    title += "; " + std::to_string(events) + " names, one is " +
             fixed(100.0 / static_cast<double>(events), 1) + " points";
  }
  return title + ")\n" + table.text();
}

std::string sweep_csv(const PolicySweep& sweep, std::size_t name_gap) {
  std::vector<std::string> columns = {"policy", "budget_percent", "budget_tokens"};
  for (const SweepMeasure& measure : sweep_measures()) columns.push_back(measure.csv_column);
  columns.push_back("name_gap");
  Table csv(columns);
  for (const std::vector<SweepRun>& by_budget : sweep.runs) {
    for (const SweepRun& run : by_budget) {
      std::vector<std::string> row = {run.label, std::to_string(run.budget.percent),
                                      std::to_string(run.tokens)};
      for (const SweepMeasure& measure : sweep_measures()) {
        row.push_back(fixed((run.*measure.value)(), 6));
      }
      row.push_back(std::to_string(name_gap));
      csv.add(row);
    }
  }
  return csv.csv();
}

std::vector<FileToWrite> sweep_charts(const PolicySweep& sweep, const std::string& dir,
                                      const std::string& command, const std::string& about) {
  std::vector<FileToWrite> files;
  for (const SweepMeasure& measure : sweep_measures()) {
    if (measure.chart_file.empty()) continue;
    LineChart chart;
    chart.text = {measure.chart_title, {about}, command};
    chart.x_label = "cache budget (% of the text's tokens)";
    chart.y_label = measure.y_label;
    chart.log_x = true;
    for (const std::vector<SweepRun>& by_budget : sweep.runs) {
      Series series{by_budget.front().label, {}, {}, false, true};
      for (const SweepRun& run : by_budget) {
        series.x.push_back(run.budget.percent);
        series.y.push_back((run.*measure.value)());
      }
      chart.series.push_back(series);
    }
    files.push_back({dir + "/" + measure.chart_file, "the chart", line_chart_svg(chart)});
  }
  return files;
}

std::string prompt_time_report(const PromptTimeComparison& comparison, std::size_t n,
                               bool with_verdict) {
  std::string text = "At a budget of " + std::to_string(comparison.budget_percent) +
                     "% = " + std::to_string(comparison.budget) + " tokens";
  if (with_verdict) {
    text += ", cutting the prompt\n        once agrees more with the full cache in " +
            std::to_string(comparison.cut_once_agrees_more) + " of " +
            std::to_string(comparison.pairs) + " (prompt, policy) pairs, evicting\n        " +
            "token by token in " + std::to_string(comparison.token_by_token_agrees_more) +
            " (the rest tie). Judged on the text after a prompt of P tokens;\n        each cell: "
            "evicting token by token | cutting the prompt once\n";
  } else {
    text +=
        ".\n        Judged on the text after a prompt of P tokens; each cell: evicting token "
        "by token | cutting\n        the prompt once\n";
  }
  auto names_right = [](const Continuation& a, const Continuation* b) {
    if (a.names == 0) return std::string("-");
    return std::to_string(a.names_right) +
           (b == nullptr ? "" : " | " + std::to_string(b->names_right)) + " of " +
           std::to_string(a.names);
  };
  Table table({"P", "policy", "top-1 agreement %", "perplexity", "long-gap names right"});
  std::string notes;  // prompts that leave too little text to judge
  for (const PromptTimePrompt& prompt : comparison.prompts) {
    if (n - prompt.tokens < kMinContinuation) {
      notes += "  Note: a prompt of " + std::to_string(prompt.tokens) + " tokens (" +
               std::to_string(prompt.percent) + "%) leaves only " +
               std::to_string(n - prompt.tokens) + " predictions to judge; its row says little.\n";
    }
    table.row(std::to_string(prompt.tokens), reference_policy().name, "100.0",
              fixed(prompt.full.perplexity, 3), names_right(prompt.full, nullptr));
    for (const PromptTimeRow& row : prompt.rows) {
      const Continuation &step = row.token_by_token, &once = row.cut_once;
      table.row(
          "", row.policy, fixed(100 * step.agreement, 1) + " | " + fixed(100 * once.agreement, 1),
          fixed(step.perplexity, 3) + " | " + fixed(once.perplexity, 3), names_right(step, &once));
    }
  }
  return text + table.text() + notes;
}

std::string context_gain_sentence(double gain, std::size_t window) {
  return "How much the model uses its cache: context gain " + fixed(gain, 3) +
         ", the perplexity with only the last " + std::to_string(window) +
         " tokens over the full cache's (1.000: it uses nothing further back; the higher, the more "
         "a cache that forgets can lose).";
}

}  // namespace h2o
