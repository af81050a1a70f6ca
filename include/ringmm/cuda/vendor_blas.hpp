// plus-times f32/f64 through cuBLAS (src/cuda/vendor_blas.cu), for the engine's driver.
#pragma once

#include <cuda_runtime.h>

#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// Runs the product, whose operands are all device views, through cuBLAS on `stream` and returns
// true; returns false, having done nothing, when cuBLAS cannot take it (K = 0, sizes past int, a
// layout with no unit stride), and the engine's kernels run it instead. Pedantic math unless
// `tf32` (f32 only: Hopper's TF32 tensor cores, 10-bit mantissas; the log-plus opt-in).
template <class T> bool vendor_gemm(const detail::Problem<PlusTimes<T>>& p, cudaStream_t stream, bool tf32 = false);

}  // namespace ringmm::cuda_detail
