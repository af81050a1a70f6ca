// Ladder step 1 ("STF"): one thread per output element, operands straight from global
// memory. Consecutive threads of a warp own consecutive columns j, so the warp's loads of B(k, j)
// are coalesced and its loads of A(i, k) are one broadcast; every operand is still fetched from
// L1/L2 once per update.
#pragma once

#include "ladder_args.cuh"
#include "ringmm/semiring.hpp"

namespace ringmm::lab {

inline constexpr int kStraightforwardBlockX = 32;  // one warp along a row of C
inline constexpr int kStraightforwardBlockY = 8;

template <class S>
__global__ void __launch_bounds__(kStraightforwardBlockX* kStraightforwardBlockY)
    straightforward_kernel(LadderArgs<typename S::value_type> args) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  const index_t i = index_t(blockIdx.y) * kStraightforwardBlockY + threadIdx.y;
  const index_t j = index_t(blockIdx.x) * kStraightforwardBlockX + threadIdx.x;
  if (i >= args.c.rows || j >= args.c.cols) return;
  const T* a = args.a.p + blockIdx.z * args.stride_a + i * args.a.rs;
  const T* b = args.b.p + blockIdx.z * args.stride_b + j * args.b.cs;
  accumulator_t<S> acc = traits::initial();
  for (index_t k = 0; k < args.a.cols; ++k) acc = traits::fma(acc, a[k * args.a.cs], b[k * args.b.rs]);
  T* out = args.c.p + blockIdx.z * args.stride_c + i * args.c.rs + j * args.c.cs;
  *out = traits::epilogue(args.alpha, acc, args.beta, out);
}

}  // namespace ringmm::lab
