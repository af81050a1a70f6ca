// The semiring GEMM kernel: one template over the semiring S and a tile configuration
// (configs.hpp), computing in the semiring's hardware form (semiring_traits).
//
//   block    BM×BN tile of C, walks K in k-tiles of BK; (BM/TM)·(BN/TN) threads
//   thread   TM×TN accumulators in registers, split into SubM×SubN sub-patches placed with
//            stride (threads along that axis)·Sub: Sub = T is one contiguous block per thread,
//            Sub = 1 a cyclic spread, anything between block-cyclic
//   operands each from shared memory (double-buffered, the next k-tile prefetched into registers
//            while the current one is consumed) or straight from global memory into registers
//   border   pad: the operands are tile-multiple buffers with A stored k-major (A(i,k) at
//            a[k·lda + i]) and B stored k-major (B(k,j) at b[k·ldb + j]), so every load is a
//            16-byte vector and no bound is checked; predicate: the caller's strided views are
//            read element by element with bounds checks, missing elements read as 0̄.
//   batch    grid z; symmetric products (Aᵀ·A) enumerate only lower-triangle tiles on grid x.
//
// Shared-memory tiles are stored [k][m] and [k][n] with one 16-byte vector of row padding:
// fragment reads are broadcasts or consecutive 16-byte runs, and the transposing stores of
// predicate mode (k fastest) land on distinct banks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "ringmm/cuda/configs.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda_detail {

template <int BM_, int BN_, int BK_, int TM_, int TN_, int SubM_, int SubN_, Place PA_, Place PB_, int MinBlocks_>
struct Tile {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_, SubM = SubM_, SubN = SubN_;
  static constexpr Place place_a = PA_, place_b = PB_;
  static constexpr int min_blocks = MinBlocks_;
  static constexpr int threads_m = BM / TM, threads_n = BN / TN, threads = threads_m * threads_n;
  static_assert(BM % TM == 0 && BN % TN == 0 && TM % SubM == 0 && TN % SubN == 0, "tile shapes must nest");
  static_assert(BM % 64 == 0 && BN % 64 == 0, "block tiles are multiples of 64 (16-byte vectors of any type)");
};

// The Tile of a configuration of the table.
template <ConfigId id>
using tile_of = Tile<config_info(id).bm, config_info(id).bn, config_info(id).bk, config_info(id).tm, config_info(id).tn,
                     config_info(id).sub_m, config_info(id).sub_n, config_info(id).place_a, config_info(id).place_b,
                     config_info(id).min_blocks>;

template <class S> struct KernelArgs {
  using T = element_t<S>;
  const T* a;  // element (i, k) at a[i·a_rs + k·a_cs] (+ batch·stride_a)
  index_t a_rs, a_cs;
  const T* b;  // element (k, j) at b[k·b_rs + j·b_cs]
  index_t b_rs, b_cs;
  T* c;  // element (i, j) at c[i·c_rs + j·c_cs]
  index_t c_rs, c_cs;
  index_t m, n, k;  // pad mode: tile multiples
  index_t stride_a, stride_b, stride_c;
  scalar_t<S> alpha, beta;
  int tiles_n;      // block columns (rectangular grids)
  bool symmetric;   // write i ≥ j only, mirrored into (j, i)
  bool triangular;  // grid x enumerates lower-triangle tiles (square tiles, M = N)
  bool a_m_fast;    // predicate mode: A's rows are adjacent in memory (a_rs == 1)
  bool b_n_fast;    // predicate mode: B's columns are adjacent (b_cs == 1)
  // Nonzero where every value of A and B lies in the semiring's sign-known domain (sign_known
  // below; written on the device by sign_scan_kernel); null: the generic update.
  const unsigned* sign_known;
};

