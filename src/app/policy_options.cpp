#include "h2o/app/policy_options.hpp"

#include <stdexcept>
#include <string>

#include "h2o/base/format.hpp"
#include "h2o/model/model_config.hpp"

namespace h2o {

ArgParser& add_scoring_options(ArgParser& args) {
  const PolicySettings defaults;
  return args
      .add_option("scoring", "MODE", to_string(defaults.scoring),
                  "per-head, shared, or paper (each policy its paper's way, as listed above)")
      .add_option("h2o-score", "RULE", to_string(defaults.h2o.score),
                  "h2o: rank tokens by sum, normalised-sum (per step cached), decayed-sum")
      .add_option("h2o-decay", "GAMMA", fixed(defaults.h2o.decay, 2),
                  "h2o decayed-sum: scores times GAMMA each step, 0 < GAMMA < 1")
      .add_option("start-area", "N", std::to_string(defaults.h2o.start_area),
                  "h2o: first N positions never evicted (out of the heavy part)")
      .add_option("snapkv-pool", "P", to_string(defaults.snapkv.pool),
                  "snapkv: pool a prompt's votes by avg or max (paper's runs: max)")
      .add_option("snapkv-kernel", "K", std::to_string(defaults.snapkv.kernel),
                  "snapkv: pooling kernel, an odd number of positions (paper's runs: 7)")
      .add_option("fastgen-target", "T", fixed(defaults.fastgen.target, 2),
                  "fastgen: share of a head's attention its rule must recover, 0 < T <= 1")
      .add_option("fastgen-profile", "N", "0",
                  "fastgen: tokens read whole and profiled first (0: twice the budget)");
}

ArgParser& add_heavy_share_option(ArgParser& args) {
  return args.add_option("heavy-share", "PERCENT", std::to_string(kDefaultHeavyPercent),
                         "percent of each budget kept outside the recent window (heavy, sinks)");
}

void read_heavy_share_option(const ArgParser& args, PolicySettings& settings) {
  settings.heavy_percent = static_cast<int>(args.integer("heavy-share", 0, 99));
}

std::string policy_lines(const std::string& indent, bool evicting_only) {
  std::size_t width = 0;  // the longest name and two spaces
  for (const PolicyKind& kind : policy_kinds()) width = std::max(width, kind.name.size() + 2);
  std::string lines;
  for (const PolicyKind& kind : policy_kinds()) {
    // A sweep's policies (evicting_policies): they evict and hold the budget they are given.
    const bool swept = kind.evicts && kind.sized_by_budget;
    if (swept || !evicting_only) {
      lines += indent + pad_right(kind.name, width) + kind.summary + "\n";
    }
  }
  return lines;
}

std::string policy_list_help() {
  return "cache policies (--cache):\n" + policy_lines("  ", false) +
         wrap_words("Policies that read attention score it as their papers do (--scoring paper): " +
                        paper_scoring_names() + ". " + budget_spread_help(),
                    100, "");
}

void read_scoring_options(const ArgParser& args, PolicySettings& settings) {
  const auto longest = static_cast<long long>(ModelConfig::kMaxSeqLen);
  settings.h2o.start_area = static_cast<std::size_t>(args.integer("start-area", 0, longest));
  // The library's message names the rule; a bad value is a usage error (exit code 2).
  try {
    settings.scoring = parse_scoring_choice(args.text("scoring"));
    settings.h2o.score = parse_h2o_score(args.text("h2o-score"));
    const double decay = args.real("h2o-decay", 0.0, 1.0);
    check_h2o_decay(decay);  // 0 and 1 too
    settings.h2o.decay = static_cast<float>(decay);
    // A decay the scores' 32-bit floats cannot hold below 1 (0.999999999) or above 0 (1e-50):
    // said as such, not as "decay 1".
    if (!(settings.h2o.decay > 0.0f && settings.h2o.decay < 1.0f)) {
      throw UsageError("--h2o-decay " + args.text("h2o-decay") + " is " +
                       fixed(settings.h2o.decay, 0) +
                       " as a 32-bit float (how the scores are kept): give one between " +
                       "1e-38 and 0.99999994, e.g. " + fixed(kDefaultH2ODecay, 2));
    }
    settings.snapkv.pool = parse_snapkv_pool(args.text("snapkv-pool"));
    settings.snapkv.kernel = static_cast<std::size_t>(
        args.integer("snapkv-kernel", 1, static_cast<long long>(kMaxPoolKernel)));
    check_pool_kernel(settings.snapkv.kernel);
    settings.fastgen.target = args.real("fastgen-target", 0.0, 1.0);
    if (!(settings.fastgen.target > 0.0)) {
      throw UsageError("--fastgen-target must be above 0 (a head recovering none of its "
                       "attention is no rule), got " + args.text("fastgen-target"));
    }
    settings.fastgen.profile = static_cast<std::size_t>(args.integer("fastgen-profile", 0, longest));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace h2o
