#include "h2o/policy/policy_factory.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
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

constexpr auto kPerHead = ScoringMode::PerHead;
constexpr auto kShared = ScoringMode::Shared;

using Split = std::function<Settings(Settings, std::size_t tokens)>;  // see settings_for_budget
template <class Made>
using Maker = std::function<std::unique_ptr<Made>(const Settings&, const LayerShape&)>;
// A policy that spreads a budget over a scored policy: made from the settings and its scorer.
using Spreader = std::function<std::unique_ptr<LayerPolicy>(
    const Settings&, std::unique_ptr<ScoredPolicy>, const LayerShape&)>;

// One row of the table: the kind, built field by field with named setters, and how to make one
// layer of the policy from settings whose scoring is already the one to use (the paper's unless
// set). A scored policy gives its scorer (scored_policy.hpp), which the budget-spreading policies
// (`spreads`) also take; any other policy its layer.
struct Row {
  PolicyKind kind;
  Maker<LayerPolicy> layer;
  Maker<ScoredPolicy> scorer;
  Spreader spreader;
  Split split = heavy_and_recent;

  explicit Row(std::string name) { kind.name = std::move(name); }
  Row& summary(std::string text) {
    kind.summary = std::move(text);
    return *this;
  }
  Row& prose(std::string text) {
    kind.prose_name = std::move(text);
    return *this;
  }
  Row& role(PolicyRole role) {
    kind.role = role;
    return *this;
  }
  // Reads attention, scored so by its paper.
  Row& paper_scoring(ScoringMode mode) {
    kind.paper_scoring = mode;
    return *this;
  }
  Row& keeps_everything() {
    kind.evicts = false;
    return *this;
  }
  Row& may_evict_newest() {
    kind.protects_newest = false;
    return *this;
  }
  Row& kept(std::string label, std::size_t (*window)(const Settings&, std::size_t)) {
    kind.kept_label = std::move(label);
    kind.recent_window = window;
    return *this;
  }
  Row& sized_by_rules() {
    kind.sized_by_budget = false;
    return *this;
  }
  Row& makes(Maker<LayerPolicy> make) {
    layer = std::move(make);
    return *this;
  }
  // A scored policy: its scorer is its layer.
  Row& scores(Maker<ScoredPolicy> make) {
    scorer = make;
    layer = [make](const Settings& s, const LayerShape& shape) {
      return std::unique_ptr<LayerPolicy>(make(s, shape));
    };
    return *this;
  }
  Row& spreads(Spreader make) {
    spreader = std::move(make);
    return *this;
  }
  Row& splits(Split how) {
    split = std::move(how);
    return *this;
  }
};

// The scorer a budget-spreading policy takes when its name names none.
const char* const kDefaultScorer = "h2o";

