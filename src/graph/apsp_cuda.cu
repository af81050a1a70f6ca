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

namespace ringmm::graph {

namespace {

constexpr int threads_2d = 256;

unsigned blocks_for(index_t count) { return unsigned(std::min<index_t>((count + threads_2d - 1) / threads_2d, 1 << 20)); }

template <class T> __device__ T no_edge(bool longest) {
  return longest ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
}

template <class T> __device__ bool better(T term, T acc, bool longest) { return longest ? term > acc : term < acc; }

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
    if (i == j && !better(w, T(0), b.longest)) w = T(0);
    d = w;
    b.next[i * b.ld_next + j] = i == j ? std::int32_t(i) : (w == no_edge<T>(b.longest) ? -1 : std::int32_t(j));
  }
}

// Floyd–Warshall inside the diagonal block, one thread block: for each k the block's row k, column
// k and the successors of column k are staged in shared memory, so that every thread reads the
// values of step k while entries change.
template <class T> __global__ void phase1_kernel(const FwBuffers<T> b, index_t k0, int kb) {
  extern __shared__ unsigned char shared[];
  T* row_k = reinterpret_cast<T*>(shared);
  T* col_k = row_k + kb;
  std::int32_t* via_k = reinterpret_cast<std::int32_t*>(col_k + kb);
  T* d = b.dist + k0 * b.ld_dist + k0;
  std::int32_t* nx = b.next + k0 * b.ld_next + k0;
  const int cells = kb * kb;
  for (int k = 0; k < kb; ++k) {
    for (int t = int(threadIdx.x); t < kb; t += int(blockDim.x)) {
      row_k[t] = d[index_t(k) * b.ld_dist + t];
      col_k[t] = d[index_t(t) * b.ld_dist + k];
      via_k[t] = nx[index_t(t) * b.ld_next + k];
    }
    __syncthreads();
    for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
      const int i = e / kb, j = e % kb;
      const T term = col_k[i] + row_k[j];
      T& dij = d[index_t(i) * b.ld_dist + j];
      if (better(term, dij, b.longest)) {
        dij = term;
        nx[index_t(i) * b.ld_next + j] = via_k[i];
      }
    }
    __syncthreads();
  }
}

template <class T> __global__ void copy_panels_kernel(const FwBuffers<T> b, index_t k0, index_t kb, bool row_too) {
  const index_t col_cells = b.n * kb, cells = col_cells + (row_too ? kb * b.n : 0);
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < cells; e += index_t(gridDim.x) * blockDim.x) {
    if (e < col_cells) {
      const index_t i = e / kb, c = e % kb;
      b.col[i * b.block + c] = b.dist[i * b.ld_dist + k0 + c];
      b.next_col[i * b.block + c] = b.next[i * b.ld_next + k0 + c];
    } else {
      const index_t r = (e - col_cells) / b.n, j = (e - col_cells) % b.n;
      b.row[r * b.n + j] = b.dist[(k0 + r) * b.ld_dist + j];
    }
  }
}

__global__ void gather_kernel(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows,
                              index_t cols, const std::int32_t* next_col, index_t ld_col) {
  const index_t cells = rows * cols;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < cells; e += index_t(gridDim.x) * blockDim.x) {
    const index_t i = e / cols, j = e % cols;
    std::int32_t& c = k[i * ld_k + j];
    if (c >= 0) {  // improved this round through vertex k0 + c: its first hop is the first hop to k0 + c
      next[i * ld_next + j] = next_col[i * ld_col + c];
      c = -1;
    }
  }
}

}  // namespace

template <class T> void cuda_prepare(const FwBuffers<T>& b, unsigned long long* bad, void* stream) {
  prepare_kernel<T><<<blocks_for(b.n * b.n), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(b, bad);
  cuda_detail::check_launch("apsp prepare_kernel");
}

template <class T> void cuda_phase1(const FwBuffers<T>& b, index_t k0, index_t kb, void* stream) {
  const std::size_t shared = std::size_t(kb) * (2 * sizeof(T) + sizeof(std::int32_t));
  phase1_kernel<T><<<1, 1024, shared, static_cast<cudaStream_t>(stream)>>>(b, k0, int(kb));
  cuda_detail::check_launch("apsp phase1_kernel");
}

template <class T> void cuda_copy_panels(const FwBuffers<T>& b, index_t k0, index_t kb, bool row_too, void* stream) {
  const index_t cells = b.n * kb * (row_too ? 2 : 1);
  copy_panels_kernel<T><<<blocks_for(cells), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(b, k0, kb, row_too);
  cuda_detail::check_launch("apsp copy_panels_kernel");
}

void cuda_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, void* stream) {
  gather_kernel<<<blocks_for(rows * cols), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(next, ld_next, k, ld_k, rows,
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
