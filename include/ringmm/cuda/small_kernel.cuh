// The small-product kernel: one block of 256 threads over several T×T tiles of C at once
// (T = 16, 32 or 64: 16, 4 or 1 tiles), each thread 4×4 outputs of one tile. It takes products
// whose M or N is small (heuristics.hpp, small_tile), where the large kernel (gemm_kernel.cuh)
// wastes its tile and its occupancy: that kernel runs one 64×64 or 128×128 tile per block at
// 110–128 registers, two blocks per SM, so a 32³ product used a quarter of its tile, a 16³ one a
// sixteenth, and with 16 warps per SM one block's loads were not hidden behind another's
// arithmetic (ncu, batch 4096 × 64³ f32 max-plus: 25 % occupancy, DRAM at 29 %).
//
//   work     the tiles of every member of the batch, numbered member-major, in groups of `tiles`;
//            a grid of as many blocks as are resident walks the groups (block b takes groups b,
//            b + gridDim.x, …), so no batch count overflows the grid
//   operands the caller's strided views, read in place (no padded copies). Each operand moves in
//            quads of 4 elements along its contiguous axis (k, or m for A and n for B): one vector
//            load where every quad is aligned and wholly inside or outside the operand, element by
//            element with bounds checks otherwise. Shared memory holds [k][m] and [k][n], so a
//            thread's 4 values of one k are one broadcast vector read
//   K        walked in chunks of BK, the next chunk's quads loaded into registers while the
//            current one is consumed, across tiles too (the next group's first chunk during this
//            group's last); the other blocks on the SM hide the rest
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// The tile shape and the kernel's pipeline: the defaults are what the engine runs, the fastest
// on the H100 of those scripts/gpu/small_explore.cu times against each other (on 4096 × 64³,
// 4096 × 32³, 100 000 × 16³, 65536×64×64 and 131072×16×16 f32 max-plus).
//   BK          k per chunk
//   min_blocks  resident blocks per SM asked of the compiler (__launch_bounds__): caps registers
//   stages      shared-memory panels per operand: 2 overlaps storing the next chunk with this
//               chunk's arithmetic and needs one barrier a chunk instead of two
template <int T_, int BK_ = (T_ == 16 ? 8 : 16), int MinBlocks_ = small_resident_blocks(T_),
          int Stages_ = (T_ == 64 ? 1 : 2)>
struct SmallTile {
  static constexpr int T = T_;  // tile edge
  static constexpr int threads = 256;
  static constexpr int axis_threads = T / 4;  // threads along m and along n of one tile
  static constexpr int tile_threads = axis_threads * axis_threads;
  static constexpr int tiles = threads / tile_threads;  // tiles per block: 16, 4, 1
  static_assert(tiles == small_tiles_per_block(T), "heuristics.hpp counts the same tiles per block");
  static constexpr int BK = BK_;
  static constexpr int min_blocks = MinBlocks_;
  static constexpr int stages = Stages_;
  static constexpr int LD = T + 4;  // row pitch: quads stay aligned
  // One tile's [BK][LD] panel, padded by 16 elements so that the two tiles a warp of T = 16 reads
  // fall on different banks.
  static constexpr int panel = BK * LD + 16;
  static constexpr int quads_per_thread = tiles * T * BK / 4 / threads;  // per operand and chunk
  static_assert(T == 16 || T == 32 || T == 64, "small tiles are 16, 32 or 64");
  static_assert(tiles * T * BK / 4 % threads == 0, "every thread moves the same number of quads");
  static_assert(stages == 1 || stages == 2, "one or two panels per operand");
};

// How an operand moves: quads along k or along its m (n) axis.
enum class QuadAxis : unsigned char { k, x };

// One operand of the small kernel: element (x, k) of batch member z at p[z·stride + x·xs + k·ks],
// x < extent (M for A, N for B), k < K.
template <class T> struct SmallOperand {
  const T* p;
  index_t xs, ks, stride, extent;
  QuadAxis axis;
  bool vector;  // quads are aligned vectors, each wholly inside or outside the operand
};

