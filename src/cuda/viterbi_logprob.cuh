// The fused Viterbi step for log-probability models: every initial, transition and emission value
// ≤ 0 (so every δ and every term δ[b, s] + A[s, s'] is ≤ 0), f32, S a multiple of 16. It computes
// what viterbi_step.cuh's step computes (next = max_s (δ[b, s] + A[s, s']) + E_t, bp = the smallest
// s attaining it, −1 where every term is −∞), faster (B = 4096, S = 512 on the H100: 126–128 µs a
// step against the vector form's 157; docs/performance-log.md), for three reasons:
//
// - The maximum on bit patterns. For floats ≤ 0 the larger float has the smaller bit pattern read
//   as an unsigned integer (+0 is 0, −0 is 0x80000000, −∞ is 0xff800000, the largest; the inputs
//   are checked for NaN), so one VIMNMX3.U32 (sm_90's three-input integer minimum) folds two terms
//   into a run's maximum: 1.5 instructions an update where FADD + FMNMX take 2. +0 and −0 are the
//   one pair of equal floats with different patterns, so runs are compared with the best as
//   floats (a later run's +0 must not beat an earlier −0), and the rescan compares floats. A
//   maximum of zero may come out as +0 where the CPU has −0 (equal, but not the same bits).
// - δ also kept transposed. Each step writes δᵀ (S rows of `pitch` ≥ B floats) beside δ, so both
//   operands' k-tiles arrive in 16-byte cp.async copies. The vector form transposes δ with 4-byte
//   copies: without them a step's shared-memory wavefronts fell from 21.0 M to 16.3 M, where ncu
//   had put the L1/shared pipe at 77–91 % busy, the limit of that kernel.
// - The winning run tracked every 8 k (16 bits an output, in shared memory), so the rescan reads 8
//   terms an output, half the vector form's L2 traffic. The compares cost 10 µs a step; the rescan
//   went from 38 µs to 17.
//
// Ties: the best is replaced only by a strictly better run and the rescan takes the first term
// equal to it, so the smallest s wins, as on every backend.
//
// Tiles: 64 rows of δ × 64 columns of A per block of 256 threads, 4×4 outputs a thread, k-tiles of
// 32 (or 16) double-buffered, 64 registers so that four blocks share an SM (B = 4096, S = 512: 512
// blocks, one wave). With programmatic dependent launch (hmm.cu) the next step's blocks are
// scheduled while this one drains and wait for it at griddepcontrol.wait.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ringmm/cuda/async_copy.cuh"
#include "ringmm/types.hpp"
#include "viterbi_step.cuh"

