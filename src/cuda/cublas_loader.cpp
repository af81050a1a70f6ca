#include "ringmm/cuda/cublas.hpp"

#include <string>

#include "shared_library.hpp"

namespace ringmm::cuda_detail {

const CublasApi& cublas() {
  static const CublasApi api = [] {
    // The soname of the cuBLAS the headers describe, found as the dynamic linker finds any
    // library; then the file the build linked against, for a toolkit outside its search path.
    const detail::SharedLibrary library{"libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), RINGMM_CUBLAS_BUILD_PATH};
    CublasApi a;
    library.resolve(a.create, "cublasCreate_v2");
    library.resolve(a.destroy, "cublasDestroy_v2");
    library.resolve(a.set_math_mode, "cublasSetMathMode");
    library.resolve(a.set_stream, "cublasSetStream_v2");
    library.resolve(a.status_string, "cublasGetStatusString");
    library.resolve(a.sgemm, "cublasSgemm_v2");
    library.resolve(a.dgemm, "cublasDgemm_v2");
    library.resolve(a.sgemm_strided_batched, "cublasSgemmStridedBatched");
    library.resolve(a.dgemm_strided_batched, "cublasDgemmStridedBatched");
    library.resolve(a.ssyrk, "cublasSsyrk_v2");
    library.resolve(a.dsyrk, "cublasDsyrk_v2");
    library.resolve(a.gemm_ex, "cublasGemmEx");
    return a;
  }();
  return api;
}

}  // namespace ringmm::cuda_detail
