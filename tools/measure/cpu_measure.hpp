// CPU measurements for `ringmm bench --backend cpu`: the OpenBLAS baseline. Times follow timer.hpp
// (host clock, median of `reps` after a warm-up) on random data (random_data.hpp).
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

}  // namespace ringmm::measure