template <class S> struct SmallArgs {
  using T = element_t<S>;
  SmallOperand<T> a, b;  // a: x = i; b: x = j
  T* c;                  // element (i, j) of member z at c[z·stride_c + i·c_rs + j·c_cs]
  index_t c_rs, c_cs, stride_c;
  index_t m, n, k;
  index_t tiles_m, tiles_n, tile_count;  // tile_count = batch · tiles_m · tiles_n
  scalar_t<S> alpha, beta;
  bool c_vector;   // rows of C written as quads: c_cs = 1, aligned, N a multiple of 4
  bool symmetric;  // Aᵀ·A: entries i ≥ j written, and mirrored into (j, i); C read there only
};

template <class T> struct alignas(sizeof(T) * 4 <= 16 ? sizeof(T) * 4 : 16) Quad {
  T v[4];
};

// 4 contiguous elements as one or two vector accesses (the address is aligned to alignof(Quad)).
template <class T> __device__ __forceinline__ Quad<T> load_quad(const T* p) {
  if constexpr (sizeof(T) * 4 <= 16) {
    return *reinterpret_cast<const Quad<T>*>(p);
  } else {
    const Vec<T, 2> lo = *reinterpret_cast<const Vec<T, 2>*>(p), hi = *reinterpret_cast<const Vec<T, 2>*>(p + 2);
    return Quad<T>{{lo.v[0], lo.v[1], hi.v[0], hi.v[1]}};
  }
}

template <class T> __device__ __forceinline__ void store_quad(T* p, const Quad<T>& q) {
  if constexpr (sizeof(T) * 4 <= 16) {
    *reinterpret_cast<Quad<T>*>(p) = q;
  } else {
    *reinterpret_cast<Vec<T, 2>*>(p) = Vec<T, 2>{{q.v[0], q.v[1]}};
    *reinterpret_cast<Vec<T, 2>*>(p + 2) = Vec<T, 2>{{q.v[2], q.v[3]}};
  }
}

// The quads one thread moves for one operand, chunk after chunk: where each is read from and where
// it lands in shared memory.
template <class S, class Tile> struct SmallStage {
  using T = element_t<S>;
  static constexpr int Q = Tile::quads_per_thread;
  Quad<T> reg[Q];
  const T* src[Q];  // the quad's first element in chunk 0
  int x_left[Q];    // rows (columns) of the operand from the quad's first one on; ≤ 0 when none

  // The tile t within the block, row (column) x within the tile and k within the chunk of the
  // quad numbered l: BK/4 quads along k per row, or T/4 quads along x per k.
  static __device__ __forceinline__ void where(QuadAxis axis, int l, int& t, int& x, int& k) {
    if (axis == QuadAxis::k) {
      k = (l % (Tile::BK / 4)) * 4;
      x = (l / (Tile::BK / 4)) % Tile::T;
      t = l / (Tile::BK / 4 * Tile::T);
    } else {
      x = (l % (Tile::T / 4)) * 4;
      k = (l / (Tile::T / 4)) % Tile::BK;
      t = l / (Tile::T / 4 * Tile::BK);
    }
  }

  // first_x[t]: the first row (column) of the block's tile t along this operand's x axis;
  // member[t]: its batch member, negative past the last tile.
  __device__ __forceinline__ void start(const SmallOperand<T>& op, const index_t* first_x, const index_t* member,
                                        int tid) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, k;
      where(op.axis, tid + q * Tile::threads, t, x, k);
      const index_t x0 = first_x[t] + x;
      const bool live = member[t] >= 0;
      x_left[q] = live ? int(std::min<index_t>(op.extent - x0, Tile::T)) : 0;
      src[q] = live ? op.p + member[t] * op.stride + x0 * op.xs + index_t(k) * op.ks : op.p;
    }
  }

  // The quads of the chunk starting at k0 into registers (0̄ outside the operand).
  __device__ __forceinline__ void load(const SmallOperand<T>& op, index_t k0, index_t k_end, int tid) {
    const T zero = S::zero();
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, kq;
      where(op.axis, tid + q * Tile::threads, t, x, kq);
      const index_t k = k0 + kq;
      const T* p = src[q] + k0 * op.ks;
      if (op.vector) {
        if (x_left[q] > 0 && k < k_end) reg[q] = load_quad(p);
        else reg[q] = Quad<T>{{zero, zero, zero, zero}};
      } else if (op.axis == QuadAxis::k) {
#pragma unroll
        for (int e = 0; e < 4; ++e) reg[q].v[e] = (x_left[q] > 0 && k + e < k_end) ? p[e * op.ks] : zero;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) reg[q].v[e] = (x_left[q] > e && k < k_end) ? p[e * op.xs] : zero;
      }
    }
  }

  __device__ __forceinline__ void store(const SmallOperand<T>& op, T* panels, int tid) const {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, k;
      where(op.axis, tid + q * Tile::threads, t, x, k);
      T* s = panels + t * Tile::panel + k * Tile::LD + x;
      if (op.axis == QuadAxis::x) {
        store_quad(s, reg[q]);
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) s[e * Tile::LD] = reg[q].v[e];
      }
    }
  }
};

