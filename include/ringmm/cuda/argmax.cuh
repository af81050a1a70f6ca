// The CUDA argmax product (gemm_argmax on Backend::cuda): C and K* with the CPU kernel's rules
// (ringmm/cpu/argmax.hpp: ties to the smallest k, −1 for 0̄, β ⊗ C keeps its incoming index).
//
// Two kernels, so that the K loop keeps the plain product's one-instruction update:
//   max    the plain kernel's loop (tile-multiple packed operands, double-buffered shared memory,
//          the semiring's hardware form) over block tiles of 128×64, with 8×4 entries per thread.
//          At the end of every k-tile of 16, an entry whose running ⊕-sum rose records that
//          tile: three instructions per entry per tile, against two per update in the loop. Ties
//          never raise the sum, so the recorded tile holds the first winning term.
//   locate one thread per entry rescans its recorded tile (16 terms, from k-contiguous copies of
//          A and B, so each run is four 16-byte loads) for the first term equal to the sum, then
//          applies the epilogue to C and K*. Entries where β ⊗ C stays ahead keep their index and
//          skip the rescan (about half of them in the rounds of `ringmm apsp --bench`).
// Sign-known data (gemm_kernel.cuh: sign_known; the word scan_signs writes) takes the pair step of
// the plain kernel in max: the sums at each tile's end are the same floats (a zero may carry the
// other sign), so the recorded tiles, the located terms and K* are the generic update's.
// A per-update index (a compare and two selects beside each update) measured 0.23–0.28 × the
// plain rate; the performance log has the history. An int64 K* runs both over parts of K
// (detail::argmax_by_parts, with ArgmaxParts below).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ringmm/context.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/cuda/staging.cuh"
#include "ringmm/detail/argmax.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

// A max kernel's tile: BM×BN entries per block, TM×TN per thread (in 4-element runs), k-tiles of
// 16. The library's is ArgmaxTile; lab/harnesses/argmax_max_ab.cu times others.
template <int BM_, int BN_, int TM_, int TN_> struct ArgmaxTileOf {
  static constexpr int BM = BM_, BN = BN_, BK = 16, TM = TM_, TN = TN_, Sub = 4;
  static constexpr int threads_m = BM / TM, threads_n = BN / TN, threads = threads_m * threads_n;
};
// Two 4-element runs along m a thread, one along n.
using ArgmaxTile = ArgmaxTileOf<128, 64, 8, 4>;

template <class S> struct ArgmaxMaxArgs {
  using T = element_t<S>;
  const T* a;  // packed: A(i, k) at a[k·mp + i] (+ member·stride_a)
  const T* b;  // packed: B(k, j) at b[k·np + j] (+ member·stride_b)
  T* sum;      // the ⊕-sum of entry (i, j) at sum[i·np + j] (+ member·mp·np)
  std::int32_t* tile;  // the k-tile where it last rose, same layout; −1 if it never did
  index_t mp, np, kp, stride_a, stride_b;
  int tiles_n;
  const unsigned* sign_known;  // nonzero: every value of A and B in the sign-known domain; null: generic
};

// Two blocks per SM where the registers allow (4-byte elements: 96 for the entries' state).
template <class S> inline constexpr int argmax_min_blocks = sizeof(element_t<S>) >= 8 ? 1 : 2;

// The max kernel's double-buffered panels of A and B, in dynamic shared memory: 49 KiB for 8-byte
// elements, past the 48 KiB a kernel may declare statically (ptxas refuses that for sm_100 and
// sm_120); the launch raises the kernel's limit where it needs to.
template <class S, class Cfg = ArgmaxTile> struct ArgmaxPanels {
  using A = PanelStage<S, Cfg::BM, Cfg::BK, Cfg::threads, Border::pad>;
  using B = PanelStage<S, Cfg::BN, Cfg::BK, Cfg::threads, Border::pad>;
  static constexpr int a_elements = 2 * Cfg::BK * A::LD, b_elements = 2 * Cfg::BK * B::LD;
  static constexpr std::size_t bytes = std::size_t(a_elements + b_elements) * sizeof(element_t<S>);
};