namespace ringmm::detail::viterbi_logprob {

// The vector form's block and thread tiles (hmm.cu's batch limit counts viterbi::tile_m rows).
using viterbi::load4, viterbi::first_equal_term, viterbi::tile_m, viterbi::tile_n, viterbi::threads;
using viterbi::thread_m, viterbi::thread_n;
inline constexpr int run = 8;  // the rescan's length: winning runs are tracked every 8 k
// k-tiles of 32 where S allows (one barrier a 32 k: 1 µs a step less at S = 512), else of 16.
inline constexpr int min_tile_k = 16;
inline int tile_k_for(index_t states) { return states % 32 == 0 ? 32 : min_tile_k; }
inline constexpr int outputs = thread_m * thread_n;
inline constexpr std::uint32_t minus_inf_bits = 0xff800000u;  // the worst maximum: no finite term
inline constexpr std::uint16_t no_run = 0xffffu;                // in won: no finite term yet

// δᵀ's row pitch: B rounded up to whole 16-byte vectors, so every row starts aligned. The padding
// (zeroed by hmm.cu, then whatever the kernel computes for rows past B) never reaches δ or the
// backpointers.
inline index_t transposed_pitch(index_t batch) { return (batch + 3) / 4 * 4; }

// Whether this form applies to an f32 model: every value ≤ 0, S a multiple of 16 (every row
// 16-byte aligned, no k-tile past S) with run numbers below no_run, and 16-byte-aligned arrays.
template <class... P> inline bool takes_step(bool log_probabilities, index_t states, const P*... arrays) {
  if (!log_probabilities || states % min_tile_k != 0 || states / run >= no_run) return false;
  return ((reinterpret_cast<std::uintptr_t>(arrays) % 16 == 0) && ...);
}

// delta, next: B×S; delta_t, next_t: S × pitch; trans: S×S (row s = from s); trans_t: its
// transpose; emit_t: B×S; bp: B×S. S must be a multiple of kTileK.
template <int kTileK>
__global__ void __launch_bounds__(threads, 4)
    step_kernel(const float* __restrict__ delta, const float* __restrict__ delta_t, index_t pitch,
                const float* __restrict__ trans, const float* __restrict__ trans_t, const float* __restrict__ emit_t,
                index_t batch, index_t states, float* __restrict__ next, float* __restrict__ next_t,
                std::int32_t* __restrict__ bp) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  constexpr int tile_k = kTileK;
  static_assert(tile_k % min_tile_k == 0, "each thread copies 16 bytes of each operand's 16 k-rows");
  __shared__ __align__(16) float a_s[2][tile_k][tile_m];  // δᵀ's k-tile: [k][row]
  __shared__ __align__(16) float b_s[2][tile_k][tile_n];  // A's k-tile: [k][column]
  __shared__ std::uint16_t won_s[outputs][threads];       // each output's winning run of 8 k
  const int tid = int(threadIdx.x), tx = tid % (tile_n / thread_n), ty = tid / (tile_n / thread_n);
  const index_t i0 = index_t(blockIdx.y) * tile_m, j0 = index_t(blockIdx.x) * tile_n;

  std::uint32_t best[thread_m][thread_n], chunk[thread_m][thread_n];  // bit patterns
#pragma unroll
  for (int i = 0; i < thread_m; ++i)
#pragma unroll
    for (int j = 0; j < thread_n; ++j) best[i][j] = minus_inf_bits;
#pragma unroll
  for (int o = 0; o < outputs; ++o) won_s[o][tid] = no_run;

