// cuBLAS status codes as ringmm errors, for the cuBLAS route (vendor_blas.cu) and the cuBLAS
// baselines of the benchmarks (tools/measure/timing.cu).
#pragma once

#include <string>

#include "cublas_loader.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

inline void cublas_check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const Errc code = status == CUBLAS_STATUS_ALLOC_FAILED ? Errc::out_of_memory : Errc::device_error;
  throw Error(code, "cublas", std::string(what) + " failed: " + cublas().status_string(status));
}

}  // namespace ringmm::cuda_detail
