// The small-product kernel: one block of 256 threads over several T×T tiles of C at once
// (T = 16, 32 or 64: 16, 4 or 1 tiles), each thread 4×4 outputs of one tile. It takes products
// whose M or N is small (heuristics.hpp, small_tile), where the large kernel (gemm_kernel.cuh)
// wastes its tile and its occupancy: that kernel runs one 64×64 or 128×128 tile per block at
// 110–128 registers, two blocks per SM, so a 32³ product used a quarter of its tile, a 16³ one a
// sixteenth, and with 16 warps per SM one block's loads were not hidden behind another's
// arithmetic (ncu, batch 4096 × 64³ f32 max-plus: 25 % occupancy, DRAM at 29 %).
//
//   work     the tiles of every member of the batch, numbered member-major; block b takes tiles
//            b·tiles … b·tiles + tiles − 1, so the grid is one-dimensional and no batch count
//            overflows it
//   operands the caller's strided views, read in place (no padded copies). Each operand moves in
//            quads of 4 elements along its contiguous axis (k, or m for A and n for B): one vector
//            load where every quad is aligned and wholly inside or outside the operand, element by
//            element with bounds checks otherwise. Where both operands load by vectors, a chunk
//            wholly inside K loads without any check (quads outside the operand read its last one).
//            Shared memory holds [k][m] and [k][n], so a thread's 4 values of one k are one
//            broadcast vector read
//   K        walked in chunks of BK, the next chunk's quads loaded into registers while the
//            current one is consumed (T = 64: then stored into a second panel, one barrier a
//            chunk); the other blocks on the SM hide the rest
//   split-K  on GPUs with thread block clusters (compute capability 9.0), the K parts of one T = 64
//            tile run as the blocks of one cluster and meet in shared memory: each block leaves its
//            partial tile in its own, then ⊕-reduces a slice of rows across the cluster's blocks
//            and writes that slice of C. No workspace and no second launch; elsewhere the parts
//            go through a workspace and reduce_parts_kernel (launch.cuh: run_split_k)
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// BK_: the chunk of K staged at a time; the default keeps a block's panels within ~20 KB (f32).
// MinBlocks_: the blocks per SM the launch bound asks for with 4-byte registers (heuristics.hpp
// counts the default's slots). lab/harnesses/small_kernel_ab.cu measures other choices of both.
template <int T_, int BK_ = (T_ == 16 ? 8 : 16), int MinBlocks_ = small_resident_blocks(T_)> struct SmallTile {
  static constexpr int T = T_;  // tile edge
  static constexpr int min_blocks = MinBlocks_;
  static constexpr int threads = 256;
  static constexpr int axis_threads = T / 4;  // threads along m and along n of one tile
  static constexpr int tile_threads = axis_threads * axis_threads;
  static constexpr int tiles = threads / tile_threads;  // tiles per block: 16, 4, 1
  static_assert(tiles == small_tiles_per_block(T), "heuristics.hpp counts the same tiles per block");
  static constexpr int BK = BK_;
  static constexpr int LD = T + 4;                      // row pitch: quads stay aligned
  // One tile's [BK][LD] panel, padded by 16 elements so that the two tiles a warp of T = 16 reads
  // fall on different banks.
  static constexpr int panel = BK * LD + 16;
  static constexpr int quads_per_thread = tiles * T * BK / 4 / threads;  // per operand and chunk
  // T = 64 keeps two panels per operand (17.7 KB of f32 a block): the next chunk is stored into
  // one while the other is read, one barrier a chunk instead of two. Its one tile a block gives
  // mid sizes (1000³: 256 blocks) about two blocks per SM, too few to cover the second barrier.
  // The smaller edges keep one panel: theirs would need 38–45 KB a block, fewer blocks per SM on
  // GPUs with 100 KB of shared memory.
  static constexpr int buffers = T == 64 ? 2 : 1;
  static_assert(T == 16 || T == 32 || T == 64, "small tiles are 16, 32 or 64");
  static_assert(tiles * T * BK / 4 % threads == 0, "every thread moves the same number of quads");
};

// How an operand moves: quads along k or along its m (n) axis.
enum class QuadAxis : unsigned char { k, x };

