// The small CUDA steps of blocked Floyd–Warshall (src/graph/apsp.cpp): preparing the matrices,
// the column strip's diagonal and relax steps, panel copies and the successor gather. The products
// between them are gemm_argmax calls on device pointers. Every launch goes on the caller's stream;
// nothing here synchronises.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "fw_buffers.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
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

// Step a of a round (apsp.cpp): classic Floyd–Warshall inside a diagonal sub-block of at most
// cuda_sub_block vertices at `dist` / `next` (its top-left entries), one thread block with its
// distances and successors in shared memory, and row k as it stood at iteration k into the
// snapshot. In step k only entries outside row k and column k change (D[k][k] = 0 when no cycle of
// the wrong sign exists), so threads may read row k and column k while others write.
template <class T>
__global__ void __launch_bounds__(1024)
    diagonal_kernel(T* gd, index_t ld_dist, std::int32_t* gn, index_t ld_next, int sb, bool longest, T* snapshot) {
  extern __shared__ unsigned char shared[];
  T* d = reinterpret_cast<T*>(shared);
  std::int32_t* nx = reinterpret_cast<std::int32_t*>(d + sb * sb);
  const int cells = sb * sb;
  for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
    const int i = e / sb, j = e % sb;
    d[e] = gd[i * ld_dist + j];
    nx[e] = gn[i * ld_next + j];
  }
  // Thread t keeps column j = t mod sb of rows t / sb, t / sb + step, …: its entries' places are
  // fixed, so the k loop divides nothing, and D[k][j] is read once per k.
  const int step = int(blockDim.x) / sb, j = int(threadIdx.x) % sb, first = int(threadIdx.x) / sb;
  const bool works = first < step;  // the threads past step·sb only keep the barriers
  for (int k = 0; k < sb; ++k) {
    __syncthreads();
    if (int(threadIdx.x) < sb) snapshot[k * sb + threadIdx.x] = d[k * sb + threadIdx.x];
    if (!works) continue;
    const T dkj = d[k * sb + j];
    for (int i = first; i < sb; i += step) {
      const T term = d[i * sb + k] + dkj;
      if (improves(term, d[i * sb + j], longest)) {
        d[i * sb + j] = term;
        nx[i * sb + j] = nx[i * sb + k];
      }
    }
  }
  __syncthreads();
  for (int e = int(threadIdx.x); e < cells; e += int(blockDim.x)) {
    const int i = e / sb, j = e % sb;
    gd[i * ld_dist + j] = d[e];
    gn[i * ld_next + j] = nx[e];
  }
}

// Step b: rows 0 … rows−1 of the strip at `dist` / `next` (sb columns), except the sub-block's own
// rows skip … skip+sb−1, in classic order through the snapshot. A warp holds one row's sb ≤ 128
// entries, four a lane (j = lane + 32·t), and walks k in order, taking d[i][k] and next[i][k] from
// the lane that holds them; the snapshot sits in shared memory, read once per thread block.
constexpr int relax_warps = 8;
template <class T>
__global__ void __launch_bounds__(relax_warps * 32)
    relax_kernel(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t rows, int sb, const T* snapshot,
                 bool longest, index_t skip) {
  extern __shared__ unsigned char shared[];
  T* snap = reinterpret_cast<T*>(shared);
  for (int e = int(threadIdx.x); e < sb * sb; e += int(blockDim.x)) snap[e] = snapshot[e];
  __syncthreads();
  const int lane = int(threadIdx.x) % 32;
  const index_t warps = index_t(gridDim.x) * relax_warps;
  for (index_t i = index_t(blockIdx.x) * relax_warps + threadIdx.x / 32; i < rows; i += warps) {
    if (i >= skip && i < skip + sb) continue;
    T* d = dist + i * ld_dist;
    std::int32_t* nx = next + i * ld_next;
    T x[4];
    std::int32_t via[4];
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const int j = lane + 32 * t;
      x[t] = j < sb ? d[j] : T(0);
      via[t] = j < sb ? nx[j] : -1;
    }
#pragma unroll
    for (int t = 0; t < 4; ++t)
      for (int l = 0; l < 32 && 32 * t + l < sb; ++l) {
        const int k = 32 * t + l;
        const T dik = __shfl_sync(0xffffffffu, x[t], l);
        const std::int32_t hop = __shfl_sync(0xffffffffu, via[t], l);
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int j = lane + 32 * u;
          if (j < sb) {
            const T term = dik + snap[k * sb + j];
            if (improves(term, x[u], longest)) x[u] = term, via[u] = hop;
          }
        }
      }
#pragma unroll
    for (int t = 0; t < 4; ++t)
      if (const int j = lane + 32 * t; j < sb) d[j] = x[t], nx[j] = via[t];
  }
}

// Rows on the grid's y axis (strided past 65535), columns on x: no 64-bit division per element.
template <class T> __global__ void copy_columns_kernel(const FwBuffers<T> b, index_t c0, index_t width) {
  for (index_t i = blockIdx.y; i < b.n; i += gridDim.y)
    for (index_t c = index_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += index_t(gridDim.x) * blockDim.x) {
      b.col[i * b.block + c] = b.dist[i * b.ld_dist + c0 + c];
      b.next_col[i * b.block + c] = b.next[i * b.ld_next + c0 + c];
    }
}

template <class T> __global__ void copy_rows_kernel(const FwBuffers<T> b, index_t r0, index_t rows, index_t c0, index_t cols) {
  for (index_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x; j < cols; j += index_t(gridDim.x) * blockDim.x)
      b.row[r * cols + j] = b.dist[(r0 + r) * b.ld_dist + c0 + j];
}

