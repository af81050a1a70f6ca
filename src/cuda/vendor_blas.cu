// plus-times f32/f64 through cuBLAS (Context::vendor_blas): on Hopper cuBLAS's DGEMM runs on the
// FP64 tensor cores (47 TFLOP/s on the H100 against 11 for ringmm's CUDA-core kernel) and its
// SGEMM is a few per cent ahead of ringmm's (docs/perf/cuda-engine.md). Pedantic math: no
// TF32 or other reduced-precision paths, the same mode `ringmm bench` times as its baseline.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ringmm/cuda/cublas.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/vendor_blas.hpp"

namespace ringmm::cuda_detail {

namespace {

// One handle per host thread and device, kept for the life of the thread (like the engine's
// side stream): creating one costs milliseconds.
cublasHandle_t handle_for_current_device() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  thread_local std::vector<cublasHandle_t> handles;
  if (handles.size() <= std::size_t(device)) handles.resize(std::size_t(device) + 1, nullptr);
  cublasHandle_t& handle = handles[std::size_t(device)];
  if (!handle) {
    cublas_check(cublas().create(&handle), "cublasCreate");
    cublas_check(cublas().set_math_mode(handle, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  return handle;
}

bool fits_int(index_t x) { return x >= 0 && x <= INT_MAX; }

// How cuBLAS (column-major) takes an R×C strided operand: as it is when its rows are adjacent in
// memory, transposed when its columns are; nothing otherwise.
struct BlasView {
  cublasOperation_t op;
  int ld;
};
template <class T> std::optional<BlasView> column_major(const detail::Strided<T>& x) {
  if (x.rs == 1 && x.cs >= std::max<index_t>(1, x.rows) && fits_int(x.cs)) return BlasView{CUBLAS_OP_N, int(x.cs)};
  if (x.cs == 1 && x.rs >= std::max<index_t>(1, x.cols) && fits_int(x.rs)) return BlasView{CUBLAS_OP_T, int(x.rs)};
  return std::nullopt;
}

template <class T> detail::Strided<T> transposed(const detail::Strided<T>& x) { return {x.p, x.cols, x.rows, x.cs, x.rs}; }

// Completes a symmetric n×n matrix stored with element (r, q) at c[r·ld + q]: copies its strict
// lower triangle onto the upper one (from_lower) or the reverse, one 32×32 tile per block through
// shared memory so that reads and writes both run along memory. A block reads a tile of the
// source triangle and writes its mirror image, which no other block reads.
constexpr int mirror_tile = 32, mirror_rows = 8;
template <class T> __global__ void __launch_bounds__(mirror_tile * mirror_rows)
    mirror_kernel(T* c, index_t n, index_t ld, bool from_lower) {
  __shared__ T tile[mirror_tile][mirror_tile + 1];
  const index_t bi = blockIdx.y, bj = blockIdx.x;
  if (from_lower ? bj > bi : bj < bi) return;
  const index_t r0 = bi * mirror_tile, q0 = bj * mirror_tile;
  const int x = int(threadIdx.x);
  for (int y = int(threadIdx.y); y < mirror_tile; y += mirror_rows)
    if (r0 + y < n && q0 + x < n) tile[y][x] = c[(r0 + y) * ld + q0 + x];
  __syncthreads();
  for (int y = int(threadIdx.y); y < mirror_tile; y += mirror_rows) {
    const index_t tr = q0 + y, tq = r0 + x;  // takes the source element (tq, tr)
    if (tr < n && tq < n && (from_lower ? tq > tr : tq < tr)) c[tr * ld + tq] = tile[x][y];
  }
}

// Copies the caller's computed triangle (i ≥ j) of a symmetric C onto the other one. A
// column-major C is, in memory, the row-major Cᵀ, whose computed triangle is the upper one.
template <class T> void mirror(const detail::Strided<T>& c, cudaStream_t stream) {
  if (c.rows <= 1) return;
  const bool row_major = c.cs == 1;
  const index_t tiles = (c.rows + mirror_tile - 1) / mirror_tile;
  mirror_kernel<T><<<dim3(unsigned(tiles), unsigned(tiles)), dim3(mirror_tile, mirror_rows), 0, stream>>>(
      c.p, c.rows, row_major ? c.rs : c.cs, row_major);
  check_launch("mirror_kernel");
}

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* alpha,
                    const float* a, int lda, const float* b, int ldb, const float* beta, float* c, int ldc) {
  return cublas().sgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const double* alpha,
                    const double* a, int lda, const double* b, int ldb, const double* beta, double* c, int ldc) {
  return cublas().dgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const float* alpha, const float* a, int lda, long long sa, const float* b, int ldb,
                            long long sb, const float* beta, float* c, int ldc, long long sc, int batch) {
  return cublas().sgemm_strided_batched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const double* alpha, const double* a, int lda, long long sa, const double* b, int ldb,
                            long long sb, const double* beta, double* c, int ldc, long long sc, int batch) {
  return cublas().dgemm_strided_batched(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}
cublasStatus_t syrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t, int n, int k, const float* alpha,
                    const float* a, int lda, const float* beta, float* c, int ldc) {
  return cublas().ssyrk(h, uplo, t, n, k, alpha, a, lda, beta, c, ldc);
}
cublasStatus_t syrk(cublasHandle_t h, cublasFillMode_t uplo, cublasOperation_t t, int n, int k, const double* alpha,
                    const double* a, int lda, const double* beta, double* c, int ldc) {
  return cublas().dsyrk(h, uplo, t, n, k, alpha, a, lda, beta, c, ldc);
}

}  // namespace

template <class T> bool vendor_gemm(const detail::Problem<PlusTimes<T>>& p, cudaStream_t stream, bool tf32) {
  if (p.k() == 0 || !fits_int(p.m()) || !fits_int(p.n()) || !fits_int(p.k()) || !fits_int(p.batch)) return false;
  // cuBLAS writes a column-major C; a row-major C is the column-major Cᵀ = Bᵀ·Aᵀ.
  const bool swapped = p.c.rs != 1;
  const detail::Strided<T> c = swapped ? transposed(p.c) : p.c;
  const detail::Strided<const T> a = swapped ? transposed(p.b) : p.a, b = swapped ? transposed(p.a) : p.b;
  const index_t stride_a = swapped ? p.stride_b : p.stride_a, stride_b = swapped ? p.stride_a : p.stride_b;
  const auto va = column_major(a), vb = column_major(b), vc = column_major(c);
  if (!va || !vb || !vc || vc->op != CUBLAS_OP_N) return false;
  // Aᵀ·A comes as B = Aᵀ over the same memory (what ringmm::syrk builds).
  if (p.symmetric && !(a.p == b.p && a.rs == b.cs && a.cs == b.rs && stride_a == stride_b)) return false;

  const cublasHandle_t handle = handle_for_current_device();
  cublas_check(cublas().set_stream(handle, stream), "cublasSetStream");
  // The handle is shared per thread, so the mode is set on every call (a host-side field).
  const cublasMath_t math = (tf32 && std::is_same_v<T, float>) ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH;
  cublas_check(cublas().set_math_mode(handle, math), "cublasSetMathMode");
  const int m = int(c.rows), n = int(c.cols), k = int(a.cols);
  if (p.symmetric) {
    // ringmm's triangle is the caller's i ≥ j: the upper one of the transposed view.
    const cublasFillMode_t uplo = swapped ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    for (index_t bt = 0; bt < p.batch; ++bt) {
      cublas_check(syrk(handle, uplo, va->op, n, k, &p.alpha, a.p + bt * stride_a, va->ld, &p.beta, c.p + bt * p.stride_c,
                        vc->ld),
                   "cublas syrk");
      detail::Strided<T> member = p.c;
      member.p += bt * p.stride_c;
      mirror(member, stream);
    }
  } else if (p.batch == 1) {
    cublas_check(gemm(handle, va->op, vb->op, m, n, k, &p.alpha, a.p, va->ld, b.p, vb->ld, &p.beta, c.p, vc->ld),
                 "cublas gemm");
  } else {
    cublas_check(gemm_batched(handle, va->op, vb->op, m, n, k, &p.alpha, a.p, va->ld, stride_a, b.p, vb->ld, stride_b,
                              &p.beta, c.p, vc->ld, p.stride_c, int(p.batch)),
                 "cublas strided batched gemm");
  }
  return true;
}

template bool vendor_gemm<float>(const detail::Problem<PlusTimes<float>>&, cudaStream_t, bool);
template bool vendor_gemm<double>(const detail::Problem<PlusTimes<double>>&, cudaStream_t, bool);

}  // namespace ringmm::cuda_detail
