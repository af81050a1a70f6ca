// Blocked multi-threaded CPU semiring kernel in the style of BLIS: five loops around a
// register-blocked MR×NR micro-kernel, for any semiring S (user-defined ones included).
//
//   work items (batch member × band of rows × group of columns), claimed by the OpenMP threads
//     jc: panels of NC columns of B, packed for the whole K (NR-wide slivers, 0̄-padded)
//       ic: blocks of MC rows
//         pc: KC-deep chunks of K; the MC×KC block of A is packed into MR-row micro-panels
//           jr, ir: the micro-kernel on one MR×NR tile of C
//
// The micro-kernel is plain C++ over fixed-size arrays that the compiler vectorises. It is built
// three times (generic x86-64 / AVX2+FMA / AVX-512; cpu/multiversion.hpp) and the widest one the
// running CPU supports is picked at run time, so the library itself needs no -march flag.
// Accumulators live in registers for one KC chunk; between chunks they are parked in a per-thread
// workspace, and only the last chunk applies the epilogue to C, so C is read only where the
// contract allows (β ≠ 0̄) and the integer finalize sees the whole sum.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "ringmm/context.hpp"
#include "ringmm/cpu/multiversion.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cpu {

namespace blocked_detail {

// Kernel configurations, one per instruction set: register width, micro-tile shape (MR rows ×
// vectors_per_row registers), whether an FMA unit can take the tropical ⊗ (see Update), and the
// cache budgets the blocking is derived from. Tuned on Zen 4 (32 KiB L1d, 1 MiB L2 per core,
// shared L3); the measurements are in docs/perf/cpu.md.
struct IsaGeneric {  // SSE2: 16 × 128-bit registers
  static constexpr int vector_bytes = 16, vectors_per_row = 2, mr = 6;
  static constexpr bool has_fma = false;
  static constexpr std::size_t b_sliver_bytes = 24 << 10, a_block_bytes = 256 << 10;
};
struct IsaAvx2 {  // 16 × 256-bit registers: 6×2 accumulators + 2 B vectors + broadcast + temp
  static constexpr int vector_bytes = 32, vectors_per_row = 2, mr = 6;
  static constexpr bool has_fma = true;
  static constexpr std::size_t b_sliver_bytes = 24 << 10, a_block_bytes = 256 << 10;
};
struct IsaAvx512 {  // 32 × 512-bit registers: 8×3 accumulators, the rest for B, A and temps
  static constexpr int vector_bytes = 64, vectors_per_row = 3, mr = 8;
  static constexpr bool has_fma = true;
  // KC = 256 for f32 (a 48 KiB sliver, past L1) beat KC = 128 in 5 of 6 interleaved comparisons
  // on Zen 4: fewer accumulator round trips through the workspace outweigh the L2 reads of B.
  static constexpr std::size_t b_sliver_bytes = 48 << 10, a_block_bytes = 256 << 10;
};

// Cache blocking for element type T under configuration Isa.
template <class T, class Isa> struct Blocking {
  static constexpr int lanes = Isa::vector_bytes >= int(sizeof(T)) ? Isa::vector_bytes / int(sizeof(T)) : 1;
  static constexpr int mr = Isa::mr;
  static constexpr int nr = std::min(128, lanes * Isa::vectors_per_row);
  // KC: a KC×NR sliver of B (b_sliver_bytes, about L1) is reused by every MR-row panel of A.
  static constexpr index_t kc = std::max<index_t>(64, index_t(Isa::b_sliver_bytes / (nr * sizeof(T))) / 8 * 8);
  // MC: the MC×KC block of A stays in L2.
  static constexpr index_t mc = std::max<index_t>(mr, index_t(Isa::a_block_bytes / (kc * sizeof(T))) / mr * mr);
  // The packed B panel (all of K × NC) stays in the shared L3.
  static constexpr std::size_t b_panel_bytes = std::size_t(4) << 20;
  static constexpr index_t nc_max = 4096;
};

template <class S> inline constexpr bool is_float_tropical_v =
    std::is_same_v<S, MaxPlus<float>> || std::is_same_v<S, MaxPlus<double>> || std::is_same_v<S, MinPlus<float>> ||
    std::is_same_v<S, MinPlus<double>>;

template <class S> inline constexpr bool is_float_plus_times_v =
    std::is_same_v<S, PlusTimes<float>> || std::is_same_v<S, PlusTimes<double>>;

// The inner-loop update acc ⊕ (a ⊗ b), as semiring_traits<S>::fma (NanFree: fma_nan_free, for
// packed panels without a value with nan_risk) except:
//  * floating-point tropical semirings with an FMA unit: ⊗ (an add) is issued as fma(a, 1, b),
//    which rounds exactly like a + b. On x86 cores whose FP adders also execute max/min (Zen 4),
//    this moves ⊗ onto the FMA pipes so that ⊗ and ⊕ run side by side.
//  * floating-point plus-times without an FMA unit: std::fma would be a libm emulation about 100×
//    slower, so the product is a multiply and an add (two roundings, inside the plus-times bound).
template <class S, class Isa, bool NanFree> struct Update {
  using T = typename S::value_type;
  using Acc = accumulator_t<S>;
  RINGMM_CPU_INLINE static Acc apply(Acc acc, T a, T b) {
    if constexpr (Isa::has_fma && is_float_tropical_v<S>) {
      const T term = std::fma(a, T(1), b);
      if constexpr (S::kind == SemiringKind::max_plus) return detail::max_into(acc, term);
      else return detail::min_into(acc, term);
    } else if constexpr (!Isa::has_fma && is_float_plus_times_v<S>) {
      return acc + a * b;
    } else if constexpr (NanFree) {
      return semiring_traits<S>::fma_nan_free(acc, a, b);
    } else {
      return semiring_traits<S>::fma(acc, a, b);
    }
  }
};

template <class T> struct AlignedAllocator {
  using value_type = T;
  static constexpr std::align_val_t alignment{64};
  AlignedAllocator() = default;
  template <class U> AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), alignment)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, alignment); }
  template <class U> bool operator==(const AlignedAllocator<U>&) const { return true; }
};
template <class T> using Buffer = std::vector<T, AlignedAllocator<T>>;