// A block walks groups of Tile::tiles tiles (group g = tiles g·tiles …), blockIdx.x, then every
// gridDim.x-th after it, so a grid of a few blocks per SM covers any batch. K's chunks run as one
// stream across the groups: during a group's last chunk the next group's first chunk is already
// being loaded, so a block never waits for memory between its tiles.
template <class S, class Tile>
__global__ void __launch_bounds__(Tile::threads, (sizeof(reg_t<S>) >= 8 ? 2 : Tile::min_blocks))
    small_kernel(const SmallArgs<S> args) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BK = Tile::BK, LD = Tile::LD, panels = Tile::tiles * Tile::panel;
  __shared__ alignas(16) T a_s[Tile::stages * panels];
  __shared__ alignas(16) T b_s[Tile::stages * panels];

  // Where a group's tiles lie, worked out once per tile by the first threads (64-bit divisions
  // cost ~100 instructions each, as much as a third of a 64³ product's arithmetic when every
  // thread did its own). Three slots, [walk step % 3][tile]: step s fills slot s + 1 for the next
  // group while slot s − 1 may still be read by a thread finishing its epilogue.
  __shared__ index_t tile_member[3][Tile::tiles], tile_i0[3][Tile::tiles], tile_j0[3][Tile::tiles];
  const int tid = int(threadIdx.x);
  const index_t groups = (args.tile_count + Tile::tiles - 1) / Tile::tiles;
  auto place = [&](int slot, index_t group) {  // by threads tid < Tile::tiles
    const index_t g = group * Tile::tiles + tid, per_member = args.tiles_m * args.tiles_n;
    const index_t r = g % per_member;
    tile_member[slot][tid] = g < args.tile_count ? g / per_member : -1;
    tile_i0[slot][tid] = (r / args.tiles_n) * Tile::T;
    tile_j0[slot][tid] = (r % args.tiles_n) * Tile::T;
  };

  // This thread's outputs: tile t of the group, rows ty·4 …, columns tx·4 ….
  const int t = tid / Tile::tile_threads, lt = tid % Tile::tile_threads;
  const int tx = lt % Tile::axis_threads, ty = lt / Tile::axis_threads;
  const int a_frag = t * Tile::panel + ty * 4, b_frag = t * Tile::panel + tx * 4;

  SmallStage<S, Tile> stage_a, stage_b;
  index_t group = blockIdx.x;
  if (tid < Tile::tiles) place(0, group);
  __syncthreads();
  if (args.k > 0) {
    stage_a.start(args.a, tile_i0[0], tile_member[0], tid);
    stage_b.start(args.b, tile_j0[0], tile_member[0], tid);
    stage_a.load(args.a, 0, args.k, tid);
    stage_b.load(args.b, 0, args.k, tid);
    if constexpr (Tile::stages == 2) {  // two panels: the chunk in use is always in shared memory
      stage_a.store(args.a, a_s, tid);
      stage_b.store(args.b, b_s, tid);
    }
  }
  int buffer = 0;  // the panel holding the current chunk (two stages)
  for (int slot = 0; group < groups; group += gridDim.x, slot = slot == 2 ? 0 : slot + 1) {
    const index_t next = group + gridDim.x;
    const int next_slot = slot == 2 ? 0 : slot + 1;
    if (tid < Tile::tiles && next < groups) place(next_slot, next);
    __syncthreads();

    reg_t<S> acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = traits::initial_register();

    for (index_t k0 = 0; k0 < args.k; k0 += BK) {
      if constexpr (Tile::stages == 1) {
        stage_a.store(args.a, a_s, tid);
        stage_b.store(args.b, b_s, tid);
        __syncthreads();
      }
      // The next chunk's loads in flight during this chunk's arithmetic: this group's, or after
      // its last chunk the next group's first.
      const bool more = k0 + BK < args.k || next < groups;
      if (k0 + BK < args.k) {
        stage_a.load(args.a, k0 + BK, args.k, tid);
        stage_b.load(args.b, k0 + BK, args.k, tid);
      } else if (next < groups) {
        stage_a.start(args.a, tile_i0[next_slot], tile_member[next_slot], tid);
        stage_b.start(args.b, tile_j0[next_slot], tile_member[next_slot], tid);
        stage_a.load(args.a, 0, args.k, tid);
        stage_b.load(args.b, 0, args.k, tid);
      }
      const T* a_panel = a_s + buffer * panels + a_frag;
      const T* b_panel = b_s + buffer * panels + b_frag;
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        const Quad<T> qa = load_quad(a_panel + kk * LD), qb = load_quad(b_panel + kk * LD);
        operand_t<S> fa[4], fb[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) fa[e] = traits::to_register(qa.v[e]), fb[e] = traits::to_register(qb.v[e]);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[i][j] = traits::update(acc[i][j], fa[i], fb[j]);
      }
      if constexpr (Tile::stages == 2) {
        if (more) {
          stage_a.store(args.a, a_s + (buffer ^ 1) * panels, tid);
          stage_b.store(args.b, b_s + (buffer ^ 1) * panels, tid);
        }
        buffer ^= 1;
      }
      __syncthreads();  // the panels are refilled next
    }

    const index_t member = tile_member[slot][t], i0 = tile_i0[slot][t] + ty * 4, j0 = tile_j0[slot][t] + tx * 4;
    if (member < 0) continue;
    T* c = args.c + member * args.stride_c;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const index_t gi = i0 + i;
      if (gi >= args.m) break;
      T* row = c + gi * args.c_rs;
      if (args.symmetric) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const index_t gj = j0 + j;
          if (gj > gi) break;
          T* out = row + gj * args.c_cs;
          *out = traits::epilogue(args.alpha, traits::from_register(acc[i][j]), args.beta, out);
          c[gj * args.c_rs + gi * args.c_cs] = *out;
        }
      } else if (args.c_vector && j0 < args.n) {  // N is a multiple of 4: the quad is whole
        Quad<T> out;
#pragma unroll
        for (int j = 0; j < 4; ++j)
          out.v[j] = traits::epilogue(args.alpha, traits::from_register(acc[i][j]), args.beta, row + j0 + j);
        store_quad(row + j0, out);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (j0 + j >= args.n) break;
          T* out = row + (j0 + j) * args.c_cs;
          *out = traits::epilogue(args.alpha, traits::from_register(acc[i][j]), args.beta, out);
        }
      }
    }
  }
}

