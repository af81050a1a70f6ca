// Element-wise kernels of the device path of SUMMA (integer tropical types accumulate apart).
#include <cuda_runtime.h>

#include <algorithm>

#include "device_ops.hpp"
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
    c[i] = semiring_traits<S>::epilogue(alpha, acc[i], beta, &c[i]);
}

constexpr int threads = 256;
unsigned blocks_for(index_t count) { return unsigned(std::min<index_t>((count + threads - 1) / threads, 65535)); }

void check_launch(const char* what) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) throw Error(Errc::device_error, what, cudaGetErrorString(status));
}

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

#define RINGMM_DIST_DEVICE_OPS(S)                                                                                     \
  template void device_accumulate<S>(typename S::value_type*, const typename S::value_type*, index_t, void*);         \
  template void device_epilogue<S>(typename S::value_type*, const typename S::value_type*, index_t,                   \
                                   typename S::value_type, typename S::value_type, void*);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_DIST_DEVICE_OPS(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace ringmm::dist::detail