template <class S> struct Workspace {
  Buffer<element_t<S>> b_panel;      // K × NC, NR-wide slivers
  Buffer<element_t<S>> a_block;      // MC × KC, MR-row micro-panels
  Buffer<accumulator_t<S>> partial;  // accumulators parked between KC chunks: MC × NC
  std::vector<char> b_risk;  // per packed B sliver: it holds a value with nan_risk
};

// Packs columns [j0, j0 + nr_valid) of B (rows 0..K−1) into one K×NR sliver, 0̄ past the edge.
// Returns whether the sliver holds a value with nan_risk (semiring_traits::guards_nan).
template <class S, int NR>
bool pack_b_sliver(const detail::Strided<const typename S::value_type>& b, const typename S::value_type* base,
                   index_t j0, index_t nr_valid, typename S::value_type* out) {
  const index_t k_all = b.rows;
  bool risk = false;
  for (index_t k = 0; k < k_all; ++k) {
    const auto* src = base + k * b.rs + j0 * b.cs;
    auto* dst = out + k * NR;
    for (index_t j = 0; j < nr_valid; ++j) risk |= semiring_traits<S>::nan_risk(dst[j] = src[j * b.cs]);
    for (index_t j = nr_valid; j < NR; ++j) dst[j] = S::zero();
  }
  return risk;
}

// Packs rows [i0, i0 + mc) × k in [k0, k0 + kc) of A into MR-row micro-panels, 0̄ past the edge.
// Returns whether the block holds a value with nan_risk.
template <class S, int MR>
bool pack_a_block(const detail::Strided<const typename S::value_type>& a, const typename S::value_type* base,
                  index_t i0, index_t mc, index_t k0, index_t kc, typename S::value_type* out) {
  bool risk = false;
  for (index_t ir = 0; ir < mc; ir += MR) {
    const index_t mr_valid = std::min<index_t>(MR, mc - ir);
    auto* panel = out + ir * kc;
    const auto* src = base + (i0 + ir) * a.rs + k0 * a.cs;
    if (a.cs == 1 && mr_valid == MR) {  // row-major A: read along rows, write with stride MR
      for (index_t i = 0; i < MR; ++i)
        for (index_t k = 0; k < kc; ++k) risk |= semiring_traits<S>::nan_risk(panel[k * MR + i] = src[i * a.rs + k]);
    } else {
      for (index_t k = 0; k < kc; ++k) {
        for (index_t i = 0; i < mr_valid; ++i)
          risk |= semiring_traits<S>::nan_risk(panel[k * MR + i] = src[i * a.rs + k * a.cs]);
        for (index_t i = mr_valid; i < MR; ++i) panel[k * MR + i] = S::zero();
      }
    }
  }
  return risk;
}

