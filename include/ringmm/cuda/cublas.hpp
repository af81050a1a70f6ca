// cuBLAS, opened on first use (src/core/shared_library.hpp says why), and its status codes as
// ringmm errors: what the cuBLAS route (src/cuda/vendor_blas.cu) calls, and, as API under
// ringmm::cuda, what code beside the engine uses (the benchmarks' cuBLAS baselines in
// tools/measure/timing.cu).
#pragma once

#include <cublas_v2.h>

#include <string>

#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

// Types from cuBLAS's own prototypes, under the names the library exports: cublas_v2.h maps
// cublasSgemm and its kin onto the *_v2 functions.
struct CublasApi {
  decltype(&cublasCreate_v2) create;
  decltype(&cublasDestroy_v2) destroy;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasSetStream_v2) set_stream;
  decltype(&cublasGetStatusString) status_string;
  decltype(&cublasSgemm_v2) sgemm;
  decltype(&cublasDgemm_v2) dgemm;
  decltype(&cublasSgemmStridedBatched) sgemm_strided_batched;
  decltype(&cublasDgemmStridedBatched) dgemm_strided_batched;
  decltype(&cublasSsyrk_v2) ssyrk;
  decltype(&cublasDsyrk_v2) dsyrk;
  // The benchmarks' bf16 tensor-core reference; spelled out because C++ sees overloads.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
};

// Loads libcublas on the first call (thread-safe); throws Error(backend_unavailable) naming the
// library when it cannot be loaded, and tries again on the next call.
const CublasApi& cublas();


inline void cublas_check(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const Errc code = status == CUBLAS_STATUS_ALLOC_FAILED ? Errc::out_of_memory : Errc::device_error;
  throw Error(code, "cublas", std::string(what) + " failed: " + cublas().status_string(status));
}

}  // namespace ringmm::cuda_detail

namespace ringmm::cuda {
using cuda_detail::cublas;
using cuda_detail::cublas_check;
using cuda_detail::CublasApi;
}  // namespace ringmm::cuda
