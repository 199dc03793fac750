// linear.hpp: the weight products of the decoder, on raw rows.
//
// The decoder's hot path must not allocate, so these take pointers into preallocated buffers.
// Decoding one token multiplies each weight matrix by one vector: matvec, the project's own
// kernel (matvec_kernel.hpp: the fastest this CPU runs). A prompt's tokens go through the weights
// together (matmul_transposed, one OpenBLAS sgemm per weight matrix): a weight matrix is then read
// once for many tokens instead of once per token. Both split their output rows over the threads
// of row_threads.hpp when the matrix is big enough to be worth it (--threads N).
//
// Dimension legend: rows = output size, cols = input size (a weight matrix is [out][in]),
// m = tokens processed together.
#pragma once

#include <cstddef>

#include "h2o/attention/row_threads.hpp"

namespace h2o {

// out (rows,) = W (rows, cols) @ x (cols,)             W row-major, as llama2.c stores [out][in]
void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols);

// out (cols,) = W (rows, cols)^T @ x (rows,)           a weighted sum of W's rows (BLAS, 1 thread)
void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols);

// out (m, rows) = X (m, cols) @ W (rows, cols)^T: row i of out is matvec(W, row i of X).
// Same numbers as m matvec calls up to the order of float additions (BLAS blocks them otherwise).
void matmul_transposed(float* out, const float* x, const float* w, std::size_t m, std::size_t rows,
                       std::size_t cols);

// Threads matvec and matmul_transposed may use (default 1): set_row_threads. Throws
// std::invalid_argument outside [1, kMaxMatmulThreads]. Applies to the whole process.
constexpr std::size_t kMaxMatmulThreads = kMaxRowThreads;
void set_matmul_threads(std::size_t threads);
std::size_t matmul_threads();

}  // namespace h2o
