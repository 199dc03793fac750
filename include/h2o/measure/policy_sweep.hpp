// policy_sweep.hpp: every cache policy at every budget, read with teacher forcing on a text.
//
// The sweep lesson 11 and compare_policies share (lesson 09 runs two of its policies): each
// policy reads every story of a text (teacher_forcing.hpp) at each budget, a percentage of each
// story's tokens that settings_for_budget (policy_factory.hpp) splits as the policy needs, and
// the full cache reads them once first, as the reference. The measures of a run, over all stories:
//   perplexity    exp(mean -log p(next token)), lower = better
//   bits per byte the same surprise per byte of text, whatever the tokenizer (bits_per_byte.hpp)
//   KL            mean KL(full || policy) of the next-token distributions (only with options.kl)
//   agreement     share of predictions whose top token is the full cache's
//   name recall   share of long-gap name events predicted (name_recall.hpp)
// sweep_measures() lists them once, for every table, CSV column and chart a program makes.
// The context gain says how much the model uses its cache at all: the perplexity of a 64-token
// window divided by the full cache's (1.00: the model gains nothing from tokens further back).
//
// Dimension legend: N_i = tokens of story i (BOS first), S_i = N_i - 1 predictions,
// P = policies, B = budgets, L = layers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

// The text a sweep reads.
struct SweepText {
  std::vector<std::vector<int>> stories;  // (stories,) x (N_i,) token ids, BOS first
  std::vector<std::size_t> bytes;         // (stories,) bytes each story's predictions cover
  NameTokens names;                       // the character names, for name recall
  std::size_t name_gap = 64;              // names last seen more than this many tokens back
};
// Builds one: the bytes from the tokenizer (bits_per_byte.hpp's predicted_bytes).
SweepText sweep_text(const Tokenizer& tokenizer, std::vector<std::vector<int>> stories,
                     NameTokens names, std::size_t name_gap);

// One contender: a label for tables and charts, the factory's policy and its settings (the
// budget fields are set by the sweep), and how its cache stores keys and values (float32, or
// quantised to 8, 4 or 2 bits: kv_quantiser.hpp; the full-cache reference always in float32).
struct SweepPolicy {
  SweepPolicy(std::string label, std::string policy, PolicySettings settings = {},
              KvFormat format = {})
      : label(std::move(label)), policy(std::move(policy)), settings(settings), format(format) {}
  std::string label, policy;
  PolicySettings settings;
  KvFormat format;
};
// Every policy of the factory that evicts and holds the budget it is given, in its order, each
// with `base` settings and `format`. (FastGen, whose bytes are an outcome of its rules, is left
// out: it is weighed against the window at equal bytes, read_at_equal_bytes.)
std::vector<SweepPolicy> evicting_policies(const PolicySettings& base = {},
                                           const KvFormat& format = {});

// The variants lesson 11 weighs against their papers' policies: H2O's sums normalised by the
// steps each token spent in the cache (OpenVINO GenAI), H2O's sums decayed by kDefaultH2ODecay per
// step (A2SF's forgetting factor), H2O with the first kStartArea positions protected, H2O with
// only kSmallHeavyPercent of each budget for heavy hitters (the paper: half) and the rest for the
// recent window, and TOVA scoring each KV head on its own; `policy` names the paper's policy.
constexpr std::size_t kStartArea = 4;
constexpr int kSmallHeavyPercent = 10;
std::vector<SweepPolicy> score_variants();
// `policies` with each variant inserted right after the last policy of its kind.
std::vector<SweepPolicy> with_variants(std::vector<SweepPolicy> policies,
                                       const std::vector<SweepPolicy>& variants);

// How many tokens a run keeps per layer and KV head in a story of n tokens: `percent` of n, or a
// fixed number of `tokens`; neither (both 0): the full cache.
// (SweepOptions::story_tokens may give each story its own number instead.)
struct SweepBudget {
  int percent = 0;
  std::size_t tokens = 0;
  std::size_t of(std::size_t n) const;
};

