// The parts of ringmm._core beyond the product itself, each bound by its own file and called once
// from NB_MODULE (core.cpp).
#pragma once
#include <nanobind/nanobind.h>

namespace ringmm_py {

// syrk, apsp, route, hmm_plan, hmm (applications.cpp).
void bind_applications(nanobind::module_& m);
// Arrays that only expose __cuda_array_interface__: DLPack views of their memory, an owning device
// allocation for results, copies and stream ordering (cuda_arrays.cpp).
void bind_cuda_arrays(nanobind::module_& m);

}  // namespace ringmm_py
