#include "h2o/attention/linear.hpp"

#include <array>
#include <xtensor-blas/xblas.hpp>
#include <xtensor/xadapt.hpp>

// OpenBLAS's own switch (this project links OpenBLAS, see BLA_VENDOR in CMakeLists.txt).
extern "C" void openblas_set_num_threads(int num_threads);

namespace h2o {

namespace {
// Every product here is tiny (at most vocab x dim, or one head's cache block), so handing it to
// several threads costs more in wake-ups than it saves: measured 1.35-1.4x more tokens/s on the
// decode benchmark single-threaded. One thread also keeps every sum in one fixed order.
const bool kSingleThreadedBlas = [] {
  openblas_set_num_threads(1);
  return true;
}();

// Non-owning views of raw memory; a std::array shape keeps them allocation-free.
auto adapt_matrix(const float* data, std::size_t rows, std::size_t cols) {
  const std::array<std::size_t, 2> shape{rows, cols};
  return xt::adapt(const_cast<float*>(data), rows * cols, xt::no_ownership(), shape);
}
auto adapt_vector(float* data, std::size_t n) {
  const std::array<std::size_t, 1> shape{n};
  return xt::adapt(data, n, xt::no_ownership(), shape);
}
}  // namespace

void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols) {
  if (rows == 0) return;
  if (cols == 0) {
    for (std::size_t r = 0; r < rows; ++r) out[r] = 0.0f;
    return;
  }
  auto w_view = adapt_matrix(w, rows, cols);
  auto x_view = adapt_vector(const_cast<float*>(x), cols);
  auto out_view = adapt_vector(out, rows);
  xt::blas::gemv(w_view, x_view, out_view, false);
}

void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols) {
  if (cols == 0) return;
  if (rows == 0) {
    for (std::size_t c = 0; c < cols; ++c) out[c] = 0.0f;
    return;
  }
  auto w_view = adapt_matrix(w, rows, cols);
  auto x_view = adapt_vector(const_cast<float*>(x), rows);
  auto out_view = adapt_vector(out, cols);
  xt::blas::gemv(w_view, x_view, out_view, true);
}

}  // namespace h2o
