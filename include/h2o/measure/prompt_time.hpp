// prompt_time.hpp: cut a prompt once, or evict token by token from the first token on?
//
// The H2O paper's code reads a whole prompt with the full cache and cuts it back to the budget
// once (Decoder::read_prompt_compressed); the decoder here can also evict from the first token on.
// Both read the same story at the same budget; each is judged on its continuation, the
// predictions from the prompt's last token on, against the full cache's: top-1 agreement,
// perplexity, and the long-gap names (name_recall.hpp) whose first token lies after the prompt.
//
// Dimension legend: N = tokens of the story, S = N - 1 predictions.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "h2o/measure/policy_sweep.hpp"

namespace h2o {

// A run's predictions from step `first` on (first < S), against the full cache's run.
struct Continuation {
  double agreement = 0.0;                  // share of those steps whose top-1 is the full cache's
  double perplexity = 0.0;                 // over those steps
  std::size_t names_right = 0, names = 0;  // long-gap names after the prompt, and how many right
};
Continuation continuation(const TeacherForcedRun& run, const TeacherForcedRun& full,
                          const std::vector<int>& tokens, const std::vector<NameMention>& long_gap,
                          std::size_t first);

struct PromptTimeRow {
  std::string policy;
  Continuation token_by_token, cut_once;
};
struct PromptTimePrompt {
  std::size_t tokens = 0;  // P, at most N - 2
  int percent = 0;
  Continuation full;                // the full cache on the same continuation
  std::vector<PromptTimeRow> rows;  // one per evicting policy of the factory
};
struct PromptTimeComparison {
  int budget_percent = 0;  // of the story's tokens
  std::size_t budget = 0;  // tokens per layer and KV head
  std::vector<PromptTimePrompt> prompts;
  std::size_t pairs = 0, cut_once_agrees_more = 0, token_by_token_agrees_more = 0;
};

// Every evicting policy of the factory (its default settings) at `budget_percent` of the first
// story of `text`, for prompts of each of `prompt_percents` of it; `full` is the sweep's
// reference (read_full_cache) of the same text.
PromptTimeComparison compare_prompt_time(std::shared_ptr<const DecoderWeights> weights,
                                         const SweepText& text, const SweepRun& full,
                                         int budget_percent,
                                         const std::vector<int>& prompt_percents);

}  // namespace h2o
