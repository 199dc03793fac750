// compare_policies_options.hpp: the command line of tools/compare_policies.cpp: its option table
// and the checks of every value, as library functions. The program and the option fuzz harness
// (fuzz/) both call them, so the harness parses exactly what users type into compare_policies.
//
// Every problem with an option is a UsageError (exit code 2) with a one-line message naming the
// option; nothing here reads a file (the model, tokenizer and --text are read by the program).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/read_twice_options.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

struct ComparePoliciesOptions {
  std::vector<int> percents;          // --budgets: whole percentages, smallest first
  std::vector<std::string> policies;  // --policies: names in the factory's order
  int picture_percent = 0;            // --picture-budget, by default the smallest budget
  std::string svg_path;               // --svg ("" = no picture file)
  std::string text_path;              // --text
  std::string names_path;             // --names: the names to count ("": default_names)
  std::size_t name_gap = 64;          // --name-gap: names last seen more than this many back
  KvFormat kv_format;                 // --kv-bits, --kv-group: how every cache stores K and V
  // --scoring, --h2o-score, --start-area, --heavy-share (the factory sets the budget's tokens)
  PolicySettings scoring;
  // --twice N, --secret N (app/read_twice_options.hpp): read it twice instead of the default run;
  // refused with --svg, --picture-budget, --names or --name-gap (the default run's picture and
  // names: a second reading has neither).
  ReadTwiceOptions read_twice;
};

// compare_policies' options (model, tokenizer and text files included) and --help text.
ArgParser compare_policies_arguments();

// Reads and checks every option of a parsed compare_policies_arguments(); throws UsageError.
ComparePoliciesOptions compare_policies_options(const ArgParser& args);

// "all", or policy names separated by commas ("full,h2o,adakv:knorm"): the factory's names, in
// its order (so tables and pictures list policies the same way every time), a budget spread over
// another scorer after its row's own, repeats dropped ("adakv:h2o" is "adakv"). An unknown or
// empty name is a UsageError naming `option`.
std::vector<std::string> parse_policy_list(const std::string& option, const std::string& text);

}  // namespace h2o