// Where one micro-tile's results go: the C tile, its valid extent and position (for the
// symmetric case, which writes only elements on or below the diagonal), and the epilogue scalars.
template <class T> struct TileOut {
  T* c;
  index_t rs, cs;
  index_t mr_valid, nr_valid;
  index_t row, col;  // global position of the tile's first element
  bool lower_only;
  T alpha, beta;
};

// acc ⊕= the KC-long products of one A micro-panel and one B sliver. A function rather than a
// lambda so that it is inlined into, and compiled for, each instruction set's caller.
template <class S, class Isa, int MR, int NR, bool NanFree>
RINGMM_CPU_INLINE void accumulate(accumulator_t<S> (&acc)[MR][NR], index_t kc,
                                  const typename S::value_type* __restrict ap,
                                  const typename S::value_type* __restrict bp) {
  using T = typename S::value_type;
  for (index_t k = 0; k < kc; ++k) {
    const T* ak = ap + k * MR;
    const T* bk = bp + k * NR;
    for (int i = 0; i < MR; ++i) {
      const T ai = ak[i];
#pragma omp simd
      for (int j = 0; j < NR; ++j) acc[i][j] = Update<S, Isa, NanFree>::apply(acc[i][j], ai, bk[j]);
    }
  }
}

// One MR×NR tile over one KC chunk. `first`: start from 0̄ (else resume from `partial`);
// `last`: apply the epilogue to C (else park the accumulators in `partial`).
template <class S, class Isa, int MR, int NR>
RINGMM_CPU_INLINE void micro_kernel(index_t kc, const typename S::value_type* __restrict ap,
                                    const typename S::value_type* __restrict bp,
                                    accumulator_t<S>* __restrict partial, bool first, bool last, bool nan_free,
                                    const TileOut<typename S::value_type>& out) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  accumulator_t<S> acc[MR][NR];
  if (first) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = traits::initial();
  } else {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) acc[i][j] = partial[i * NR + j];
  }
  constexpr bool guarded = semiring_traits<S>::guards_nan;  // else only fma is compiled
  if (guarded && nan_free) accumulate<S, Isa, MR, NR, guarded>(acc, kc, ap, bp);
  else accumulate<S, Isa, MR, NR, false>(acc, kc, ap, bp);
  if (!last) {
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) partial[i * NR + j] = acc[i][j];
    return;
  }
  for (index_t i = 0; i < out.mr_valid; ++i) {
    // Symmetric: row (out.row + i) keeps columns up to the diagonal only.
    const index_t n_row = out.lower_only ? std::min(out.nr_valid, out.row + i - out.col + 1) : out.nr_valid;
    T* c_row = out.c + i * out.rs;
    for (index_t j = 0; j < n_row; ++j) {
      T* cij = c_row + j * out.cs;
      *cij = traits::epilogue(out.alpha, acc[i][j], out.beta, cij);
    }
  }
}

// Everything about one call that the threads share. The work is cut into items — one batch
// member's rows [row_begin, +band) × columns [col_begin, +group) — that threads claim from an atomic
// counter. Each item packs its own operands, so threads never wait for each other until the end
// (only the symmetric mirror needs every item done); on a loaded machine a thread descheduled
// mid-call then delays only its own items.
template <class S> struct Call {
  using T = typename S::value_type;
  const detail::Problem<S>* p;
  index_t nc;                  // columns per packed B panel
  index_t band, group;         // rows and columns per item (multiples of MR and NR)
  index_t n_bands, n_groups;   // items per batch member: n_bands × n_groups
  std::vector<Workspace<S>>* spaces;
  std::atomic<index_t>* next_item;
};