// One row per policy. Adding a policy = one more row here. Each row's properties and scoring are
// its paper's; its kept label is its own word for a token kept outside its recent window. One row
// is the subject (H2O) and one its baseline (the window): compare_policies weighs the two.
const std::vector<Row>& policy_table() {
  static const std::vector<Row> table = {
      Row("full")
          .summary("keep every token (exact attention, memory grows with the sequence)")
          .prose("the full cache")
          .keeps_everything()
          .kept("", every_token)
          .makes([](const Settings&, const LayerShape& shape) {
            return std::make_unique<FullCachePolicy>(shape);
          }),
      Row("h2o")
          .summary("Heavy-Hitter Oracle: keep the recent window plus the highest-scoring tokens")
          .prose("H2O")
          .role(PolicyRole::Subject)
          .paper_scoring(kPerHead)
          .kept("heavy hitter", last_recent)
          .scores([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<H2OPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring, s.h2o,
                                               shape);
          })
          .splits([](Settings s, std::size_t tokens) {
            s = heavy_and_recent(s, tokens);
            s.h2o.start_area = std::min(s.h2o.start_area, s.heavy);  // out of the heavy part
            return s;
          }),
      Row("window")
          .summary("sliding window: keep the last heavy + recent tokens (H2O's local baseline)")
          .prose("the window")
          .role(PolicyRole::Baseline)
          .kept("", whole_budget)
          .makes([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<SlidingWindowPolicy>(CacheBudget{s.heavy, s.recent}, shape);
          }),
      Row("sinks")
          .summary(
              "StreamingLLM: keep the first --sinks tokens (attention sinks) + the last recent")
          .prose("the sinks")
          .kept("sink", last_recent)
          .makes([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<SinkWindowPolicy>(s.sinks, s.recent, shape);
          })
          .splits(sinks_and_recent),
      Row("random")
          .summary("keep heavy + recent tokens, evicting a random one outside the recent window")
          .prose("random eviction")
          .kept("kept at random", last_recent)
          .makes([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<RandomEvictionPolicy>(CacheBudget{s.heavy, s.recent}, s.seed,
                                                          shape);
          }),
      Row("tova")
          .summary("TOVA: keep heavy + recent tokens, evicting the one the new query attends least")
          .prose("TOVA")
          .paper_scoring(kShared)
          .may_evict_newest()
          .kept("kept by score", no_window)
          .scores([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<TovaPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring, shape);
          }),
      Row("knorm")
          .summary("key norm: keep the recent window plus the tokens with the shortest keys")
          .prose("key norm")
          .kept("short key", last_recent)
          .scores([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<KeyNormPolicy>(CacheBudget{s.heavy, s.recent}, shape);
          }),
      Row("snapkv")
          .summary("SnapKV: cut a prompt by its last recent queries' attention; then as h2o")
          .prose("SnapKV")
          // Decoding it ranks as H2O does, so what it keeps besides the window are heavy hitters.
          .paper_scoring(kPerHead)
          .kept("heavy hitter", last_recent)
          .makes([](const Settings& s, const LayerShape& shape) {
            return std::make_unique<SnapKVPolicy>(CacheBudget{s.heavy, s.recent}, *s.scoring,
                                                  s.snapkv, shape);
          })
          .splits([](Settings s, std::size_t tokens) {
            s.recent = std::min(SnapKVPolicy::kPaperWindow, heavy_and_recent(s, tokens).recent);
            s.heavy = tokens - s.recent;
            return s;
          }),
      // Budgets per layer and per head, over any scored policy, H2O's unless named (their papers
      // cut a prompt once by SnapKV's votes; here both keep their budgets at every step by the
      // scored policy's scores: pyramid_policy.hpp, adakv_policy.hpp).
      Row("pyramid")
          .summary("PyramidKV: as h2o, with more heavy hitters in the first layers, fewer deeper")
          .prose("PyramidKV")
          .paper_scoring(kPerHead)
          .kept("heavy hitter", last_recent)
          .spreads(
              [](const Settings& s, std::unique_ptr<ScoredPolicy> scorer, const LayerShape& shape) {
                return std::make_unique<PyramidKVPolicy>(CacheBudget{s.heavy, s.recent},
                                                         std::move(scorer),
                                                         PyramidKVPolicy::kPaperBeta, shape);
              }),
      Row("adakv")
          .summary("Ada-KV: as h2o, with a layer's heavy hitters shared by its KV heads by score")
          .prose("Ada-KV")
          .paper_scoring(kPerHead)
          .kept("heavy hitter", last_recent)
          .spreads([](const Settings& s, std::unique_ptr<ScoredPolicy> scorer,
                      const LayerShape& shape) {
            return std::make_unique<AdaKVPolicy>(CacheBudget{s.heavy, s.recent}, std::move(scorer),
                                                 AdaKVPolicy::kPaperSafeguard, shape);
          }),
      // FastGen: every KV head its own rule, from a profile of the first tokens (its budget is
      // what the rules keep: fastgen_policy.hpp).
      Row("fastgen")
          .summary("FastGen: each KV head its own rule (window, sink, h2o or full) from a profile")
          .prose("FastGen")
          .paper_scoring(kPerHead)
          .kept("kept token", last_recent)
          .sized_by_rules()
          .makes([](const Settings& s, const LayerShape& shape) {
            // By default twice the budget, and always a row past the window and the sink.
            const std::size_t profile =
                s.fastgen.profile > 0
                    ? s.fastgen.profile
                    : std::max(2 * (s.heavy + s.recent), s.recent + kFastGenSinks + 1);
            return std::make_unique<FastGenPolicy>(CacheBudget{s.heavy, s.recent}, kFastGenSinks,
                                                   s.fastgen.target, profile, *s.scoring, shape);
          }),
      // DuoAttention: retrieval heads keep every token, streaming heads the sinks and window;
      // which heads retrieve comes from a profile of the first tokens (its budget is what the
      // split keeps: duo_attention_policy.hpp).
      Row("duo")
          .summary(
              "DuoAttention: the KV heads that look far back keep all, the rest sinks + recent")
          .prose("DuoAttention")
          .paper_scoring(kPerHead)
          .kept("kept token", last_recent)
          .sized_by_rules()
          .makes([](const Settings& s, const LayerShape& shape) {
            // Twice what a streaming head keeps, so that the profile has rows past it.
            const std::size_t streaming = s.sinks + s.recent;
            return std::make_unique<DuoAttentionPolicy>(
                s.sinks, s.recent, DuoAttentionPolicy::kDefaultSparsity,
                std::max(2 * streaming, streaming + 1), *s.scoring, shape);
          })
          .splits(sinks_and_recent),
  };
  return table;
}

