// row_threads.hpp: the project's own threads for the weight products (--threads N).
//
// A product's output rows are handed out in contiguous pieces (N threads: the caller and N - 1
// workers): every thread takes the next free piece until none is left, the pieces shrinking as
// the rows run out (big ones first, few hand-overs; small ones last, so the threads finish
// together), and a worker that has lost its core (a busy machine) never holds a product up for
// long. Each output row is computed by one thread, front to back, exactly as with one thread: the
// results are the same bits whatever N is. The decoder shares attention's KV heads the same way.
//
// The workers are started once, at the first product big enough to share, and then wait for work.
// While a token is being decoded the products come every few microseconds, so a worker spins for
// about a millisecond before it sleeps on a condition variable: waking a sleeping thread costs
// tens of microseconds, longer than a whole product of the small models. Handing out a product
// allocates nothing.
//
// OpenBLAS, which the batched prompt's matrix-matrix products use, is kept at one thread: those
// products are split over these same workers too (linear.cpp), so the two never compete for cores.
//
// Dimension legend: rows = output rows of one product.
#pragma once

#include <cstddef>

namespace h2o {

// Most threads set_row_threads accepts.
constexpr std::size_t kMaxRowThreads = 256;

// Below this many floats read (256 KiB) a product stays on the calling thread: handing it to a
// worker and waiting for it costs about a microsecond, as much as such a product itself (every
// product of stories260K is this small; stories15M's smallest, 288 x 288, is not). The `share`
// argument of for_row_blocks is `floats read >= kMinFloatsToShare`.
constexpr std::size_t kMinFloatsToShare = std::size_t{1} << 16;

// N threads share the products from now on, N in [1, kMaxRowThreads] (std::invalid_argument
// otherwise); 1 = everything on the calling thread. Stops the workers of an earlier setting; new
// ones start at the next product worth sharing. Not to be called while a product runs.
void set_row_threads(std::size_t threads);
std::size_t row_threads();

// Runs work(context, first, last) over rows [0, rows), cut into contiguous blocks shared by the
// threads, and returns when every block is done. With `share` false (a product too small
// to be worth a hand-over) the calling thread does all the rows itself. Calls from one thread at a
// time (the decoder's): the workers serve one product at once.
using RowWork = void (*)(void* context, std::size_t first, std::size_t last);
void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context);

}  // namespace h2o
