#include "h2o/attention/row_threads.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace h2o {

namespace {

// A shared product is cut into this many blocks per thread, and OpenMP hands them out one at a
// time to whichever thread is free (schedule(dynamic)). With one block per thread (run.c's static
// split) a thread that loses its core on a busy machine holds the whole product up until it gets
// the core back; with several, the other threads take its remaining blocks. Blocks stay big (a
// 288-row product of stories15M on 2 threads: 36 rows, 41 KiB of weights each), so handing one out
// (one atomic add in the runtime) costs nothing next to reading it.
constexpr std::size_t kBlocksPerThread = 4;

std::size_t g_threads = 1;  // set_row_threads

}  // namespace

bool row_threads_available() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

void set_row_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxRowThreads) {
    throw std::invalid_argument("the weight products can use 1 to " +
                                std::to_string(kMaxRowThreads) + " threads, not " +
                                std::to_string(threads));
  }
  g_threads = row_threads_available() ? threads : 1;
}

std::size_t row_threads() { return g_threads; }

void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context) {
  if (rows == 0) return;
  const std::size_t threads = std::min(g_threads, rows);
  if (!share || threads == 1) {
    work(context, 0, rows);
    return;
  }
#ifdef _OPENMP
  // Block b is rows [rows * b / blocks, rows * (b + 1) / blocks): contiguous, in order, together
  // exactly rows [0, rows), each handed to one thread.
  const std::size_t blocks = std::min(rows, threads * kBlocksPerThread);
  const long long block_count = static_cast<long long>(blocks);
#pragma omp parallel for num_threads(static_cast<int>(threads)) schedule(dynamic, 1)
  for (long long b = 0; b < block_count; ++b) {
    const std::size_t block = static_cast<std::size_t>(b);
    work(context, rows * block / blocks, rows * (block + 1) / blocks);
  }
#else
  work(context, 0, rows);  // not reached: g_threads is 1 without OpenMP
#endif
}

}  // namespace h2o