// Sign-known tropical products. For floats of one sign the order of their bit patterns read as
// integers is the order of the floats, so one three-input integer minimum (VIMNMX3, sm_90) folds
// two sums into the accumulator: FADD, FADD, VIMNMX3 for two updates where FADD + FMNMX take four.
//   max-plus, every value ≤ 0 (sums ≤ 0): the larger float has the smaller pattern as unsigned
//     (+0 is 0, −0 is 0x80000000, −∞ 0xff800000 the largest): max of floats = unsigned minimum;
//   min-plus, every value ≥ 0 (sums ≥ 0, +∞ included): as signed integers the order is the
//     floats' (−0 is INT_MIN, +∞ 0x7f800000): min of floats = signed minimum.
// NaN lies in neither domain, so the scan sends it to the generic update. −0 and +0 are equal
// floats whose patterns differ: a result of zero may carry the other sign than the generic
// update's, never another value.
template <class S> struct sign_known {
  static constexpr bool available = false;
};
template <> struct sign_known<MaxPlus<float>> {
  static constexpr bool available = true;
  RINGMM_HD static bool in_domain(float x) { return x <= 0.0f; }
  __device__ __forceinline__ static float update2(float acc, float s0, float s1) {
    return __uint_as_float(__vimin3_u32(__float_as_uint(acc), __float_as_uint(s0), __float_as_uint(s1)));
  }
};
template <> struct sign_known<MinPlus<float>> {
  static constexpr bool available = true;
  RINGMM_HD static bool in_domain(float x) { return x >= 0.0f; }
  __device__ __forceinline__ static float update2(float acc, float s0, float s1) {
    return __int_as_float(__vimin3_s32(__float_as_int(acc), __float_as_int(s0), __float_as_int(s1)));
  }
};

// The three-input minimum is one instruction from sm_90 on; older GPUs keep the generic update.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
inline constexpr bool three_input_minimum = false;
#else
inline constexpr bool three_input_minimum = true;
#endif

// The kernel computes in the semiring's hardware form (semiring_traits: operand, reg,
// to_register, update, from_register): operand fragments are held as operand and accumulators
// as reg, so that i16x2 stays one 32-bit word for the two-lane add-then-max instruction, f32
// tropical semirings update with one FMNMX, and log-plus sums into its {max, sum} pairs.
template <class S> using reg_t = typename semiring_traits<S>::reg;
template <class S> using operand_t = typename semiring_traits<S>::operand;

// N contiguous elements as one aligned vector (sizeof(T)·N is a power of two up to 16 bytes).
template <class T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

template <class T> inline constexpr int vec16 = 16 / int(sizeof(T));  // elements per 16-byte vector

// Copies N contiguous elements (aligned to the copy width) into registers with the widest loads.
template <class S, int N> __device__ __forceinline__ void load_run(operand_t<S>* dst, const element_t<S>* src) {
  using T = element_t<S>;
  constexpr int chunk = N < vec16<T> ? N : vec16<T>;
#pragma unroll
  for (int c = 0; c < N / chunk; ++c) {
    const Vec<T, chunk> v = *reinterpret_cast<const Vec<T, chunk>*>(src + c * chunk);
#pragma unroll
    for (int e = 0; e < chunk; ++e) dst[c * chunk + e] = semiring_traits<S>::to_register(v.v[e]);
  }
}

// Moves one operand's k-tile (EXT rows of m or n by BK) from global memory into shared memory
// through registers. Element (x, kk) of the panel is p[x·xs + kk·ks]; shared memory holds it at
// s[kk·LD + x].
template <class S, int EXT, int BK, int THREADS, Border B> struct PanelStage {
  using T = element_t<S>;
  static constexpr int LD = EXT + vec16<T>;
  static constexpr int V = B == Border::pad ? vec16<T> : 1;  // elements per load
  static constexpr int loads = EXT * BK / V;
  static constexpr int per_thread = (loads + THREADS - 1) / THREADS;
  static constexpr bool exact = loads % THREADS == 0;
  Vec<T, V> reg[per_thread];

  // Which (x, kk) the r-th load of thread `tid` covers; x_fast says x varies fastest.
  static __device__ __forceinline__ void where(int load, bool x_fast, int& x, int& kk) {
    if (B == Border::pad || x_fast) {
      x = (load % (EXT / V)) * V;
      kk = load / (EXT / V);
    } else {
      kk = load % BK;
      x = load / BK;
    }
  }

  // Pad mode walks one pointer per load down the k axis; predicate mode recomputes each address
  // with its bounds check.
  const T* next[B == Border::pad ? per_thread : 1];
  index_t step = 0;

  __device__ __forceinline__ void start(const T* __restrict__ p, index_t ks, index_t x0, int tid) {
    if constexpr (B == Border::pad) {
      step = index_t(BK) * ks;
#pragma unroll
      for (int r = 0; r < per_thread; ++r) {
        int x, kk;
        where(tid + r * THREADS, true, x, kk);
        next[r] = p + kk * ks + x0 + x;
      }
    }
  }

  __device__ __forceinline__ void load(const T* __restrict__ p, index_t xs, index_t ks, index_t x0, index_t k0,
                                       index_t x_end, index_t k_end, bool x_fast, int tid) {
#pragma unroll
    for (int r = 0; r < per_thread; ++r) {
      const int l = tid + r * THREADS;
      if (!exact && l >= loads) break;
      if constexpr (B == Border::pad) {
        reg[r] = *reinterpret_cast<const Vec<T, V>*>(next[r]);
        next[r] += step;
      } else {
        int x, kk;
        where(l, x_fast, x, kk);
        const index_t gx = x0 + x, gk = k0 + kk;
        reg[r].v[0] = (gx < x_end && gk < k_end) ? p[gx * xs + gk * ks] : S::zero();
      }
    }
  }

  __device__ __forceinline__ void store(T* s, bool x_fast, int tid) const {
#pragma unroll
    for (int r = 0; r < per_thread; ++r) {
      const int l = tid + r * THREADS;
      if (!exact && l >= loads) break;
      int x, kk;
      where(l, x_fast, x, kk);
      *reinterpret_cast<Vec<T, V>*>(s + kk * LD + x) = reg[r];
    }
  }
};