const Row* row_named(const std::string& name) {
  for (const Row& row : policy_table()) {
    if (row.kind.name == name) return &row;
  }
  return nullptr;
}

// A name as make_policy reads it: a row, or a budget-spreading row over a scored one.
struct Named {
  const Row* row;     // the policy's row (the spreading one for "adakv:knorm")
  const Row* scorer;  // the scored policy a spreading row takes; null for the others
};

// "unknown cache policy 'lru' (expected one of: ...)".
std::string unknown_name(const std::string& name) {
  return "unknown cache policy '" + name + "' (expected one of: " + policy_names() + ")";
}

Named parse_name(const std::string& name) {
  const std::size_t colon = name.find(':');
  const Row* row = row_named(name.substr(0, colon));
  if (row == nullptr) throw std::invalid_argument(unknown_name(name));
  if (!row->spreader) {
    if (colon != std::string::npos) {
      std::string spreading;
      for (const Row& each : policy_table()) {
        if (each.spreader) spreading += (spreading.empty() ? "" : ", ") + each.kind.name;
      }
      throw std::invalid_argument("cache policy '" + name + "': " + row->kind.name +
                                  " spreads no budget over another policy (only " + spreading +
                                  " do)");
    }
    return {row, nullptr};
  }
  const std::string inner = colon == std::string::npos ? kDefaultScorer : name.substr(colon + 1);
  const Row* scorer = row_named(inner);
  if (scorer == nullptr || !scorer->scorer) {
    std::string scored;
    for (const Row& each : policy_table()) {
      if (each.scorer)
        scored += (scored.empty() ? "" : ", ") + each.kind.name;  // the table's order
    }
    throw std::invalid_argument("cache policy '" + name + "': " + row->kind.name +
                                " spreads a budget over a scored policy (one of: " + scored + ")");
  }
  return {row, scorer};
}

