// The parts of ringmm._core, each bound by its own file and called once from NB_MODULE (module.cpp).
#pragma once
#include <nanobind/nanobind.h>

namespace ringmm_py {

// use_numpy, use_torch, use_adapter: the frameworks' registration (entry.cpp).
void bind_entry(nanobind::module_& m);
// matmul and syrk, the registry (semirings, info) (core.cpp).
void bind_products(nanobind::module_& m);
// log_plus_backward and argmax_backward for ringmm.torch's autograd (autograd.cpp).
void bind_autograd(nanobind::module_& m);
// apsp, route, hmm (applications.cpp).
void bind_applications(nanobind::module_& m);
// Arrays that only expose __cuda_array_interface__: DLPack views of their memory, an owning device
// allocation for results, copies and stream ordering (cuda_arrays.cpp).
void bind_cuda_arrays(nanobind::module_& m);
// jax_handlers, jax_plan: ringmm.jax's XLA FFI custom calls and their trace-time checks
// (jax_ffi.cpp; built where jaxlib's headers were found, RINGMM_PY_HAVE_XLA_FFI).
void bind_jax_ffi(nanobind::module_& m);

}  // namespace ringmm_py
