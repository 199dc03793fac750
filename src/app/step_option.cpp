#include "h2o/app/step_option.hpp"

#include "h2o/app/program.hpp"

namespace h2o {

namespace {
ArgParser& add_step_flag(ArgParser& args) {
  return args.add_flag("step",
                       "wait for Enter after each token; draw heavy, recent, evicted tokens");
}

// A parser for a lesson, named as its errors name it.
ArgParser lesson_parser(int argc, const char* const* argv, const std::string& summary) {
  return ArgParser(program_name(argc > 0 ? argv[0] : nullptr), summary);
}
}  // namespace

StepView start_lesson_with_step(int argc, const char* const* argv, const std::string& summary) {
  ArgParser args = lesson_parser(argc, argv, summary);
  add_step_flag(args).parse(argc, argv);
  return StepView(args.flag("step"));
}

TokenLessonOptions start_token_lesson(int argc, const char* const* argv, const std::string& summary,
                                      const TokensOption& tokens, const SeedOption& seed,
                                      const BudgetOption& budget) {
  constexpr long long kMaxSeed = 1'000'000'000;
  ArgParser args = lesson_parser(argc, argv, summary);
  args.add_option("tokens", "N", std::to_string(tokens.default_value),
                  tokens.help + " (1.." + std::to_string(tokens.max) + ")")
      .add_option("seed", "N", std::to_string(seed.default_value), seed.help);
  add_step_flag(args);
  add_budget_options(args, budget.heavy, budget.recent, budget.unit).parse(argc, argv);
  // Read one by one, in this order: with several bad values, the first named here is reported.
  const auto n_tokens = static_cast<std::size_t>(args.integer("tokens", 1, tokens.max));
  const CacheBudget cache_budget = budget_from_options(args);
  const auto seed_value = static_cast<std::uint64_t>(args.integer("seed", 0, kMaxSeed));
  return {n_tokens, seed_value, cache_budget, StepView(args.flag("step"))};
}

}  // namespace h2o
