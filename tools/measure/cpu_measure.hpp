// CPU measurements for `ringmm bench --backend cpu`: the OpenBLAS baseline and the tuning sweep of
// the blocked kernel (include/ringmm/cpu/blocked.hpp). Times follow timer.hpp (host clock, median
// of `reps` after a warm-up) on random data (random_data.hpp).
#pragma once

#include <vector>

#include "measure/product.hpp"
#include "measure/records.hpp"
#include "ringmm/types.hpp"

namespace ringmm::measure {

// OpenBLAS on plus-times data of `precision` (f32 or f64): s/dgemm (one call per batch member) or
// s/dsyrk, m×n×k as in gpu_measure.hpp, on `threads` threads (0: OpenBLAS's default). Median
// seconds. Throws Errc::backend_unavailable in a build without OpenBLAS (ringmm::blas_compiled()).
double time_openblas(DType precision, Product product, index_t m, index_t n, index_t k, index_t batch, int reps,
                     int threads);

// The sweep behind the constants in blocked.hpp, on 1 thread. Records carry backend, kernel,
// semiring, type, product, shape, seconds and rates; kernel names end in " t1".
//
// The ceiling of one core: the micro-kernel alone over panels that stay in L1 (max-plus f32 and
// i32, plus-times f32; backend "ceiling", product "micro-kernel", m×n the micro-tile).
std::vector<Record> cpu_ceilings(int reps);
// Max-plus and plus-times f32 on an m×n×k product: the shipped kernel, its builds for narrower
// instruction sets than this CPU's widest and, on AVX-512 CPUs, variants of the micro-tile and of
// the cache budgets KC and MC.
std::vector<Record> tune_blocked(index_t m, index_t n, index_t k, int reps);

}  // namespace ringmm::measure
