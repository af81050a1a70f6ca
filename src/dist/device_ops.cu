// Kernels of the device side of ringmm::dist: the element-wise steps of SUMMA (integer tropical
// types and argmax products accumulate apart), the input check's scan, the transposes' block
// copies, and the element-wise steps of the distributed APSP (weights, initial entries, cycles).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

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

// ---- the distributed APSP's element-wise steps -------------------------------------------------

template <class T>
__global__ void first_refused_kernel(const T* d, index_t ld, index_t rows, index_t cols, LocalAxis row, LocalAxis col,
                                     index_t n, unsigned long long* first) {
  for (index_t i = blockIdx.y; i < rows; i += gridDim.y)
    for (index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += index_t(gridDim.x) * blockDim.x) {
      const T w = d[i * ld + j];
      if (w != w || w == -std::numeric_limits<T>::infinity())  // NaN or −∞
        atomicMin(first, (unsigned long long)(row.to_global(i) * n + col.to_global(j)));
    }
}

template <class T>
__global__ void initial_entries_kernel(T* d, index_t ld_d, std::int32_t* next, index_t ld_next, index_t rows, index_t cols,
                                       LocalAxis row, LocalAxis col, bool longest) {
  const T none = longest ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  for (index_t li = blockIdx.y; li < rows; li += gridDim.y)
    for (index_t lj = index_t(blockIdx.x) * blockDim.x + threadIdx.x; lj < cols; lj += index_t(gridDim.x) * blockDim.x) {
      const index_t i = row.to_global(li), j = col.to_global(lj);
      T w = d[li * ld_d + lj];
      if (w == std::numeric_limits<T>::infinity() || w == -std::numeric_limits<T>::infinity()) w = none;
      if (i == j && !(longest ? w > T(0) : w < T(0))) w = T(0);  // a self-loop of the wrong sign stays
      d[li * ld_d + lj] = w;
      next[li * ld_next + lj] = i == j ? std::int32_t(i) : (w == none ? -1 : std::int32_t(j));
    }
}

// diagonal[li] ← the entry (v, v) of local row li (v its global vertex) where this rank holds it, else 0.
template <class T>
__global__ void owned_diagonal_kernel(const T* d, index_t ld, index_t rows, LocalAxis row, LocalAxis col, T* diagonal) {
  for (index_t li = index_t(blockIdx.x) * blockDim.x + threadIdx.x; li < rows; li += index_t(gridDim.x) * blockDim.x) {
    const index_t v = row.to_global(li);
    diagonal[li] = col.owns(v) ? d[li * ld + col.to_local(v)] : T(0);
  }
}

// Rows on the grid's y axis (strided past 65535), columns on x.
dim3 grid_2d(index_t rows, index_t cols) {
  return dim3(unsigned(std::min<index_t>((cols + threads - 1) / threads, 1 << 16)),
              unsigned(std::clamp<index_t>(rows, 1, 65535)));
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

template <class S>
void device_take_better(typename S::value_type* acc, std::int32_t* acc_k, const typename S::value_type* part,
                        const std::int32_t* part_k, index_t count, void* stream) {
  if constexpr (!semiring_traits<S>::selects) {
    throw ringmm::detail::argmax_needs_selection();
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
    throw ringmm::detail::argmax_needs_selection();
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
  cuda_detail::ScannedViews<typename S::value_type> views;
  views.view[0] = {x, rows, cols, ld, 1, 0, 1, false};
  const int count = rows == 0 || cols == 0 ? 0 : 1;
  return cuda_detail::scan_on_device<S>(views, count, static_cast<cudaStream_t>(stream), [] {})[0];
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

template <class T>
std::int64_t device_first_refused_weight(const T* d, index_t ld, index_t rows, index_t cols, LocalAxis row, LocalAxis col,
                                         index_t n, void* stream) {
  if (rows == 0 || cols == 0) return -1;
  const auto s = static_cast<cudaStream_t>(stream);
  unsigned long long* first = nullptr;
  unsigned long long result = 0;
  check_call(cudaMallocAsync(reinterpret_cast<void**>(&first), sizeof result, s), "cudaMallocAsync");
  check_call(cudaMemsetAsync(first, 0xff, sizeof result, s), "cudaMemsetAsync");  // none
  first_refused_kernel<T><<<grid_2d(rows, cols), threads, 0, s>>>(d, ld, rows, cols, row, col, n, first);
  check_launch("dist apsp weight check kernel");
  check_call(cudaMemcpyAsync(&result, first, sizeof result, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  check_call(cudaFreeAsync(first, s), "cudaFreeAsync");
  check_call(cudaStreamSynchronize(s), "dist apsp weight check (cudaStreamSynchronize)");
  return result == ~0ull ? -1 : std::int64_t(result);
}

template <class T>
void device_initial_entries(T* d, index_t ld_d, std::int32_t* next, index_t ld_next, index_t rows, index_t cols,
                            LocalAxis row, LocalAxis col, bool longest, void* stream) {
  if (rows == 0 || cols == 0) return;
  initial_entries_kernel<T><<<grid_2d(rows, cols), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      d, ld_d, next, ld_next, rows, cols, row, col, longest);
  check_launch("dist apsp initial entries kernel");
}

template <class T>
std::vector<std::int64_t> device_cycle_vertices(const T* d, index_t ld, index_t rows, LocalAxis row, LocalAxis col,
                                                void* stream) {
  std::vector<std::int64_t> vertices;
  if (rows == 0) return vertices;
  const auto s = static_cast<cudaStream_t>(stream);
  T* diagonal = nullptr;
  std::vector<T> host(static_cast<std::size_t>(rows));
  check_call(cudaMallocAsync(reinterpret_cast<void**>(&diagonal), host.size() * sizeof(T), s), "cudaMallocAsync");
  owned_diagonal_kernel<T><<<blocks_for(rows), threads, 0, s>>>(d, ld, rows, row, col, diagonal);
  check_launch("dist apsp diagonal kernel");
  check_call(cudaMemcpyAsync(host.data(), diagonal, host.size() * sizeof(T), cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync");
  check_call(cudaFreeAsync(diagonal, s), "cudaFreeAsync");
  check_call(cudaStreamSynchronize(s), "dist apsp diagonal (cudaStreamSynchronize)");
  for (index_t li = 0; li < rows; ++li)
    if (!(host[std::size_t(li)] == T(0))) vertices.push_back(row.to_global(li));
  return vertices;
}

#define RINGMM_DIST_APSP_OPS(T)                                                                                       \
  template std::int64_t device_first_refused_weight<T>(const T*, index_t, index_t, index_t, LocalAxis, LocalAxis,     \
                                                        index_t, void*);                                              \
  template void device_initial_entries<T>(T*, index_t, std::int32_t*, index_t, index_t, index_t, LocalAxis, LocalAxis, \
                                          bool, void*);                                                               \
  template std::vector<std::int64_t> device_cycle_vertices<T>(const T*, index_t, index_t, LocalAxis, LocalAxis, void*);
RINGMM_DIST_APSP_OPS(float)
RINGMM_DIST_APSP_OPS(double)

}  // namespace ringmm::dist::detail
