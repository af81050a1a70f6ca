// One Viterbi step as one kernel: next[b, s'] = max_s (δ[b, s] + A[s, s']) + E_t[b, s'] and the
// backpointer bp[b, s'] = the smallest s attaining the maximum (−1 where it is −∞): the max-plus
// argmax product and the emission add of src/cuda/hmm.cu fused.
//
// Why not gemm_argmax: its update is an add, a compare and two selects (value and index), four
// instructions where the plain max-plus update takes two (FADD, FMNMX). Here the k loop runs the
// two-instruction update into a per-chunk maximum m over each k-tile of 16, and only at the end of
// a tile compares m with the running best (strictly greater: the earlier chunk keeps ties) and
// records the tile's first k: 3 instructions per output per 16 updates. After the last tile each
// output rescans its winning tile, 16 terms from global memory (δ's row and a row of Aᵀ, both
// contiguous), for the first k whose term equals the best; the sums are the same IEEE additions
// of the same operands as in the main loop, so the equality is exact.
//
// Tiles: 64 rows of δ (sequences) × 64 columns of A (next states) per block of 256 threads, 4×4
// outputs per thread (the best, the tile's maximum and the winning tile of each: 48 registers), k-tiles of 16 staged in shared memory, double-buffered with register
// prefetch (one barrier per tile). Loads are scalar and bounds-checked (−∞ past the edges), so any
// B and S work.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ringmm/types.hpp"

namespace ringmm::detail::viterbi {

inline constexpr int tile_m = 64, tile_n = 64, tile_k = 16, thread_m = 4, thread_n = 4;
inline constexpr int threads = (tile_m / thread_m) * (tile_n / thread_n);  // 256
// Shared rows of δ padded (f32): the transposing stores then hit 16 banks, not 1. f64 rows are
// 8 bytes wide and fall on distinct bank pairs already.
template <class T> inline constexpr int pad = sizeof(T) == 4 ? 4 : 0;

template <class T> __device__ __forceinline__ T max_of(T a, T b) { return fmax(a, b); }

// Four consecutive elements from 16-byte-aligned shared memory in vector loads (one LDS.128 for
// f32): scalar loads would cost one instruction for every two updates.
template <class T> __device__ __forceinline__ void load4(T (&dst)[4], const T* src) {
  if constexpr (sizeof(T) == 4) {
    const float4 v = *reinterpret_cast<const float4*>(src);
    dst[0] = v.x, dst[1] = v.y, dst[2] = v.z, dst[3] = v.w;
  } else {
    const double2 lo = reinterpret_cast<const double2*>(src)[0], hi = reinterpret_cast<const double2*>(src)[1];
    dst[0] = lo.x, dst[1] = lo.y, dst[2] = hi.x, dst[3] = hi.y;
  }
}
template <> __device__ __forceinline__ float max_of(float a, float b) { return fmaxf(a, b); }

// next, bp: B×S row-major; delta: B×S; trans: S×S (row s = from s); trans_t: its transpose;
// emit_t: B×S.
template <class T>
__global__ void __launch_bounds__(threads, sizeof(T) == 4 ? 2 : 1)  // f64 needs more than 128 registers
    step_kernel(const T* __restrict__ delta, const T* __restrict__ trans, const T* __restrict__ trans_t,
                const T* __restrict__ emit_t, index_t batch, index_t states, T* __restrict__ next,
                std::int32_t* __restrict__ bp) {
  constexpr int a_loads = tile_m * tile_k / threads, b_loads = tile_k * tile_n / threads;  // 4, 4
  static_assert(thread_m == 4 && thread_n == 4, "the shared loads below read four elements");
  __shared__ __align__(16) T a_s[2][tile_k][tile_m + pad<T>];
  __shared__ __align__(16) T b_s[2][tile_k][tile_n];
  const T minus_inf = T(-INFINITY);
  const int tid = int(threadIdx.x), tx = tid % (tile_n / thread_n), ty = tid / (tile_n / thread_n);
  const index_t i0 = index_t(blockIdx.y) * tile_m, j0 = index_t(blockIdx.x) * tile_n;

  T best[thread_m][thread_n], chunk[thread_m][thread_n];
  std::int32_t first_k[thread_m][thread_n];  // the first k of the tile holding the best term; −1: none yet
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) best[i][j] = minus_inf, first_k[i][j] = -1;

