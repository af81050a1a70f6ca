// The lab's own GPU kernels, measured by `ringmm-lab` and never part of ringmm:
//   the ladder (docs/perf/ladder.md): teaching kernels from one thread per output to shared-memory
//   tiles, the steps between a naive kernel and the engine;
//   the published Aᵀ·A kernels (docs/seeds.md) in f64, beside ringmm's syrk;
//   the sweep behind the constants of the blocked CPU kernel (cpu_tuning.cpp, docs/perf/cpu.md).
// The GPU ones exist only where the lab is built with CUDA (RINGMM_LAB_CUDA).
// Every function checks its arguments (Errc::invalid_argument / unsupported) and throws
// Errc::backend_unavailable without a device. Timings follow measure/timer.hpp.
#pragma once

#include <string>
#include <vector>

#include "measure/gpu_measure.hpp"
#include "measure/records.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/types.hpp"

namespace ringmm::lab {

// ---- the CPU kernel's tuning sweep, on 1 thread ----------------------------------------------------
// Records carry backend, kernel, semiring, type, product, shape, seconds and rates; kernel names end
// in " t1".
//
// The ceiling of one core: the micro-kernel alone over panels that stay in L1 (max-plus f32 and
// i32, plus-times f32; backend "ceiling", product "micro-kernel", m×n the micro-tile).
std::vector<measure::Record> cpu_ceilings(int reps);
// Max-plus and plus-times f32 on an m×n×k product: the shipped kernel, its builds for narrower
// instruction sets than this CPU's widest and, on AVX-512 CPUs, variants of the micro-tile and of
// the cache budgets KC and MC.
std::vector<measure::Record> tune_blocked(index_t m, index_t n, index_t k, int reps);

// ---- GPU kernels ------------------------------------------------------------------------------------

// Names, simplest first: "straightforward" (one thread per output, global memory), "tiled8",
// "tiled16", "tiled32" (shared-memory tiles of that side).
std::vector<std::string> ladder_kernels();

// One ladder kernel on an m×n×k row-major product of random data (kernel_seconds only).
measure::Timing time_ladder(SemiringKind kind, DType type, const std::string& kernel, index_t m, index_t n, index_t k,
                            int reps);

// Runs one ladder kernel on a problem held in host memory (upload, launch, download): the entry
// point of the ladder's correctness tests. Batches are supported; symmetric (syrk) problems are not.
template <class S> void ladder_gemm(const std::string& kernel, const detail::Problem<S>& p);

// "seed003-naive", "seed003-optimised": C (n×n, row-major, both triangles) = Aᵀ·A for A k×n
// row-major, on host buffers (the tests) and timed on device buffers.
std::vector<std::string> seed003_kernels();
void seed003_syrk(const std::string& kernel, const double* a, index_t n, index_t k, double* c);
measure::Timing time_seed003(const std::string& kernel, index_t n, index_t k, int reps);

}  // namespace ringmm::lab
