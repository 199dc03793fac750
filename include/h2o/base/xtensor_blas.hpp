// xtensor_blas.hpp: xtensor-blas (xt::linalg::dot, xt::blas::gemv) and the CBLAS calls
// (cblas_sgemm), for every version this project builds with.
//
// Separate from xtensor.hpp because xtensor-blas adds about 5 seconds to the compilation of every
// file that includes it: only the matrix products (attention/linear.cpp) and the lessons that
// multiply with xt::linalg include it.
//
// CBLAS: xtensor-blas 0.20 (Debian 12) declares the CBLAS functions itself (its bundled xflens
// driver, guarded by CXXBLAS_DRIVERS_CBLAS_H); 0.21 and newer no longer do. The BLAS library's own
// <cblas.h> cannot simply be added: with 0.20 both would define enum CBLAS_ORDER. So <cblas.h> is
// included exactly when xtensor-blas did not declare CBLAS (CMake adds the folder holding it).
//
// Dimension legend: none (no tensors here).
#pragma once

#include "h2o/base/xtensor.hpp"

#include <xtensor-blas/xlinalg.hpp>

#ifndef CXXBLAS_DRIVERS_CBLAS_H
#include <cblas.h>
#endif
