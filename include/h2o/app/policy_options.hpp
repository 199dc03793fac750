// policy_options.hpp: the command-line options that tune how the scoring policies score, shared
// by every program that offers them (generate, compare_policies, explore), and the budget split
// of the programs that split one (compare_policies, explore), so the names, defaults, help lines
// and checks live in one place.
//
//   --scoring MODE     policies reading attention: per-head, shared, or paper (each policy's own
//                      paper's way, policy_factory.hpp; the default) (head_scores.hpp)
//   --h2o-score RULE   h2o: sum, normalised-sum or decayed-sum (h2o_policy.hpp)
//   --h2o-decay GAMMA  h2o decayed-sum: every score is multiplied by GAMMA (0 < GAMMA < 1) each
//                      step before the step's attention is added (ignored by the other rules, as
//                      every option here is by the policies it is not for)
//   --start-area N     h2o: the first N positions are never evicted (taken out of the heavy part)
//   --snapkv-pool P    snapkv: pool the prompt's votes by avg or max (snapkv_policy.hpp)
//   --snapkv-kernel K  snapkv: over K positions (odd)
#pragma once

#include "h2o/app/cli.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

// Adds the six options, with PolicySettings' defaults. Returns the parser.
ArgParser& add_scoring_options(ArgParser& args);

// For a program's --help: one line per policy of the factory (name and summary), and which way
// each attention-reading policy scores by default.
std::string policy_list_help();
// The factory's policies, one a line: `indent`, the name in a column as wide as the longest, its
// summary; when `evicting_only`, only those a budget sweep runs (they evict and hold the budget
// they are given: not FastGen, whose bytes its rules decide). Each line ends with a newline.
std::string policy_lines(const std::string& indent, bool evicting_only);

// Reads them into `settings` (the other fields are left alone). A bad value is a UsageError
// naming the rule; --start-area goes up to the longest sequence a model may have.
void read_scoring_options(const ArgParser& args, PolicySettings& settings);

// --heavy-share PERCENT, for the programs that split a budget between the policies
// (compare_policies, explore; settings_for_budget): the percent of each budget kept outside the
// recent window (heavy hitters, sinks), 0..99, by default half (H2O's even split).
ArgParser& add_heavy_share_option(ArgParser& args);
// Reads it into settings.heavy_percent; a value outside 0..99 is a UsageError.
void read_heavy_share_option(const ArgParser& args, PolicySettings& settings);

}  // namespace h2o
