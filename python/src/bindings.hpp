// The parts of ringmm._core beyond the product itself, each bound by its own file and called once
// from NB_MODULE (core.cpp).
#pragma once
#include <nanobind/nanobind.h>

#include "arrays.hpp"

namespace ringmm_py {

// The planned syrk (op(a)ᵀ·op(a), one per batch member: p describes a as the product of op(a)ᵀ and
// op(a), and out) with the GIL released; the library's errors name Python's arguments
// (applications.cpp; _core.syrk and ringmm.syrk's one-call path run it).
void run_syrk(const Plan& p, SemiringKind kind, bool trans, const Context& ctx, const Place& place);

// log_plus_backward and argmax_backward for ringmm.torch's autograd (autograd.cpp).
void bind_autograd(nanobind::module_& m);
// syrk, apsp, route, hmm_plan, hmm (applications.cpp).
void bind_applications(nanobind::module_& m);
// Arrays that only expose __cuda_array_interface__: DLPack views of their memory, an owning device
// allocation for results, copies and stream ordering (cuda_arrays.cpp).
void bind_cuda_arrays(nanobind::module_& m);

}  // namespace ringmm_py