// Where rows of k allow (16-byte aligned), a thread reads four winners at once and skips all four
// when none improved.
__global__ void gather_kernel(std::int32_t* __restrict__ next, index_t ld_next, std::int32_t* __restrict__ k, index_t ld_k,
                              index_t rows, index_t cols, const std::int32_t* __restrict__ next_col, index_t ld_col) {
  const bool quads = ld_k % 4 == 0 && reinterpret_cast<std::uintptr_t>(k) % 16 == 0;
  const index_t width = quads ? 4 : 1, units = (cols + width - 1) / width;
  for (index_t i = blockIdx.y; i < rows; i += gridDim.y) {
    std::int32_t* const k_row = k + i * ld_k;
    // improved this round through vertex k0 + c: its first hop is the first hop to k0 + c
    const auto take = [&](index_t j) {
      if (const std::int32_t c = k_row[j]; c >= 0) {
        next[i * ld_next + j] = next_col[i * ld_col + c];
        k_row[j] = -1;
      }
    };
    for (index_t u = index_t(blockIdx.x) * blockDim.x + threadIdx.x; u < units; u += index_t(gridDim.x) * blockDim.x) {
      const index_t j0 = u * width;
      if (quads && j0 + 4 <= cols) {
        const int4 w = *reinterpret_cast<const int4*>(k_row + j0);
        if ((w.x & w.y & w.z & w.w) < 0) continue;  // all four −1
      }
      for (index_t j = j0; j < j0 + width && j < cols; ++j) take(j);
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

template <class T>
void cuda_diagonal(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t sb, bool longest, T* snapshot,
                   void* stream) {
  if (sb > cuda_sub_block) throw Error(Errc::invalid_argument, "block", "a diagonal sub-block takes at most 128 vertices");
  const std::size_t shared = std::size_t(sb * sb) * (sizeof(T) + sizeof(std::int32_t));
  cuda_detail::cuda_check(cudaFuncSetAttribute(diagonal_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                          "cudaFuncSetAttribute (apsp diagonal)");
  diagonal_kernel<T><<<1, 1024, shared, static_cast<cudaStream_t>(stream)>>>(dist, ld_dist, next, ld_next, int(sb), longest,
                                                                            snapshot);
  cuda_detail::check_launch("apsp diagonal_kernel");
}

template <class T>
void cuda_relax(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t rows, index_t sb,
                const T* snapshot, bool longest, index_t skip, void* stream) {
  if (sb > cuda_sub_block) throw Error(Errc::invalid_argument, "block", "a relaxed sub-block takes at most 128 vertices");
  const index_t outside = rows - (skip >= 0 ? sb : 0);
  if (outside <= 0) return;  // no row outside the sub-block
  const std::size_t shared = std::size_t(sb * sb) * sizeof(T);
  cuda_detail::cuda_check(cudaFuncSetAttribute(relax_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)),
                          "cudaFuncSetAttribute (apsp relax)");
  // Enough thread blocks to fill the GPU, few enough that each reads the snapshot for many rows.
  const index_t sms = cuda_detail::multiprocessor_count();
  const index_t blocks = std::clamp<index_t>((rows + relax_warps - 1) / relax_warps, 1, 2 * sms);
  relax_kernel<T><<<unsigned(blocks), relax_warps * 32, shared, static_cast<cudaStream_t>(stream)>>>(
      dist, ld_dist, next, ld_next, rows, int(sb), snapshot, longest, skip < 0 ? rows : skip);
  cuda_detail::check_launch("apsp relax_kernel");
}

template <class T> void cuda_copy_columns(const FwBuffers<T>& b, index_t c0, index_t width, void* stream) {
  copy_columns_kernel<T><<<grid_2d(b.n, width), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(b, c0, width);
  cuda_detail::check_launch("apsp copy_columns_kernel");
}

template <class T>
void cuda_copy_rows(const FwBuffers<T>& b, index_t r0, index_t rows, index_t c0, index_t cols, void* stream) {
  copy_rows_kernel<T><<<grid_2d(rows, cols), threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(b, r0, rows, c0, cols);
  cuda_detail::check_launch("apsp copy_rows_kernel");
}

void cuda_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, void* stream) {
  if (rows <= 0 || cols <= 0) return;
  // Columns in runs of four across x; on y, enough rows for two waves of blocks, each thread
  // walking its column down the rest, rather than a block a row (a million blocks at 16384).
  const index_t across = (cols + 4 * threads_2d - 1) / (4 * threads_2d);
  const index_t down = std::clamp<index_t>(16 * cuda_detail::multiprocessor_count() / across, 1, std::min<index_t>(rows, 65535));
  const dim3 grid(unsigned(std::min<index_t>(across, 1 << 16)), unsigned(std::max<index_t>(down, 1)));
  gather_kernel<<<grid, threads_2d, 0, static_cast<cudaStream_t>(stream)>>>(next, ld_next, k, ld_k, rows, cols, next_col,
                                                                           ld_col);
  cuda_detail::check_launch("apsp gather_kernel");
}

#define RINGMM_APSP_INSTANTIATE(T)                                                                   \
  template void cuda_prepare<T>(const FwBuffers<T>&, unsigned long long*, void*);                   \
  template void cuda_diagonal<T>(T*, index_t, std::int32_t*, index_t, index_t, bool, T*, void*);     \
  template void cuda_relax<T>(T*, index_t, std::int32_t*, index_t, index_t, index_t, const T*, bool, index_t, void*); \
  template void cuda_copy_columns<T>(const FwBuffers<T>&, index_t, index_t, void*);                 \
  template void cuda_copy_rows<T>(const FwBuffers<T>&, index_t, index_t, index_t, index_t, void*);
RINGMM_APSP_INSTANTIATE(float)
RINGMM_APSP_INSTANTIATE(double)

}  // namespace ringmm::graph
