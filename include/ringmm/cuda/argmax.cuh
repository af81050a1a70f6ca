// The CUDA argmax product (gemm_argmax on Backend::cuda): C and K* with the CPU kernel's rules
// (ringmm/cpu/argmax.hpp: ties to the smallest k, −1 for 0̄, β ⊗ C keeps its incoming index).
//
// A kernel of its own rather than a mode of gemm_kernel: each update is a compare and two selects
// (value and index) instead of one FMNMX, and the index doubles the accumulator registers, so the
// plain kernel's tiles and pipeline do not carry over. Block tile 64×64, k-tiles of 16 staged in
// shared memory with bounds checks (0̄ past the edges), 4×4 entries per thread; every block walks
// k upwards, so the first strictly better term wins and no split of K can change an index.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ringmm/context.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/staging.cuh"
#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

inline constexpr int argmax_bm = 64, argmax_bn = 64, argmax_bk = 16, argmax_tm = 4, argmax_tn = 4;
inline constexpr int argmax_threads = (argmax_bm / argmax_tm) * (argmax_bn / argmax_tn);

template <class S> struct ArgmaxArgs {
  using T = element_t<S>;
  detail::Strided<const T> a, b;
  detail::Strided<T> c;
  detail::Strided<std::int32_t> k_star;
  index_t stride_a, stride_b, stride_c, stride_k;
  scalar_t<S> alpha, beta;
  index_t k_offset;
  int tiles_n;
};

template <class S> __global__ void __launch_bounds__(argmax_threads) argmax_kernel(const ArgmaxArgs<S> args) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BM = argmax_bm, BN = argmax_bn, BK = argmax_bk, TM = argmax_tm, TN = argmax_tn;
  constexpr int threads_n = BN / TN;
  __shared__ T a_s[BK][BM + 1];
  __shared__ T b_s[BK][BN + 1];
  const index_t m = args.c.rows, n = args.c.cols, k = args.a.cols;
  const index_t i0 = index_t(blockIdx.x / unsigned(args.tiles_n)) * BM, j0 = index_t(blockIdx.x % unsigned(args.tiles_n)) * BN;
  const T* a = args.a.p + index_t(blockIdx.z) * args.stride_a;
  const T* b = args.b.p + index_t(blockIdx.z) * args.stride_b;
  const int tid = int(threadIdx.x), tx = tid % threads_n, ty = tid / threads_n;

  T best[TM][TN];
  std::int32_t winner[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) best[i][j] = S::zero(), winner[i][j] = -1;

  for (index_t k0 = 0; k0 < k; k0 += BK) {
    for (int e = tid; e < BM * BK; e += argmax_threads) {  // consecutive threads along m
      const int x = e % BM, kk = e / BM;
      const index_t gi = i0 + x, gk = k0 + kk;
      a_s[kk][x] = (gi < m && gk < k) ? a[gi * args.a.rs + gk * args.a.cs] : S::zero();
    }
    for (int e = tid; e < BN * BK; e += argmax_threads) {  // consecutive threads along n
      const int x = e % BN, kk = e / BN;
      const index_t gj = j0 + x, gk = k0 + kk;
      b_s[kk][x] = (gj < n && gk < k) ? b[gk * args.b.rs + gj * args.b.cs] : S::zero();
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T fa[TM], fb[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) fa[i] = a_s[kk][ty + i * (BM / TM)];
#pragma unroll
      for (int j = 0; j < TN; ++j) fb[j] = b_s[kk][tx + j * threads_n];
      const std::int32_t here = std::int32_t(args.k_offset + k0 + kk);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
          const T term = S::mul(fa[i], fb[j]);
          const bool wins = traits::better(term, best[i][j]);
          best[i][j] = wins ? term : best[i][j];
          winner[i][j] = wins ? here : winner[i][j];
        }
    }
    __syncthreads();
  }

  T* c = args.c.p + index_t(blockIdx.z) * args.stride_c;
  std::int32_t* ks = args.k_star.p + index_t(blockIdx.z) * args.stride_k;
  const bool reads_c = !(args.beta == scalar_t<S>(S::zero()));
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const index_t gi = i0 + ty + i * (BM / TM), gj = j0 + tx + j * threads_n;
      if (gi >= m || gj >= n) continue;
      T* c_ij = c + gi * args.c.rs + gj * args.c.cs;
      std::int32_t* k_ij = ks + gi * args.k_star.rs + gj * args.k_star.cs;
      T result = traits::scale(args.alpha, traits::finalize(best[i][j]));
      std::int32_t index = result == S::zero() ? -1 : winner[i][j];
      if (reads_c) {
        const T incoming = traits::scale(args.beta, *c_ij);
        if (!traits::better(result, incoming)) index = *k_ij;
        result = S::add(result, incoming);
      }
      *c_ij = result;
      *k_ij = index;
    }
}

