// linear.hpp: matrix-vector and matrix-matrix products on raw rows, through BLAS (OpenBLAS).
//
// The decoder's hot path must not allocate, so these take pointers into preallocated buffers and
// wrap them in non-owning xtensor adaptors; xt::blas::gemv then writes straight into `out`. A
// prompt's tokens go through the weights together (matmul_transposed, one sgemm per weight matrix):
// a weight matrix is then read once for many tokens instead of once per token.
//
// Dimension legend: rows = output size, cols = input size (a weight matrix is [out][in]),
// m = tokens processed together.
#pragma once

#include <cstddef>

namespace h2o {

// out (rows,) = W (rows, cols) @ x (cols,)             W row-major, as llama2.c stores [out][in]
void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols);

// out (cols,) = W (rows, cols)^T @ x (rows,)           a weighted sum of W's rows
void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols);

// out (m, rows) = X (m, cols) @ W (rows, cols)^T: row i of out is matvec(W, row i of X).
// Same numbers as m matvec calls up to the order of float additions (BLAS blocks them otherwise).
void matmul_transposed(float* out, const float* x, const float* w, std::size_t m, std::size_t rows,
                       std::size_t cols);

// Threads the BLAS products may use (default 1). Throws std::invalid_argument outside
// [1, kMaxMatmulThreads]. Applies to the whole process (OpenBLAS has one setting).
constexpr std::size_t kMaxMatmulThreads = 256;
void set_matmul_threads(std::size_t threads);
std::size_t matmul_threads();

}  // namespace h2o
