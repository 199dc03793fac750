#include "h2o/measure/prompt_time.hpp"

#include <algorithm>
#include <cmath>

#include "h2o/cache/budget.hpp"

namespace h2o {

Continuation continuation(const TeacherForcedRun& run, const TeacherForcedRun& full,
                          const std::vector<int>& tokens, const std::vector<NameMention>& long_gap,
                          std::size_t first) {
  Continuation c;
  double nll = 0.0;
  for (std::size_t t = first; t < run.steps(); ++t) {
    c.agreement += run.top1[t] == full.top1[t] ? 1.0 : 0.0;
    nll += run.token_nll[t];
  }
  const auto steps = static_cast<double>(run.steps() - first);
  c.agreement /= steps;
  c.perplexity = std::exp(nll / steps);
  for (const NameMention& mention : long_gap) {
    if (mention.first - 1 < first) continue;  // its first token is still in the prompt
    ++c.names;
    c.names_right += name_predicted(mention, tokens, run.top1) ? 1 : 0;
  }
  return c;
}

PromptTimeComparison compare_prompt_time(std::shared_ptr<const DecoderWeights> weights,
                                         const SweepText& text, const SweepRun& full,
                                         int budget_percent,
                                         const std::vector<int>& prompt_percents) {
  const std::vector<int>& tokens = text.stories.at(0);
  const std::size_t n = tokens.size();
  const SweepText first_story{{tokens}, {text.bytes.at(0)}, text.names, text.name_gap};
  const std::vector<NameMention> long_gap = long_gap_mentions(tokens, text.names, text.name_gap);
  const TeacherForcedRun& reference = full.readings.at(0);
  PromptTimeComparison result;
  result.budget_percent = budget_percent;
  result.budget = tokens_for_percent(n, budget_percent);
  std::vector<SweepRun> per_step;  // one per policy: one token-by-token run serves every prompt
  for (const SweepPolicy& policy : evicting_policies()) {
    per_step.push_back(read_stories(weights, first_story, policy, {budget_percent, 0}, nullptr));
  }
  for (int percent : prompt_percents) {
    PromptTimePrompt prompt;
    prompt.percent = percent;
    prompt.tokens = std::min(tokens_for_percent(n, percent), n - 2);
    const std::size_t first = prompt.tokens - 1;  // the step that reads the prompt's last token
    prompt.full = continuation(reference, reference, tokens, long_gap, first);
    SweepOptions cut_once;
    cut_once.compressed_prompt = prompt.tokens;
    for (const SweepRun& run : per_step) {
      const SweepRun once = read_stories(weights, first_story, {run.label, run.policy, {}},
                                         {budget_percent, 0}, nullptr, cut_once);
      PromptTimeRow row{run.label,
                        continuation(run.readings[0], reference, tokens, long_gap, first),
                        continuation(once.readings[0], reference, tokens, long_gap, first)};
      ++result.pairs;
      result.cut_once_agrees_more += row.cut_once.agreement > row.token_by_token.agreement;
      result.token_by_token_agrees_more += row.cut_once.agreement < row.token_by_token.agreement;
      prompt.rows.push_back(row);
    }
    result.prompts.push_back(prompt);
  }
  return result;
}

}  // namespace h2o
