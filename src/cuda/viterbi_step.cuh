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
// outputs per thread (the best, the tile's maximum and the winning tile of each), k-tiles of 16
// staged in shared memory, double-buffered (one barrier per tile). Two forms of the loads:
//   scalar  bounds-checked element loads through registers (−∞ past the edges): any B and S, and f64.
//   vector  f32 with S a multiple of 16 and 16-byte-aligned arrays: each k-tile staged by cp.async
//           (no registers held for the prefetch: four 4-byte copies of δ, which the shared tile
//           transposes, and one 16-byte copy of A per thread), the winning tiles packed two to a
//           register, the rescan's 16 terms in 16-byte loads, the outputs written four at a time.
//           Held to 64 registers so that four blocks share an SM: B = 4096, S = 512 (512 blocks)
//           then runs in one wave of 528 slots instead of two of 264 (ncu of the scalar form
//           there: 124 registers, 1.94 waves, long-scoreboard stalls first).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ringmm/cuda/async_copy.cuh"
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

// The rescan of a winning run: the first k in [k0, k0 + kTerms) whose term d[k] + c[k] equals best,
// else none. d and c point at the run (16-byte aligned); the sums are the same IEEE additions of
// the same operands as the main loop's, so the equality is exact. Downwards, so that the smallest
// equal k is written last; kTerms / 2 independent 16-byte loads of each operand.
template <int kTerms>
__device__ __forceinline__ std::int32_t first_equal_term(const float* d, const float* c, std::int32_t k0, float best,
                                                         std::int32_t none) {
  const float4* dv = reinterpret_cast<const float4*>(d);
  const float4* cv = reinterpret_cast<const float4*>(c);
  std::int32_t index = none;
#pragma unroll
  for (int q = kTerms / 4 - 1; q >= 0; --q) {
    const float4 x = dv[q], y = cv[q];
    if (x.w + y.w == best) index = k0 + 4 * q + 3;
    if (x.z + y.z == best) index = k0 + 4 * q + 2;
    if (x.y + y.y == best) index = k0 + 4 * q + 1;
    if (x.x + y.x == best) index = k0 + 4 * q;
  }
  return index;
}

// Whether the vector form of step_kernel applies: f32, S a multiple of the k-tile (so no k-tile
// runs past S, and every row starts 16-byte aligned) and every array 16-byte aligned.
template <class... P> inline bool takes_vector_step(bool is_f32, index_t states, const P*... arrays) {
  if (!is_f32 || states % tile_k != 0 || states / tile_k > 0xfffe) return false;
  return ((reinterpret_cast<std::uintptr_t>(arrays) % 16 == 0) && ...);
}

// Each output's winning k-tile (the tile whose maximum last rose above the best): a 32-bit k a
// output, or packed (the vector form, to fit its 64 registers) as tile + 1 in 16 bits, two outputs
// a word, 0 for none yet (so at most 65 534 tiles: takes_vector_step checks S).
template <bool kPacked> struct WinningTiles {
  static constexpr int words = kPacked ? thread_m * thread_n / 2 : thread_m * thread_n;
  std::uint32_t w[words];
  __device__ void clear() {
#pragma unroll
    for (int x = 0; x < words; ++x) w[x] = kPacked ? 0u : 0xffffffffu;
  }
  // Output (i, j) and its right neighbour (j even): tile t won where wins0 / wins1.
  __device__ __forceinline__ void record_pair(int i, int j, bool wins0, bool wins1, int t) {
    if constexpr (kPacked) {
      const std::uint32_t tag = std::uint32_t(t + 1) * 0x10001u, mask = (wins0 ? 0xffffu : 0u) | (wins1 ? 0xffff0000u : 0u);
      std::uint32_t& x = w[(i * thread_n + j) / 2];
      x = (x & ~mask) | (tag & mask);
    } else {
      const std::uint32_t k0 = std::uint32_t(t * tile_k);
      w[i * thread_n + j] = wins0 ? k0 : w[i * thread_n + j];
      w[i * thread_n + j + 1] = wins1 ? k0 : w[i * thread_n + j + 1];
    }
  }
  // The first k of output (i, j)'s winning tile, −1 when no term was finite.
  __device__ __forceinline__ std::int32_t first_k(int i, int j) const {
    if constexpr (kPacked) {
      const std::uint32_t tag = (w[(i * thread_n + j) / 2] >> (16 * (j % 2))) & 0xffffu;
      return std::int32_t(tag) * tile_k - tile_k;  // tag 0: −16, which the callers read as none
    } else {
      return std::int32_t(w[i * thread_n + j]);
    }
  }
};

