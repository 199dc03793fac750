#include "h2o/policy/policy_factory.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/adakv_policy.hpp"
#include "h2o/policy/duo_attention_policy.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/knorm_policy.hpp"
#include "h2o/policy/pyramid_policy.hpp"
#include "h2o/policy/random_eviction_policy.hpp"
#include "h2o/policy/sink_window_policy.hpp"
#include "h2o/policy/sliding_window_policy.hpp"
#include "h2o/policy/snapkv_policy.hpp"
#include "h2o/policy/tova_policy.hpp"

namespace h2o {

namespace {

using Settings = PolicySettings;

// heavy = heavy_percent of an equal budget, rounded down (by default half); recent = the rest.
Settings heavy_and_recent(Settings s, std::size_t tokens) {
  s.heavy = tokens * static_cast<std::size_t>(s.heavy_percent) / 100;
  s.recent = tokens - s.heavy;
  return s;
}

// sinks = --sinks (at most the heavy part of an equal budget), recent = the rest of the budget.
Settings sinks_and_recent(Settings s, std::size_t tokens) {
  s = heavy_and_recent(s, tokens);
  s.sinks = std::min(s.sinks, s.heavy);  // the sinks come out of the heavy part
  s.recent = tokens - s.sinks;
  return s;
}

// Recent windows (PolicyKind::recent_window), never more positions than the text has.
std::size_t last_recent(const Settings& s, std::size_t n_tokens) {
  return std::min(s.recent, n_tokens);
}
std::size_t whole_budget(const Settings& s, std::size_t n_tokens) {
  return std::min(s.heavy + s.recent, n_tokens);
}
std::size_t no_window(const Settings&, std::size_t) { return 0; }
std::size_t every_token(const Settings&, std::size_t n_tokens) { return n_tokens; }

struct PolicyEntry {
  PolicyKind kind;
  // Builds the policy; settings.scoring is already the one to use (the paper's unless set).
  std::function<std::unique_ptr<CachePolicy>(const Settings&)> make;
  std::function<Settings(Settings, std::size_t tokens)> split;  // see settings_for_budget
};

constexpr auto kPerHead = ScoringMode::PerHead;
constexpr auto kShared = ScoringMode::Shared;
const std::optional<ScoringMode> kNoAttention;

// One row per policy. Adding a policy = one more row here. Each row's properties and scoring are
// its paper's; its kept label is its own word for a token kept outside its recent window. One row
// is the subject (H2O) and one its baseline (the window): compare_policies weighs the two.
const std::vector<PolicyEntry>& policy_table() {
  static const std::vector<PolicyEntry> table = {
      {{"full", "keep every token (exact attention, memory grows with the sequence)",
        "the full cache", PolicyRole::Contender, kNoAttention,
        /*evicts=*/false, /*protects_newest=*/true, /*kept_label=*/"", every_token},
       [](const Settings&) { return policy_of<FullCachePolicy>(); },
       heavy_and_recent},
      {{"h2o", "Heavy-Hitter Oracle: keep the recent window plus the highest-scoring tokens", "H2O",
        PolicyRole::Subject, kPerHead, /*evicts=*/true, /*protects_newest=*/true, "heavy hitter",
        last_recent},
       [](const Settings& s) {
         return policy_of<H2OPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring, s.h2o_score,
                                     s.start_area, s.h2o_decay);
       },
       [](Settings s, std::size_t tokens) {
         s = heavy_and_recent(s, tokens);
         s.start_area = std::min(s.start_area, s.heavy);  // it comes out of the heavy part
         return s;
       }},
      {{"window", "sliding window: keep the last heavy + recent tokens (H2O's local baseline)",
        "the window", PolicyRole::Baseline, kNoAttention, /*evicts=*/true, /*protects_newest=*/true,
        "", whole_budget},
       [](const Settings& s) {
         return policy_of<SlidingWindowPolicy>(CacheBudget{s.heavy, s.recent});
       },
       heavy_and_recent},
      {{"sinks", "StreamingLLM: keep the first --sinks tokens (attention sinks) + the last recent",
        "the sinks", PolicyRole::Contender, kNoAttention, /*evicts=*/true, /*protects_newest=*/true,
        "sink", last_recent},
       [](const Settings& s) { return policy_of<SinkWindowPolicy>(s.sinks, s.recent); },
       sinks_and_recent},
      {{"random", "keep heavy + recent tokens, evicting a random one outside the recent window",
        "random eviction", PolicyRole::Contender, kNoAttention, /*evicts=*/true,
        /*protects_newest=*/true, "kept at random", last_recent},
       [](const Settings& s) {
         return policy_of<RandomEvictionPolicy>(CacheBudget{s.heavy, s.recent}, s.seed);
       },
       heavy_and_recent},
      {{"tova", "TOVA: keep heavy + recent tokens, evicting the one the new query attends least",
        "TOVA", PolicyRole::Contender, kShared, /*evicts=*/true, /*protects_newest=*/false,
        "kept by score", no_window},
       [](const Settings& s) {
         return policy_of<TovaPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring);
       },
       heavy_and_recent},
      {{"knorm", "key norm: keep the recent window plus the tokens with the shortest keys",
        "key norm", PolicyRole::Contender, kNoAttention, /*evicts=*/true, /*protects_newest=*/true,
        "short key", last_recent},
       [](const Settings& s) {
         return policy_of<KeyNormPolicy>(CacheBudget{s.heavy, s.recent});
       },
       heavy_and_recent},
      {{"snapkv", "SnapKV: cut a prompt by its last recent queries' attention; then as h2o",
        "SnapKV", PolicyRole::Contender,
        // Decoding it ranks as H2O does, so what it keeps besides the window are heavy hitters.
        kPerHead, /*evicts=*/true, /*protects_newest=*/true, "heavy hitter", last_recent},
       [](const Settings& s) {
         return policy_of<SnapKVPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring,
                                        s.snapkv_pooling);
       },
       [](Settings s, std::size_t tokens) {
         s.recent = std::min(SnapKVPolicy::kPaperWindow, heavy_and_recent(s, tokens).recent);
         s.heavy = tokens - s.recent;
         return s;
       }},
      // Budgets per layer and per head (their papers cut a prompt once by SnapKV's votes; here
      // both keep their budgets at every step by H2O's scores: pyramid_policy.hpp,
      // adakv_policy.hpp).
      {{"pyramid", "PyramidKV: as h2o, with more heavy hitters in the first layers, fewer deeper",
        "PyramidKV", PolicyRole::Contender, kPerHead, /*evicts=*/true, /*protects_newest=*/true,
        "heavy hitter", last_recent},
       [](const Settings& s) {
         return policy_of<PyramidKVPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring, s.h2o_score,
                                           s.h2o_decay, PyramidKVPolicy::kPaperBeta);
       },
       heavy_and_recent},
      {{"adakv", "Ada-KV: as h2o, with a layer's heavy hitters shared by its KV heads by score",
        "Ada-KV", PolicyRole::Contender, kPerHead, /*evicts=*/true, /*protects_newest=*/true,
        "heavy hitter", last_recent},
       [](const Settings& s) {
         return policy_of<AdaKVPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring, s.h2o_score,
                                       s.h2o_decay, AdaKVPolicy::kPaperSafeguard);
       },
       heavy_and_recent},
      // FastGen: every KV head its own rule, from a profile of the first tokens (its budget is
      // what the rules keep: fastgen_policy.hpp).
      {{"fastgen", "FastGen: each KV head its own rule (window, sink, h2o or full) from a profile",
        "FastGen", PolicyRole::Contender, kPerHead, /*evicts=*/true, /*protects_newest=*/true,
        "kept token", last_recent, /*sized_by_budget=*/false},
       [](const Settings& s) {
         // By default twice the budget, and always a row past the window and the sink.
         const std::size_t profile =
             s.fastgen_profile > 0 ? s.fastgen_profile
                                   : std::max(2 * (s.heavy + s.recent), s.recent + kFastGenSinks + 1);
         return policy_of<FastGenPolicy>(CacheBudget{s.heavy, s.recent}, kFastGenSinks,
                                         s.fastgen_target, profile, *s.scoring);
       },
       heavy_and_recent},
      // DuoAttention: retrieval heads keep every token, streaming heads the sinks and window;
      // which heads retrieve comes from a profile of the first tokens (its budget is what the
      // split keeps: duo_attention_policy.hpp).
      {{"duo", "DuoAttention: the KV heads that look far back keep all, the rest sinks + recent",
        "DuoAttention", PolicyRole::Contender, kPerHead, /*evicts=*/true,
        /*protects_newest=*/true, "kept token", last_recent, /*sized_by_budget=*/false},
       [](const Settings& s) {
         // Twice what a streaming head keeps, so that the profile has rows past it.
         const std::size_t streaming = s.sinks + s.recent;
         return policy_of<DuoAttentionPolicy>(s.sinks, s.recent,
                                              DuoAttentionPolicy::kDefaultSparsity,
                                              std::max(2 * streaming, streaming + 1), *s.scoring);
       },
       sinks_and_recent},
  };
  return table;
}