// One item: rows [r0, r1) × columns [c0, c1) of batch member bt.
template <class S, class Isa>
RINGMM_CPU_INLINE void item(const Call<S>& call, index_t bt, index_t r0, index_t r1, index_t c0, index_t c1,
                            Workspace<S>& ws) {
  using T = typename S::value_type;
  using Blk = Blocking<T, Isa>;
  constexpr int MR = Blk::mr, NR = Blk::nr;
  const auto& p = *call.p;
  const index_t m = p.m(), n = p.n(), k_all = p.k();
  const T* a = p.a.p + bt * p.stride_a;
  const T* b = p.b.p + bt * p.stride_b;
  T* c = p.c.p + bt * p.stride_c;
  if (p.symmetric && r1 - 1 < c0) return;  // entirely above the diagonal

  if (k_all == 0) {  // no product terms: every element is α ⊗ 0̄ ⊕ β ⊗ c
    for (index_t i = r0; i < r1; ++i)
      for (index_t j = c0; j < (p.symmetric ? std::min(c1, i + 1) : c1); ++j) {
        T* cij = c + i * p.c.rs + j * p.c.cs;
        *cij = semiring_traits<S>::epilogue(p.alpha, S::zero(), p.beta, cij);
      }
    return;
  }
  const index_t n_chunks = (k_all + Blk::kc - 1) / Blk::kc;
  for (index_t jc = c0; jc < c1; jc += call.nc) {
    const index_t nc = std::min(call.nc, c1 - jc);
    const index_t n_slivers = (nc + NR - 1) / NR;
    for (index_t s = 0; s < n_slivers; ++s)
      ws.b_risk[std::size_t(s)] = pack_b_sliver<S, NR>(p.b, b, jc + s * NR, std::min<index_t>(NR, nc - s * NR),
                                                      ws.b_panel.data() + s * k_all * NR);
    for (index_t ic = r0; ic < r1; ic += Blk::mc) {
      const index_t mc = std::min<index_t>(Blk::mc, r1 - ic);
      if (p.symmetric && ic + mc - 1 < jc) continue;
      const index_t n_panels = (mc + MR - 1) / MR;
      for (index_t chunk = 0; chunk < n_chunks; ++chunk) {
        const index_t k0 = chunk * Blk::kc;
        const index_t kc = std::min<index_t>(Blk::kc, k_all - k0);
        const bool a_risk = pack_a_block<S, MR>(p.a, a, ic, mc, k0, kc, ws.a_block.data());
        for (index_t s = 0; s < n_slivers; ++s) {
          const index_t col = jc + s * NR;
          const T* b_sliver = ws.b_panel.data() + s * k_all * NR + k0 * NR;
          for (index_t panel = 0; panel < n_panels; ++panel) {
            const index_t row = ic + panel * MR;
            const index_t mr_valid = std::min<index_t>(MR, m - row);
            if (p.symmetric && row + mr_valid - 1 < col) continue;
            accumulator_t<S>* partial = n_chunks == 1 ? nullptr : ws.partial.data() + (s * n_panels + panel) * (MR * NR);
            const TileOut<T> out{c + row * p.c.rs + col * p.c.cs, p.c.rs, p.c.cs, mr_valid, std::min<index_t>(NR, n - col),
                                 row, col, p.symmetric, p.alpha, p.beta};
            micro_kernel<S, Isa, MR, NR>(kc, ws.a_block.data() + panel * MR * kc, b_sliver, partial, chunk == 0,
                                         chunk == n_chunks - 1, !(a_risk || ws.b_risk[std::size_t(s)]), out);
          }
        }
      }
    }
  }
}

// Copies the lower triangle of C onto the upper one.
template <class T> void mirror_lower(const detail::Strided<T>& c, T* base, index_t row_begin, index_t row_step) {
  for (index_t i = row_begin; i < c.rows; i += row_step)
    for (index_t j = i + 1; j < c.cols; ++j) base[i * c.rs + j * c.cs] = base[j * c.rs + i * c.cs];
}

// Thread `id` of `size`: claims items until none are left.
template <class S, class Isa> RINGMM_CPU_INLINE void run_team(const Call<S>& call, int id, int size) {
  const auto& p = *call.p;
  auto& ws = (*call.spaces)[std::size_t(id)];
  const index_t per_member = call.n_bands * call.n_groups;
  const index_t items = per_member * p.batch;
  for (index_t it = call.next_item->fetch_add(1, std::memory_order_relaxed); it < items;
       it = call.next_item->fetch_add(1, std::memory_order_relaxed)) {
    const index_t bt = it / per_member, band = (it % per_member) / call.n_groups, group = it % call.n_groups;
    const index_t r0 = band * call.band, c0 = group * call.group;
    item<S, Isa>(call, bt, r0, std::min(p.m(), r0 + call.band), c0, std::min(p.n(), c0 + call.group), ws);
  }
  if (p.symmetric) {
    if (size > 1) {
#pragma omp barrier
    }
    for (index_t bt = 0; bt < p.batch; ++bt) mirror_lower(p.c, p.c.p + bt * p.stride_c, index_t(id), index_t(size));
  }
}

#if RINGMM_CPU_MULTIVERSION
template <class S> RINGMM_CPU_TARGET_AVX512
void run_team_avx512(const Call<S>& call, int id, int size) { run_team<S, IsaAvx512>(call, id, size); }
template <class S> RINGMM_CPU_TARGET_AVX2
void run_team_avx2(const Call<S>& call, int id, int size) { run_team<S, IsaAvx2>(call, id, size); }
#endif

