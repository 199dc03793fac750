#include "h2o/app/step_option.hpp"

namespace h2o {

ArgParser& add_step_flag(ArgParser& args) {
  return args.add_flag("step", "wait for Enter after each token; draw heavy, recent, evicted tokens");
}

StepView step_view(const ArgParser& args) { return StepView(args.flag("step")); }

}  // namespace h2o