// The kind of a budget spread over a scored policy other than the default, made once per name.
const PolicyKind& spread_kind(const std::string& name, const Named& named) {
  static std::mutex mutex;
  static std::map<std::string, PolicyKind> made;  // a map never moves its entries
  const std::lock_guard<std::mutex> lock(mutex);
  const auto found = made.find(name);
  if (found != made.end()) return found->second;
  const PolicyKind& outer = named.row->kind;
  const PolicyKind& inner = named.scorer->kind;
  PolicyKind kind = outer;
  kind.name = name;
  kind.summary = outer.prose_name + " over " + inner.prose_name + "'s scores";
  kind.prose_name = outer.prose_name + " over " + inner.prose_name;
  kind.role = PolicyRole::Contender;
  // The spreading policy's paper says how heads score (Ada-KV: per head), when the scorer reads
  // attention at all.
  kind.paper_scoring = inner.uses_attention() ? outer.paper_scoring : std::nullopt;
  kind.protects_newest = inner.protects_newest;
  kind.kept_label = inner.kept_label;
  kind.recent_window = inner.recent_window;
  return made.emplace(name, kind).first->second;
}

const PolicyKind& kind_of(const std::string& name, const Named& named) {
  if (named.scorer == nullptr || name.find(':') == std::string::npos ||
      named.scorer->kind.name == kDefaultScorer) {
    // The row's kind as policy_kinds() lists it (one object per policy: compared by address).
    return policy_kinds().at(static_cast<std::size_t>(named.row - policy_table().data()));
  }
  return spread_kind(name, named);
}

}  // namespace

const std::vector<PolicyKind>& policy_kinds() {
  static const std::vector<PolicyKind> kinds = [] {
    std::vector<PolicyKind> out;
    for (const Row& row : policy_table()) out.push_back(row.kind);
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
  try {
    parse_name(name);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

const PolicyKind& policy_kind(const std::string& name) { return kind_of(name, parse_name(name)); }

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

std::string budget_spread_help() {
  std::vector<std::string> spreading, scored;
  for (const Row& row : policy_table()) {
    if (row.spreader) spreading.push_back(row.kind.name);
    if (row.scorer && row.kind.name != kDefaultScorer) scored.push_back(row.kind.name);
  }
  std::string text, list = kDefaultScorer;
  for (std::size_t i = 0; i < spreading.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == spreading.size() ? " and " : ", ") + spreading[i];
  }
  for (const std::string& name : scored) list += ", " + name;
  const std::string example =
      spreading.back() + ":" + (scored.empty() ? kDefaultScorer : scored.back());
  return text + " spread the budget of any scored policy (" + list +
         "), named after a colon: " + example + " (" + kDefaultScorer + "'s when none is named).";
}

std::string unknown_policy_message(const std::string& name) {
  try {
    parse_name(name);
  } catch (const std::invalid_argument& e) {
    return e.what();  // what is wrong with "adakv:window" is more than its being unknown
  }
  return unknown_name(name);
}

std::unique_ptr<CachePolicy> make_policy(const std::string& name, const PolicySettings& settings) {
  const Named named = parse_name(name);
  const PolicyKind& kind = kind_of(name, named);
  PolicySettings resolved = settings;
  if (!resolved.scoring) resolved.scoring = kind.paper_scoring.value_or(ScoringMode::PerHead);
  CachePolicy::MakeLayer make_layer;
  if (named.scorer != nullptr) {
    // The scorer is built as its own row builds it, but without H2O's start area: a budget spread
    // over H2O protects only the window (Ada-KV's floor and cut know no start area).
    PolicySettings scored = resolved;
    scored.h2o.start_area = 0;
    make_layer = [spread = named.row->spreader, scorer = named.scorer->scorer, resolved,
                  scored](const LayerShape& shape) {
      return spread(resolved, scorer(scored, shape), shape);
    };
  } else {
    make_layer = [make = named.row->layer, resolved](const LayerShape& shape) {
      return make(resolved, shape);
    };
  }
  return std::make_unique<CachePolicy>(std::move(make_layer), &kind);
}

PolicySettings settings_for_budget(const std::string& name, std::size_t tokens,
                                   PolicySettings base) {
  if (base.heavy_percent < 0 || base.heavy_percent > 99) {
    throw std::invalid_argument("the heavy share of a budget must be 0 to 99 percent, got " +
                                std::to_string(base.heavy_percent));
  }
  return parse_name(name).row->split(base, tokens);
}

}  // namespace h2o