// One policy at one budget, over every story.
struct SweepRun {
  std::string label, policy;
  const PolicyKind* kind = nullptr;  // the factory's row of `policy` (set by read_stories)
  SweepBudget budget;
  std::string refused;      // the factory's refusal of the settings ("" = it ran)
  std::string description;  // the policy's describe() in the first story (+ a warning when it
                            // holds another number of tokens than the budget)
  std::vector<TeacherForcedRun> readings;  // (stories,) log_probs only in the kept reference
  std::size_t steps = 0, agreements = 0, name_events = 0, names_correct = 0, bytes = 0;
  double nll = 0.0, kl_sum = 0.0;    // sums over all predictions, in nats
  std::size_t stories_kv_bytes = 0;  // keys + values of all layers at each story's end, summed
  std::vector<std::size_t> story_kv_bytes;  // (stories,) the same, story by story
  // (stories,) tokens held at each story's end, all layers and KV heads together
  std::vector<std::size_t> story_held;
  std::size_t slots_per_token = 0;  // layers x KV heads: what story_held counts per position
  // (stories,) tokens of each story read with every token kept before the first eviction: a
  // prompt cut once (SweepOptions), or the policy's own (FastGen's profile: prompt_tokens()).
  std::vector<std::size_t> story_prompt;
  // The first story after its last step:
  std::size_t tokens = 0;         // its budget, tokens per layer and KV head (0: full cache)
  std::size_t kept = 0;           // tokens held per layer and KV head, on average (rounded down)
  std::size_t evicted = 0;        // tokens evicted per layer and KV head: tokens read - kept
  std::size_t live_kv_bytes = 0;  // keys + values of all layers, as stored (codes, scales, zeros)
  std::vector<std::vector<Position>> kept_at_end;  // (L,) x (kept,) KV head 0, ascending

  double perplexity() const;
  double bits_per_byte() const;
  double mean_kl() const;
  double agreement() const;
  double recall() const;                               // 0 without name events
  std::vector<std::vector<double>> token_nll() const;  // (stories,) x (S_i,)
};

// Story by story, the tokens per layer and KV head `run` held at each story's end (story_held,
// rounded to the nearest token, at least 2): the budgets that give a window the bytes a policy
// whose budget is an outcome of its rules (FastGen) ended each story with. (stories,)
std::vector<std::size_t> equal_bytes_tokens(const SweepRun& run);

struct SweepOptions {
  bool kl = false;  // keep the reference's distributions, so that every run measures KL
  // > 0: the first `compressed_prompt` tokens of each story are a prompt the policy cuts once
  // (Decoder::read_prompt_compressed) instead of evicting token by token.
  std::size_t compressed_prompt = 0;
  // Set: story i's prompt cut once is story_prompt[i] tokens instead (0: none; at most the
  // story's length less one). (stories,)
  std::vector<std::size_t> story_prompt;
  // Set: story i keeps story_tokens[i] tokens per layer and KV head, whatever the budget says
  // (equal_bytes_tokens). (stories,)
  std::vector<std::size_t> story_tokens;
  // Called before each story is read (its index, from 0); what it returns sees every step of
  // that story's decoder (Decoder::set_step_observer: e.g. to record what a layer keeps; an
  // empty observer: nothing is called for that story).
  std::function<Decoder::StepObserver(const SweepRun&, std::size_t story)> story_observer;
};

// Every story of `text` read by one policy at one budget, against `reference` (the full cache's
// run, or nullptr when this is it). A policy the factory refuses at some story's budget comes
// back with `refused` set and no readings.
SweepRun read_stories(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                      const SweepPolicy& policy, SweepBudget budget, const SweepRun* reference,
                      const SweepOptions& options = {});