// Row (or column) offset inside the block tile of the thread's e-th element along one axis.
template <int Sub, int THREADS_AXIS> __device__ __forceinline__ int tile_offset(int e, int t) {
  return (e / Sub) * THREADS_AXIS * Sub + t * Sub + e % Sub;
}

// The thread's fragment of one operand at k index gk: T_ elements along its axis.
template <class S, int T_, int Sub, int THREADS_AXIS, Border B>
__device__ __forceinline__ void load_fragment_global(operand_t<S>* frag, const element_t<S>* __restrict__ p, index_t xs,
                                                     index_t ks, index_t x0, index_t gk, index_t x_end, index_t k_end,
                                                     int t) {
#pragma unroll
  for (int g = 0; g < T_ / Sub; ++g) {
    const index_t gx = x0 + tile_offset<Sub, THREADS_AXIS>(g * Sub, t);
    if constexpr (B == Border::pad) {
      load_run<S, Sub>(frag + g * Sub, p + gk * ks + gx);
    } else {
#pragma unroll
      for (int e = 0; e < Sub; ++e)
        frag[g * Sub + e] = semiring_traits<S>::to_register((gx + e < x_end && gk < k_end) ? p[(gx + e) * xs + gk * ks]
                                                                                             : S::zero());
    }
  }
}

template <class S, int T_, int Sub, int THREADS_AXIS>
__device__ __forceinline__ void load_fragment_shared(operand_t<S>* frag, const element_t<S>* s_row, int t) {
#pragma unroll
  for (int g = 0; g < T_ / Sub; ++g)
    load_run<S, Sub>(frag + g * Sub, s_row + tile_offset<Sub, THREADS_AXIS>(g * Sub, t));
}

// Accumulators of 8 bytes or more need twice the registers: one block per SM is asked for.
template <class S, class Cfg>
inline constexpr int min_blocks_for = sizeof(reg_t<S>) >= 8 ? 1 : Cfg::min_blocks;

