// threads_option.hpp: --threads N and --fixed-threads, as generate and bench_decode read them.
#pragma once

#include <cstddef>
#include <string>

#include "h2o/app/cli.hpp"

namespace h2o {

// What the two options say.
struct ThreadsOption {
  std::size_t threads = 1;  // --threads N
  bool fixed = false;       // --fixed-threads: every token on the N threads (row_threads.hpp)
};

// Adds --threads N (1..max_threads, `what` says what they share) and --fixed-threads.
ArgParser& add_threads_options(ArgParser& args, std::size_t max_threads, const std::string& what);
// Reads them; --fixed-threads with one thread is a UsageError (it would change nothing).
ThreadsOption read_threads_options(const ArgParser& args, std::size_t max_threads);

// With N > 1: "threads: 2 for 250 of 255 tokens, one for the other 5 (it ran faster then)", or
// "threads: 2 for every token (--fixed-threads)": how the decoded tokens so far ran.
std::string token_threads_summary(const ThreadsOption& option);

// The weight products' threads from now on (set_matmul_threads, attention/linear.hpp). A build
// without OpenMP runs on one thread whatever N is; for N > 1 it says so on stderr, one line:
// "program: note: built without OpenMP, --threads 2 runs on one thread". For N > 1 it also puts
// the OpenMP wait policy the program chooses in effect (row_threads.hpp), which under GCC's
// libgomp means starting the program again (program.hpp's restart_program): call it before the
// program reads any input or writes anything.
void use_threads_option(const std::string& program, const ThreadsOption& option);

}  // namespace h2o
