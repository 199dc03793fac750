// cli.hpp: the small command-line parser every program in this project uses.
//
// Options are "--name value" or "--name=value"; flags are "--name". Every program gets --help.
// Unknown options, missing values and malformed numbers throw UsageError with a one-line message;
// run_program() prints it as "program: error: ..." and returns exit code 2 (1 for other errors).
// Error messages pass through printable() (base/format.hpp) and are cut to a few hundred bytes.
// Making an ArgParser also registers a check that runs when the program exits: if anything
// written to stdout could not be written (a full disk, `> /dev/full`), the program says so in one
// line on stderr and exits with 1, whatever main returned.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"

namespace h2o {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ArgParser {
 public:
  ArgParser(std::string program, std::string summary);

  // An option that takes a value; `default_value` is used when it is not given ("" = no default).
  // Both return the parser, so that options can be added in one statement.
  ArgParser& add_option(const std::string& name, const std::string& value_name,
                        const std::string& default_value, const std::string& help);
  // A boolean flag, false unless given.
  ArgParser& add_flag(const std::string& name, const std::string& help);

  // Returns false when --help was asked for (the help text is already printed to stdout).
  bool parse(int argc, const char* const* argv);

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

// The lessons' one way to report errors, instead of wrapping main in try/catch: from this call
// on, an exception nobody catches ends the program with one line on stderr,
// "program: error: message" (program = argv[0]'s file name), and exit code 2 for a UsageError
// (bad command line), 1 for anything else - never an abort.
void report_uncaught_errors(const char* argv0);

// --threads N: the weight products' threads (set_matmul_threads). A build without OpenMP runs on
// one thread whatever N is; for N > 1 it says so on stderr, one line:
// "program: note: built without OpenMP, --threads 2 runs on one thread".
void use_threads_option(const std::string& program, std::size_t threads);

// A program's name as error messages and --help show it: argv[0]'s file name.
std::string program_name(const char* argv0);

// The first line of a lesson that takes no options (01-06): report_uncaught_errors(argv[0]); then
// --help prints `summary` and ends the program (exit 0), and any other argument is refused.
void start_lesson(int argc, const char* const* argv, const std::string& summary);

// For a main written as a function-try-block:
//   int main(int argc, char** argv) try { ... } catch (...) {
//     return h2o::exit_with_error(argv[0]);
//   }
// Call it only inside a catch block: it prints the exception being handled as the same one line
// and returns the same exit code as report_uncaught_errors.
int exit_with_error(const char* argv0);

// Runs body() with the same rule: UsageError -> exit 2, any other exception -> exit 1, one line
// on stderr each. Never lets an exception escape main.
int run_program(const std::string& program, const std::function<int()>& body);

}  // namespace h2o
