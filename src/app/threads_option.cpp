#include "h2o/app/threads_option.hpp"

#include <iostream>

#include "h2o/app/program.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/attention/row_threads.hpp"

namespace h2o {

void use_threads_option(const std::string& program, std::size_t threads) {
  set_matmul_threads(threads);
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