// Runs the call on a team; `run_team_isa` is run_team<S, Isa> compiled for Isa's instruction set.
template <class S, class Isa>
void run_isa(const detail::Problem<S>& p, int threads,
             void (*run_team_isa)(const Call<S>&, int, int)) {
  using T = typename S::value_type;
  using Blk = Blocking<T, Isa>;
  constexpr index_t MR = Blk::mr, NR = Blk::nr;
  const index_t m = p.m(), n = p.n();
  // Small products do not pay for waking the team: about 2^20 updates per thread at least.
  const int useful = int(std::min<double>(threads, std::max(1.0, p.updates() / double(1 << 20))));

  // Items: about 4 per thread over the whole batch (1 item per member on one thread), cutting
  // whichever of M and N is longer per piece. Each item repacks its rows of A and columns of B;
  // that costs K·(M·n_groups + N·n_bands) copies beside M·N·K updates.
  const index_t per_member = useful == 1 ? 1 : std::max<index_t>(1, (4 * index_t(useful) + p.batch - 1) / p.batch);
  index_t n_bands = 1, n_groups = 1;
  while (n_bands * n_groups < per_member) {
    const bool can_cut_rows = m / (n_bands + 1) >= MR, can_cut_cols = n / (n_groups + 1) >= NR;
    if (can_cut_rows && (m / n_bands >= n / n_groups || !can_cut_cols)) ++n_bands;
    else if (can_cut_cols) ++n_groups;
    else break;
  }
  Call<S> call{};
  call.p = &p;
  call.band = ((m + n_bands - 1) / n_bands + MR - 1) / MR * MR;
  call.group = ((n + n_groups - 1) / n_groups + NR - 1) / NR * NR;
  call.n_bands = (m + call.band - 1) / call.band;
  call.n_groups = (n + call.group - 1) / call.group;
  const index_t k_all = std::max<index_t>(1, p.k());
  const index_t nc_fit = index_t(Blk::b_panel_bytes / (std::size_t(k_all) * sizeof(T))) / NR * NR;
  call.nc = std::clamp<index_t>(nc_fit, NR, std::min<index_t>(Blk::nc_max / NR * NR, call.group));

  const index_t n_chunks = (p.k() + Blk::kc - 1) / Blk::kc;
  std::vector<Workspace<S>> spaces(static_cast<std::size_t>(useful));
  for (auto& ws : spaces) {
    ws.b_panel.resize(std::size_t(k_all * call.nc));
    ws.a_block.resize(std::size_t(Blk::mc * std::min<index_t>(Blk::kc, k_all)));
    ws.b_risk.resize(std::size_t((call.nc + NR - 1) / NR));
    if (n_chunks > 1) ws.partial.resize(std::size_t((Blk::mc + MR - 1) / MR * MR * call.nc));
  }
  call.spaces = &spaces;
  std::atomic<index_t> next_item{0};
  call.next_item = &next_item;

  if (useful == 1) {
    run_team_isa(call, 0, 1);
    return;
  }
#pragma omp parallel num_threads(useful)
  run_team_isa(call, omp_get_thread_num(), omp_get_num_threads());
}

template <class S> void run_team_generic(const Call<S>& call, int id, int size) { run_team<S, IsaGeneric>(call, id, size); }

}  // namespace blocked_detail

// C_b ← α ⊗ (A_b ⊗ B_b) ⊕ β ⊗ C_b for every batch member, on `threads` OpenMP threads
// (0 = OpenMP's default), with the widest build `isa` allows (Context::cpu_isa). Honours the whole
// detail::Problem contract.
template <class S> void blocked_gemm(const detail::Problem<S>& p, int threads, CpuIsa isa = CpuIsa::automatic) {
  const CpuIsa level = resolved_cpu_isa(isa);  // refuses a level the CPU lacks, even for an empty product
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;
  const int team = threads > 0 ? threads : omp_get_max_threads();
#if RINGMM_CPU_MULTIVERSION
  switch (level) {
    case CpuIsa::avx512:
      return blocked_detail::run_isa<S, blocked_detail::IsaAvx512>(p, team, blocked_detail::run_team_avx512<S>);
    case CpuIsa::avx2:
      return blocked_detail::run_isa<S, blocked_detail::IsaAvx2>(p, team, blocked_detail::run_team_avx2<S>);
    default: break;
  }
#endif
  blocked_detail::run_isa<S, blocked_detail::IsaGeneric>(p, team, blocked_detail::run_team_generic<S>);
}

}  // namespace ringmm::cpu