const PolicyEntry& entry_for(const std::string& name) {
  for (const auto& entry : policy_table()) {
    if (entry.kind.name == name) return entry;
  }
  throw std::invalid_argument(unknown_policy_message(name));
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

bool is_policy_name(const std::string& name) {
  const auto& kinds = policy_kinds();
  return std::any_of(kinds.begin(), kinds.end(),
                     [&](const PolicyKind& kind) { return kind.name == name; });
}

const PolicyKind& policy_kind(const std::string& name) {
  for (const auto& kind : policy_kinds()) {
    if (kind.name == name) return kind;
  }
  throw std::invalid_argument(unknown_policy_message(name));
}

const PolicyKind& reference_policy() {
  for (const auto& kind : policy_kinds()) {
    if (!kind.evicts) return kind;
  }
  throw std::logic_error("the policy table has no policy that keeps every token");
}

namespace {
const PolicyKind& policy_with_role(PolicyRole role, const char* what) {
  for (const auto& kind : policy_kinds()) {
    if (kind.role == role) return kind;
  }
  throw std::logic_error(std::string("the policy table names no ") + what);
}
}  // namespace

const PolicyKind& subject_policy() { return policy_with_role(PolicyRole::Subject, "subject"); }

const PolicyKind& baseline_policy() { return policy_with_role(PolicyRole::Baseline, "baseline"); }

std::string paper_scoring_names() {
  std::string text;
  for (const auto& kind : policy_kinds()) {
    if (!kind.uses_attention()) continue;
    text += (text.empty() ? "" : ", ") + kind.name + " " + to_string(*kind.paper_scoring);
  }
  return text;
}

std::string unknown_policy_message(const std::string& name) {
  return "unknown cache policy '" + name + "' (expected one of: " + policy_names() + ")";
}

std::unique_ptr<CachePolicy> make_policy(const std::string& name, const PolicySettings& settings) {
  const PolicyEntry& entry = entry_for(name);
  PolicySettings resolved = settings;
  if (!resolved.scoring) resolved.scoring = entry.kind.paper_scoring.value_or(ScoringMode::PerHead);
  return entry.make(resolved);
}

PolicySettings settings_for_budget(const std::string& name, std::size_t tokens,
                                   PolicySettings base) {
  if (base.heavy_percent < 0 || base.heavy_percent > 99) {
    throw std::invalid_argument("the heavy share of a budget must be 0 to 99 percent, got " +
                                std::to_string(base.heavy_percent));
  }
  return entry_for(name).split(base, tokens);
}

}  // namespace h2o
