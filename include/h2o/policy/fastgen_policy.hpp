// fastgen_policy.hpp: FastGen (Ge et al., ICLR 2024, "Model Tells You What to Discard: Adaptive
// KV Cache Compression for LLMs"): every KV head its own cache rule, chosen from a profile of the
// prompt.
//
// Dimension legend: L = layers, G = KV heads of a layer, S = slot capacity, P = profiled tokens,
// r = recent window, k = heavy hitters, s = sink tokens.
//
// FastGen reads the prompt with the full cache and profiles every head as it goes
// (head_profile.hpp: the attention a head gives its sinks, its recent window and its heavy
// hitters). When the prompt is read it gives each KV head the cheapest rule that recovers at
// least a target share T of that head's attention (cheapest_rule), cuts the head to that rule's
// tokens, and from then on keeps the rule:
//   window        the last r tokens;
//   sink+window   the first s tokens (BOS here) and the last r;
//   heavy+window  H2O's rule: the last r and the k best accumulated scores (h2o_policy.hpp);
//   full          every token.
// So the budget is an outcome, not a setting: a high T gives more heads the full cache. Programs
// that compare FastGen with the window do it at equal bytes: the window gets what FastGen held.
//
// The prompt: Decoder::read_prompt_compressed gives it (observe() profiles every token, compress()
// decides and cuts). Read token by token from the first token on (after_attention), the first P
// tokens are the prompt: nothing is evicted while they are read, and at the P-th the rules are set
// (profiled_policy.hpp has these steps, shared with DuoAttention).
// The factory profiles twice the equal budget, so that the heavy hitters are a choice among
// several times as many older tokens (on a shorter profile every old token is a heavy hitter and
// heavy+window recovers everything).
//
// Where it differs from the paper, and why: the paper's rules always keep special tokens and may
// add punctuation, and its local and frequent budgets are shares of the prompt; here the stories
// have few punctuation tokens (head_profile.hpp leaves that rule out), the only special token is
// BOS (s = 1), and r and k are token counts, so that heavy+window is exactly H2O at the budget the
// other policies get. The paper measures recovery on the prompt's whole attention matrix; here a
// row's heavy hitters are the k best sums of the rows before it, as an H2O cache would hold them.
//
// The layer's rules and profile sums ((G,) each) are fields of its object: the rules are a
// property of a head, not of a token. They are reset when the cache sees position 0 again, so one
// object can read one sequence after another, each with its own profile.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/profiled_policy.hpp"

namespace h2o {

// The target share of a head's attention its rule must recover unless --fastgen-target says.
constexpr double kDefaultFastGenTarget = 0.9;
// The sinks of its sink+window rule: the first token (BOS, the only special token here).
constexpr std::size_t kFastGenSinks = 1;

// FastGen's options (the factory's PolicySettings::fastgen; --fastgen-target, --fastgen-profile).
struct FastGenOptions {
  double target = kDefaultFastGenTarget;  // share of a head's attention its rule recovers, (0, 1]
  std::size_t profile = 0;                // tokens profiled; 0: twice heavy + recent
};

class FastGenPolicy final : public ProfiledPolicy {
 public:
  // `budget`: heavy+window keeps budget.heavy + budget.recent, window keeps budget.recent;
  // `sinks` first tokens for sink+window; `target` T in (0, 1]; `profile_tokens` P, the prompt
  // read token by token (at least r + s + 1, so that some row is profiled). Bad values throw
  // std::invalid_argument naming them.
  // `mode`: how the heavy hitters are scored (head_scores.hpp; per-head, the paper's: every head
  // its own), both in the profile and by the heavy+window rule.
  // Each head may keep the full cache, so keep() and head_capacity() are the sequence's length.
  FastGenPolicy(CacheBudget budget, std::size_t sinks, double target, std::size_t profile_tokens,
                ScoringMode mode = ScoringMode::PerHead, const LayerShape& shape = {});

  std::string name() const override { return "fastgen"; }
  // "FastGen: each KV head's cheapest rule recovering 90% of its attention over the first 32
  // tokens: window 8, sink+window 1 + 8, heavy+window 8 + 8, or full; per-head scores"
  std::string describe() const override;

  // Each KV head's rule (empty before its rules are set), and the profiles they came from: (G,)
  // each.
  const std::vector<HeadRule>& rules() const { return rules_; }
  const std::vector<HeadProfile>& profiles() const { return profiles_; }
  // Tokens `rule` keeps once the sequence is long enough.
  std::size_t rule_tokens(HeadRule rule) const;

  const HeadProfileOptions& sizes() const { return sizes_; }
  double target() const { return target_; }

 private:
  // ProfiledPolicy's steps: the profile is each head's sink, local and heavy shares; every step
  // adds the attention to the scores (H2O's sums, for heavy+window); the decision is each head's
  // cheapest rule; a head's victim is its rule's (a full head, and every head before the rules
  // are set, by H2O's rule).
  void start(const LayerKVCache& cache) override;
  void profile(const LayerKVCache& cache, const StepAttention& attention) override;
  void score(LayerKVCache& cache, const StepAttention& attention) override;
  void decide(std::size_t n_kv_heads) override;
  void cut(LayerKVCache& cache) const override;
  std::size_t keeps(std::size_t g) const override { return rule_tokens(rules_[g]); }
  std::size_t victim(const LayerKVCache& cache, std::size_t g) const override;

  CacheBudget budget_;
  HeadProfileOptions sizes_;
  double target_;
  ScoringMode mode_;
  EvictionRule heavy_rule_;            // H2O's: the last r protected
  std::vector<HeadProfileSums> sums_;  // (G,)
  std::vector<HeadProfile> profiles_;  // (G,) once the rules are set
  std::vector<HeadRule> rules_;        // (G,) empty until set
  std::vector<std::size_t> ranked_;    // (S,) scratch: slots outside the window, by score
};

}  // namespace h2o
