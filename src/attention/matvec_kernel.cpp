#include "h2o/attention/matvec_kernel.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

// This file is compiled with -ffp-contract=fast (src/CMakeLists.txt): `a += w * x` becomes one
// fused multiply-add where the target has one (the AVX2 and AVX-512 kernels), and stays a
// multiply then an add where it has not (the baseline kernel and the reference loop). There is no
// -ffast-math: no sum is reordered behind our back, so every kernel adds in the order written here.

namespace h2o {

namespace {

// The kernels' arithmetic works on 16 floats at a time ("lanes"). Each target holds them in its
// own registers: V is a GCC/Clang vector type as wide as one register (16 bytes SSE2, 32 AVX2, 64
// AVX-512) and a group of 16 lanes is kParts of them (lane l = element l % width of part
// l / width). Every target thus does the same additions in the same order.
constexpr std::size_t kLanes = 16;
typedef float Sse __attribute__((vector_size(16)));
typedef float Avx __attribute__((vector_size(32)));
typedef float Avx512 __attribute__((vector_size(64)));

template <class V>
__attribute__((always_inline)) inline V load(const float* p) {
  V v;
  std::memcpy(&v, p, sizeof(v));  // an unaligned load: rows start anywhere
  return v;
}

// a += 16 weights times 16 inputs, lane by lane.
template <class V>
__attribute__((always_inline)) inline void multiply_add_lanes(V* a, const float* w,
                                                              const float* x) {
  constexpr std::size_t width = sizeof(V) / sizeof(float), parts = kLanes / width;
  for (std::size_t p = 0; p < parts; ++p) a[p] += load<V>(w + p * width) * load<V>(x + p * width);
}

// The fixed tree over 16 lanes, in registers: lanes 0..7 + lanes 8..15, then 0..3 + 4..7, then
// (0 + 2) + (1 + 3). One overload per register width, the same additions in each.
__attribute__((always_inline)) inline float sum_lanes(const Sse* a) {  // a: 4 parts
  const Sse quarter = (a[0] + a[2]) + (a[1] + a[3]);
  return (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
}
__attribute__((always_inline)) inline float sum_lanes(const Avx* a) {  // a: 2 parts
  const Avx half = a[0] + a[1];
  const Sse quarter = __builtin_shufflevector(half, half, 0, 1, 2, 3) +
                      __builtin_shufflevector(half, half, 4, 5, 6, 7);
  return (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
}
__attribute__((always_inline)) inline float sum_lanes(const Avx512* a) {  // a: 1 part
  const Avx half = __builtin_shufflevector(a[0], a[0], 0, 1, 2, 3, 4, 5, 6, 7) +
                   __builtin_shufflevector(a[0], a[0], 8, 9, 10, 11, 12, 13, 14, 15);
  const Sse quarter = __builtin_shufflevector(half, half, 0, 1, 2, 3) +
                      __builtin_shufflevector(half, half, 4, 5, 6, 7);
  return (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
}

// sum over j of row[j] x[j]: two accumulators of 16 lanes, a (floats j..j+15 of each 32) and b
// (j+16..j+31), a leftover 16 into a, then a + b, then a fixed tree over the 16 lanes (8 + 8,
// 4 + 4, 2 + 2, 1 + 1), then the last cols % 16 floats one by one. Inlined into each target's
// function below and compiled there for its registers.  row (cols,)  x (cols,)
template <class V>
__attribute__((always_inline)) inline float row_dot(const float* row, const float* x,
                                                    std::size_t cols) {
  constexpr std::size_t width = sizeof(V) / sizeof(float), parts = kLanes / width;
  V a[parts] = {}, b[parts] = {};
  std::size_t j = 0;
  for (; j + 2 * kLanes <= cols; j += 2 * kLanes) {
    multiply_add_lanes(a, row + j, x + j);
    multiply_add_lanes(b, row + j + kLanes, x + j + kLanes);
  }
  if (j + kLanes <= cols) {
    multiply_add_lanes(a, row + j, x + j);
    j += kLanes;
  }
  for (std::size_t p = 0; p < parts; ++p) a[p] += b[p];
  float sum = sum_lanes(a);
  // The tail, one float at a time. Spelled out (fused where the lanes were) so that the compiler
  // cannot split some of it into a vector multiply and separate adds in one target and not in
  // another: AVX2 and AVX-512 stay bit for bit the same.
  constexpr bool fused = sizeof(V) > sizeof(Sse);
  for (; j < cols; ++j) sum = fused ? __builtin_fmaf(row[j], x[j], sum) : sum + row[j] * x[j];
  return sum;
}

// One function per target; each runs rows [first, last) of out = W x one row at a time.
#define H2O_ROWS_BODY(V)                                                                   \
  for (std::size_t i = first; i < last; ++i) out[i] = row_dot<V>(w + i * cols, x, cols);

void rows_baseline(float* out, const float* w, const float* x, std::size_t first,
                   std::size_t last, std::size_t cols) {
  H2O_ROWS_BODY(Sse)
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define H2O_HAVE_X86_KERNELS 1
__attribute__((target("avx2,fma"))) void rows_avx2(float* out, const float* w, const float* x,
                                                   std::size_t first, std::size_t last,
                                                   std::size_t cols) {
  H2O_ROWS_BODY(Avx)
}

__attribute__((target("avx512f"))) void rows_avx512(float* out, const float* w, const float* x,
                                                    std::size_t first, std::size_t last,
                                                    std::size_t cols) {
  H2O_ROWS_BODY(Avx512)
}
#endif
#undef H2O_ROWS_BODY

// H2O_MATVEC_KERNEL's choice, or the best one; a bad name ends the program here (before main, or
// at the first product): it is a mistake in how the program was started, nothing can recover it.
MatvecKernel kernel_at_start_up() {
  const char* chosen = std::getenv("H2O_MATVEC_KERNEL");
  if (chosen == nullptr || chosen[0] == '\0') return best_matvec_kernel();
  try {
    const MatvecKernel kernel = parse_matvec_kernel(chosen);
    if (!kernel_supported(kernel)) {
      throw std::invalid_argument(std::string("this CPU cannot run the ") + chosen + " kernel");
    }
    return kernel;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: H2O_MATVEC_KERNEL: %s\n", e.what());
    std::exit(2);
  }
}

MatvecKernel& active_kernel() {
  static MatvecKernel kernel = kernel_at_start_up();
  return kernel;
}
// Chosen when the program starts, so that a bad H2O_MATVEC_KERNEL is reported before anything runs.
[[maybe_unused]] const MatvecKernel g_kernel_at_start_up = active_kernel();

}  // namespace

void matvec_reference(float* out, const float* w, const float* x, std::size_t rows,
                      std::size_t cols) {
  for (std::size_t i = 0; i < rows; ++i) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < cols; ++j) sum += w[i * cols + j] * x[j];
    out[i] = sum;
  }
}

void matvec_rows(MatvecKernel kernel, float* out, const float* w, const float* x,
                 std::size_t first, std::size_t last, std::size_t cols) {
  switch (kernel) {
    case MatvecKernel::reference:
      matvec_reference(out + first, w + first * cols, x, last - first, cols);
      return;
    case MatvecKernel::baseline:
      rows_baseline(out, w, x, first, last, cols);
      return;
#ifdef H2O_HAVE_X86_KERNELS
    case MatvecKernel::avx2:
      if (kernel_supported(kernel)) return rows_avx2(out, w, x, first, last, cols);
      break;
    case MatvecKernel::avx512:
      if (kernel_supported(kernel)) return rows_avx512(out, w, x, first, last, cols);
      break;
#else
    default:
      break;
#endif
  }
  throw std::invalid_argument(std::string("matvec: this CPU cannot run the ") +
                              kernel_name(kernel) + " kernel");
}

bool kernel_supported(MatvecKernel kernel) {
  switch (kernel) {
    case MatvecKernel::reference:
    case MatvecKernel::baseline:
      return true;
#ifdef H2O_HAVE_X86_KERNELS
    case MatvecKernel::avx2:
      // __builtin_cpu_init first: this may run before the constructor that reads the CPU's flags.
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case MatvecKernel::avx512:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f");
#endif
    default:
      return false;
  }
}

MatvecKernel best_matvec_kernel() {
  // AVX2 before AVX-512: the two give the same bits, a decode step streams the weights from
  // memory, and on the AMD Zen 4 we measured AVX2 was the faster in three quiet runs of
  // scripts/bench_vs_llama2c.sh (1.16x and 1.20x runfast at 15M and 110M, AVX-512 0.96x and
  // 0.94x; docs/speed.md). H2O_MATVEC_KERNEL=avx512 still chooses AVX-512.
  if (kernel_supported(MatvecKernel::avx2)) return MatvecKernel::avx2;
  return MatvecKernel::baseline;
}

MatvecKernel active_matvec_kernel() { return active_kernel(); }

void set_matvec_kernel(MatvecKernel kernel) {
  if (!kernel_supported(kernel)) {
    throw std::invalid_argument(std::string("this CPU cannot run the ") + kernel_name(kernel) +
                                " kernel");
  }
  active_kernel() = kernel;
}

const char* kernel_name(MatvecKernel kernel) {
  switch (kernel) {
    case MatvecKernel::reference:
      return "reference";
    case MatvecKernel::baseline:
      return "baseline";
    case MatvecKernel::avx2:
      return "avx2";
    case MatvecKernel::avx512:
      return "avx512";
  }
  return "?";
}

MatvecKernel parse_matvec_kernel(const std::string& name) {
  for (MatvecKernel kernel : {MatvecKernel::reference, MatvecKernel::baseline, MatvecKernel::avx2,
                              MatvecKernel::avx512}) {
    if (name == kernel_name(kernel)) return kernel;
  }
  throw std::invalid_argument("unknown kernel '" + name +
                              "' (choose reference, baseline, avx2 or avx512)");
}

}  // namespace h2o
