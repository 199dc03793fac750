// policy_factory.hpp: turning the words a user types ("--cache h2o --heavy 32 ...") into a policy.
//
// Every cache policy the programs offer is one row of a table in policy_factory.cpp: its name,
// a one-line summary, how it is built from PolicySettings, and how it spends an equal budget. A new
// policy is its class plus one row; --help texts, error messages, compare_policies and the
// lessons list the names from the same table and update themselves. Sliding window, sinks +
// window, random and TOVA were added so. No program names a policy anywhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

// Everything any policy may need; each policy reads only its own fields. How the two budget
// numbers (--heavy, --recent) map onto each policy, so that one pair of numbers compares them all:
//   h2o:    `heavy` heavy hitters + the last `recent`   (total heavy + recent)
//   window: the last heavy + recent tokens              (the same total, all of it recent)
//   sinks:  `sinks` attention sinks + the last `recent` (heavy is not used)
//   random: total heavy + recent, of which the last `recent` are protected
//   tova:   total heavy + recent, nothing protected
// A budget of heavy + recent = 0 is refused by CacheBudget (budget.hpp), the one place that
// checks it; the full cache ignores both numbers.
struct PolicySettings {
  std::size_t heavy = 0;                       // tokens per layer and KV head (see above)
  std::size_t recent = 0;                      // tokens per layer and KV head (see above)
  ScoringMode scoring = ScoringMode::PerHead;  // h2o, tova: per-head or shared scores
  H2OScore h2o_score = H2OScore::Sum;          // h2o: sum or normalised sum
  std::size_t start_area = 0;                  // h2o: first positions never evicted (of heavy)
  std::size_t sinks = 4;   // sinks: first positions always kept (StreamingLLM's 4)
  std::uint64_t seed = 1;  // random: seed of the eviction draws
};

struct PolicyKind {
  std::string name;     // as typed after --cache
  std::string summary;  // one line for --help
};

// The policies make_policy knows, in the order --help lists them.
const std::vector<PolicyKind>& policy_kinds();

// "full, h2o, window, sinks, random, tova": the allowed names, for help texts and error messages.
std::string policy_names();

// True when make_policy knows `name`.
bool is_policy_name(const std::string& name);

// "unknown cache policy 'lru' (expected one of: full, h2o, ...)".
std::string unknown_policy_message(const std::string& name);

// A new policy of the named kind. Throws std::invalid_argument naming the allowed names when the
// name is unknown, and passes on the policy's own complaint about bad settings (a budget of 0
// tokens; sinks: recent = 0).
std::unique_ptr<CachePolicy> make_policy(const std::string& name,
                                         const PolicySettings& settings = {});

// Settings under which the named policy holds exactly `tokens` tokens per layer and KV head, so
// that policies compare at equal cache size (compare_policies, lessons 09 and 11): heavy = recent
// = half of it (the odd token goes to the recent window); sinks take their sinks (at most half)
// out of the heavy half and give the rest to the recent window; H2O's start area is cut to the
// heavy half when the budget is smaller. Other fields come from `base`.
PolicySettings settings_for_budget(const std::string& name, std::size_t tokens,
                                   PolicySettings base = {});

}  // namespace h2o