// One operand of the small kernel: element (x, k) of batch member z at p[z·stride + x·xs + k·ks],
// x < extent (M for A, N for B), k < K.
template <class T> struct SmallOperand {
  const T* p;
  index_t xs, ks, stride, extent;
  index_t chunk_step;  // BK·ks: from one chunk of K to the next (set at launch, with the tile)
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
  index_t first_tile;                    // of this launch (grids past INT_MAX blocks run in slices)
  scalar_t<S> alpha, beta;
  // In the kernel built for clusters: the members are the K parts of one product, a cluster of
  // this many blocks a tile (T = 64, blocks numbered tile-major), reduced into C (stride_c = 0).
  int cluster_parts;
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
  const T* src[Q];  // the quad's first element in the chunk loaded next
  // Rows (columns) of the operand from each quad's first one on, 0 … T (0: none), a byte a quad
  // in one register: a register a quad would spill inside the loop of the builds of three and four
  // blocks per SM.
  unsigned x_left_bytes;
  static_assert(Q <= 4 && Tile::T < 256, "a byte a quad");

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

  __device__ __forceinline__ int x_left(int q) const { return int((x_left_bytes >> (8 * q)) & 0xffu); }

  // first_x[t]: the first row (column) of the block's tile t along this operand's x axis;
  // member[t]: its batch member, negative past the last tile.
  __device__ __forceinline__ void start(const SmallOperand<T>& op, const index_t* first_x, const index_t* member,
                                        int tid) {
    x_left_bytes = 0;
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, k;
      where(op.axis, tid + q * Tile::threads, t, x, k);
      const index_t x0 = first_x[t] + x;
      const bool inside = member[t] >= 0 && x0 < op.extent;
      if (inside) x_left_bytes |= unsigned(std::min<index_t>(op.extent - x0, Tile::T)) << (8 * q);
      // A quad outside the operand reads the last one inside it instead (an aligned one), so that
      // whole chunks of a vector operand load without a check: what it brings reaches only outputs
      // that are never written (rows or columns past the operand, members past the batch).
      const index_t row = inside || !op.vector ? x0 : op.extent - (op.axis == QuadAxis::k ? 1 : 4);
      src[q] = op.p + (member[t] >= 0 ? member[t] : 0) * op.stride + row * op.xs + index_t(k) * op.ks;
    }
  }

  // The next chunk's quads into registers, where the operand is vector and the chunk lies wholly
  // inside K: one load a quad, no checks.
  __device__ __forceinline__ void load_whole(const SmallOperand<T>& op) {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      reg[q] = load_quad(src[q]);
      src[q] += op.chunk_step;
    }
  }

  // The next chunk's quads into registers, checked element by element (0̄ outside the operand);
  // the chunk starts at k0.
  __device__ __forceinline__ void load(const SmallOperand<T>& op, index_t k0, index_t k_end, int tid) {
    const T zero = S::zero();
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, kq;
      where(op.axis, tid + q * Tile::threads, t, x, kq);
      const index_t k = k0 + kq;
      const T* p = src[q];
      src[q] += op.chunk_step;
      const int left = x_left(q);
      if (op.vector) {
        if (left > 0 && k < k_end) reg[q] = load_quad(p);
        else reg[q] = Quad<T>{{zero, zero, zero, zero}};
      } else if (op.axis == QuadAxis::k) {
#pragma unroll
        for (int e = 0; e < 4; ++e) reg[q].v[e] = (left > 0 && k + e < k_end) ? p[e * op.ks] : zero;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) reg[q].v[e] = (left > e && k < k_end) ? p[e * op.xs] : zero;
      }
    }
  }

  __device__ __forceinline__ void store(const SmallOperand<T>& op, T* panels, int tid) const {
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      int t, x, k;
      where(op.axis, tid + q * Tile::threads, t, x, k);
      T* s = panels + t * Tile::panel + k * Tile::LD + x;
      // A quad along k fills a column of the [k][x] panel, one along x a row: one stride apart from
      // the other, not two paths (the compiler would issue both, each predicated).
      const int along = op.axis == QuadAxis::k ? Tile::LD : 1;
#pragma unroll
      for (int e = 0; e < 4; ++e) s[e * along] = reg[q].v[e];
    }
  }
};

// One chunk of BK: this thread's 4×4 outputs from its fragments of the A and B panels.
template <class S, class Tile>
__device__ __forceinline__ void multiply_chunk(reg_t<S> (&acc)[4][4], const element_t<S>* a_frag,
                                               const element_t<S>* b_frag) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
#pragma unroll
  for (int kk = 0; kk < Tile::BK; ++kk) {
    const Quad<T> qa = load_quad(a_frag + kk * Tile::LD), qb = load_quad(b_frag + kk * Tile::LD);
    operand_t<S> fa[4], fb[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) fa[e] = traits::to_register(qa.v[e]), fb[e] = traits::to_register(qb.v[e]);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = traits::update(acc[i][j], fa[i], fb[j]);
  }
}

