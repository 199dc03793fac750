// test_matvec_kernel.cpp: decode's matrix-vector kernels against each other and against the exact
// sum, and the row threads that share them.
//
// The stated tolerance: every kernel's out[i] is within 1e-5 * sum_j |W[i][j] x[j]| of the exact
// sum (computed in long double), on seeded shapes from 1 x 0 up to 700 x 2100 with odd sizes
// (rows and cols that are not multiples of 16 or 32), and on the stories shapes. Floats carry 24
// bits; a sum of n products may lose about sqrt(n) * 2^-24 of the sum of magnitudes (n * 2^-24 at
// worst): 1e-5 leaves room for n in the thousands. Beyond the tolerance, exact equalities: the
// AVX2 and AVX-512 kernels give the same bits (same lanes, same tree, both fused multiply-add),
// any split of the rows gives the same bits as one call, and so do 1, 2 or 3 threads.
// Each kernel is forced explicitly; one this CPU cannot run is reported and must refuse to run.
//
// Dimension legend: rows = output size, cols = input size, V = vocabulary.
#include <algorithm>
#include "h2o_catch.hpp"
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/attention/linear.hpp"
#include "h2o/attention/matvec_kernel.hpp"
#include "h2o/attention/row_threads.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "logit_bound.hpp"

using namespace h2o;

namespace {

const MatvecKernel kAllKernels[] = {MatvecKernel::reference, MatvecKernel::baseline,
                                    MatvecKernel::avx2, MatvecKernel::avx512};
constexpr double kTolerance = 1e-5;  // times sum_j |W[i][j] x[j]|

struct Problem {
  std::size_t rows, cols;
  std::vector<float> w, x;  // (rows, cols), (cols,)
};

Problem random_problem(Rng& rng, std::size_t rows, std::size_t cols) {
  Problem p{rows, cols, std::vector<float>(rows * cols), std::vector<float>(cols)};
  for (float& v : p.w) v = rng.normal() * 0.1f;
  for (float& v : p.x) v = rng.normal();
  return p;
}

// The seeded shapes: odd ones of every size class, and the stories models' own.
std::vector<std::pair<std::size_t, std::size_t>> shapes() {
  std::vector<std::pair<std::size_t, std::size_t>> list = {
      {1, 0},    {3, 1},    {1, 15},   {2, 16},   {5, 17},    {4, 31},   {7, 32},  {3, 33},
      {9, 47},   {6, 48},   {11, 63},  {64, 64},  {172, 64},  {64, 172}, {512, 64}, {288, 288},
      {768, 288}, {288, 768}, {97, 2048}, {33, 2100}, {700, 13}};
  Rng rng(20261201);
  for (int i = 0; i < 60; ++i) {
    list.emplace_back(1 + rng.next_u32() % 120, rng.next_u32() % 700);
  }
  return list;
}

bool exact_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> run_kernel(MatvecKernel kernel, const Problem& p) {
  std::vector<float> out(p.rows, -1.0f);
  matvec_rows(kernel, out.data(), p.w.data(), p.x.data(), 0, p.rows, p.cols);
  return out;
}

// Restores the kernel and thread count a test case changed.
struct RestoreSettings {
  MatvecKernel kernel = active_matvec_kernel();
  std::size_t threads = row_threads();
  ~RestoreSettings() {
    set_matvec_kernel(kernel);
    set_row_threads(threads);
  }
};

}  // namespace

TEST_CASE("every matvec kernel is within 1e-5 of the exact sum, over many seeded shapes",
          "[matvec_kernel]") {
  Rng rng(7);
  for (const auto& [rows, cols] : shapes()) {
    const Problem p = random_problem(rng, rows, cols);
    for (MatvecKernel kernel : kAllKernels) {
      INFO(kernel_name(kernel) << " kernel, " << rows << " x " << cols);
      if (!kernel_supported(kernel)) {
        WARN("this CPU cannot run the " << kernel_name(kernel) << " kernel: not checked");
        std::vector<float> out(rows);
        REQUIRE_THROWS_AS(
            matvec_rows(kernel, out.data(), p.w.data(), p.x.data(), 0, rows, cols),
            std::invalid_argument);
        continue;
      }
      const std::vector<float> out = run_kernel(kernel, p);
      for (std::size_t i = 0; i < rows; ++i) {
        long double exact = 0.0L, magnitude = 0.0L;
        for (std::size_t j = 0; j < cols; ++j) {
          const long double product = static_cast<long double>(p.w[i * cols + j]) * p.x[j];
          exact += product;
          magnitude += std::fabs(product);
        }
        INFO("row " << i << ": " << out[i] << " against " << static_cast<double>(exact));
        REQUIRE(std::fabs(static_cast<long double>(out[i]) - exact) <= kTolerance * magnitude);
      }
    }
  }
}

TEST_CASE("the AVX2 and AVX-512 kernels give the same bits", "[matvec_kernel]") {
  if (!kernel_supported(MatvecKernel::avx2) || !kernel_supported(MatvecKernel::avx512)) {
    WARN("this CPU lacks AVX2 or AVX-512: not checked");
    return;
  }
  Rng rng(11);
  for (const auto& [rows, cols] : shapes()) {
    INFO(rows << " x " << cols);
    const Problem p = random_problem(rng, rows, cols);
    REQUIRE(exact_equal(run_kernel(MatvecKernel::avx2, p), run_kernel(MatvecKernel::avx512, p)));
  }
}