  // Each thread loads the same column of k (δ) or the same column of A (trans) in every tile:
  // rows a_row + r·(threads / tile_k) of δ at k = k0 + a_k, rows k0 + b_k + r·(threads / tile_n)
  // of A at column b_col.
  T a_next[a_loads], b_next[b_loads];
  const int a_k = tid % tile_k, a_row = tid / tile_k, b_col = tid % tile_n, b_k = tid / tile_n;
  constexpr int a_row_step = threads / tile_k, b_k_step = threads / tile_n;
  const T* a_src = delta + (i0 + a_row) * states + a_k;
  const T* b_src = trans + index_t(b_k) * states + j0 + b_col;
  const bool b_col_in = j0 + b_col < states;
  unsigned a_rows_in = 0;  // bit r: row a_row + r·a_row_step exists
#pragma unroll
  for (int r = 0; r < a_loads; ++r) a_rows_in |= unsigned(i0 + a_row + r * a_row_step < batch) << r;
  auto fetch = [&](index_t k0) {
    const bool a_k_in = k0 + a_k < states;
#pragma unroll
    for (int r = 0; r < a_loads; ++r)
      a_next[r] = a_k_in && (a_rows_in >> r & 1u) ? a_src[index_t(r) * a_row_step * states + k0] : minus_inf;
#pragma unroll
    for (int r = 0; r < b_loads; ++r)
      b_next[r] = b_col_in && k0 + b_k + r * b_k_step < states ? b_src[(k0 + index_t(r) * b_k_step) * states] : minus_inf;
  };
  auto stash = [&](int buf) {
#pragma unroll
    for (int r = 0; r < a_loads; ++r) a_s[buf][a_k][a_row + r * a_row_step] = a_next[r];
#pragma unroll
    for (int r = 0; r < b_loads; ++r) b_s[buf][b_k + r * b_k_step][b_col] = b_next[r];
  };

  const index_t tiles = (states + tile_k - 1) / tile_k;
  fetch(0);
  stash(0);
  __syncthreads();
  for (index_t t = 0; t < tiles; ++t) {
    const int buf = int(t & 1);
    if (t + 1 < tiles) fetch((t + 1) * tile_k);  // in flight during the updates below
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) chunk[i][j] = minus_inf;
#pragma unroll
    for (int kk = 0; kk < tile_k; ++kk) {
      T fa[thread_m], fb[thread_n];
      load4(fa, &a_s[buf][kk][ty * thread_m]);
      load4(fb, &b_s[buf][kk][tx * thread_n]);
#pragma unroll
      for (int i = 0; i < thread_m; ++i)
#pragma unroll
        for (int j = 0; j < thread_n; ++j) chunk[i][j] = max_of(chunk[i][j], fa[i] + fb[j]);
    }
    const std::int32_t k0 = std::int32_t(t * tile_k);
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) {
        const bool wins = chunk[i][j] > best[i][j];
        best[i][j] = wins ? chunk[i][j] : best[i][j];
        first_k[i][j] = wins ? k0 : first_k[i][j];
      }
    if (t + 1 < tiles) stash(buf ^ 1);
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const index_t gi = i0 + ty * thread_m + i;
    if (gi >= batch) continue;
    const T* d = delta + gi * states;
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      const index_t gj = j0 + tx * thread_n + j;
      if (gj >= states) continue;
      std::int32_t index = -1;
      if (first_k[i][j] >= 0) {  // the first term of the winning tile that equals the best
        const T* column = trans_t + gj * states;
        const index_t end = first_k[i][j] + tile_k < states ? first_k[i][j] + tile_k : states;
        for (index_t k = first_k[i][j]; k < end; ++k)
          if (d[k] + column[k] == best[i][j]) {
            index = std::int32_t(k);
            break;
          }
      }
      next[gi * states + gj] = best[i][j] + emit_t[gi * states + gj];
      bp[gi * states + gj] = index;
    }
  }
}

// trans_t[c·S + r] = trans[r·S + c], once per call.
template <class T> __global__ void transpose(const T* trans, index_t states, T* trans_t) {
  const index_t n = states * states;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    trans_t[(e % states) * states + e / states] = trans[e];
}

}  // namespace ringmm::detail::viterbi