// The driver: stage A, B, C and K* (host operands copied in, K* read only when β ≠ 0̄), launch
// over the tiles and batch (grid z in slices of 65535), copy host outputs back.
template <class S> void run_argmax(const Context& ctx, const detail::Problem<S>& p, Residence device) {
  using T = element_t<S>;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  Staged<S> s = stage<S>(p, device, stream);
  const bool k_on_device = is_device_pointer(p.k_star.p);
  DeviceOperand<std::int32_t> ks;
  if (k_on_device) {
    ks.view = p.k_star, ks.stride = p.stride_k;
  } else {
    const detail::Strided<const std::int32_t> host{p.k_star.p, p.m(), p.n(), p.k_star.rs, p.k_star.cs};
    const bool reads = !(p.beta == scalar_t<S>(S::zero()));
    DeviceOperand<const std::int32_t> up;
    if (reads) {
      up = upload(host, p.stride_k, p.batch, stream);
    } else {  // a compact buffer of the same orientation, written whole by the kernel
      const Lines l = as_lines(host);
      up.storage = DeviceBuffer<std::int32_t>(std::size_t(l.lines * l.len * p.batch), stream);
      up.view = {up.storage.get(), p.m(), p.n(), l.rows_are_lines ? l.len : 1, l.rows_are_lines ? 1 : l.len};
      up.stride = l.lines * l.len;
    }
    ks.storage = std::move(up.storage);
    ks.view = {ks.storage.get(), p.m(), p.n(), up.view.rs, up.view.cs};
    ks.stride = up.stride;
  }
  ArgmaxArgs<S> args{};
  args.a = s.a.view, args.b = s.b.view, args.c = s.c.view, args.k_star = ks.view;
  args.stride_a = s.a.stride, args.stride_b = s.b.stride, args.stride_c = s.c.stride, args.stride_k = ks.stride;
  args.alpha = p.alpha, args.beta = p.beta, args.k_offset = p.k_offset;
  const index_t tiles_m = (p.m() + argmax_bm - 1) / argmax_bm, tiles_n = (p.n() + argmax_bn - 1) / argmax_bn;
  args.tiles_n = int(tiles_n);
  constexpr index_t max_z = 65535;
  for (index_t b0 = 0; b0 < p.batch; b0 += max_z) {
    const unsigned z = unsigned(std::min(max_z, p.batch - b0));
    argmax_kernel<S><<<dim3(unsigned(tiles_m * tiles_n), 1, z), argmax_threads, 0, stream>>>(args);
    check_launch("argmax_kernel");
    args.a.p += max_z * args.stride_a, args.b.p += max_z * args.stride_b;
    args.c.p += max_z * args.stride_c, args.k_star.p += max_z * args.stride_k;
  }
  if (!device.c) download(p.c, p.stride_c, s.c.view, s.c.stride, p.batch, stream);
  if (!k_on_device) download(p.k_star, p.stride_k, ks.view, ks.stride, p.batch, stream);
  if (!device.all() || !k_on_device) cuda_check(cudaStreamSynchronize(stream), "gemm_argmax (cudaStreamSynchronize)");
}

}  // namespace ringmm::cuda_detail