template <class S, class Cfg = ArgmaxTile, int MinBlocks = argmax_min_blocks<S>>
__global__ void __launch_bounds__(Cfg::threads, MinBlocks) argmax_max_kernel(const ArgmaxMaxArgs<S> args) {
  using T = element_t<S>;
  using R = reg_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN, Sub = Cfg::Sub;
  using StageA = typename ArgmaxPanels<S, Cfg>::A;
  using StageB = typename ArgmaxPanels<S, Cfg>::B;
  extern __shared__ __align__(16) unsigned char argmax_panels[];
  T* const a_s = reinterpret_cast<T*>(argmax_panels);
  T* const b_s = a_s + ArgmaxPanels<S, Cfg>::a_elements;

  const index_t i0 = index_t(blockIdx.x / unsigned(args.tiles_n)) * BM, j0 = index_t(blockIdx.x % unsigned(args.tiles_n)) * BN;
  const index_t member = blockIdx.z;
  const T* __restrict__ a = args.a + member * args.stride_a;
  const T* __restrict__ b = args.b + member * args.stride_b;
  const int tid = int(threadIdx.x), tx = tid % Cfg::threads_n, ty = tid / Cfg::threads_n;

  R acc[TM][TN];
  T last[TM][TN];  // the sum at the end of the previous k-tile
  std::int32_t rose[TM][TN];
  const R zero = traits::initial_register();
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = zero, last[i][j] = S::zero(), rose[i][j] = -1;

  StageA stage_a;
  StageB stage_b;
  stage_a.start(a, args.mp, i0, tid);
  stage_b.start(b, args.np, j0, tid);
  const index_t k_tiles = args.kp / BK;
  auto fetch = [&] {
    stage_a.load(a, 1, args.mp, i0, 0, 0, 0, true, tid);
    stage_b.load(b, 1, args.np, j0, 0, 0, 0, true, tid);
  };
  auto deposit = [&](int buf) {
    stage_a.store(a_s + buf * BK * StageA::LD, true, tid);
    stage_b.store(b_s + buf * BK * StageB::LD, true, tid);
  };
  if (k_tiles > 0) {
    fetch();
    deposit(0);
    __syncthreads();
  }
  auto fragments = [&](int cur, int kk, operand_t<S>* fa, operand_t<S>* fb) {
    load_fragment_shared<S, TM, Sub, Cfg::threads_m>(fa, a_s + cur * BK * StageA::LD + kk * StageA::LD, ty);
    load_fragment_shared<S, TN, Sub, Cfg::threads_n>(fb, b_s + cur * BK * StageB::LD + kk * StageB::LD, tx);
  };
  constexpr bool pairs = sign_known<S>::available && three_input_minimum && BK % 2 == 0;
  bool sign_known_data = false;
  if constexpr (pairs) sign_known_data = args.sign_known && *args.sign_known;  // the same in every block
  for (index_t kt = 0; kt < k_tiles; ++kt) {
    const int cur = int(kt & 1);
    const bool more = kt + 1 < k_tiles;
    if (more) fetch();
    if (sign_known_data) {  // only ever set where `pairs` holds
      if constexpr (pairs) {
#pragma unroll
        for (int kk = 0; kk < BK; kk += 2) {
          operand_t<S> fa0[TM], fb0[TN], fa1[TM], fb1[TN];
          fragments(cur, kk, fa0, fb0);
          fragments(cur, kk + 1, fa1, fb1);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
              acc[i][j] = sign_known<S>::update2(acc[i][j], fa0[i] + fb0[j], fa1[i] + fb1[j]);
        }
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        operand_t<S> fa[TM], fb[TN];
        fragments(cur, kk, fa, fb);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = traits::update(acc[i][j], fa[i], fb[j]);
      }
    }
    // The sum only rises (or stays): a rise means this tile holds a better term than all before.
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
      for (int j = 0; j < TN; ++j) {
        const T now = traits::finalize(traits::from_register(acc[i][j]));
        rose[i][j] = traits::better(now, last[i][j]) ? std::int32_t(kt) : rose[i][j];
        last[i][j] = now;
      }
    if (more) deposit(cur ^ 1);
    __syncthreads();
  }

  T* sum = args.sum + member * args.mp * args.np;
  std::int32_t* tile = args.tile + member * args.mp * args.np;
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const index_t at = (i0 + tile_offset<Sub, Cfg::threads_m>(i, ty)) * args.np + j0 + tile_offset<Sub, Cfg::threads_n>(j, tx);
      sum[at] = last[i][j];
      tile[at] = rose[i][j];
    }
}

template <class S> struct ArgmaxLocateArgs {
  using T = element_t<S>;
  const T* a_runs;  // A(i, k) at a_runs[i·kp + k] (+ member·stride_a), 0̄ for k ≥ K
  const T* b_runs;  // B(k, j) at b_runs[j·kp + k] (+ member·stride_b)
  const T* sum;
  const std::int32_t* tile;
  detail::Strided<T> c;
  detail::Strided<std::int32_t> k_star;
  index_t stride_c, stride_k, stride_a, stride_b, mp, np, kp, batch;
  scalar_t<S> alpha, beta;
  index_t k_offset;
};

