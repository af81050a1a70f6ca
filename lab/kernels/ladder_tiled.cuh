// Ladder step 2 (docs/perf/ladder.md): shared-memory tiling with a Tile×Tile block of threads, one output
// each. The block stages a Tile×Tile tile of A and of B in shared memory per k-step, so each
// global element is fetched once per block instead of once per thread: global traffic falls by a
// factor of Tile, while every update still reads two operands from shared memory.
// Borders are predicated: elements past M, N or K are staged as 0̄, which leaves every sum as it is.
#pragma once

#include "ladder_args.cuh"
#include "ringmm/semiring.hpp"

namespace ringmm::lab {

template <class S, int Tile>
__global__ void __launch_bounds__(Tile* Tile) tiled_kernel(LadderArgs<typename S::value_type> args) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  __shared__ T a_tile[Tile][Tile];  // a_tile[row][k]: a warp reads one row (broadcast)
  __shared__ T b_tile[Tile][Tile];  // b_tile[k][col]: a warp reads consecutive columns
  const int tx = threadIdx.x, ty = threadIdx.y;
  const index_t i = index_t(blockIdx.y) * Tile + ty;
  const index_t j = index_t(blockIdx.x) * Tile + tx;
  const index_t m = args.c.rows, n = args.c.cols, depth = args.a.cols;
  const T* a = args.a.p + blockIdx.z * args.stride_a;
  const T* b = args.b.p + blockIdx.z * args.stride_b;

  accumulator_t<S> acc = traits::initial();
  for (index_t k0 = 0; k0 < depth; k0 += Tile) {
    a_tile[ty][tx] = (i < m && k0 + tx < depth) ? a[i * args.a.rs + (k0 + tx) * args.a.cs] : S::zero();
    b_tile[ty][tx] = (k0 + ty < depth && j < n) ? b[(k0 + ty) * args.b.rs + j * args.b.cs] : S::zero();
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < Tile; ++kk) acc = traits::fma(acc, a_tile[ty][kk], b_tile[kk][tx]);
    __syncthreads();
  }
  if (i < m && j < n) {
    T* out = args.c.p + blockIdx.z * args.stride_c + i * args.c.rs + j * args.c.cs;
    *out = traits::epilogue(args.alpha, acc, args.beta, out);
  }
}

}  // namespace ringmm::lab