// Blocks an SM must hold: f64 needs more than 128 registers; the vector form fits 64 (see above).
template <class T, bool kVector> inline constexpr int min_blocks = sizeof(T) == 8 ? 1 : kVector ? 4 : 2;

// next, bp: B×S row-major; delta: B×S; trans: S×S (row s = from s); trans_t: its transpose;
// emit_t: B×S.
template <class T, bool kVector>
__global__ void __launch_bounds__(threads, (min_blocks<T, kVector>))
    step_kernel(const T* __restrict__ delta, const T* __restrict__ trans, const T* __restrict__ trans_t,
                const T* __restrict__ emit_t, index_t batch, index_t states, T* __restrict__ next,
                std::int32_t* __restrict__ bp) {
  static_assert(thread_m == 4 && thread_n == 4, "the shared and vector loads below move four elements");
  static_assert(!kVector || sizeof(T) == 4, "the vector form is f32's");
  __shared__ __align__(16) T a_s[2][tile_k][tile_m + pad<T>];
  __shared__ __align__(16) T b_s[2][tile_k][tile_n];
  const T minus_inf = T(-INFINITY);
  const int tid = int(threadIdx.x), tx = tid % (tile_n / thread_n), ty = tid / (tile_n / thread_n);
  const index_t i0 = index_t(blockIdx.y) * tile_m, j0 = index_t(blockIdx.x) * tile_n;

  T best[thread_m][thread_n], chunk[thread_m][thread_n];
  WinningTiles<kVector> won;
  won.clear();
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) best[i][j] = minus_inf;

  // Where each thread's share of a k-tile comes from. Scalar: the same column of k of 4 rows of δ,
  // and the same column of A in 4 rows of k, through registers (a_next, b_next). Vector: one row of
  // δ at 4 consecutive k (4 threads cover a row's 16 k, so a warp reads 8 whole 64-byte runs) and
  // one row of A at 4 consecutive columns.
  constexpr int per_thread = tile_m * tile_k / threads;  // 4 elements of each operand
  static_assert(per_thread == 4 && tile_k * tile_n / threads == 4, "one 16-byte vector an operand");
  const int a_k = kVector ? (tid % 4) * 4 : tid % tile_k, a_row = kVector ? tid / 4 : tid / tile_k;
  const int b_col = kVector ? (tid % (tile_n / 4)) * 4 : tid % tile_n, b_k = kVector ? tid / (tile_n / 4) : tid / tile_n;
  constexpr int a_row_step = threads / tile_k, b_k_step = threads / tile_n;  // scalar form only
  const bool b_col_in = j0 + b_col < states;  // vector: S % 16 == 0, so the column's 4 are in or out together
  unsigned a_rows_in = 0;  // bit r: row a_row + r·a_row_step exists (vector: bit 0, row a_row)