// Row `row` of C, columns j0 … j0 + 3 (those below N): C ← α ⊗ sums ⊕ β ⊗ C.
template <class S>
__device__ __forceinline__ void write_c_quad(const SmallArgs<S>& args, element_t<S>* row, index_t j0,
                                             const accumulator_t<S> (&sums)[4]) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  if (args.c_vector && j0 < args.n) {  // N is a multiple of 4: the quad is whole
    Quad<T> out;
#pragma unroll
    for (int j = 0; j < 4; ++j) out.v[j] = traits::epilogue(args.alpha, sums[j], args.beta, row + j0 + j);
    store_quad(row + j0, out);
  } else {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if (j0 + j >= args.n) break;
      T* out = row + (j0 + j) * args.c_cs;
      *out = traits::epilogue(args.alpha, sums[j], args.beta, out);
    }
  }
}

// A cluster's K parts of the tile at (i0, j0) meet (SmallArgs::cluster_parts): each block leaves
// its partial tile in its shared memory (finalised, as split-K's workspace holds its parts),
// then block r ⊕-reduces rows [r·⌈T/parts⌉, (r + 1)·⌈T/parts⌉) of the tile across every block of
// the cluster, in part order, and writes them to C.
template <class S, class Tile>
__device__ __forceinline__ void reduce_cluster_parts(const SmallArgs<S>& args, const reg_t<S> (&acc)[4][4],
                                                     element_t<S>* smem, index_t i0, index_t j0, int tid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  constexpr int edge = Tile::T, row_quads = edge / 4;
  static_assert(Tile::tiles == 1 && edge * edge <= 2 * Tile::buffers * Tile::panel,
                "a cluster's part is one tile a block, held in the block's panels");
  const int tx = tid % Tile::axis_threads, ty = tid / Tile::axis_threads;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    Quad<T> q;
#pragma unroll
    for (int j = 0; j < 4; ++j) q.v[j] = traits::finalize(traits::from_register(acc[i][j]));
    store_quad(smem + (ty * 4 + i) * edge + tx * 4, q);
  }
  cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
  cluster.sync();  // every part's tile is in place (the K loop's last barrier freed the panels)
  const int parts = args.cluster_parts, rows = (edge + parts - 1) / parts;
  const int first = int(cluster.block_rank()) * rows, end = min(edge, first + rows);
  for (int q = tid; q < (end - first) * row_quads; q += Tile::threads) {
    const int r = first + q / row_quads, col = (q % row_quads) * 4;
    const T zero = S::zero();
    Quad<T> total{{zero, zero, zero, zero}};
    for (int s = 0; s < parts; ++s) {
      const Quad<T> part = load_quad(cluster.map_shared_rank(smem, s) + r * edge + col);
#pragma unroll
      for (int e = 0; e < 4; ++e) total.v[e] = S::add(total.v[e], part.v[e]);
    }
    const accumulator_t<S> sums[4] = {total.v[0], total.v[1], total.v[2], total.v[3]};
    if (i0 + r < args.m) write_c_quad<S>(args, args.c + (i0 + r) * args.c_rs, j0 + col, sums);
  }
  cluster.sync();  // the other blocks read this block's shared memory until here
#else
  __trap();  // the host launches clusters only where this was compiled (small_clusters_run)
#endif
}

