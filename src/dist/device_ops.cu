// Kernels of the device side of ringmm::dist: the element-wise steps of SUMMA (integer tropical
// types and argmax products accumulate apart), the input check's scan and the transposes' block
// copies.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "device_ops.hpp"
#include "ringmm/detail/argmax.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/support_kernels.cuh"
#include "ringmm/error.hpp"

namespace ringmm::dist::detail {

namespace {

template <class S> __global__ void accumulate_kernel(typename S::value_type* acc, const typename S::value_type* part, index_t count) {
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += index_t(gridDim.x) * blockDim.x)
    acc[i] = S::add(acc[i], part[i]);
}

template <class S>
__global__ void epilogue_kernel(typename S::value_type* c, const typename S::value_type* acc, index_t count,
                                typename S::value_type alpha, typename S::value_type beta) {
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += index_t(gridDim.x) * blockDim.x)
    c[i] = semiring_traits<S>::epilogue(alpha, acc ? acc[i] : S::zero(), beta, &c[i]);
}

template <class S>
__global__ void take_better_kernel(typename S::value_type* acc, std::int32_t* acc_k, const typename S::value_type* part,
                                   const std::int32_t* part_k, index_t count) {
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += index_t(gridDim.x) * blockDim.x)
    if (semiring_traits<S>::better(part[i], acc[i])) acc[i] = part[i], acc_k[i] = part_k[i];
}

template <class S>
__global__ void argmax_epilogue_kernel(typename S::value_type* c, std::int32_t* k_star, const typename S::value_type* acc,
                                       const std::int32_t* acc_k, index_t count, typename S::value_type alpha,
                                       typename S::value_type beta) {
  const bool reads_c = !(beta == S::zero());
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += index_t(gridDim.x) * blockDim.x)
    ringmm::detail::argmax_store<S>(acc ? acc[i] : S::zero(), acc ? acc_k[i] : -1, alpha, beta, reads_c, &c[i], &k_star[i]);
}

// A tile of 32 × 32 through shared memory, so that both the reads and the writes are coalesced.
constexpr int tile = 32, tile_rows = 8;
template <class T>
__global__ void transpose_kernel(T* dst, const T* src, index_t rows, index_t cols, index_t ld) {
  __shared__ T staged[tile][tile + 1];  // + 1: no bank conflicts on the column reads
  const index_t i0 = index_t(blockIdx.y) * tile, j0 = index_t(blockIdx.x) * tile;
  for (int r = threadIdx.y; r < tile; r += tile_rows) {
    const index_t i = i0 + r, j = j0 + threadIdx.x;
    if (i < rows && j < cols) staged[r][threadIdx.x] = src[i * ld + j];
  }
  __syncthreads();
  for (int r = threadIdx.y; r < tile; r += tile_rows) {
    const index_t j = j0 + r, i = i0 + threadIdx.x;  // dst is cols × rows
    if (i < rows && j < cols) dst[j * rows + i] = staged[threadIdx.x][r];
  }
}

constexpr int threads = 256;
unsigned blocks_for(index_t count) { return unsigned(std::min<index_t>((count + threads - 1) / threads, 65535)); }

void check_call(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(Errc::device_error, what, cudaGetErrorString(status));
}
void check_launch(const char* what) { check_call(cudaGetLastError(), what); }

}  // namespace

template <class S>
void device_accumulate(typename S::value_type* acc, const typename S::value_type* part, index_t count, void* stream) {
  if (count == 0) return;
  accumulate_kernel<S><<<blocks_for(count), threads, 0, static_cast<cudaStream_t>(stream)>>>(acc, part, count);
  check_launch("dist accumulate kernel");
}

template <class S>
void device_epilogue(typename S::value_type* c, const typename S::value_type* acc, index_t count,
                     typename S::value_type alpha, typename S::value_type beta, void* stream) {
  if (count == 0) return;
  epilogue_kernel<S><<<blocks_for(count), threads, 0, static_cast<cudaStream_t>(stream)>>>(c, acc, count, alpha, beta);
  check_launch("dist epilogue kernel");
}

template <class S>
void device_take_better(typename S::value_type* acc, std::int32_t* acc_k, const typename S::value_type* part,
                        const std::int32_t* part_k, index_t count, void* stream) {
  if constexpr (!semiring_traits<S>::selects) {
    throw Error(Errc::unsupported, "semiring", "argmax products need a semiring whose ⊕ selects one term");
  } else {
    if (count == 0) return;
    take_better_kernel<S><<<blocks_for(count), threads, 0, static_cast<cudaStream_t>(stream)>>>(acc, acc_k, part, part_k, count);
    check_launch("dist argmax accumulate kernel");
  }
}