// Why the factory refuses `policy` at `budget` for some story of `text` ("" when it takes every
// story): the `refused` read_stories would give that run, known before any run.
std::string sweep_refusal(const SweepText& text, const SweepPolicy& policy, SweepBudget budget);

// `policy` (the window, say) reading every story of `text` with the tokens `other` held at the
// end of that story (equal_bytes_tokens): the same KV bytes, story by story. And the same start:
// where `other` read a prompt with every token kept (story_prompt), `policy` reads as many
// tokens with the full cache and cuts them once. Its label says so: "window at fastgen's bytes".
// Quantised (policy.format), the same tokens are not the same bytes (a key group's scales are
// shared by its live tokens: cache/window_bytes.hpp), so `policy` must be the window, and it
// keeps the tokens whose bytes are nearest those `other` held at each story's end
// (window_tokens_for_bytes); std::invalid_argument for another policy.
SweepRun read_at_equal_bytes(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                             const SweepPolicy& policy, const SweepRun& other,
                             const SweepRun* reference, SweepOptions options = {});

// The full cache's run (the reference) with its distributions kept when options.kl.
SweepRun read_full_cache(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                         const SweepOptions& options = {});

struct PolicySweep {
  SweepRun full;                            // the reference
  std::vector<int> percents;                // (B,) ascending
  std::vector<std::vector<SweepRun>> runs;  // (P, B)
  // The run with this label at budget index b; nullptr when the sweep has no such label.
  const SweepRun* find(const std::string& label, std::size_t b) const;
  // Every budget's run of the policy with this label; throws std::invalid_argument without one.
  const std::vector<SweepRun>& of(const std::string& label) const;
  // The indices of the budgets below 100% (at 100% every policy is the full cache), ascending.
  std::vector<std::size_t> evicting_budgets() const;
};

// Every policy of `policies` at every percent of `percents`, after the full cache.
PolicySweep sweep_policies(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                           const std::vector<SweepPolicy>& policies,
                           const std::vector<int>& percents, const SweepOptions& options = {});

// A against B (same stories): their perplexity difference and its 95% interval (verdict.hpp's
// units: the stories, or blocks of one story). In words: report/verdict_text.hpp.
PerplexityDifference difference(const SweepRun& a, const SweepRun& b);

// The index of the smallest budget from which on every run's perplexity stays within `limit` (a
// lucky dip below it at a small budget does not count); by_budget.size() when there is none.
std::size_t first_good_budget(const std::vector<SweepRun>& by_budget, double limit);

// A's runs against B's (P, B) at the budget indices `budgets`: verdicts and name counts.
BudgetComparison compare_over_budgets(const std::vector<SweepRun>& a,
                                      const std::vector<SweepRun>& b,
                                      const std::vector<std::size_t>& budgets);

// The measures, listed once: how a table, a CSV column and a chart name each, and its value.
struct SweepMeasure {
  std::string name;          // "perplexity", as tables name it
  std::string csv_column;    // "perplexity"
  bool in_tables = true;     // shown in the programs' tables (the others: CSV and charts only)
  std::string chart_file;    // "budget_perplexity.svg"; "" = no chart
  std::string chart_title;   // "Perplexity against cache budget"
  std::string y_label;       // the chart's y axis, with units
  double scale = 1.0;        // tables show value * scale (100 for shares, in %)
  int decimals = 3;          // tables' decimals
  bool needs_names = false;  // meaningless without name events
  double (SweepRun::*value)() const = nullptr;
};
const std::vector<SweepMeasure>& sweep_measures();

// The window of tokens the context gain uses.
constexpr std::size_t kContextGainWindow = 64;
// Context gain: perplexity of a window of `window` tokens over the full cache's (`full`, the
// reference run of the same text): how much the model uses its cache beyond that window.
double context_gain(std::shared_ptr<const DecoderWeights> weights, const SweepText& text,
                    const SweepRun& full, std::size_t window = kContextGainWindow);

}  // namespace h2o
