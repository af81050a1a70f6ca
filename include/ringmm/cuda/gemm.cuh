// The CUDA engine as a template: the GPU path of gemm<S>, gemm_batched<S> and syrk<S> for a
// semiring the library does not ship.
//
// ringmm/gemm.hpp (and so ringmm/ringmm.hpp) includes this header whenever nvcc compiles the
// translation unit, so a user's semiring reaches the GPU by compiling the file that calls
// ringmm::gemm<S> as CUDA (a .cu file linked with ringmm::ringmm):
//
//   struct MySemiring {
//     using value_type = float;
//     RINGMM_HD static constexpr float zero() { ... }   // RINGMM_HD: callable on the device
//     RINGMM_HD static constexpr float one() { ... }
//     RINGMM_HD static float add(float a, float b) { ... }
//     RINGMM_HD static float mul(float a, float b) { ... }
//   };
//   ringmm::gemm<MySemiring>(ctx, ringmm::Op::N, a, ringmm::Op::N, b, c);   // ctx.backend = cuda
//
// The engine (every configuration's kernels, both border modes, the input scan) is then
// instantiated for MySemiring in that translation unit; examples/capped_paths.cu is a complete
// program. ringmm::ringmm brings the CUDA flags the engine needs; the unit is compiled as C++20
// (CMAKE_CUDA_STANDARD 20, or -std=c++20 in CMAKE_CUDA_FLAGS where CMake cannot map it onto
// nvcc). The element type's size must divide 16 (the kernels load 16-byte vectors).
//
// The same call compiled by a C++ compiler runs the semiring on the CPU backend and refuses the
// CUDA backend (also when Backend::automatic picks it) with Errc::unsupported, so a semiring used
// on the GPU is best called from CUDA files only.
//
// The built-in pairs are compiled once in libringmm: they are declared extern here, so including
// this header instantiates nothing for them.
#pragma once

#include "ringmm/cuda/engine.cuh"

#define RINGMM_BUILTIN(semiring, dtype, S)                                                  \
  extern template void ringmm::detail::cuda_run<::ringmm::S>(const ringmm::Context&,        \
                                                             const ringmm::detail::Problem<::ringmm::S>&); \
  extern template void ringmm::detail::cuda_run_argmax<::ringmm::S>(const ringmm::Context&, \
                                                                    const ringmm::detail::Problem<::ringmm::S>&); \
  extern template ringmm::cuda_detail::ChoiceReport ringmm::cuda_detail::describe<::ringmm::S>( \
      const ringmm::Context&, const ringmm::detail::Problem<::ringmm::S>&);
#include "ringmm/builtins.def"