// Clusters: the build for split-K's parts in clusters (reduce_cluster_parts), apart from the
// others: carrying the cluster code behind a run-time branch made their short launches slower
// (docs/performance-log.md, "split-K's parts meet in thread block clusters").
template <class S, class Tile, bool Clusters = false>
__global__ void __launch_bounds__(Tile::threads, (sizeof(reg_t<S>) >= 8 ? 2 : Tile::min_blocks))
    small_kernel(const SmallArgs<S> args) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  constexpr int BK = Tile::BK;
  constexpr int panels = Tile::tiles * Tile::panel;  // one buffer of one operand
  // A's panels, then B's; after the K loop the partial tile of a cluster's part (T×T) reuses them.
  __shared__ alignas(16) T smem[2 * Tile::buffers * panels];
  T* const a_s = smem;
  T* const b_s = smem + Tile::buffers * panels;

  // Where the block's tiles lie, worked out once per tile: 64-bit divisions cost ~100 instructions
  // each, as much as a third of a 64³ product's arithmetic when every thread did its own.
  __shared__ index_t tile_member[Tile::tiles], tile_i0[Tile::tiles], tile_j0[Tile::tiles];
  const int tid = int(threadIdx.x);
  const index_t block_tile = args.first_tile + index_t(blockIdx.x) * Tile::tiles;
  if (tid < Tile::tiles) {
    index_t member, r;  // batch member and tile within it
    if constexpr (Clusters) {
      // A cluster's blocks are one tile's parts (members), in one launch of one tile a block.
      static_assert(Tile::tiles == 1, "a cluster's part is one tile a block");
      const unsigned parts = unsigned(args.cluster_parts);
      member = blockIdx.x % parts, r = blockIdx.x / parts;
    } else {  // member-major
      const index_t g = block_tile + tid, per_member = args.tiles_m * args.tiles_n;
      member = g < args.tile_count ? g / per_member : -1, r = g % per_member;
    }
    tile_member[tid] = member;
    tile_i0[tid] = (r / args.tiles_n) * Tile::T;
    tile_j0[tid] = (r % args.tiles_n) * Tile::T;
  }
  __syncthreads();
  SmallStage<S, Tile> stage_a, stage_b;
  stage_a.start(args.a, tile_i0, tile_member, tid);
  stage_b.start(args.b, tile_j0, tile_member, tid);

  // This thread's outputs: tile t of the block, rows ty·4 …, columns tx·4 ….
  const int t = tid / Tile::tile_threads, lt = tid % Tile::tile_threads;
  const int tx = lt % Tile::axis_threads, ty = lt / Tile::axis_threads;
  const T* a_frag = a_s + t * Tile::panel + ty * 4;
  const T* b_frag = b_s + t * Tile::panel + tx * 4;

  reg_t<S> acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = traits::initial_register();

  // K in chunks of BK. Where both operands are vector, the chunks wholly inside K load unchecked.
  const index_t chunks = (args.k + BK - 1) / BK;
  const index_t unchecked = args.a.vector && args.b.vector ? args.k / BK : 0;
  auto load_chunk = [&](index_t chunk) {
    if (chunk < unchecked) {
      stage_a.load_whole(args.a);
      stage_b.load_whole(args.b);
    } else {
      stage_a.load(args.a, chunk * BK, args.k, tid);
      stage_b.load(args.b, chunk * BK, args.k, tid);
    }
  };
  if (chunks > 0) load_chunk(0);
  if constexpr (Tile::buffers == 2) {
    if (chunks > 0) {
      stage_a.store(args.a, a_s, tid);
      stage_b.store(args.b, b_s, tid);
    }
    __syncthreads();
    int buffer = 0;
    for (index_t chunk = 0; chunk < chunks; ++chunk, buffer ^= panels) {
      const bool next = chunk + 1 < chunks;
      if (next) load_chunk(chunk + 1);  // the next chunk's loads in flight during this chunk's arithmetic
      multiply_chunk<S, Tile>(acc, a_frag + buffer, b_frag + buffer);
      // The other panels were last read in the previous chunk, which every thread has left.
      if (next) {
        stage_a.store(args.a, a_s + (buffer ^ panels), tid);
        stage_b.store(args.b, b_s + (buffer ^ panels), tid);
      }
      __syncthreads();
    }
  } else {
    for (index_t chunk = 0; chunk < chunks; ++chunk) {
      stage_a.store(args.a, a_s, tid);
      stage_b.store(args.b, b_s, tid);
      __syncthreads();
      if (chunk + 1 < chunks) load_chunk(chunk + 1);  // the next chunk's loads in flight during its arithmetic
      multiply_chunk<S, Tile>(acc, a_frag, b_frag);
      __syncthreads();  // the panels are refilled next
    }
  }

  if constexpr (Clusters) return reduce_cluster_parts<S, Tile>(args, acc, smem, tile_i0[0], tile_j0[0], tid);
  if (tile_member[t] < 0) return;
  const index_t i0 = tile_i0[t] + ty * 4, j0 = tile_j0[t] + tx * 4;
  T* c = args.c + tile_member[t] * args.stride_c;
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
    } else {
      accumulator_t<S> sums[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) sums[j] = traits::from_register(acc[i][j]);
      write_c_quad<S>(args, row, j0, sums);
    }
  }
}

// ---- host side --------------------------------------------------------------------------------

// Operand (x, k) of a strided view: for A x = row, for B x = column.
template <class T>
SmallOperand<T> small_operand(const T* p, index_t xs, index_t ks, index_t extent, index_t k, index_t stride,
                              index_t batch) {
  SmallOperand<T> op{p, xs, ks, batch == 1 ? 0 : stride, extent, 0, QuadAxis::k, false};
  // Quads along the axis whose stride is 1 (k first: row-major A, column-major B).
  op.axis = (ks == 1 || xs != 1) ? QuadAxis::k : QuadAxis::x;
  const index_t along = op.axis == QuadAxis::k ? k : extent;  // quads whole: a multiple of 4
  const index_t across = op.axis == QuadAxis::k ? xs : ks;    // each line's quads aligned
  const std::uintptr_t align = alignof(Quad<T>);
  op.vector = along % 4 == 0 && (across % 4 == 0 || (op.axis == QuadAxis::k ? extent : k) <= 1) &&
              op.stride % 4 == 0 && reinterpret_cast<std::uintptr_t>(p) % align == 0;
  return op;
}

