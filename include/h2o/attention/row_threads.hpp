// row_threads.hpp: the threads that share the weight products (--threads N), from OpenMP.
//
// A product's output rows are cut into contiguous blocks, and an OpenMP `parallel for` hands the
// blocks to a team of N threads (the caller and N - 1 of OpenMP's), as llama2.c's run.c does with
// `#pragma omp parallel for` over its matmul's rows when built with -fopenmp. Each output row is
// computed by one thread, front to back, exactly as with one thread: the results are the same
// bits whatever N is. The decoder shares attention's KV heads the same way.
//
// OpenMP's runtime (GCC's libgomp, LLVM's libomp) starts the team at the first shared product and
// keeps it: between two products its threads spin for a while, then sleep, and the next product
// reuses the same team (no thread is started and nothing is allocated per product).
//
// Every shared product ends at OpenMP's barrier, which waits until each thread of the team has run:
// on a machine with more busy programs than cores, a thread waiting for a core holds every product
// up, and --threads N can be much slower than one thread (llama2.c's runomp, too). There, letting
// waiting threads sleep instead of spin (OMP_WAIT_POLICY=passive) gives the cores back: stories15M
// shape on a 2-core AMD EPYC at load average 8-10, 190-400 tok/s against 44-77 with the default
// policy and about 200 with one thread.
//
// Built without OpenMP (no compiler support found, or -DH2O_OPENMP=OFF), every product runs on the
// calling thread: row_threads_available() is false, set_row_threads still accepts any N and
// row_threads() stays 1. The programs then print a one-line note for --threads N > 1.
//
// OpenBLAS, which the batched prompt's matrix-matrix products use, is kept at one thread: those
// products are split over these same threads too (linear.cpp), so the two never compete for cores.
//
// Dimension legend: rows = output rows of one product.
#pragma once

#include <cstddef>

namespace h2o {

// Most threads set_row_threads accepts.
constexpr std::size_t kMaxRowThreads = 256;

// Below this many floats read (256 KiB) a product stays on the calling thread: waking the team and
// waiting for it at the end costs about a microsecond, as much as such a product itself (every
// product of stories260K is this small; stories15M's smallest, 288 x 288, is not). The `share`
// argument of for_row_blocks is `floats read >= kMinFloatsToShare`.
constexpr std::size_t kMinFloatsToShare = std::size_t{1} << 16;

// Whether this build can share products between threads (it was built with OpenMP).
bool row_threads_available();

// N threads share the products from now on, N in [1, kMaxRowThreads] (std::invalid_argument
// otherwise); 1 = everything on the calling thread. Without OpenMP any N runs on one thread.
// Not to be called while a product runs.
void set_row_threads(std::size_t threads);
// The threads a shared product runs on: the last N set (1 without OpenMP).
std::size_t row_threads();

// Runs work(context, first, last) over rows [0, rows), cut into contiguous blocks shared by the
// threads, and returns when every block is done; every row is in exactly one block. With `share`
// false (a product too small to be worth waking the team) the calling thread does all the rows
// itself, in one call.
using RowWork = void (*)(void* context, std::size_t first, std::size_t last);
void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context);

}  // namespace h2o
