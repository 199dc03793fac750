#include "h2o/attention/linear.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include "h2o/base/xtensor_blas.hpp"  // xt::blas::gemv, cblas_sgemm

// OpenBLAS's own switches (this project links OpenBLAS, see BLA_VENDOR in CMakeLists.txt).
// blas_thread_shutdown_ is the call OpenBLAS's own fork handler makes: it ends the pool threads;
// the next openblas_set_num_threads starts them again.
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);
extern "C" int blas_thread_shutdown_(void);

namespace h2o {

namespace {
// Every product here is small (at most vocab x dim, or a chunk of prompt tokens), so handing it to
// several threads costs more in wake-ups than it saves on the small models: measured 1.35-1.4x
// more tokens/s on the decode benchmark single-threaded. One thread also keeps every sum in one
// fixed order. OpenBLAS starts its pool (one thread per core) when it is loaded, before main(),
// and an idle pool thread keeps calling sched_yield for a while: on a short run that is 10-77%
// more CPU time. So the pool is ended here, before main(), and set_matmul_threads starts it again
// only if a program asks for more than one thread.
std::size_t g_matmul_threads = [] {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
  return std::size_t{1};
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

// out = W x (transposed: W^T x) for W (rows, cols). Empty products are zeros, without BLAS.
void gemv_into(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols,
               bool transposed) {
  const std::size_t out_size = transposed ? cols : rows, in_size = transposed ? rows : cols;
  if (out_size == 0) return;
  if (in_size == 0) {
    for (std::size_t i = 0; i < out_size; ++i) out[i] = 0.0f;
    return;
  }
  auto w_view = adapt_matrix(w, rows, cols);
  auto x_view = adapt_vector(const_cast<float*>(x), in_size);
  auto out_view = adapt_vector(out, out_size);
  xt::blas::gemv(w_view, x_view, out_view, transposed);
}
}  // namespace

void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols) {
  gemv_into(out, w, x, rows, cols, false);
}

void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols) {
  gemv_into(out, w, x, rows, cols, true);
}

void matmul_transposed(float* out, const float* x, const float* w, std::size_t m, std::size_t rows,
                       std::size_t cols) {
  if (m == 0 || rows == 0) return;
  if (cols == 0) {
    for (std::size_t i = 0; i < m * rows; ++i) out[i] = 0.0f;
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(rows),
              static_cast<int>(cols), 1.0f, x, static_cast<int>(cols), w, static_cast<int>(cols),
              0.0f, out, static_cast<int>(rows));
}

void set_matmul_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxMatmulThreads) {
    throw std::invalid_argument("matrix products can use 1 to " +
                                std::to_string(kMaxMatmulThreads) + " threads, not " +
                                std::to_string(threads));
  }
  if (threads == g_matmul_threads) return;
  openblas_set_num_threads(static_cast<int>(threads));
  if (threads == 1) blas_thread_shutdown_();
  g_matmul_threads = threads;
}

std::size_t matmul_threads() { return g_matmul_threads; }

}  // namespace h2o