  // Each thread copies 16 bytes of each 16 k-rows of a k-tile: 4 rows of δᵀ's k-row (a vector past
  // B is zeros; one straddling B reads pitch padding, which feeds only rows past B, whose results
  // go nowhere but δᵀ's padding) and 4 columns of A's.
  const int a_k = tid / (tile_m / 4), a_col = (tid % (tile_m / 4)) * 4;
  const int b_k = tid / (tile_n / 4), b_col = (tid % (tile_n / 4)) * 4;
  const bool a_in = i0 + a_col < batch, b_in = j0 + b_col < states;  // S % 4 == 0: all 4 columns or none
  const float* a_src = a_in ? delta_t + index_t(a_k) * pitch + i0 + a_col : delta_t;
  const float* b_src = b_in ? trans + index_t(b_k) * states + j0 + b_col : trans;
  auto fetch = [&](index_t k0, int buf) {
#pragma unroll
    for (int h = 0; h < tile_k; h += min_tile_k) {
      cuda_detail::copy_async_or_zero<16>(cuda_detail::shared_address(&a_s[buf][a_k + h][a_col]),
                                          a_src + (a_in ? (k0 + h) * pitch : 0), a_in);
      cuda_detail::copy_async_or_zero<16>(cuda_detail::shared_address(&b_s[buf][b_k + h][b_col]),
                                          b_src + (b_in ? (k0 + h) * states : 0), b_in);
    }
    cuda_detail::commit_group();
  };

#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // the previous step's δ, δᵀ are complete
#endif
  const int tiles = int(states / tile_k);
  fetch(0, 0);
  cuda_detail::wait_group<0>();
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int buf = t & 1;
    if (t + 1 < tiles) fetch(index_t(t + 1) * tile_k, buf ^ 1);  // in flight during the updates below
#pragma unroll
    for (int kk = 0; kk < tile_k; kk += 2) {
      float fa0[thread_m], fb0[thread_n], fa1[thread_m], fb1[thread_n];
      load4(fa0, &a_s[buf][kk][ty * thread_m]);
      load4(fb0, &b_s[buf][kk][tx * thread_n]);
      load4(fa1, &a_s[buf][kk + 1][ty * thread_m]);
      load4(fb1, &b_s[buf][kk + 1][tx * thread_n]);
#pragma unroll
      for (int i = 0; i < thread_m; ++i)
#pragma unroll
        for (int j = 0; j < thread_n; ++j)
          chunk[i][j] = __vimin3_u32(kk % run == 0 ? minus_inf_bits : chunk[i][j], __float_as_uint(fa0[i] + fb0[j]),
                                     __float_as_uint(fa1[i] + fb1[j]));
      if (kk % run == run - 2) {  // a run of 8 k ends: its maximum against the best
#pragma unroll
        for (int i = 0; i < thread_m; ++i)
#pragma unroll
          for (int j = 0; j < thread_n; ++j) {
            // As floats, strictly: an earlier run keeps a tie, −0 against +0 included.
            const bool wins = __uint_as_float(chunk[i][j]) > __uint_as_float(best[i][j]);
            best[i][j] = wins ? chunk[i][j] : best[i][j];
            if (wins) won_s[i * thread_n + j][tid] = std::uint16_t(t * (tile_k / run) + kk / run);
          }
      }
    }
    if (t + 1 < tiles) cuda_detail::wait_group<0>();
    __syncthreads();
  }

  // The rescan: each output's winning run (8 terms of δ's row and Aᵀ's row, both contiguous) for
  // the first term equal to the best; then next = best + E_t and the backpointers, a row at a time.
  const index_t gi0 = i0 + ty * thread_m, gj = j0 + tx * thread_n;
  if (gi0 >= batch || gj >= states) return;
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const index_t gi = gi0 + i;
    if (gi >= batch) break;
    std::int32_t index[thread_n];
#pragma unroll
    for (int j = 0; j < thread_n; ++j) {
      const std::uint32_t w = won_s[i * thread_n + j][tid];
      const std::int32_t k0 = std::int32_t(w) * run;
      index[j] = w == no_run ? -1
                             : first_equal_term<run>(delta + gi * states + k0, trans_t + (gj + j) * states + k0, k0,
                                                     __uint_as_float(best[i][j]), -1);
    }
    const float4 e = *reinterpret_cast<const float4*>(emit_t + gi * states + gj);
    *reinterpret_cast<float4*>(next + gi * states + gj) =
        make_float4(__uint_as_float(best[i][0]) + e.x, __uint_as_float(best[i][1]) + e.y,
                    __uint_as_float(best[i][2]) + e.z, __uint_as_float(best[i][3]) + e.w);
    *reinterpret_cast<int4*>(bp + gi * states + gj) = make_int4(index[0], index[1], index[2], index[3]);
  }
  // δᵀ for the next step: each of the thread's 4 columns holds 4 consecutive sequences. The
  // emissions are read again rather than kept: 16 more live registers here cost spills. Rows past
  // B (emissions read as 0) land in δᵀ's padding.
  float value[thread_m][thread_n];
#pragma unroll
  for (int i = 0; i < thread_m; ++i) {
    const float4 e = gi0 + i < batch ? *reinterpret_cast<const float4*>(emit_t + (gi0 + i) * states + gj) : float4{};
    value[i][0] = __uint_as_float(best[i][0]) + e.x, value[i][1] = __uint_as_float(best[i][1]) + e.y;
    value[i][2] = __uint_as_float(best[i][2]) + e.z, value[i][3] = __uint_as_float(best[i][3]) + e.w;
  }
#pragma unroll
  for (int j = 0; j < thread_n; ++j)
    *reinterpret_cast<float4*>(next_t + (gj + j) * pitch + gi0) = make_float4(value[0][j], value[1][j], value[2][j], value[3][j]);
}

}  // namespace ringmm::detail::viterbi_logprob