// Sets the tile counts of args for Tile; returns the blocks of the launch.
template <class Tile, class S> index_t count_tiles(SmallArgs<S>& args) {
  args.tiles_m = ceil_div(args.m, Tile::T), args.tiles_n = ceil_div(args.n, Tile::T);
  args.a.chunk_step = Tile::BK * args.a.ks, args.b.chunk_step = Tile::BK * args.b.ks;
  args.tile_count *= args.tiles_m * args.tiles_n;
  return ceil_div(args.tile_count, Tile::tiles);
}

template <class S, class Tile>
void launch_small_tile(SmallArgs<S> args, cudaStream_t stream) {
  const index_t blocks = count_tiles<Tile>(args);
  for (index_t b0 = 0; b0 < blocks; b0 += INT_MAX) {
    args.first_tile = b0 * Tile::tiles;
    small_kernel<S, Tile><<<unsigned(std::min<index_t>(INT_MAX, blocks - b0)), Tile::threads, 0, stream>>>(args);
    check_launch("small_kernel");
  }
}

// Split-K's parts in clusters take the two-block build of T = 64: they keep to one block per SM
// where the heuristics choose (heuristics.hpp: k_parts_small).
using SmallClusterTile = SmallTile<64, 16, small_roomy_blocks>;

// args.cluster_parts members of one product (K parts) as clusters of that many blocks, one a part
// (split_in_clusters: a split's few tiles, so one launch on grid x).
template <class S> void launch_small_clusters(SmallArgs<S> args, cudaStream_t stream) {
  const index_t blocks = count_tiles<SmallClusterTile>(args);
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = unsigned(args.cluster_parts), cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
  cudaLaunchConfig_t launch{};
  launch.gridDim = dim3(unsigned(blocks)), launch.blockDim = dim3(SmallClusterTile::threads), launch.stream = stream;
  launch.attrs = &cluster, launch.numAttrs = 1;
  cuda_check(cudaLaunchKernelEx(&launch, small_kernel<S, SmallClusterTile, true>, args),
             "small_kernel (clusters of K parts)");
}

// The small kernel's arguments for the product p (device views), before its tiles are counted.
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

// The product p (device views) on the small kernel with T×T tiles; T = 64 in the build for the
// blocks per SM that small_min_blocks gives (registers of 8 bytes have only the two-block one).
// cluster_parts > 1: p's members are the K parts of one product into p.c (SmallArgs::cluster_parts).
template <class S> void run_small(int tile, const detail::Problem<S>& p, cudaStream_t stream, int cluster_parts = 1) {
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;
  SmallArgs<S> args = small_args(p);
  if (cluster_parts > 1) {
    args.cluster_parts = cluster_parts;
    return launch_small_clusters(args, stream);
  }
  switch (tile) {
    case 16: return launch_small_tile<S, SmallTile<16>>(args, stream);
    case 32: return launch_small_tile<S, SmallTile<32>>(args, stream);
    default:
      if constexpr (sizeof(reg_t<S>) < 8) {
        const index_t blocks = p.batch * ceil_div(p.m(), 64) * ceil_div(p.n(), 64);
        if (small_min_blocks(64, blocks, multiprocessor_count()) == small_roomy_blocks)
          return launch_small_tile<S, SmallTile<64, 16, small_roomy_blocks>>(args, stream);
      }
      return launch_small_tile<S, SmallTile<64>>(args, stream);
  }
}

// Whether this GPU runs the T = 64 small kernel's clusters: compute capability 9.0 or later, and
// the kernel built for it (a build for older GPUs only, JIT-compiled, has no cluster code). Asked
// once per device; every split call asks.
template <class S> bool small_clusters_run() {
  static std::atomic<int> known[64] = {};  // 2: they run, 1: not
  return per_device(known, [](int) {
           const void* kernel = reinterpret_cast<const void*>(&small_kernel<S, SmallClusterTile, true>);
           return compute_capability() >= 90 && kernel_arch(kernel) >= 90 ? 2 : 1;
         }) == 2;
}

}  // namespace ringmm::cuda_detail
