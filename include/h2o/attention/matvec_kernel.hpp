// matvec_kernel.hpp: decode's matrix-vector product, the project's own loops.
//
// Decoding one token reads every weight matrix once, one multiply-add per weight: from 15M
// parameters up the weights do not fit in the cache, so a token costs what streaming them from
// memory costs. What makes a kernel fast here is how it reads memory, not arithmetic. Read one row
// at a time, front to back, and the CPU's prefetcher sees one stream and keeps ahead of it;
// kernels that interleave 4 rows (OpenBLAS's sgemv) give it 4 streams and streamed 10-16 GB/s on
// an AMD EPYC where one stream runs at 23-28 GB/s.
//
// Two kinds of kernel, same arithmetic:
//   - matvec_reference: the plain loop a reader sees (llama2.c's matmul), one float at a time.
//   - the vector kernels: one row at a time, 32 floats per step in two 16-float accumulators
//     (a, b), then a fixed reduction tree (a + b, then halves: 8 + 8, 4 + 4, 2 + 2, 1 + 1), then
//     the last cols % 16 floats one by one. Compiled three times: AVX-512 (one 16-float register
//     per accumulator), AVX2 + FMA (two 8-float registers), x86-64 baseline SSE2 (four 4-float
//     registers, no fused multiply-add). The same tree in all three: AVX-512 and AVX2 give the
//     same bits; the baseline rounds each product before adding it (no FMA), so it differs from
//     them in the last bits (tests/test_matvec_kernel.cpp bounds every difference).
//
// Which kernel runs is chosen once, when the program starts: the fastest this CPU supports, or the
// one the environment variable H2O_MATVEC_KERNEL names (reference, baseline, avx2, avx512) - how
// the AVX2 and baseline paths are measured on an AVX-512 machine. Nothing needs -march=native.
//
// Dimension legend: rows = output size, cols = input size (a weight matrix is [out][in]).
#pragma once

#include <cstddef>
#include <string>

namespace h2o {

enum class MatvecKernel { reference, baseline, avx2, avx512 };

// The plain loop: out[i] = sum over j of w[i][j] x[j], added left to right (as llama2.c's matmul).
// out (rows,)  W (rows, cols) row-major  x (cols,)
void matvec_reference(float* out, const float* w, const float* x, std::size_t rows,
                      std::size_t cols);

// Rows [first, last) of out = W x with the given kernel. Throws std::invalid_argument when this
// CPU cannot run it (kernel_supported). out (rows,)  W (rows, cols)  x (cols,)
void matvec_rows(MatvecKernel kernel, float* out, const float* w, const float* x,
                 std::size_t first, std::size_t last, std::size_t cols);

// Whether this CPU can run `kernel` (reference and baseline: always).
bool kernel_supported(MatvecKernel kernel);
// The kernel matvec() uses by default: AVX2 where the CPU has it (also on AVX-512 CPUs: the same
// bits, and faster where measured, docs/speed.md), else the SSE2 baseline.
MatvecKernel best_matvec_kernel();

// The kernel matvec() uses: H2O_MATVEC_KERNEL's if set (a bad or unsupported name stops the
// program at start-up with a one-line message), else best_matvec_kernel().
MatvecKernel active_matvec_kernel();
// Chooses another kernel for matvec() (tests, benchmarks). Throws std::invalid_argument when this
// CPU cannot run it.
void set_matvec_kernel(MatvecKernel kernel);

// "reference", "baseline", "avx2", "avx512".
const char* kernel_name(MatvecKernel kernel);
// The kernel of that name; throws std::invalid_argument naming the choices otherwise.
MatvecKernel parse_matvec_kernel(const std::string& name);

}  // namespace h2o
