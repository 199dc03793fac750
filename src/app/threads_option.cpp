#include "h2o/app/threads_option.hpp"

#include <iostream>
#include <string>

#include "h2o/app/program.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/attention/row_threads.hpp"

namespace h2o {

ArgParser& add_threads_options(ArgParser& args, std::size_t max_threads, const std::string& what) {
  return args
      .add_option("threads", "N", "1",
                  "threads for " + what + ", 1.." + std::to_string(max_threads))
      .add_flag("fixed-threads", "every token on the N threads, even where one thread runs faster");
}

ThreadsOption read_threads_options(const ArgParser& args, std::size_t max_threads) {
  ThreadsOption option;
  option.threads =
      static_cast<std::size_t>(args.integer("threads", 1, static_cast<long long>(max_threads)));
  option.fixed = args.flag("fixed-threads");
  if (option.fixed && option.threads == 1) {
    throw UsageError("--fixed-threads keeps tokens on the threads of --threads N: give N > 1");
  }
  return option;
}

std::string token_threads_summary(const ThreadsOption& option) {
  const std::string n = std::to_string(row_threads());
  if (option.fixed) return "threads: " + n + " for every token (--fixed-threads)";
  const TokenThreadCounts counts = token_thread_counts();
  const std::size_t all = counts.on_all + counts.on_one;
  if (counts.on_one == 0) return "threads: " + n + " for every token";
  return "threads: " + n + " for " + std::to_string(counts.on_all) + " of " + std::to_string(all) +
         " tokens, one for the other " + std::to_string(counts.on_one) +
         " (it ran faster then: a busy machine, or a probe)";
}

void use_threads_option(const std::string& program, const ThreadsOption& option) {
  const std::size_t threads = option.threads;
  set_matmul_threads(threads);
  set_token_thread_choice(!option.fixed);
  if (threads > 1 && !row_threads_available()) {
    std::cerr << program << ": note: built without OpenMP, --threads " << threads
              << " runs on one thread\n";
  }
  // The OpenMP wait policy the program chooses (row_threads.hpp): under libgomp only a program
  // started with it set has it, so this one starts again so, before it has done anything else.
  if (threads > 1 && program_wait_pending() && !apply_program_wait()) {
    restart_program(program_wait_environment());
  }
}

}  // namespace h2o