// ---- host side --------------------------------------------------------------------------------

// Operand (x, k) of a strided view: for A x = row, for B x = column.
template <class T>
SmallOperand<T> small_operand(const T* p, index_t xs, index_t ks, index_t extent, index_t k, index_t stride,
                              index_t batch) {
  SmallOperand<T> op{p, xs, ks, batch == 1 ? 0 : stride, extent, QuadAxis::k, false};
  // Quads along the axis whose stride is 1 (k first: row-major A, column-major B).
  op.axis = (ks == 1 || xs != 1) ? QuadAxis::k : QuadAxis::x;
  const index_t along = op.axis == QuadAxis::k ? k : extent;  // quads whole: a multiple of 4
  const index_t across = op.axis == QuadAxis::k ? xs : ks;    // each line's quads aligned
  const std::uintptr_t align = alignof(Quad<T>);
  op.vector = along % 4 == 0 && (across % 4 == 0 || (op.axis == QuadAxis::k ? extent : k) <= 1) &&
              op.stride % 4 == 0 && reinterpret_cast<std::uintptr_t>(p) % align == 0;
  return op;
}

// The kernel's resident blocks per SM on this device, asked once per instantiation.
template <class S, class Tile> int small_blocks_per_sm() {
  static const int blocks = [] {
    int count = 0;
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&count, small_kernel<S, Tile>, Tile::threads, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
    return std::max(count, 1);
  }();
  return blocks;
}

