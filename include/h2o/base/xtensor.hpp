// xtensor.hpp: the one place that includes xtensor, for every version this project builds with.
//
// xtensor 0.26 moved its headers into sub-folders (xtensor/xview.hpp became
// xtensor/views/xview.hpp) and left no forwarding headers behind, so an include line copied from
// one version does not compile with the other. Debian 12 ships 0.24, Debian 13 0.25 (flat), Debian
// unstable, Homebrew and conda-forge 0.27 (sub-folders). Every file of the project includes this
// header (through tensor.hpp) instead of naming xtensor's files itself. It pulls in the parts of
// xtensor the project uses: containers, adapt (views of raw memory), builders (zeros),
// element-wise maths, views and transpose. xtensor-blas is in xtensor_blas.hpp: it takes several
// seconds to compile, so only the files that multiply matrices with it include that one.
//
// Dimension legend: none (no tensors here; tensor.hpp names the project's tensor types).
#pragma once

#if __has_include(<xtensor/containers/xtensor.hpp>)  // xtensor 0.26 and newer (needs C++20)
#include <xtensor/containers/xadapt.hpp>
#include <xtensor/containers/xtensor.hpp>
#include <xtensor/core/xmath.hpp>
#include <xtensor/generators/xbuilder.hpp>
#include <xtensor/misc/xmanipulation.hpp>
#include <xtensor/views/xview.hpp>
#else  // xtensor 0.24 and 0.25: every header at the top of xtensor/
#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>
#endif
