// The fringe of a padded product (launch.cuh, launch_split) when it is a few lines thin: the one
// row left under 4097 = 32 · 128 + 1, say. The tiled fringe ran such a row as 65 blocks of 64×64
// with one live row each, for all of K (ncu at 4097³ f32 max-plus: two kernels of ~380 µs beside
// the interior, holding half the machine's block slots); this kernel reads the long side's operand
// once, coalesced, and spreads K over 8 groups of threads.
//
// The thin side has `lines` ≤ kThinLines lines q; the long side every p < extent. Block: 32 lanes
// of p × 8 groups of k (group g takes k ≡ g mod 8), each thread an accumulator per line, the thin
// side's lines staged in shared memory 256 k at a time; the
// groups' partial sums, finalised, then meet in shared memory by ⊕ in group order (as split-K's
// parts do: finalize commutes with ⊕), and group 0 writes the epilogue. Both operands are the padded copies: A's rows adjacent (element (i, k) at
// a[i + k·a_cs]) and B's columns adjacent (b[k·b_rs + j]), so the long side's element at k is
// contiguous in p and the thin side's lines at k are adjacent.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"

namespace ringmm::cuda_detail {

inline constexpr int kThinLines = 8, kThinLanes = 32, kThinGroups = 8;

// rows_thin: the thin side is rows of C (i = line, j = p); else columns (i = p, j = line).
template <class S, bool kRowsThin>
__global__ void __launch_bounds__(kThinLanes* kThinGroups) thin_fringe_kernel(const KernelArgs<S> args, index_t lines) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  static_assert(sizeof(T) <= 8, "the thin fringe's shared arrays hold 4096 elements: 32 KiB at 8 bytes each");
  __shared__ T partial[kThinGroups][kThinLines][kThinLanes];
  const int lane = int(threadIdx.x) % kThinLanes, group = int(threadIdx.x) / kThinLanes;
  const index_t extent = kRowsThin ? args.n : args.m;
  const index_t p = index_t(blockIdx.x) * kThinLanes + lane;
  const index_t first_line = index_t(blockIdx.y) * kThinLines;
  const int live = int(lines - first_line < kThinLines ? lines - first_line : kThinLines);
  const T* __restrict__ a = args.a + index_t(blockIdx.z) * args.stride_a;
  const T* __restrict__ b = args.b + index_t(blockIdx.z) * args.stride_b;
  T* c = args.c + index_t(blockIdx.z) * args.stride_c;

  reg_t<S> acc[kThinLines];
#pragma unroll
  for (int q = 0; q < kThinLines; ++q) acc[q] = traits::initial_register();
  // The thin side's lines over a chunk of kChunk k, staged in shared memory by the whole block
  // (a thread a k), so that the loop's only global loads are the long side's, contiguous in p.
  constexpr int kChunk = kThinLanes * kThinGroups;
  __shared__ T thin[kChunk][kThinLines];
  for (index_t k0 = 0; k0 < args.k; k0 += kChunk) {
    const index_t kt = k0 + threadIdx.x;
    if (kt < args.k)
#pragma unroll
      for (int q = 0; q < kThinLines; ++q)
        if (q < live) thin[threadIdx.x][q] = kRowsThin ? a[first_line + q + kt * args.a_cs] : b[kt * args.b_rs + first_line + q];
    __syncthreads();
    if (p < extent) {
      // The group's k of the chunk (k ≡ group mod 8), their long-side loads issued together.
      constexpr int kDepth = kChunk / kThinGroups;
      const int in_chunk = int(args.k - k0 < kChunk ? args.k - k0 : kChunk);
      operand_t<S> x[kDepth];
#pragma unroll
      for (int d = 0; d < kDepth; ++d) {
        const index_t k = k0 + group + d * kThinGroups;
        if (group + d * kThinGroups < in_chunk) x[d] = traits::to_register(kRowsThin ? b[k * args.b_rs + p] : a[p + k * args.a_cs]);
      }
#pragma unroll
      for (int d = 0; d < kDepth; ++d) {
        const int kk = group + d * kThinGroups;
        if (kk >= in_chunk) break;
        // A(i, k) ⊗ B(k, j) in this order: user semirings need not commute.
#pragma unroll
        for (int q = 0; q < kThinLines; ++q)
          if (q < live) {
            const operand_t<S> y = traits::to_register(thin[kk][q]);
            acc[q] = kRowsThin ? traits::update(acc[q], y, x[d]) : traits::update(acc[q], x[d], y);
          }
      }
    }
    __syncthreads();  // the chunk's lines are refilled next
  }
#pragma unroll
  for (int q = 0; q < kThinLines; ++q) partial[group][q][lane] = traits::finalize(traits::from_register(acc[q]));
  __syncthreads();
  if (group != 0 || p >= extent) return;
  for (int q = 0; q < live; ++q) {
    T sum = partial[0][q][lane];
    for (int g = 1; g < kThinGroups; ++g) sum = S::add(sum, partial[g][q][lane]);
    const index_t i = kRowsThin ? first_line + q : p, j = kRowsThin ? p : first_line + q;
    T* out = c + i * args.c_rs + j * args.c_cs;
    *out = traits::epilogue(args.alpha, sum, args.beta, out);
  }
}

// thin_fringe_kernel over every member of the batch (grid z in slices within its 65535 limit).
template <class S, bool kRowsThin>
void launch_thin_fringe(KernelArgs<S> args, index_t lines, index_t batch, cudaStream_t stream) {
  constexpr index_t max_z = 65535;
  const index_t extent = kRowsThin ? args.n : args.m;
  const dim3 grid(unsigned((extent + kThinLanes - 1) / kThinLanes), unsigned((lines + kThinLines - 1) / kThinLines), 1);
  for (index_t b0 = 0; b0 < batch; b0 += max_z) {
    const unsigned z = unsigned(std::min(max_z, batch - b0));
    thin_fringe_kernel<S, kRowsThin><<<dim3(grid.x, grid.y, z), kThinLanes * kThinGroups, 0, stream>>>(args, lines);
    check_launch("thin_fringe_kernel");
    args.a += max_z * args.stride_a;
    args.b += max_z * args.stride_b;
    args.c += max_z * args.stride_c;
  }
}

}  // namespace ringmm::cuda_detail