// blocks_per_sm: the grid's blocks per SM (the kernel's walk covers the rest of the groups); 0
// launches a block per group, up to the grid's limit; -1 chooses: as many blocks as are
// resident when each walks at least min_walk groups, else a block per group. A walk is a static
// share, so with few groups per block its last round runs part-empty where the hardware would
// have handed the spare groups to whichever block finished first (65536×64×64 at 3 blocks per
// SM, 2.6 groups per block: 5.90 against 6.53 × 10¹² updates/s a block per group; from about 4
// groups per block on, the walk was as fast or faster).
constexpr index_t min_walk = 3;
template <class S, class Tile>
void launch_small_tile(SmallArgs<S> args, int blocks_per_sm, cudaStream_t stream) {
  args.tiles_m = ceil_div(args.m, Tile::T), args.tiles_n = ceil_div(args.n, Tile::T);
  args.tile_count *= args.tiles_m * args.tiles_n;
  const index_t groups = ceil_div(args.tile_count, Tile::tiles);
  if (blocks_per_sm < 0) {
    const int resident = small_blocks_per_sm<S, Tile>();
    blocks_per_sm = groups >= min_walk * resident * multiprocessor_count() ? resident : 0;
  }
  const index_t cap = blocks_per_sm > 0 ? index_t(blocks_per_sm) * multiprocessor_count() : index_t(INT_MAX);
  small_kernel<S, Tile><<<unsigned(std::min(groups, cap)), Tile::threads, 0, stream>>>(args);
  check_launch("small_kernel");
}

// The small kernel's arguments for the product p (device views), before the tile is chosen.
template <class S> SmallArgs<S> small_args(const detail::Problem<S>& p) {
  using T = element_t<S>;
  const index_t m = p.m(), n = p.n(), k = p.k();
  SmallArgs<S> args{};
  args.a = small_operand<T>(p.a.p, p.a.rs, p.a.cs, m, k, p.stride_a, p.batch);
  args.b = small_operand<T>(p.b.p, p.b.cs, p.b.rs, n, k, p.stride_b, p.batch);
  args.c = p.c.p, args.c_rs = p.c.rs, args.c_cs = p.c.cs, args.stride_c = p.batch == 1 ? 0 : p.stride_c;
  args.m = m, args.n = n, args.k = k;
  args.tile_count = p.batch;  // times the tiles per member, in launch_small_tile
  args.alpha = p.alpha, args.beta = p.beta, args.symmetric = p.symmetric;
  args.c_vector = p.c.cs == 1 && n % 4 == 0 && (p.c.rs % 4 == 0 || m == 1) && args.stride_c % 4 == 0 &&
                  reinterpret_cast<std::uintptr_t>(p.c.p) % alignof(Quad<T>) == 0;
  return args;
}

// The product p (device views) on the small kernel with T×T tiles.
template <class S> void run_small(int tile, const detail::Problem<S>& p, cudaStream_t stream) {
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;
  const SmallArgs<S> args = small_args(p);
  switch (tile) {
    case 16: return launch_small_tile<S, SmallTile<16>>(args, -1, stream);
    case 32: return launch_small_tile<S, SmallTile<32>>(args, -1, stream);
    default: return launch_small_tile<S, SmallTile<64>>(args, -1, stream);
  }
}

}  // namespace ringmm::cuda_detail