TEST_CASE("any split of the rows gives the same bits as one call", "[matvec_kernel]") {
  Rng rng(13);
  for (MatvecKernel kernel : kAllKernels) {
    if (!kernel_supported(kernel)) continue;
    INFO(kernel_name(kernel));
    const Problem p = random_problem(rng, 37, 77);
    const std::vector<float> whole = run_kernel(kernel, p);
    std::vector<float> pieces(p.rows, -1.0f);
    for (std::size_t first = 0, size = 1; first < p.rows; first += size, ++size) {
      const std::size_t last = std::min(p.rows, first + size);
      matvec_rows(kernel, pieces.data(), p.w.data(), p.x.data(), first, last, p.cols);
    }
    REQUIRE(exact_equal(whole, pieces));
  }
}

TEST_CASE("matvec gives the same bits with 1, 2 or 3 threads", "[matvec_kernel]") {
  RestoreSettings restore;
  Rng rng(17);
  // Big enough to be shared (linear.cpp shares products of 2^16 weights or more), and small.
  for (const auto& [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1000, 77}, {301, 288}, {3, 40000}, {7, 9}}) {
    const Problem p = random_problem(rng, rows, cols);
    set_row_threads(1);
    std::vector<float> one(rows), many(rows);
    matvec(one.data(), p.w.data(), p.x.data(), rows, cols);
    for (std::size_t threads : {2, 3}) {
      set_row_threads(threads);
      INFO(rows << " x " << cols << ", " << threads << " threads");
      for (int repeat = 0; repeat < 20; ++repeat) {
        std::fill(many.begin(), many.end(), -1.0f);
        matvec(many.data(), p.w.data(), p.x.data(), rows, cols);
        REQUIRE(exact_equal(one, many));
      }
    }
  }
}

TEST_CASE("the batched prompt's products agree with 1 and 2 threads", "[matvec_kernel]") {
  RestoreSettings restore;
  Rng rng(19);
  const std::size_t m = 9, rows = 700, cols = 200;  // 140,000 weights: shared
  const Problem p = random_problem(rng, rows, cols);
  std::vector<float> x(m * cols);  // (m, cols)
  for (float& v : x) v = rng.normal();
  std::vector<float> one(m * rows), two(m * rows);  // (m, rows)
  set_row_threads(1);
  matmul_transposed(one.data(), x.data(), p.w.data(), m, rows, cols);
  set_row_threads(2);
  matmul_transposed(two.data(), x.data(), p.w.data(), m, rows, cols);
  // Each element is one dot product of cols terms; however OpenBLAS orders its additions for a
  // block of columns, two evaluations are within 2 gamma_cols sum_k |x_k w_k| of each other
  // (logit_bound.hpp states the bound).
  const double u = std::ldexp(1.0, -24), gamma = cols * u / (1.0 - cols * u);
  for (std::size_t t = 0; t < m; ++t) {
    for (std::size_t r = 0; r < rows; ++r) {
      double magnitude = 0.0;
      for (std::size_t k = 0; k < cols; ++k) {
        magnitude += std::fabs(static_cast<double>(x[t * cols + k]) * p.w[r * cols + k]);
      }
      INFO("token " << t << ", row " << r);
      REQUIRE(std::fabs(static_cast<double>(two[t * rows + r]) - one[t * rows + r]) <=
              2.0 * gamma * magnitude);
    }
  }
}

TEST_CASE("a decoder's logits agree within the stated bound whichever kernel runs",
          "[matvec_kernel]") {
  RestoreSettings restore;
  ModelConfig config;
  config.dim = 80;  // 5 heads of 16: odd sizes for the kernels (80 = 2 x 32 + 16, 200 = 6 x 32 + 8)
  config.hidden_dim = 200;
  config.n_layers = 2;
  config.n_heads = 5;
  config.n_kv_heads = 5;
  config.vocab_size = 301;
  config.seq_len = 32;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, 3));
  const std::vector<int> tokens = {1, 17, 300, 42, 5, 5, 250, 99};

  auto logits_with = [&](MatvecKernel kernel) {
    set_matvec_kernel(kernel);
    Decoder decoder(weights, make_policy("full"));
    std::vector<float> all;  // (tokens, V)
    for (int token : tokens) {
      const Vector& logits = decoder.forward(token);
      all.insert(all.end(), logits.begin(), logits.end());
    }
    return all;
  };
  const std::vector<float> reference = logits_with(MatvecKernel::reference);  // (tokens, V)
  const std::vector<double> tolerance = h2o_test::logit_tolerances(*weights, tokens.size());
  for (MatvecKernel kernel : kAllKernels) {
    if (!kernel_supported(kernel)) continue;
    INFO(kernel_name(kernel));
    const std::vector<float> logits = logits_with(kernel);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      INFO("token " << t);
      const std::size_t V = config.vocab_size;
      CHECK(h2o_test::worst_over_tolerance(&logits[t * V], &reference[t * V], tolerance) <= 1.0);
    }
  }
}

TEST_CASE("kernels by name, and the ones a CPU lacks are refused", "[matvec_kernel]") {
  RestoreSettings restore;
  for (MatvecKernel kernel : kAllKernels) {
    REQUIRE(parse_matvec_kernel(kernel_name(kernel)) == kernel);
    if (kernel_supported(kernel)) {
      set_matvec_kernel(kernel);
      REQUIRE(active_matvec_kernel() == kernel);
    } else {
      REQUIRE_THROWS_AS(set_matvec_kernel(kernel), std::invalid_argument);
    }
  }
  REQUIRE(kernel_supported(best_matvec_kernel()));
  REQUIRE(kernel_supported(MatvecKernel::reference));
  REQUIRE(kernel_supported(MatvecKernel::baseline));
  REQUIRE_THROWS_WITH(parse_matvec_kernel("avx3"),
                      "unknown kernel 'avx3' (choose reference, baseline, avx2 or avx512)");
}
