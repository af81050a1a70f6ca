// The small CUDA steps of blocked Floyd–Warshall (src/graph/apsp.cpp): preparing the matrices,
// phase 1 on the diagonal block, panel copies and the successor gather. The products between them
// are gemm_argmax calls on device pointers. Every launch goes on the caller's stream; nothing here
// synchronises.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "fw_buffers.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/error.hpp"

namespace ringmm::graph {

namespace {

constexpr int threads_2d = 256;

unsigned blocks_for(index_t count) { return unsigned(std::min<index_t>((count + threads_2d - 1) / threads_2d, 1 << 20)); }

template <class T> __device__ T no_edge(bool longest) {
  return longest ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
}

template <class T> __global__ void prepare_kernel(const FwBuffers<T> b, unsigned long long* bad) {
  const index_t total = b.n * b.n;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += index_t(gridDim.x) * blockDim.x) {
    const index_t i = e / b.n, j = e % b.n;
    T& d = b.dist[i * b.ld_dist + j];
    T w = d;
    if (w != w || w == -std::numeric_limits<T>::infinity()) {  // NaN or −∞: refused
      atomicMin(bad, (unsigned long long)e);
      continue;
    }
    if (w == std::numeric_limits<T>::infinity()) w = no_edge<T>(b.longest);
    if (i == j && !improves(w, T(0), b.longest)) w = T(0);
    d = w;
    b.next[i * b.ld_next + j] = i == j ? std::int32_t(i) : (w == no_edge<T>(b.longest) ? -1 : std::int32_t(j));
  }
}

// Floyd–Warshall inside a diagonal block of at most cuda_phase1_max vertices, one thread block with
// the block's distances and successors in shared memory (apsp.cpp splits larger blocks). In step k
// only entries outside row k and column k change (D[k][k] = 0 when no cycle of the wrong sign
// exists), so threads may read row k and column k while others write.
template <class T> __global__ void __launch_bounds__(1024) phase1_kernel(const FwBuffers<T> b, index_t k0, int kb) {
  extern __shared__ unsigned char shared[];
  T* d = reinterpret_cast<T*>(shared);
  std::int32_t* nx = reinterpret_cast<std::int32_t*>(d + kb * kb);
  T* gd = b.dist + k0 * b.ld_dist + k0;
  std::int32_t* gn = b.next + k0 * b.ld_next + k0;
  const int cells = kb * kb;
  for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
    const int i = e / kb, j = e % kb;
    d[e] = gd[i * b.ld_dist + j];
    nx[e] = gn[i * b.ld_next + j];
  }
  for (int k = 0; k < kb; ++k) {
    __syncthreads();
    for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
      const int i = e / kb, j = e - i * kb;
      const T term = d[i * kb + k] + d[k * kb + j];
      if (improves(term, d[e], b.longest)) {
        d[e] = term;
        nx[e] = nx[i * kb + k];
      }
    }
  }
  __syncthreads();
  for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
    const int i = e / kb, j = e % kb;
    gd[i * b.ld_dist + j] = d[e];
    gn[i * b.ld_next + j] = nx[e];
  }
}

// Rows on the grid's y axis (strided past 65535), columns on x: no 64-bit division per element.
template <class T> __global__ void copy_panels_kernel(const FwBuffers<T> b, index_t k0, index_t kb, bool row_too) {
  for (index_t i = blockIdx.y; i < b.n; i += gridDim.y)
    for (index_t c = index_t(blockIdx.x) * blockDim.x + threadIdx.x; c < kb; c += index_t(gridDim.x) * blockDim.x) {
      b.col[i * b.block + c] = b.dist[i * b.ld_dist + k0 + c];
      b.next_col[i * b.block + c] = b.next[i * b.ld_next + k0 + c];
    }
  if (!row_too) return;
  for (index_t r = blockIdx.y; r < kb; r += gridDim.y)
    for (index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x; j < b.n; j += index_t(gridDim.x) * blockDim.x)
      b.row[r * b.n + j] = b.dist[(k0 + r) * b.ld_dist + j];
}

__global__ void gather_kernel(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows,
                              index_t cols, const std::int32_t* next_col, index_t ld_col) {
  for (index_t i = blockIdx.y; i < rows; i += gridDim.y)
    for (index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += index_t(gridDim.x) * blockDim.x) {
      std::int32_t& c = k[i * ld_k + j];
      if (c >= 0) {  // improved this round through vertex k0 + c: its first hop is the first hop to k0 + c
        next[i * ld_next + j] = next_col[i * ld_col + c];
        c = -1;
      }
    }
}

// A grid over rows × cols for the kernels above.
dim3 grid_2d(index_t rows, index_t cols) {
  return dim3(unsigned(std::min<index_t>((cols + threads_2d - 1) / threads_2d, 1 << 16)),
              unsigned(std::clamp<index_t>(rows, 1, 65535)));
}

}  // namespace

template <class T> void cuda_prepare(const FwBuffers<T>& b, unsigned long long* bad, void* stream) {
  prepare_kernel<T><<<blocks_for(b.n * b.n), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(b, bad);
  cuda_detail::check_launch("apsp prepare_kernel");
}

template <class T> void cuda_phase1(const FwBuffers<T>& b, index_t k0, index_t kb, void* stream) {
  if (kb > cuda_phase1_max) throw Error(Errc::invalid_argument, "block", "phase 1 takes at most 128 vertices");
  const std::size_t shared = std::size_t(kb * kb) * (sizeof(T) + sizeof(std::int32_t));
  cuda_detail::cuda_check(cudaFuncSetAttribute(phase1_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                          "cudaFuncSetAttribute (apsp phase 1)");
  phase1_kernel<T><<<1, 1024, shared, static_cast<cudaStream_t>(stream)>>>(b, k0, int(kb));
  cuda_detail::check_launch("apsp phase1_kernel");
}

template <class T> void cuda_copy_panels(const FwBuffers<T>& b, index_t k0, index_t kb, bool row_too, void* stream) {
  copy_panels_kernel<T><<<grid_2d(b.n, std::max(kb, row_too ? b.n : kb)), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(
      b, k0, kb, row_too);
  cuda_detail::check_launch("apsp copy_panels_kernel");
}

void cuda_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, void* stream) {
  gather_kernel<<<grid_2d(rows, cols), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(next, ld_next, k, ld_k, rows,
                                                                                          cols, next_col, ld_col);
  cuda_detail::check_launch("apsp gather_kernel");
}

#define RINGMM_APSP_INSTANTIATE(T)                                                                   \
  template void cuda_prepare<T>(const FwBuffers<T>&, unsigned long long*, void*);                   \
  template void cuda_phase1<T>(const FwBuffers<T>&, index_t, index_t, void*);                       \
  template void cuda_copy_panels<T>(const FwBuffers<T>&, index_t, index_t, bool, void*);
RINGMM_APSP_INSTANTIATE(float)
RINGMM_APSP_INSTANTIATE(double)

}  // namespace ringmm::graph
