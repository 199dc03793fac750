// policy_factory.hpp: turning the words a user types ("--cache h2o --heavy 32 ...") into a policy.
//
// Every cache policy the programs offer is one row of a table (name, one-line summary, maker), so
// a new policy (sliding window, sinks + window, random, TOVA...) is added by writing its class,
// adding its settings to PolicySettings and one row to the table in policy_factory.cpp; --help
// texts and error messages list the names from the same table and update themselves.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "h2o/cache_policy.hpp"
#include "h2o/h2o_policy.hpp"
#include "h2o/selection.hpp"

namespace h2o {

// Everything any policy may need; each policy reads only its own fields.
struct PolicySettings {
  H2OBudget budget;                            // h2o: heavy + recent tokens kept per KV head
  ScoringMode scoring = ScoringMode::PerHead;  // h2o: per-head or shared scores
};

struct PolicyKind {
  std::string name;     // as typed after --cache
  std::string summary;  // one line for --help
};

// The policies make_policy knows, in the order --help lists them.
const std::vector<PolicyKind>& policy_kinds();

// "full, h2o": the allowed names, for help texts and error messages.
std::string policy_names();

// A new policy of the named kind. Throws std::invalid_argument naming the allowed names when the
// name is unknown, and passes on the policy's own complaint about bad settings (h2o: a budget of
// heavy + recent = 0).
std::unique_ptr<CachePolicy> make_policy(const std::string& name,
                                         const PolicySettings& settings = {});

}  // namespace h2o
