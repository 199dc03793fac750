// policy_factory.hpp: turning the words a user types ("--cache h2o --heavy 32 ...") into a policy.
//
// Every cache policy the programs offer is one row of a table (name, one-line summary, maker), so
// a new policy is added by writing its class, adding its settings to PolicySettings and one row
// to the table in policy_factory.cpp; --help texts and error messages list the names from the same
// table and update themselves. Sliding window, sinks + window, random and TOVA were added so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "h2o/cache_policy.hpp"
#include "h2o/h2o_policy.hpp"
#include "h2o/selection.hpp"
#include "h2o/sink_window_policy.hpp"

namespace h2o {

// Everything any policy may need; each policy reads only its own fields. How the two budget
// numbers (--heavy, --recent) map onto each policy, so that one pair of numbers compares them all:
//   h2o:    `heavy` heavy hitters + the last `recent`   (total heavy + recent)
//   window: the last heavy + recent tokens              (the same total, all of it recent)
//   sinks:  `sinks` attention sinks + the last `recent` (heavy is not used)
//   random: total heavy + recent, of which the last `recent` are protected
//   tova:   total heavy + recent, nothing protected
struct PolicySettings {
  H2OBudget budget;                            // token counts per layer and KV head (see above)
  ScoringMode scoring = ScoringMode::PerHead;  // h2o, tova: per-head or shared scores
  std::size_t sinks = SinkWindowPolicy::kDefaultSinks;  // sinks: first positions always kept
  std::uint64_t seed = 1;                               // random: seed of the eviction draws
};

struct PolicyKind {
  std::string name;     // as typed after --cache
  std::string summary;  // one line for --help
};

// The policies make_policy knows, in the order --help lists them.
const std::vector<PolicyKind>& policy_kinds();

// "full, h2o, window, sinks, random, tova": the allowed names, for help texts and error messages.
std::string policy_names();

// A new policy of the named kind. Throws std::invalid_argument naming the allowed names when the
// name is unknown, and passes on the policy's own complaint about bad settings (a budget of 0
// tokens; sinks: recent = 0).
std::unique_ptr<CachePolicy> make_policy(const std::string& name,
                                         const PolicySettings& settings = {});

}  // namespace h2o