template <class S, class Cfg, Border B>
__global__ void __launch_bounds__(Cfg::threads, (min_blocks_for<S, Cfg>)) gemm_kernel(const KernelArgs<S> args) {
  using T = element_t<S>;
  using R = reg_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BM = Cfg::BM, BN = Cfg::BN, BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN;
  constexpr int threads = Cfg::threads, threads_m = Cfg::threads_m, threads_n = Cfg::threads_n;
  constexpr bool a_shared = Cfg::place_a == Place::smem, b_shared = Cfg::place_b == Place::smem;
  using StageA = PanelStage<S, BM, BK, threads, B>;
  using StageB = PanelStage<S, BN, BK, threads, B>;
  __shared__ alignas(16) T a_s[a_shared ? 2 * BK * StageA::LD : 1];
  __shared__ alignas(16) T b_s[b_shared ? 2 * BK * StageB::LD : 1];

  int tile_i, tile_j;
  if (args.triangular) {  // blockIdx.x = r(r+1)/2 + c enumerates tiles (r, c) with c ≤ r
    const int l = int(blockIdx.x);
    int r = int((sqrtf(8.0f * float(l) + 1.0f) - 1.0f) * 0.5f);
    while (r * (r + 1) / 2 > l) --r;
    while ((r + 1) * (r + 2) / 2 <= l) ++r;
    tile_i = r;
    tile_j = l - r * (r + 1) / 2;
  } else {
    tile_i = int(blockIdx.x) / args.tiles_n;
    tile_j = int(blockIdx.x) % args.tiles_n;
  }
  const index_t i0 = index_t(tile_i) * BM, j0 = index_t(tile_j) * BN;
  const T* __restrict__ a = args.a + index_t(blockIdx.z) * args.stride_a;
  const T* __restrict__ b = args.b + index_t(blockIdx.z) * args.stride_b;
  T* c = args.c + index_t(blockIdx.z) * args.stride_c;
  const int tid = int(threadIdx.x);
  const int tx = tid % threads_n, ty = tid / threads_n;

  R acc[TM][TN];
  const R zero = traits::initial_register();
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = zero;

  StageA stage_a;
  StageB stage_b;
  if constexpr (a_shared) stage_a.start(a, args.a_cs, i0, tid);
  if constexpr (b_shared) stage_b.start(b, args.b_rs, j0, tid);
  const index_t k_tiles = (args.k + BK - 1) / BK;
  auto fetch = [&](index_t kt) {
    if constexpr (a_shared) stage_a.load(a, args.a_rs, args.a_cs, i0, kt * BK, args.m, args.k, args.a_m_fast, tid);
    if constexpr (b_shared) stage_b.load(b, args.b_cs, args.b_rs, j0, kt * BK, args.n, args.k, args.b_n_fast, tid);
  };
  auto deposit = [&](int buf) {
    if constexpr (a_shared) stage_a.store(a_s + buf * BK * StageA::LD, args.a_m_fast, tid);
    if constexpr (b_shared) stage_b.store(b_s + buf * BK * StageB::LD, args.b_n_fast, tid);
  };

  if (k_tiles > 0) {
    fetch(0);
    deposit(0);
    __syncthreads();
  }
  // Row kk of the current k-tile's fragments of A and B.
  auto fragments = [&](int cur, index_t kt, int kk, operand_t<S>* fa, operand_t<S>* fb) {
    const index_t gk = kt * BK + kk;
    if constexpr (a_shared)
      load_fragment_shared<S, TM, Cfg::SubM, threads_m>(fa, a_s + cur * BK * StageA::LD + kk * StageA::LD, ty);
    else
      load_fragment_global<S, TM, Cfg::SubM, threads_m, B>(fa, a, args.a_rs, args.a_cs, i0, gk, args.m, args.k, ty);
    if constexpr (b_shared)
      load_fragment_shared<S, TN, Cfg::SubN, threads_n>(fb, b_s + cur * BK * StageB::LD + kk * StageB::LD, tx);
    else
      load_fragment_global<S, TN, Cfg::SubN, threads_n, B>(fb, b, args.b_cs, args.b_rs, j0, gk, args.n, args.k, tx);
  };
  constexpr bool pairs = sign_known<S>::available && three_input_minimum && BK % 2 == 0;
  bool sign_known_data = false;
  if constexpr (pairs) sign_known_data = args.sign_known && *args.sign_known;  // the same in every block
  for (index_t kt = 0; kt < k_tiles; ++kt) {
    const int cur = int(kt & 1);
    const bool more = kt + 1 < k_tiles;
    if (more) fetch(kt + 1);  // global loads in flight while this k-tile is consumed
    if constexpr (pairs) {
      if (sign_known_data) {
#pragma unroll
        for (int kk = 0; kk < BK; kk += 2) {
          operand_t<S> fa0[TM], fb0[TN], fa1[TM], fb1[TN];
          fragments(cur, kt, kk, fa0, fb0);
          fragments(cur, kt, kk + 1, fa1, fb1);
#pragma unroll
          for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
              acc[i][j] = sign_known<S>::update2(acc[i][j], fa0[i] + fb0[j], fa1[i] + fb1[j]);
        }
        if (more) deposit(cur ^ 1);
        __syncthreads();
        continue;
      }
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      operand_t<S> fa[TM], fb[TN];
      fragments(cur, kt, kk, fa, fb);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = traits::update(acc[i][j], fa[i], fb[j]);
    }
    if (more) deposit(cur ^ 1);  // the other buffer was last read before the previous barrier
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const index_t gi = i0 + tile_offset<Cfg::SubM, threads_m>(i, ty);
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const index_t gj = j0 + tile_offset<Cfg::SubN, threads_n>(j, tx);
      if (B == Border::predicate && (gi >= args.m || gj >= args.n)) continue;
      if (args.symmetric && gi < gj) continue;
      T* out = c + gi * args.c_rs + gj * args.c_cs;
      const T value = traits::epilogue(args.alpha, traits::from_register(acc[i][j]), args.beta, out);
      *out = value;
      if (args.symmetric && gi > gj) c[gj * args.c_rs + gi * args.c_cs] = value;
    }
  }
}

}  // namespace ringmm::cuda_detail
