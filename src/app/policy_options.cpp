#include "h2o/app/policy_options.hpp"

#include <stdexcept>
#include <string>

#include "h2o/model/model_config.hpp"

namespace h2o {

ArgParser& add_scoring_options(ArgParser& args) {
  const PolicySettings defaults;
  return args
      .add_option("scoring", "MODE", to_string(defaults.scoring),
                  "policies reading attention: per-head, shared, or paper (" +
                      paper_scoring_names() + ")")
      .add_option("h2o-score", "RULE", to_string(defaults.h2o_score),
                  "h2o: rank tokens by sum, or normalised-sum (per step cached)")
      .add_option("start-area", "N", std::to_string(defaults.start_area),
                  "h2o: first N positions never evicted (out of the heavy part)");
}

void read_scoring_options(const ArgParser& args, PolicySettings& settings) {
  const auto longest = static_cast<long long>(ModelConfig::kMaxSeqLen);
  settings.start_area = static_cast<std::size_t>(args.integer("start-area", 0, longest));
  // The library's message names the rule; a bad value is a usage error (exit code 2).
  try {
    settings.scoring = parse_scoring_choice(args.text("scoring"));
    settings.h2o_score = parse_h2o_score(args.text("h2o-score"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

}  // namespace h2o
