// step_option.hpp: the --step flag of the lessons that process tokens one at a time (04, 07, 08), so
// its name and help line live in one place. The step mode itself is report/step_view.hpp.
#pragma once

#include <string>

#include "h2o/app/cli.hpp"
#include "h2o/report/step_view.hpp"

namespace h2o {

// Adds --step. Returns the parser.
ArgParser& add_step_flag(ArgParser& args);

// The step view the parsed flag asks for: off without --step (the lesson's output unchanged).
StepView step_view(const ArgParser& args);

// start_lesson (cli.hpp) for a lesson whose only option is --step (lesson 04): errors as one line,
// --help prints `summary` and ends the program, anything but --step is refused.
StepView start_lesson_with_step(int argc, const char* const* argv, const std::string& summary);

}  // namespace h2o
