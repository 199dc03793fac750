// threads_option.hpp: --threads N, as generate and bench_decode read it.
#pragma once

#include <cstddef>
#include <string>

namespace h2o {

// The weight products' threads from now on (set_matmul_threads, attention/linear.hpp). A build
// without OpenMP runs on one thread whatever N is; for N > 1 it says so on stderr, one line:
// "program: note: built without OpenMP, --threads 2 runs on one thread". For N > 1 it also puts
// the OpenMP wait policy the program chooses in effect (row_threads.hpp), which under GCC's
// libgomp means starting the program again (program.hpp's restart_program): call it before the
// program reads any input or writes anything.
void use_threads_option(const std::string& program, std::size_t threads);

}  // namespace h2o
