// Experiment W of the Viterbi step (scripts/gpu/viterbi_step_ab.cu only; measured slower, kept as
// the record of what was tried): the vector form with 128×64 block tiles, 8×4 outputs a thread,
// 2 blocks an SM (127 registers, no spills), k-tiles of 16 by cp.async; the f32 vector form only.
//   nvcc -std=c++20 -arch=sm_90a -O3 -Iscripts/gpu/viterbi_variants/w -Iinclude -o h_w scripts/gpu/viterbi_step_ab.cu
// -DW_MINB=1 sets the launch bound to one block an SM; -DW_NORESCAN skips the rescan (diagnostic).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include "ringmm/cuda/async_copy.cuh"
#include "ringmm/types.hpp"

namespace ringmm::detail::viterbi {
inline constexpr int tile_m = 128, tile_n = 64, tile_k = 16, thread_m = 8, thread_n = 4;
inline constexpr int threads = 256;
#ifndef W_MINB
#define W_MINB 2
#endif

template <class T, bool kVector>
__global__ void __launch_bounds__(threads, W_MINB)
    step_kernel(const T* __restrict__ delta, const T* __restrict__ trans, const T* __restrict__ trans_t,
                const T* __restrict__ emit_t, index_t batch, index_t states, T* __restrict__ next,
                std::int32_t* __restrict__ bp) {
  __shared__ __align__(16) float a_s[2][tile_k][tile_m + 4];
  __shared__ __align__(16) float b_s[2][tile_k][tile_n];
  const float minus_inf = -INFINITY;
  const int tid = int(threadIdx.x), tx = tid % 16, ty = tid / 16;
  const index_t i0 = index_t(blockIdx.y) * tile_m, j0 = index_t(blockIdx.x) * tile_n;
  float best[thread_m][thread_n], chunk[thread_m][thread_n];
  std::uint32_t won[thread_m * thread_n / 2];
#pragma unroll
  for (int x = 0; x < thread_m * thread_n / 2; ++x) won[x] = 0;
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) best[i][j] = minus_inf;
  // δ: row tid/2, 8 consecutive k from (tid%2)*8; A: row k = tid/16, 4 columns from (tid%16)*4.
  const int a_row = tid / 2, a_k = (tid % 2) * 8, b_k = tid / 16, b_col = (tid % 16) * 4;
  const bool a_in = i0 + a_row < batch, b_in = j0 + b_col < states;
  const float* a_src = a_in ? delta + (i0 + a_row) * states + a_k : delta;
  const float* b_src = b_in ? trans + index_t(b_k) * states + j0 + b_col : trans;
  auto fetch = [&](index_t k0, int buf) {
#pragma unroll
    for (int r = 0; r < 8; ++r)
      cuda_detail::copy_async_or_zero<4>(cuda_detail::shared_address(&a_s[buf][a_k + r][a_row]), a_src + (a_in ? k0 + r : 0), a_in);
    cuda_detail::copy_async_or_zero<16>(cuda_detail::shared_address(&b_s[buf][b_k][b_col]), b_src + (b_in ? k0 * states : 0), b_in);
    cuda_detail::commit_group();
  };
  const int tiles = int(states / tile_k);
  fetch(0, 0);
  cuda_detail::wait_group<0>();
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1;
    if (t + 1 < tiles) fetch(index_t(t + 1) * tile_k, buf ^ 1);
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; ++j) chunk[i][j] = minus_inf;
#pragma unroll
    for (int kk = 0; kk < tile_k; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&a_s[buf][kk][ty * 8]);
      const float4 a1 = *reinterpret_cast<const float4*>(&a_s[buf][kk][ty * 8 + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&b_s[buf][kk][tx * 4]);
      const float fa[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float fb[4] = {b0.x, b0.y, b0.z, b0.w};
#pragma unroll
      for (int i = 0; i < thread_m; ++i)
#pragma unroll
        for (int j = 0; j < thread_n; ++j) chunk[i][j] = fmaxf(chunk[i][j], fa[i] + fb[j]);
    }
    const std::uint32_t tag = std::uint32_t(t + 1) * 0x10001u;
#pragma unroll
    for (int i = 0; i < thread_m; ++i)
#pragma unroll
      for (int j = 0; j < thread_n; j += 2) {
        const bool w0 = chunk[i][j] > best[i][j], w1 = chunk[i][j + 1] > best[i][j + 1];
        best[i][j] = w0 ? chunk[i][j] : best[i][j];
        best[i][j + 1] = w1 ? chunk[i][j + 1] : best[i][j + 1];
        const std::uint32_t mask = (w0 ? 0xffffu : 0u) | (w1 ? 0xffff0000u : 0u);
        std::uint32_t& x = won[(i * thread_n + j) / 2];
        x = (x & ~mask) | (tag & mask);
      }
    if (t + 1 < tiles) cuda_detail::wait_group<0>();
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const index_t gi = i0 + ty * thread_m + i;
    if (gi >= batch) continue;
    const float* d = delta + gi * states;
    const index_t gj = j0 + tx * thread_n;
    if (gj >= states) continue;
    std::int32_t index[thread_n];
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      index[j] = -1;
      const std::int32_t k0 = std::int32_t((won[(i * thread_n + j) / 2] >> (16 * (j % 2))) & 0xffffu) * tile_k - tile_k;
      if (k0 < 0) continue;
#ifdef W_NORESCAN
      index[j] = k0;
      continue;
#endif
      const float4* dv = reinterpret_cast<const float4*>(d + k0);
      const float4* cv = reinterpret_cast<const float4*>(trans_t + (gj + j) * states + k0);
#pragma unroll
      for (int q = tile_k / 4 - 1; q >= 0; --q) {
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
  }
}

template <class T> __global__ void transpose(const T* trans, index_t states, T* trans_t) {
  const index_t n = states * states;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    trans_t[(e % states) * states + e / states] = trans[e];
}
}  // namespace ringmm::detail::viterbi