template <class S>
void device_argmax_epilogue(typename S::value_type* c, std::int32_t* k_star, const typename S::value_type* acc,
                            const std::int32_t* acc_k, index_t count, typename S::value_type alpha,
                            typename S::value_type beta, void* stream) {
  if constexpr (!semiring_traits<S>::selects) {
    throw Error(Errc::unsupported, "semiring", "argmax products need a semiring whose ⊕ selects one term");
  } else {
    if (count == 0) return;
    argmax_epilogue_kernel<S><<<blocks_for(count), threads, 0, static_cast<cudaStream_t>(stream)>>>(c, k_star, acc, acc_k,
                                                                                                    count, alpha, beta);
    check_launch("dist argmax epilogue kernel");
  }
}

template <class S>
ringmm::detail::ValueScan device_scan(const typename S::value_type* x, index_t rows, index_t cols, index_t ld,
                                      void* stream) {
  ringmm::detail::ValueScan result;
  if (rows == 0 || cols == 0) return result;
  const auto s = static_cast<cudaStream_t>(stream);
  ringmm::detail::ValueScan* slot = nullptr;
  check_call(cudaMallocAsync(reinterpret_cast<void**>(&slot), sizeof result, s), "cudaMallocAsync");
  // A fresh scan: first_bad = none (all ones), max_magnitude = 0.
  check_call(cudaMemsetAsync(slot, 0, sizeof result, s), "cudaMemsetAsync");
  check_call(cudaMemsetAsync(&slot->first_bad, 0xff, sizeof slot->first_bad, s), "cudaMemsetAsync");
  const index_t total = rows * cols;
  const int blocks = int(std::min<index_t>((total + 255) / 256, 16 * index_t(cuda_detail::multiprocessor_count())));
  cuda_detail::scan_kernel<S><<<blocks, 256, 0, s>>>(slot, x, rows, cols, ld, 1, 0, 1, false);
  check_launch("dist scan kernel");
  check_call(cudaMemcpyAsync(&result, slot, sizeof result, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  check_call(cudaFreeAsync(slot, s), "cudaFreeAsync");
  check_call(cudaStreamSynchronize(s), "dist scan (cudaStreamSynchronize)");
  return result;
}

template <class T> void device_transpose_block(T* dst, const T* src, index_t rows, index_t cols, index_t ld, void* stream) {
  if (rows == 0 || cols == 0) return;
  const dim3 blocks(unsigned((cols + tile - 1) / tile), unsigned((rows + tile - 1) / tile));
  transpose_kernel<T><<<blocks, dim3(tile, tile_rows), 0, static_cast<cudaStream_t>(stream)>>>(dst, src, rows, cols, ld);
  check_launch("dist transpose kernel");
}
template void device_transpose_block<float>(float*, const float*, index_t, index_t, index_t, void*);
template void device_transpose_block<double>(double*, const double*, index_t, index_t, index_t, void*);
template void device_transpose_block<std::int32_t>(std::int32_t*, const std::int32_t*, index_t, index_t, index_t, void*);
template void device_transpose_block<i16x2>(i16x2*, const i16x2*, index_t, index_t, index_t, void*);
template void device_transpose_block<std::uint8_t>(std::uint8_t*, const std::uint8_t*, index_t, index_t, index_t, void*);

#define RINGMM_DIST_DEVICE_OPS(S)                                                                                     \
  template void device_accumulate<S>(typename S::value_type*, const typename S::value_type*, index_t, void*);         \
  template void device_epilogue<S>(typename S::value_type*, const typename S::value_type*, index_t,                   \
                                   typename S::value_type, typename S::value_type, void*);                     \
  template void device_take_better<S>(typename S::value_type*, std::int32_t*, const typename S::value_type*,         \
                                      const std::int32_t*, index_t, void*);                                          \
  template void device_argmax_epilogue<S>(typename S::value_type*, std::int32_t*, const typename S::value_type*,     \
                                          const std::int32_t*, index_t, typename S::value_type,                      \
                                          typename S::value_type, void*);                                            \
  template ringmm::detail::ValueScan device_scan<S>(const typename S::value_type*, index_t, index_t, index_t, void*);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_DIST_DEVICE_OPS(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace ringmm::dist::detail
