// step_option.hpp: the command lines of the lessons that feed a cache one token at a time (04, 07,
// 08): the --step flag (for a classroom), and for 07 and 08 the few numbers they let a student
// change. Names, ranges and help lines live here once; the step mode itself is
// report/step_view.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "h2o/app/cli.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/report/step_view.hpp"

namespace h2o {

// start_lesson (cli.hpp) for a lesson whose only option is --step (lesson 04): --help prints
// `summary` and ends the program (HelpShown), anything but --step is refused (UsageError).
StepView start_lesson_with_step(int argc, const char* const* argv, const std::string& summary);

// What a token-by-token lesson lets a student change, and its defaults:
struct TokensOption {  // --tokens N, 1..max ("how many tokens arrive (1..40)")
  long long default_value, max;
  std::string help;
};
struct SeedOption {  // --seed N, 0..1,000,000,000
  long long default_value;
  std::string help;
};
struct BudgetOption {  // --heavy N --recent N (cli.hpp's add_budget_options), "slots per head"
  long long heavy, recent;
  std::string unit;
};

// The options as read, checked.
struct TokenLessonOptions {
  std::size_t tokens;
  std::uint64_t seed;
  CacheBudget budget;
  StepView step;  // off without --step
};

// The first line of lessons 07 and 08: --tokens, --seed, --step, --heavy, --recent and --help, in
// that order; --help prints `summary` and the options and ends the program (HelpShown: exit 0); a
// bad value or an unknown option is a UsageError (one line on stderr, exit 2).
TokenLessonOptions start_token_lesson(int argc, const char* const* argv, const std::string& summary,
                                      const TokensOption& tokens, const SeedOption& seed,
                                      const BudgetOption& budget);

}  // namespace h2o
