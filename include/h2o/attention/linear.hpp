// linear.hpp: matrix-vector products on raw rows, through xtensor-blas (BLAS sgemv).
//
// The decoder's hot path must not allocate, so these take pointers into preallocated buffers and
// wrap them in non-owning xtensor adaptors; xt::blas::gemv then writes straight into `out`.
//
// Dimension legend: rows = output size, cols = input size (a weight matrix is [out][in]).
#pragma once

#include <cstddef>

namespace h2o {

// out (rows,) = W (rows, cols) @ x (cols,)             W row-major, as llama2.c stores [out][in]
void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols);

// out (cols,) = W (rows, cols)^T @ x (rows,)           a weighted sum of W's rows
void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols);

}  // namespace h2o
