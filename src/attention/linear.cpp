#include "h2o/attention/linear.hpp"

#include <array>
#include <stdexcept>
#include <string>
#include "h2o/base/xtensor_blas.hpp"  // xt::blas::gemv, cblas_sgemm

#include "h2o/attention/matvec_kernel.hpp"
#include "h2o/attention/row_threads.hpp"

// OpenBLAS's own switches (this project links OpenBLAS, see BLA_VENDOR in CMakeLists.txt).
// blas_thread_shutdown_ is the call OpenBLAS's own fork handler makes: it ends the pool threads;
// the next openblas_set_num_threads starts them again.
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" int openblas_get_num_threads(void);
extern "C" int blas_thread_shutdown_(void);

namespace h2o {

namespace {
// OpenBLAS does the batched prompt's matrix-matrix products, always on one thread: --threads N
// splits those products over OpenMP's threads (row_threads.hpp) like every other one, so
// OpenBLAS's pool and OpenMP's never compete for the cores. OpenBLAS starts its pool (one thread
// per core) when it is loaded, before main(), and an idle pool thread keeps calling sched_yield
// for a while: on a short run that is 10-77% more CPU time. So the pool is ended here, before
// main().
[[maybe_unused]] const bool g_openblas_single_threaded = [] {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
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

// One product for for_row_blocks: out = W x, rows [first, last) of it.
struct MatvecWork {
  MatvecKernel kernel;
  float* out;
  const float* w;
  const float* x;
  std::size_t cols;
  static void run(void* context, std::size_t first, std::size_t last) {
    const auto& p = *static_cast<const MatvecWork*>(context);
    matvec_rows(p.kernel, p.out, p.w, p.x, first, last, p.cols);
  }
};

// One matrix-matrix product: out (m, rows) = X (m, cols) W^T, columns [first, last) of out (rows
// first..last-1 of W), by one single-threaded sgemm.
struct MatmulWork {
  float* out;
  const float* x;
  const float* w;
  std::size_t m, rows, cols;
  static void run(void* context, std::size_t first, std::size_t last) {
    const auto& p = *static_cast<const MatmulWork*>(context);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(p.m),
                static_cast<int>(last - first), static_cast<int>(p.cols), 1.0f, p.x,
                static_cast<int>(p.cols), p.w + first * p.cols, static_cast<int>(p.cols), 0.0f,
                p.out + first, static_cast<int>(p.rows));
  }
};
}  // namespace

void matvec(float* out, const float* w, const float* x, std::size_t rows, std::size_t cols) {
  MatvecWork work{active_matvec_kernel(), out, w, x, cols};
  for_row_blocks(rows, rows * cols >= kMinFloatsToShare, &MatvecWork::run, &work);
}

void matvec_transposed(float* out, const float* w, const float* x, std::size_t rows,
                       std::size_t cols) {
  // out = W^T x, a weighted sum of W's rows (attention's values): through BLAS, one thread.
  if (cols == 0) return;
  if (rows == 0) {
    for (std::size_t i = 0; i < cols; ++i) out[i] = 0.0f;
    return;
  }
  auto w_view = adapt_matrix(w, rows, cols);
  auto x_view = adapt_vector(const_cast<float*>(x), rows);
  auto out_view = adapt_vector(out, cols);
  xt::blas::gemv(w_view, x_view, out_view, true);
}

void matmul_transposed(float* out, const float* x, const float* w, std::size_t m, std::size_t rows,
                       std::size_t cols) {
  if (m == 0 || rows == 0) return;
  if (cols == 0) {
    for (std::size_t i = 0; i < m * rows; ++i) out[i] = 0.0f;
    return;
  }
  MatmulWork work{out, x, w, m, rows, cols};
  for_row_blocks(rows, rows * cols >= kMinFloatsToShare, &MatmulWork::run, &work);
}

void set_matmul_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxMatmulThreads) {
    throw std::invalid_argument("matrix products can use 1 to " +
                                std::to_string(kMaxMatmulThreads) + " threads, not " +
                                std::to_string(threads));
  }
  set_row_threads(threads);
}

std::size_t matmul_threads() { return row_threads(); }

}  // namespace h2o
