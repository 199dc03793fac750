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
// tokens are the prompt: nothing is evicted while they are read, and at the P-th the rules are set.
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
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

// The target share of a head's attention its rule must recover unless --fastgen-target says.
constexpr double kDefaultFastGenTarget = 0.9;
// The sinks of its sink+window rule: the first token (BOS, the only special token here).
constexpr std::size_t kFastGenSinks = 1;

class FastGenPolicy final : public LayerPolicy {
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

  // The profile: the first P tokens are read with every token kept.
  std::size_t prompt_tokens() const override { return profile_tokens_; }

  // While the prompt is read: profiles the row, adds the step's attention to the scores, evicts
  // nothing, and sets the rules at the prompt's last token. After: adds the scores and evicts
  // from each head that is over its rule's tokens.
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;
  // Profiles the row and adds the scores, evicts nothing (a prompt read to be compressed).
  void observe(LayerKVCache& cache, const StepAttention& attention) override;
  // Each head's next victim by its rule (a full head, and every head before the rules are set,
  // by H2O's rule: only asked by callers outside this policy's own steps).
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;
  // Sets the rules from the profile so far (if not yet set) and cuts every head to its rule's
  // tokens; `keep` is not used: the rules, not a budget, say what stays.
  void compress(LayerKVCache& cache, std::size_t keep) override;

  // Each KV head's rule (empty before its rules are set), and the profiles they came from: (G,)
  // each.
  const std::vector<HeadRule>& rules() const { return rules_; }
  const std::vector<HeadProfile>& profiles() const { return profiles_; }
  // Tokens `rule` keeps once the sequence is long enough.
  std::size_t rule_tokens(HeadRule rule) const;

  const HeadProfileOptions& sizes() const { return sizes_; }
  double target() const { return target_; }
  std::size_t profile_tokens() const { return profile_tokens_; }

 private:
  // A new sequence (the cache's newest token at position 0) or a new G: the profile starts over.
  void start_if_new(const LayerKVCache& cache);
  void profile_row(const LayerKVCache& cache, const StepAttention& attention);
  void set_rules(std::size_t n_kv_heads);
  void cut_to_rules(LayerKVCache& cache) const;
  std::size_t victim(HeadRule rule, const LayerKVCache& cache, std::size_t g) const;

  CacheBudget budget_;
  HeadProfileOptions sizes_;
  double target_;
  std::size_t profile_tokens_;
  ScoringMode mode_;
  EvictionRule heavy_rule_;          // H2O's: the last r protected
  bool seen_ = false;                // a token of this layer was observed
  std::vector<HeadProfileSums> sums_;  // (G,)
  std::vector<HeadProfile> profiles_;  // (G,) once the rules are set
  std::vector<HeadRule> rules_;        // (G,) empty until set
  std::vector<std::size_t> ranked_;    // (S,) scratch: slots outside the window, by score
};

}  // namespace h2o
