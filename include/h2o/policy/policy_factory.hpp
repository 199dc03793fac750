// policy_factory.hpp: turning the words a user types ("--cache h2o --heavy 32 ...") into a policy.
//
// Every cache policy the programs offer is one row of a table in policy_factory.cpp: its name, a
// one-line summary, its properties (PolicyKind), how it is built from PolicySettings and how it
// spends an equal budget. A policy that spreads a budget (adakv, pyramid) takes any scored policy
// (scored_policy.hpp) by a name with a colon: "adakv:knorm" is Ada-KV over key norm's scores,
// "pyramid:tova" PyramidKV over TOVA's; "adakv" alone is "adakv:h2o". Such names are not listed
// among the rows but are accepted wherever a name is. A new policy is its class plus one row:
// --help texts, error messages,
// compare_policies, the lessons and the tests read the names and properties from this table and
// update themselves (key norm and SnapKV were added so), and the explorer page reads from it which
// newest positions are a policy's recent window and what to call the rest it keeps. No program
// names a policy anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/head_scores.hpp"
#include "h2o/policy/snapkv_policy.hpp"

namespace h2o {

// Everything any policy may need; each policy reads only its own fields. How the two budget
// numbers (--heavy, --recent) map onto each policy, so that one pair of numbers compares them all:
//   h2o:    `heavy` heavy hitters + the last `recent`   (total heavy + recent)
//   window: the last heavy + recent tokens              (the same total, all of it recent)
//   sinks:  `sinks` attention sinks + the last `recent` (heavy is not used)
//   random: total heavy + recent, of which the last `recent` are protected
//   tova:   total heavy + recent, nothing protected
//   knorm:  `heavy` shortest keys + the last `recent`
//   snapkv: `heavy` voted tokens + an observation window of the last `recent`
//   pyramid, adakv: as h2o on average per layer and KV head, spread by layer or by head; over
//            another scored policy (adakv:knorm), as that policy on average
//   fastgen: per KV head, by its rule: window `recent`, sink+window 1 + `recent`, heavy+window
//            `heavy` + `recent` (H2O's), or full; the rules from a profile of the first
//            `fastgen_profile` tokens (fastgen_policy.hpp)
//   duo:     streaming KV heads keep `sinks` + the last `recent` (as sinks), retrieval heads every
//            token; half of each layer's heads retrieve, those that looked furthest back over a
//            profile of twice sinks + recent tokens (duo_attention_policy.hpp)
// A budget of heavy + recent = 0 is refused by CacheBudget (budget.hpp), the one place that
// checks it; the full cache ignores both numbers.
inline constexpr int kDefaultHeavyPercent = 50;

struct PolicySettings {
  std::size_t heavy = 0;   // tokens per layer and KV head (see above)
  std::size_t recent = 0;  // tokens per layer and KV head (see above)
  // Policies that read attention: per-head or shared scores. Unset: the policy's paper's way
  // (PolicyKind::paper_scoring).
  std::optional<ScoringMode> scoring;
  std::size_t sinks = 4;  // sinks, duo: first positions always kept (StreamingLLM's 4)
  // settings_for_budget: the percent of a budget kept outside the recent window (heavy hitters,
  // sinks, an H2O start area), 0..99; the recent window gets the rest. H2O's paper: half.
  int heavy_percent = kDefaultHeavyPercent;
  // Each policy's own options, defined beside it.
  H2OOptions h2o;           // h2o: its score, decay and start area (h2o_policy.hpp)
  SnapKVPooling snapkv;     // snapkv: how votes are pooled (average over 5)
  FastGenOptions fastgen;   // fastgen: its target and profile (fastgen_policy.hpp)
  std::uint64_t seed = 1;   // random: seed of the eviction draws
};

// What a program comparing the policies makes of one: the project's subject (H2O), the baseline
// the subject is weighed against in every comparison (a sliding window of the same size), or one
// more contender. The full cache is the reference (evicts = false), whatever its role.
enum class PolicyRole { Contender, Subject, Baseline };

// One policy as the factory knows it: what --help says, and what tests, lessons and tools may rely
// on without naming it.
struct PolicyKind {
  std::string name;     // as typed after --cache
  std::string summary;  // one line for --help
  // How a sentence names it ("H2O", "the window"): "H2O's perplexity ... against the window's".
  std::string prose_name;
  PolicyRole role = PolicyRole::Contender;
  // How its paper scores attention (per-head or shared); none: it reads no attention at all.
  std::optional<ScoringMode> paper_scoring;
  bool evicts = true;  // false only for the full cache, which keeps every token
  // With the budget split settings_for_budget makes (any budget of 2 or more tokens), the token
  // just added is never evicted.
  bool protects_newest = true;
  // One token the policy keeps besides its recent window, in the policy's own words ("heavy
  // hitter", "sink"); "" when all it keeps is its recent window (sliding window, full cache).
  std::string kept_label;
  // How many of the newest positions of a text of n_tokens are its recent window under
  // `settings` (heavy + recent >= 2): after every step each of them is still in the cache, and
  // the window is never more than the policy keeps (max_tokens). Every token of the full cache
  // and of a sliding window is recent; a policy that protects nothing has a window of 0.
  std::size_t (*recent_window)(const PolicySettings& settings, std::size_t n_tokens) = nullptr;
  // True when what the policy holds follows from its budget: every layer and KV head the same
  // number of tokens, each layer its own (PyramidKV) or each KV head what its scores earn within
  // its layer's share (Ada-KV), all holding together what the uniform budget holds (each layer's
  // LayerPolicy says how: keep() and head_capacity()). False when each KV head keeps what its own
  // rule keeps, the rule chosen from a profile (FastGen, DuoAttention): then the total is an
  // outcome of the profile, not the budget, and comparisons give the window what it held (equal
  // bytes).
  bool sized_by_budget = true;
  bool uses_attention() const { return paper_scoring.has_value(); }
};

// The policies make_policy knows, in the order --help lists them.
const std::vector<PolicyKind>& policy_kinds();

// "full, h2o, window, ...": the allowed names, for help texts and error messages.
std::string policy_names();

// True when make_policy knows `name` (a row's, or a budget spread over a scored policy's).
bool is_policy_name(const std::string& name);

// The row of `name`, or for "adakv:knorm" a kind made from the two rows and kept for good
// (std::invalid_argument with unknown_policy_message when there is none, or naming what cannot
// be spread over what).
const PolicyKind& policy_kind(const std::string& name);

// The policy that keeps every token ("full"): the reference every other is measured against.
const PolicyKind& reference_policy();
// The policy the project is about (H2O), and the one it is weighed against (the window): the
// rows whose role says so.
const PolicyKind& subject_policy();
const PolicyKind& baseline_policy();

// "h2o per-head, tova shared, snapkv per-head": each attention-reading policy's paper scoring.
std::string paper_scoring_names();

// "pyramid and adakv spread the budget of any scored policy (h2o, tova, knorm), named after a
// colon: adakv:knorm (h2o's when none is named).", from the table.
std::string budget_spread_help();

// "unknown cache policy 'lru' (expected one of: full, h2o, ...)", or what is wrong with a budget
// spread over another policy ("cache policy 'adakv:window': adakv spreads a budget over a scored
// policy (one of: h2o, tova, knorm)").
std::string unknown_policy_message(const std::string& name);

// A new policy of the named kind, with the paper's scoring unless settings.scoring says otherwise;
// it knows its kind (CachePolicy::kind). Throws std::invalid_argument naming the allowed names
// when the name is unknown, and passes on the policy's own complaint about bad settings (a budget
// of 0 tokens; sinks: recent = 0).
std::unique_ptr<CachePolicy> make_policy(const std::string& name,
                                         const PolicySettings& settings = {});

// Settings under which the named policy holds exactly `tokens` tokens per layer and KV head, so
// that policies compare at equal cache size (compare_policies, lessons 09 and 11): heavy =
// tokens * base.heavy_percent / 100 rounded down (by default half), recent = the rest, so the odd
// token goes to the recent window; sinks take their sinks (at most the heavy part) out of the
// heavy part and give the rest to the recent window; H2O's start area is cut to the heavy part
// when that is smaller (DuoAttention's streaming heads as the sinks); SnapKV's observation window is its paper's 32 tokens, or the recent part
// when that is less. Other fields come from `base`. A heavy_percent outside 0..99 throws
// std::invalid_argument.
PolicySettings settings_for_budget(const std::string& name, std::size_t tokens,
                                   PolicySettings base = {});

}  // namespace h2o