constexpr int argmax_locate_threads = 256;

// Equal bit for bit (unlike ==, +0 differs from −0 and a NaN equals its own bits): the test for
// whether a kept entry's C changes.
template <class T> __device__ __forceinline__ bool same_bits(const T& x, const T& y) {
  unsigned char a[sizeof(T)], b[sizeof(T)];
  memcpy(a, &x, sizeof(T));
  memcpy(b, &y, sizeof(T));
#pragma unroll
  for (std::size_t i = 0; i < sizeof(T); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

template <class S> __global__ void __launch_bounds__(argmax_locate_threads) argmax_locate_kernel(const ArgmaxLocateArgs<S> args) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BK = ArgmaxTile::BK, V = vec16<T>;
  const index_t j = index_t(blockIdx.x) * argmax_locate_threads + threadIdx.x;
  if (j >= args.c.cols) return;
  const bool reads_c = !(args.beta == scalar_t<S>(S::zero()));
  for (index_t member = blockIdx.z; member < args.batch; member += gridDim.z)
    for (index_t i = blockIdx.y; i < args.c.rows; i += gridDim.y) {
      const index_t at = member * args.mp * args.np + i * args.np + j;
      const T value = args.sum[at];
      T* const c = args.c.p + member * args.stride_c + i * args.c.rs + j * args.c.cs;
      if (reads_c) {  // where β ⊗ C stays ahead, K* keeps its index: no rescan, and C is stored only if it changes
        const T incoming = *c;
        const detail::Incoming<S> in = detail::argmax_incoming<S>(value, args.alpha, args.beta, incoming);
        if (in.kept) {
          if (!same_bits(in.c, incoming)) *c = in.c;
          continue;
        }
      }
      std::int32_t winner = -1;
      if (!(value == S::zero())) {
        const index_t k0 = index_t(args.tile[at]) * BK;
        const T* a_run = args.a_runs + member * args.stride_a + i * args.kp + k0;
        const T* b_run = args.b_runs + member * args.stride_b + j * args.kp + k0;
#pragma unroll
        for (int v = 0; v < BK / V; ++v) {
          const Vec<T, V> x = reinterpret_cast<const Vec<T, V>*>(a_run)[v], y = reinterpret_cast<const Vec<T, V>*>(b_run)[v];
#pragma unroll
          for (int e = 0; e < V; ++e) {
            // The term as the max kernel formed it (the hardware form), so equality is exact.
            const T term = traits::finalize(traits::from_register(
                traits::update(traits::initial_register(), traits::to_register(x.v[e]), traits::to_register(y.v[e]))));
            if (winner < 0 && term == value) winner = std::int32_t(k0 + v * V + e);
          }
        }
      }
      detail::argmax_store<S>(value, winner < 0 ? winner : std::int32_t(winner + args.k_offset), args.alpha, args.beta,
                              reads_c, c, args.k_star.p + member * args.stride_k + i * args.k_star.rs + j * args.k_star.cs);
    }
}

// Both kernels over device views: packs the operands for each (tile-multiple, and k-contiguous),
// then runs max and locate over the batch.
template <class S>
void argmax_product(const detail::Problem<S>& d, detail::Strided<std::int32_t> k_star, index_t stride_k, cudaStream_t stream) {
  using T = element_t<S>;
  using Cfg = ArgmaxTile;
  const index_t m = d.m(), n = d.n(), k = d.k(), batch = d.batch;
  if (m == 0 || n == 0 || batch == 0) return;
  const index_t mp = round_up(m, Cfg::BM), np = round_up(n, Cfg::BN), kp = round_up(std::max<index_t>(k, 1), Cfg::BK);
  const index_t members_a = d.stride_a == 0 ? 1 : batch, members_b = d.stride_b == 0 ? 1 : batch;
  // Tile-multiple k-major copies for the max kernel, k-contiguous runs for locate (0̄ past K).
  DeviceBuffer<T> a_pack(std::size_t(mp * kp * members_a), stream), b_pack(std::size_t(np * kp * members_b), stream);
  DeviceBuffer<T> a_runs(std::size_t(m * kp * members_a), stream), b_runs(std::size_t(n * kp * members_b), stream);
  const detail::Strided<const T> at{d.a.p, k, m, d.a.cs, d.a.rs}, bt{d.b.p, n, k, d.b.cs, d.b.rs};
  pack(a_pack.get(), mp, mp, kp, mp * kp, d.a, d.stride_a, members_a, S::zero(), stream);
  pack(b_pack.get(), np, np, kp, np * kp, bt, d.stride_b, members_b, S::zero(), stream);
  pack(a_runs.get(), kp, kp, m, m * kp, at, d.stride_a, members_a, S::zero(), stream);
  pack(b_runs.get(), kp, kp, n, n * kp, d.b, d.stride_b, members_b, S::zero(), stream);
  DeviceBuffer<T> sum(std::size_t(mp * np * batch), stream);
  DeviceBuffer<std::int32_t> tile(std::size_t(mp * np * batch), stream);
  DeviceBuffer<unsigned> known;

  ArgmaxMaxArgs<S> mx{a_pack.get(), b_pack.get(), sum.get(), tile.get(), mp, np, kp,
                      members_a == 1 ? 0 : mp * kp, members_b == 1 ? 0 : np * kp, int(np / Cfg::BN),
                      scan_signs<S>(d, known, stream)};
  constexpr std::size_t panel_bytes = ArgmaxPanels<S>::bytes;
  if constexpr (panel_bytes > 48 * 1024) {  // once a device: above the default dynamic limit
    static thread_local int raised_on = -1;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    if (raised_on != device) {
      cuda_check(cudaFuncSetAttribute(argmax_max_kernel<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(panel_bytes)),
                 "cudaFuncSetAttribute");
      raised_on = device;
    }
  }
  constexpr index_t max_z = 65535;
  for (index_t b0 = 0; b0 < batch; b0 += max_z) {
    ArgmaxMaxArgs<S> part = mx;
    part.a += b0 * mx.stride_a, part.b += b0 * mx.stride_b, part.sum += b0 * mp * np, part.tile += b0 * mp * np;
    const unsigned z = unsigned(std::min(max_z, batch - b0));
    argmax_max_kernel<S><<<dim3(unsigned((mp / Cfg::BM) * (np / Cfg::BN)), 1, z), Cfg::threads, panel_bytes, stream>>>(part);
    check_launch("argmax_max_kernel");
  }
  ArgmaxLocateArgs<S> loc{a_runs.get(), b_runs.get(), sum.get(), tile.get(), d.c, k_star, d.stride_c, stride_k,
                          members_a == 1 ? 0 : m * kp, members_b == 1 ? 0 : n * kp, mp, np, kp, batch,
                          d.alpha, d.beta, d.k_offset};
  const dim3 grid(unsigned((n + argmax_locate_threads - 1) / argmax_locate_threads), unsigned(std::min<index_t>(m, 65535)),
                  unsigned(std::min<index_t>(batch, 65535)));
  argmax_locate_kernel<S><<<grid, argmax_locate_threads, 0, stream>>>(loc);
  check_launch("argmax_locate_kernel");
}

// An int64 K* (detail::argmax_by_parts): elementwise kernels over compact scratch.
constexpr int argmax_parts_threads = 256;

inline unsigned argmax_parts_blocks(index_t entries) {
  return unsigned(std::min<index_t>((entries + argmax_parts_threads - 1) / argmax_parts_threads, 4096));
}

// A template, as every kernel of these headers, so that the units that include them link together.
template <class S>
__global__ void __launch_bounds__(argmax_parts_threads)
    take_part_kernel(std::int64_t* winner, std::int32_t* part, index_t entries, index_t first_k, bool first) {
  for (index_t e = index_t(blockIdx.x) * argmax_parts_threads + threadIdx.x; e < entries;
       e += index_t(gridDim.x) * argmax_parts_threads)
    detail::take_part_index(winner[e], part[e], first_k, first);
}

template <class S>
__global__ void __launch_bounds__(argmax_parts_threads)
    argmax_parts_store_kernel(const element_t<S>* sum, const std::int64_t* winner, detail::Strided<element_t<S>> c,
                              index_t stride_c, detail::Strided<std::int64_t> k_star, index_t stride_k, index_t batch,
                              scalar_t<S> alpha, scalar_t<S> beta) {
  const index_t m = c.rows, n = c.cols;
  const bool reads_c = !(beta == scalar_t<S>(S::zero()));
  for (index_t e = index_t(blockIdx.x) * argmax_parts_threads + threadIdx.x; e < m * n * batch;
       e += index_t(gridDim.x) * argmax_parts_threads) {
    const index_t member = e / (m * n), i = e / n % m, j = e % n;
    detail::argmax_store<S>(sum[e], winner[e], alpha, beta, reads_c, c.p + member * stride_c + i * c.rs + j * c.cs,
                            k_star.p + member * stride_k + i * k_star.rs + j * k_star.cs);
  }
}

// The GPU's side of detail::argmax_by_parts: scratch from the workspace pool, argmax_product for
// each part, the kernels above for the rest; everything on one stream.
template <class S> class ArgmaxParts {
 public:
  using Scratch = detail::ArgmaxScratch<element_t<S>>;
  explicit ArgmaxParts(cudaStream_t stream) : stream_(stream) {}

  Scratch scratch(index_t entries) {
    sum_ = DeviceBuffer<element_t<S>>(std::size_t(entries), stream_);
    part_ = DeviceBuffer<std::int32_t>(std::size_t(entries), stream_);
    winner_ = DeviceBuffer<std::int64_t>(std::size_t(entries), stream_);
    return {sum_.get(), part_.get(), winner_.get()};
  }
  void product(const detail::Problem<S>& part) { argmax_product<S>(part, part.k_star, part.stride_k, stream_); }
  void take(const Scratch& s, index_t entries, index_t first_k, bool first) const {
    take_part_kernel<S><<<argmax_parts_blocks(entries), argmax_parts_threads, 0, stream_>>>(s.winner, s.part, entries,
                                                                                         first_k, first);
    check_launch("take_part_kernel");
  }
  void store(const detail::Problem<S>& p, const Scratch& s) const {
    argmax_parts_store_kernel<S><<<argmax_parts_blocks(p.m() * p.n() * p.batch), argmax_parts_threads, 0, stream_>>>(
        s.sum, s.winner, p.c, p.stride_c, p.k_star_wide, p.stride_k, p.batch, p.alpha, p.beta);
    check_launch("argmax_parts_store_kernel");
  }

 private:
  cudaStream_t stream_;
  DeviceBuffer<element_t<S>> sum_;
  DeviceBuffer<std::int32_t> part_;
  DeviceBuffer<std::int64_t> winner_;
};

// K* (int32 or int64) on the device: the caller's device pointer in place, or a compact copy of a
// host one, uploaded only when β ≠ 0̄ reads it (otherwise the product writes it whole).
template <class S, class I>
DeviceOperand<I> stage_index(const detail::Problem<S>& p, detail::Strided<I> k_star, cudaStream_t stream) {
  DeviceOperand<I> ks;
  if (is_device_pointer(k_star.p)) {
    ks.view = k_star, ks.stride = p.stride_k;
    return ks;
  }
  const detail::Strided<const I> host{k_star.p, p.m(), p.n(), k_star.rs, k_star.cs};
  DeviceOperand<const I> up;
  if (!(p.beta == scalar_t<S>(S::zero()))) {
    up = upload(host, p.stride_k, p.batch, stream);
  } else {
    const Lines l = as_lines(host);
    up.storage = DeviceBuffer<I>(std::size_t(l.lines * l.len * p.batch), stream);
    up.view = {up.storage.get(), p.m(), p.n(), l.rows_are_lines ? l.len : 1, l.rows_are_lines ? 1 : l.len};
    up.stride = l.lines * l.len;
  }
  ks.storage = std::move(up.storage);
  ks.view = {ks.storage.get(), p.m(), p.n(), up.view.rs, up.view.cs};
  ks.stride = up.stride;
  return ks;
}

// The driver: stage A, B, C and K* (stage_index), run the product (int32 K*: argmax_product; int64:
// argmax_by_parts), copy host outputs back.
template <class S> void run_argmax(const Context& ctx, const detail::Problem<S>& p, Residence device) {
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  Staged<S> s = stage<S>(p, device, stream);
  detail::Problem<S> d = s.on_device(p);
  // Runs `product` on the staged K* and brings a host K* back; says whether K* was device memory.
  auto with_index = [&](auto k_star, auto&& product) {
    auto ks = stage_index<S>(p, k_star, stream);
    product(ks.view, ks.stride);
    const bool in_place = ks.view.p == k_star.p;
    if (!in_place) download(k_star, p.stride_k, ks.view, ks.stride, p.batch, stream);
    return in_place;
  };
  const bool k_on_device =
      p.k_star_wide.p ? with_index(p.k_star_wide,
                                   [&](detail::Strided<std::int64_t> view, index_t stride) {
                                     d.k_star_wide = view, d.stride_k = stride;
                                     ArgmaxParts<S> parts(stream);
                                     detail::argmax_by_parts<S>(d, parts);
                                   })
                      : with_index(p.k_star, [&](detail::Strided<std::int32_t> view, index_t stride) {
                          argmax_product<S>(d, view, stride, stream);
                        });
  if (!device.c) download(p.c, p.stride_c, s.c.view, s.c.stride, p.batch, stream);
  if (!device.all() || !k_on_device) cuda_check(cudaStreamSynchronize(stream), "gemm_argmax (cudaStreamSynchronize)");
}

}  // namespace ringmm::cuda_detail
