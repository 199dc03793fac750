// program.hpp: the one life of every program of this project (lessons, tools, test helpers): how
// it starts, how it fails and how it ends. The option parser is cli.hpp; this is what runs it.
//
//   int run_lesson(int argc, char** argv) { ... the program's own steps ...; return 0; }
//   int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
//
// run_program runs the body and turns each way it can end into an exit code, with at most one
// line on stderr, "program: error: ..." (program = argv[0]'s file name):
//   the body returns N                                   -> N (0: done)
//   --help (ArgParser::parse printed it: HelpShown)      -> 0
//   a UsageError (a bad command line)                    -> 2
//   out of memory (std::bad_alloc)                       -> 1, "out of memory"
//   any other exception                                  -> 1, its message
//   stdout could not be written (a full disk, /dev/full) -> 1, "cannot write the output to stdout"
// Every exception is caught here, inside main, so the stack unwinds before the program ends: each
// OutputFile still open removes its temporary file (base/output_file.hpp), whatever went wrong;
// and a program that ends with any code but 0 removes the folders it created for its outputs
// while they are empty (remove_created_folders): a failed run leaves nothing behind.
// No exit(), _Exit() or terminate handler ends a program early: main returns the code, and the
// C++ runtime ends the program as usual. Messages pass through printable() (base/format.hpp), cut
// to 400 bytes, so one line stays one line.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace h2o {

using ProgramBody = int (*)(int argc, char** argv);

// The body's exit code, or the code of the error it ended with (see above).
int run_program(int argc, char** argv, ProgramBody body);

// A program's name as error messages show it: argv[0]'s file name ("program" without one).
std::string program_name(const char* argv0);

// Starts the program of the running run_program again from its beginning, with the same
// arguments and `settings` added to its environment: for a library that reads its variables only
// while a program is loaded (row_threads.hpp: OpenMP's wait policy under libgomp). Only for a
// program that has read no input and written nothing yet, since the new start does it all again.
// Returns only when it cannot (no run_program, no /proc/self/exe): the program goes on as it is.
void restart_program(const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace h2o
