#include "h2o/app/step_option.hpp"

#include <cstdlib>

namespace h2o {

ArgParser& add_step_flag(ArgParser& args) {
  return args.add_flag("step", "wait for Enter after each token; draw heavy, recent, evicted tokens");
}

StepView step_view(const ArgParser& args) { return StepView(args.flag("step")); }

StepView start_lesson_with_step(int argc, const char* const* argv, const std::string& summary) {
  report_uncaught_errors(argc > 0 ? argv[0] : nullptr);
  ArgParser args(program_name(argc > 0 ? argv[0] : nullptr), summary);
  add_step_flag(args);
  if (!args.parse(argc, argv)) std::exit(0);
  return step_view(args);
}

}  // namespace h2o