#pragma unroll
  for (int r = 0; r < (kVector ? 1 : per_thread); ++r) a_rows_in |= unsigned(i0 + a_row + r * a_row_step < batch) << r;
  // Rows and columns past the edges read from the arrays' first element (the vector form fills
  // zeros there instead: no k-tile passes S, and those outputs are never written).
  const T* a_src = (a_rows_in & 1u) ? delta + (i0 + a_row) * states + a_k : delta;
  const T* b_src = b_col_in ? trans + index_t(b_k) * states + j0 + b_col : trans;
  T a_next[kVector ? 1 : per_thread], b_next[kVector ? 1 : per_thread];
  // Vector: starts the copies of the k-tile at k0 into buffer buf. Scalar: loads it into a_next, b_next.
  auto fetch = [&](index_t k0, int buf) {
    if constexpr (kVector) {
      const bool a_in = a_rows_in & 1u;
#pragma unroll
      for (int r = 0; r < per_thread; ++r)
        cuda_detail::copy_async_or_zero<4>(cuda_detail::shared_address(&a_s[buf][a_k + r][a_row]), a_src + (a_in ? k0 + r : 0), a_in);
      cuda_detail::copy_async_or_zero<16>(cuda_detail::shared_address(&b_s[buf][b_k][b_col]), b_src + (b_col_in ? k0 * states : 0),
                                          b_col_in);
      cuda_detail::commit_group();
    } else {
      const bool a_k_in = k0 + a_k < states;
#pragma unroll
      for (int r = 0; r < per_thread; ++r)
        a_next[r] = a_k_in && (a_rows_in >> r & 1u) ? a_src[index_t(r) * a_row_step * states + k0] : minus_inf;
#pragma unroll
      for (int r = 0; r < per_thread; ++r)
        b_next[r] = b_col_in && k0 + b_k + r * b_k_step < states ? b_src[(k0 + index_t(r) * b_k_step) * states] : minus_inf;
    }
  };
  // The fetched k-tile is in buffer buf once every thread has passed the barrier after this.
  auto land = [&](int buf) {
    if constexpr (kVector) {
      cuda_detail::wait_group<0>();
    } else {
#pragma unroll
      for (int r = 0; r < per_thread; ++r) a_s[buf][a_k][a_row + r * a_row_step] = a_next[r];
#pragma unroll
      for (int r = 0; r < per_thread; ++r) b_s[buf][b_k + r * b_k_step][b_col] = b_next[r];
    }
  };

  const int tiles = int((states + tile_k - 1) / tile_k);  // S·S elements of A fit memory: S < 2³¹·16
  fetch(0, 0);
  land(0);
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int buf = int(t & 1);
    if (t + 1 < tiles) fetch(index_t(t + 1) * tile_k, buf ^ 1);  // in flight during the updates below
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
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; j += 2) {
        const bool wins0 = chunk[i][j] > best[i][j], wins1 = chunk[i][j + 1] > best[i][j + 1];
        best[i][j] = wins0 ? chunk[i][j] : best[i][j];
        best[i][j + 1] = wins1 ? chunk[i][j + 1] : best[i][j + 1];
        won.record_pair(i, j, wins0, wins1, t);
      }
    if (t + 1 < tiles) land(buf ^ 1);
    __syncthreads();
  }

  // Each output rescans its winning tile for the first term equal to the best, then writes
  // best + E_t and the index.
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const index_t gi = i0 + ty * thread_m + i;
    if (gi >= batch) continue;
    const T* d = delta + gi * states;
    if constexpr (kVector) {
      const index_t gj = j0 + tx * thread_n;
      if (gj >= states) continue;  // S % 16 == 0: the thread's 4 columns are in or out together
      std::int32_t index[thread_n];
#pragma unroll
      for (int j = 0; j < thread_n; ++j) {
        index[j] = -1;
        const std::int32_t k0 = won.first_k(i, j);
        if (k0 < 0) continue;
        // The tile's 16 terms from 8 independent 16-byte loads (the tile starts at a multiple of 16):
        // first_equal_term's loop, written out here because through the helper this form, short of
        // registers, spilled 56 bytes instead of 40 and ran 1 % slower (B = 4096, S = 512).
        const float4* dv = reinterpret_cast<const float4*>(d + k0);
        const float4* cv = reinterpret_cast<const float4*>(trans_t + (gj + j) * states + k0);
#pragma unroll
        for (int q = tile_k / 4 - 1; q >= 0; --q) {  // downwards: the smallest equal k is written last
          const float4 x = dv[q], y = cv[q];
          if (x.w + y.w == best[i][j]) index[j] = k0 + 4 * q + 3;
          if (x.z + y.z == best[i][j]) index[j] = k0 + 4 * q + 2;
          if (x.y + y.y == best[i][j]) index[j] = k0 + 4 * q + 1;
          if (x.x + y.x == best[i][j]) index[j] = k0 + 4 * q;
        }
      }
      const float4 e = *reinterpret_cast<const float4*>(emit_t + gi * states + gj);
      *reinterpret_cast<float4*>(next + gi * states + gj) =
          make_float4(best[i][0] + e.x, best[i][1] + e.y, best[i][2] + e.z, best[i][3] + e.w);
      *reinterpret_cast<int4*>(bp + gi * states + gj) = make_int4(index[0], index[1], index[2], index[3]);
    } else {
#pragma unroll
      for (int j = 0; j < thread_n; ++j) {
        const index_t gj = j0 + tx * thread_n + j;
        if (gj >= states) continue;
        std::int32_t index = -1;
        const std::int32_t k0 = won.first_k(i, j);
        if (k0 >= 0) {  // the first term of the winning tile that equals the best
          const T* column = trans_t + gj * states;
          const index_t end = k0 + tile_k < states ? k0 + tile_k : states;
          for (index_t k = k0; k < end; ++k)
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
}

// out[c·pitch + r] = in[r·cols + c] for a rows × cols row-major `in`: Aᵀ (pitch S) once per
// call, and viterbi_logprob.cuh's first δᵀ (pitch ≥ B).
template <class T> __global__ void transpose(const T* in, index_t rows, index_t cols, index_t pitch, T* out) {
  const index_t n = rows * cols;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    out[(e % cols) * pitch + e / cols] = in[e];
}

}  // namespace ringmm::detail::viterbi
