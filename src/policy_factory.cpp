#include "h2o/policy_factory.hpp"

#include <functional>
#include <stdexcept>

#include "h2o/random_eviction_policy.hpp"
#include "h2o/sliding_window_policy.hpp"
#include "h2o/tova_policy.hpp"

namespace h2o {

namespace {

struct PolicyEntry {
  PolicyKind kind;
  std::function<std::unique_ptr<CachePolicy>(const PolicySettings&)> make;
};

// One row per policy. Adding a policy = one more row here.
const std::vector<PolicyEntry>& policy_table() {
  static const std::vector<PolicyEntry> table = {
      {{"full", "keep every token (exact attention, memory grows with the sequence)"},
       [](const PolicySettings&) { return std::make_unique<FullCachePolicy>(); }},
      {{"h2o", "Heavy-Hitter Oracle: keep the recent window plus the highest-scoring tokens"},
       [](const PolicySettings& s) { return std::make_unique<H2OPolicy>(s.budget, s.scoring); }},
      {{"window", "sliding window: keep the last heavy + recent tokens (H2O's local baseline)"},
       [](const PolicySettings& s) {
         return std::make_unique<SlidingWindowPolicy>(s.budget.total());
       }},
      {{"sinks", "StreamingLLM: keep the first --sinks tokens (attention sinks) + the last recent"},
       [](const PolicySettings& s) {
         return std::make_unique<SinkWindowPolicy>(s.sinks, s.budget.recent);
       }},
      {{"random", "keep heavy + recent tokens, evicting a random one outside the recent window"},
       [](const PolicySettings& s) {
         return std::make_unique<RandomEvictionPolicy>(s.budget.total(), s.budget.recent, s.seed);
       }},
      {{"tova", "TOVA: keep heavy + recent tokens, evicting the one the new query attends least"},
       [](const PolicySettings& s) {
         return std::make_unique<TovaPolicy>(s.budget.total(), s.scoring);
       }},
  };
  return table;
}

}  // namespace

const std::vector<PolicyKind>& policy_kinds() {
  static const std::vector<PolicyKind> kinds = [] {
    std::vector<PolicyKind> out;
    for (const auto& entry : policy_table()) out.push_back(entry.kind);
    return out;
  }();
  return kinds;
}

std::string policy_names() {
  std::string names;
  for (const auto& kind : policy_kinds()) names += (names.empty() ? "" : ", ") + kind.name;
  return names;
}

std::unique_ptr<CachePolicy> make_policy(const std::string& name, const PolicySettings& settings) {
  for (const auto& entry : policy_table()) {
    if (entry.kind.name == name) return entry.make(settings);
  }
  throw std::invalid_argument("unknown cache policy '" + name +
                              "' (expected one of: " + policy_names() + ")");
}

}  // namespace h2o
