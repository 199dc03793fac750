// cli.hpp: the small command-line parser every program in this project uses.
//
// Options are "--name value" or "--name=value"; flags are "--name". Every program gets --help.
// Unknown options, missing values and malformed numbers throw UsageError with a one-line message;
// --help prints the help and throws HelpShown. The program's lifecycle (program.hpp's
// run_program) turns the first into "program: error: ..." and exit code 2, the second into exit
// code 0, as Python's argparse ends a program after --help.
#pragma once

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"

namespace h2o {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Thrown by ArgParser::parse once the help is printed: the program has nothing left to do.
// Deliberately not a std::exception, so that no `catch (const std::exception&)` takes it for an
// error.
struct HelpShown {};

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  // An option that takes a value; `default_value` is used when it is not given ("" = no default).
  // Both return the parser, so that options can be added in one statement.
  ArgParser& add_option(const std::string& name, const std::string& value_name,
                        const std::string& default_value, const std::string& help);
  // An option naming a file (value_name PATH) or a folder (DIR, FOLDER) the program writes.
  // parse() refuses, before any work, two outputs on one path and an output on a file another
  // PATH option names for reading, given or by default (base/output_file.hpp's files_clash):
  // every option that names an output must be added so.
  ArgParser& add_output(const std::string& name, const std::string& value_name,
                        const std::string& default_value, const std::string& help);
  // A boolean flag, false unless given.
  ArgParser& add_flag(const std::string& name, const std::string& help);

  // Reads the command line. With --help it prints the help to stdout and throws HelpShown. An
  // option whose value names a file or folder (value_name PATH, DIR or FOLDER) refuses an empty
  // value: "--csv needs a file path". Outputs that clash (add_output) are a UsageError.
  void parse(int argc, const char* const* argv);

  bool given(const std::string& name) const;  // typed on the command line
  bool flag(const std::string& name) const;
  std::string text(const std::string& name) const;
  // Whole numbers and reals, checked against [min, max]; the message names the option.
  long long integer(const std::string& name, long long min, long long max) const;
  double real(const std::string& name, double min, double max) const;

  std::string help() const;
  const std::string& program() const { return program_; }

 private:
  struct Option {
    std::string value_name, default_value, help;
    bool is_flag = false;
    bool is_output = false;
  };
  std::string program_, summary_;
  std::vector<std::string> order_;
  std::map<std::string, Option> options_;
  std::map<std::string, std::string> values_;
};

// The one reading of numbers on the command line (ArgParser::integer and real, every list of
// numbers): spaces around the number are allowed on both sides (" 5" and "5 " are 5), anything
// else around it is not. A real too small for a double (4.9e-324) is read as the nearest double;
// one too large, inf or nan is refused. False when `text` is not such a number.
bool parse_whole_number(const std::string& text, long long* value);
bool parse_real_number(const std::string& text, double* value);

// The H2O budget options every program with an H2O cache offers: --heavy N and --recent N.
ArgParser& add_budget_options(ArgParser& args, long long default_heavy, long long default_recent,
                              const std::string& unit = "tokens per layer and KV head");
// Reads them back as a budget: each between 0 and max_each; CacheBudget's own refusal (heavy +
// recent = 0) comes back as a UsageError naming both options.
CacheBudget budget_from_options(const ArgParser& args, long long max_each = 1'000'000);

// "10,20,50" -> {10, 20, 50}: whole percentages 1..100, repeats dropped, smallest first, at most
// max_count of them. A malformed list is a UsageError naming the option.
std::vector<int> parse_percent_list(const std::string& option, const std::string& text,
                                    std::size_t max_count = 8);

// The command as typed, for a picture's provenance (report/svg.hpp writes it into <desc>): the
// program's file name (not its folder, so the text is the same wherever the build lives) and
// every argument, quoted when it holds a space. "10_sparse_attention --pictures docs/pictures".
std::string command_line(int argc, const char* const* argv);

// The first line of a lesson that takes no options (01-06): --help prints `summary` and ends the
// program (HelpShown: exit 0), and any other argument is refused (UsageError: exit 2).
void start_lesson(int argc, const char* const* argv, const std::string& summary);

}  // namespace h2o
