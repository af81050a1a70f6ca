// or-and on tensor cores. A product of 0/1 matrices is a count of the k where both are true,
// compared with zero; integer MMA counts exactly (int32 accumulators, K < 2³¹), so the boolean
// product runs on the tensor cores with no loss:
//
//   pack     A (M×K) and Bᵀ (N×K) into 32-bit words along K, rows padded to the tile and K with
//            zeros (which count nothing) to a stage, or to a short tail's 8 words past the last
//            whole stage; rows are pitched in whole stages, and the words past what is packed are
//            never read (split_k). 4 bytes of 0/1 a word for the int8 route, 32 bits a word for
//            the bits route. Nonzero inputs are true, as everywhere in or-and. Sources are read
//            as aligned 4-byte words whatever their alignment (rows of 4097 bytes).
//   multiply one kernel for both routes: their MMAs (m16n8k32 s8 and m16n8k256 b1 AND+POPC) take
//            fragments of the same 32-bit words in the same places, so only the instruction
//            differs. 128×128 tiles, 8 warps of 64×32, 32 words of K a stage in a 3-stage
//            cp.async pipeline, ldmatrix from XOR-swizzled shared memory. A short tail of K past
//            the last whole stage (≤ 8 words: K = 4097 bits is 128 words and 1) is ANDed in by
//            the epilogue on CUDA cores rather than as one more stage.
//   finish   in the epilogue: C = (α ∧ count > 0) ∨ (β ∧ C), written as 0/1 bytes to any strided C.
//   fringe   C's ragged last rows and columns, when few (m or n mod 128 ≤ 16), are not MMA tiles:
//            blocks after the tiles' in the same grid AND and OR their packed rows on CUDA cores,
//            in the free slots of the tiles' last wave.
//
// Aᵀ·A (symmetric) runs the tiles of the lower triangle only and mirrors them, and its fringe the
// ragged rows' lower triangle; Bᵀ is then A's own packed copy. Batches run over grid.z. Every
// operand is a device view (engine.cuh stages host operands first).
//
// Over 500 lines because packing, the MMA main loop, the tail and the fringe share one fragment
// mapping and one packed layout, which must change together.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "ringmm/context.hpp"
#include "ringmm/cuda/async_copy.cuh"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda_detail {
namespace or_and_mma {

enum class Route { int8, bits };

constexpr int kTileM = 128, kTileN = 128;  // rows of A and of Bᵀ a block covers
constexpr int kStageWords = 32;            // 32-bit words of K a pipeline stage holds (128 bytes a row)
constexpr int kStages = 3;
constexpr int kThreads = 256;              // 8 warps: 2 along M × 4 along N, 64×32 each
constexpr int kRowBytes = kStageWords * 4;
constexpr int kStageBytes = (kTileM + kTileN) * kRowBytes;
constexpr int kSharedBytes = kStages * kStageBytes;  // 96 KiB: two blocks an SM

// K's words past the last whole stage that the epilogue ORs in on CUDA cores, at most: one MMA
// step's 8 (256 bits, 32 bytes of int8). As one more stage they would cost every tile a stage's
// loads, a pipeline step and one MMA step (the b1 step issues at about the int8 step's rate);
// on CUDA cores a word costs a thread 16 shared loads and 64 ANDs, so 8 words are about one
// step's tensor time, taken on the integer pipe beside the other block's MMAs.
constexpr int kTailWords = 8;

// How K's words (`words`, all of K's) run: `stages` on the MMAs (the last of them partial, and
// guarded, when the words past the whole stages are more than kTailWords) and `tail_words` in the
// epilogue; packing writes `packed` words a row (the stages, or the whole stages and kTailWords
// for a short tail), which is all that the kernel reads, in rows `pitch` words apart (whole
// stages, so that every row starts on a 128-byte line as the stages' copies read it: a pitch of
// 136 words cost the product at 4097³ about 1 µs).
struct KSplit {
  index_t stages, tail_words, packed, pitch;
};
inline KSplit split_k(index_t words) {
  const index_t past = words % kStageWords, whole = words - past;
  const bool short_tail = past <= kTailWords;
  return {whole / kStageWords + (short_tail ? 0 : 1), short_tail ? past : 0,
          short_tail ? whole + (past > 0 ? kTailWords : 0) : whole + kStageWords, round_up(words, kStageWords)};
}
// The epilogue's flags: a byte an output of the tile, in the first pipeline slot.
constexpr int kFlagPitch = kTileN + 4;
constexpr int kFlagBytes = kTileM * kFlagPitch;
// The tail's rows, 48 bytes a row of A and of Bᵀ (so that the 8 rows, or 4 columns, a warp reads
// at once sit in distinct banks), past the flags' bytes of pipeline slot stages % 3: the slot
// iteration stages − 2 would refill with stage stages, so its copies go out there, while the last
// two stages multiply (or in the prologue, into slot 2, when there are fewer than 2 stages). No
// more shared memory: a region of its own (12 KiB more a block) cost as much time as copying the
// tail after the loop did.
constexpr int kTailPitch = 48;
static_assert(kTailWords * 4 <= kTailPitch && kFlagBytes + (kTileM + kTileN) * kTailPitch <= kStageBytes,
              "the flags and a row's tail words fit a slot");

// Booleans a 32-bit word holds on each route.
constexpr int elements_per_word(Route r) { return r == Route::int8 ? 4 : 32; }

// ---- pack -------------------------------------------------------------------------------------

// One word of a packed row from 32-bit groups of 4 input bytes: int8 keeps a 0/1 byte per input
// byte; bits keeps one bit per byte (bit e of the word is element e of the group of 32).
__device__ inline std::uint32_t byte_flags(std::uint32_t four_bytes) {
  return __vcmpne4(four_bytes, 0u) & 0x01010101u;  // 1 in every byte that is nonzero
}
__device__ inline std::uint32_t bit_flags(std::uint32_t four_bytes) {
  // The four 0/1 bytes weighted 1, 2, 4, 8 and summed into the top byte.
  return (byte_flags(four_bytes) * 0x01020408u) >> 24;
}

// The 1 ≤ n ≤ 4·G bytes at p, at any alignment, as G words of 4 bytes (little-endian, zeros past
// n): aligned 4-byte loads of the words that hold one of those bytes and of no others (so never
// a word that holds no byte of the view), each neighbouring pair re-aligned by a funnel shift.
template <int G> __device__ inline void load_bytes(std::uint32_t (&out)[G], const std::uint8_t* p, int n) {
  const int offset = int(reinterpret_cast<std::uintptr_t>(p) % 4);
  const std::uint32_t* word = reinterpret_cast<const std::uint32_t*>(p - offset);
  const int held = (offset + n + 3) / 4;  // the words that hold the n bytes: G, or G + 1 when unaligned
  std::uint32_t w[G + 1];
#pragma unroll
  for (int g = 0; g <= G; ++g) w[g] = g < held ? word[g] : 0u;
#pragma unroll
  for (int g = 0; g < G; ++g) {
    out[g] = __funnelshift_r(w[g], w[g + 1], 8 * offset);
    if (n < 4 * (g + 1)) out[g] &= n <= 4 * g ? 0u : (1u << (8 * (n - 4 * g))) - 1;  // bytes past the n
  }
}

// How pack_kernel walks its source: along k when k is contiguous (a thread per word); across rows
// when rows are (a thread per 4 rows × one word, the 4 rows' bytes at each k read together: B's
// usual layout; the int8 route's only, as the bits route packs contiguous rows with
// pack_bits_transposed_kernel). A view is row- or column-major, so one of the two is. Both walks
// read aligned words (load_bytes), so unaligned views (rows of 4097 bytes) pack as fast as
// aligned ones.
enum class Walk { along_k, across_rows };
constexpr int kRowsPerThread = 4;  // Walk::across_rows: few, so that there are threads enough to hide latency

// dst: rows_padded rows a member, `pitch` words apart, of which words_padded are written;
// members member_words apart; src: the strided u8 view of
// `rows` rows of length k (element (r, c) at src[r·rs + c·cs]), members src_stride apart (0: one).
template <Route R, Walk W>
__global__ void pack_kernel(std::uint32_t* dst, index_t rows_padded, index_t words_padded, index_t pitch, index_t member_words,
                            const std::uint8_t* src, index_t rows, index_t k, index_t rs, index_t cs,
                            index_t src_stride, index_t members) {
  constexpr int E = elements_per_word(R);
  constexpr int kShift = R == Route::int8 ? 8 : 1;  // element e of a word sits at bit e·kShift
  const index_t groups = W == Walk::across_rows ? rows_padded / kRowsPerThread : rows_padded;
  const index_t items = groups * words_padded;
  for (index_t z = blockIdx.y; z < members; z += gridDim.y) {
    const std::uint8_t* s = src + z * src_stride;
    std::uint32_t* d = dst + z * member_words;
    for (index_t t = blockIdx.x * index_t(blockDim.x) + threadIdx.x; t < items; t += index_t(gridDim.x) * blockDim.x) {
      if constexpr (W == Walk::across_rows) {
        // Consecutive threads take consecutive groups of rows: a warp reads 128 contiguous bytes a k.
        const index_t r0 = (t % groups) * kRowsPerThread, w = t / groups, k0 = w * E;
        const int live = int(rows - r0 < kRowsPerThread ? rows - r0 : kRowsPerThread);  // the last rows, partly past the view
        std::uint32_t word[kRowsPerThread] = {};
        if (live > 0) {
#pragma unroll 8
          for (int e = 0; e < E; ++e) {
            if (k0 + e >= k) break;
            std::uint32_t four[1];
            load_bytes(four, s + r0 + (k0 + e) * cs, live);
            const std::uint32_t flags = byte_flags(four[0]);
#pragma unroll
            for (int j = 0; j < kRowsPerThread; ++j) word[j] |= ((flags >> (8 * j)) & 1u) << (e * kShift);
          }
        }
#pragma unroll
        for (int j = 0; j < kRowsPerThread; ++j) d[(r0 + j) * pitch + w] = word[j];
      } else {
        // Walk::along_k: consecutive threads take consecutive words of a row.
        const index_t r = t / words_padded, w = t % words_padded, k0 = w * E;
        std::uint32_t four[E / 4] = {};  // groups of 4 elements, a byte each
        if (r < rows && k0 < k) load_bytes(four, s + r * rs + k0, int(k - k0 < E ? k - k0 : E));
        std::uint32_t word = 0;
#pragma unroll
        for (int g = 0; g < E / 4; ++g) {
          if constexpr (R == Route::int8) word = byte_flags(four[g]);
          else word |= bit_flags(four[g]) << (4 * g);
        }
        d[r * pitch + w] = word;
      }
    }
  }
}

// The bits route's packing of rows that are contiguous (B's usual layout): a block turns a tile of
// 32 k × 128 rows into 128 words. It reads the tile along the rows (coalesced), keeps it in shared
// memory, and each warp makes the words of 16 rows with one ballot a row (lane e reads element e).
constexpr int kTransposeRows = 128;
static_assert(kTileM % kTransposeRows == 0 && kTileN % kTransposeRows == 0, "packed rows are padded to whole tiles");
template <Route R>  // a template, as the header's other kernels are, so that every unit may include it
__global__ void pack_bits_transposed_kernel(std::uint32_t* dst, index_t rows_padded, index_t words_padded, index_t pitch,
                                            index_t member_words, const std::uint8_t* src, index_t rows, index_t k,
                                            index_t cs, index_t src_stride, index_t members) {
  static_assert(R == Route::bits, "one ballot makes one word of 32 booleans");
  __shared__ std::uint8_t tile[32][kTransposeRows + 4];  // +4: the ballot reads of a column hit 32 banks
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const index_t row_tiles = rows_padded / kTransposeRows, items = row_tiles * words_padded;
  for (index_t z = blockIdx.y; z < members; z += gridDim.y) {
    const std::uint8_t* s = src + z * src_stride;
    std::uint32_t* d = dst + z * member_words;
    for (index_t item = blockIdx.x; item < items; item += gridDim.x) {
      const index_t row0 = (item % row_tiles) * kTransposeRows, w = item / row_tiles, k0 = w * 32;
      {  // thread t loads 16 rows at element t/8 (aligned words, whatever cs), zeros past the view
        const int e = threadIdx.x / 8, col = (threadIdx.x % 8) * 16;
        const index_t kk = k0 + e, r = row0 + col;
        std::uint32_t four[4] = {};
        if (kk < k && r < rows) load_bytes(four, s + r + kk * cs, int(rows - r < 16 ? rows - r : 16));
#pragma unroll
        for (int q = 0; q < 4; ++q) *reinterpret_cast<std::uint32_t*>(&tile[e][col + 4 * q]) = four[q];
      }
      __syncthreads();
      std::uint32_t mine = 0;  // lane i keeps the word of row warp·16 + i
#pragma unroll
      for (int i = 0; i < 16; ++i) {
        const std::uint32_t word = __ballot_sync(0xffffffffu, tile[lane][warp * 16 + i] != 0);
        if (lane == i) mine = word;
      }
      if (lane < 16) d[(row0 + warp * 16 + lane) * pitch + w] = mine;
      __syncthreads();  // the tile is refilled for the next item
    }
  }
}

// ---- multiply ---------------------------------------------------------------------------------

// Byte offset of the 16-byte chunk `chunk` of row `row` in a stage's A or Bᵀ part: chunks XOR-swizzled
// by the row, so that the 8 rows an ldmatrix phase reads sit in 8 different bank groups.
__device__ inline int swizzled(int row, int chunk) { return row * kRowBytes + ((chunk ^ (row & 7)) << 4); }

__device__ inline void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem));
}

template <Route R>
__device__ inline void mma(int (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (R == Route::int8) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

struct KernelArgs {
  const std::uint32_t* a;   // packed A: round_up(m, 128) rows `words` apart, member_a words apart (0: shared)
  const std::uint32_t* bt;  // packed Bᵀ: round_up(n, 128) rows, member_b apart
  index_t words;            // the packed rows' pitch (split_k)
  index_t words_used;       // the words that hold K, rounded up to one MMA's 8 (what the fringe reads)
  index_t stages;           // the stages of K on the MMAs, the last of them partial when words_used says so
  index_t tail_words;       // the words past them, which the epilogue ORs in on CUDA cores
  index_t member_a, member_b;
  std::uint8_t* c;
  index_t m, n, c_rs, c_cs, stride_c, batch;
  index_t tiled_m, tiled_n;  // C's rows and columns in MMA tiles: m and n less the fringe's
  int tiles_m, tiles_n;      // MMA tiles over tiled_m × tiled_n
  int tiles;                 // the blocks of MMA tiles; the fringe's follow
  int row_fringe_blocks;     // then the column fringe's
  bool alpha, beta;  // or-and's scalars: true or false
  bool symmetric;    // tiles of the lower triangle only, mirrored
};

// C(i, j) = (α ∧ any) ∨ (β ∧ C(i, j)) as a 0/1 byte, and for Aᵀ·A the mirror C(j, i) (the upper
// triangle, never read).
__device__ inline void finish(const KernelArgs& p, std::uint8_t* c, index_t i, index_t j, bool any) {
  std::uint8_t& out = c[i * p.c_rs + j * p.c_cs];
  const bool value = (p.alpha && any) || (p.beta && out != 0);
  out = value;
  if (p.symmetric && j != i) c[j * p.c_rs + i * p.c_cs] = value;
}

// The block's tile. Interior tiles (all rows and columns inside C) come first, row-major in
// groups of 8 tile rows (so that a wave reuses a few panels of A against all of Bᵀ from L2);
// the ragged last tile column and row come last, where their lighter work fills the last wave.
// Aᵀ·A: the lower triangle's tiles in order.
__device__ inline void tile_of(const KernelArgs& p, int& tm, int& tn) {
  const int t = blockIdx.x;
  if (p.symmetric) {
    tm = int((sqrt(8.0 * t + 1.0) - 1.0) / 2.0);  // t = tm(tm+1)/2 + tn, tn ≤ tm
    while ((tm + 1) * (tm + 2) / 2 <= t) ++tm;
    while (tm * (tm + 1) / 2 > t) --tm;
    tn = t - tm * (tm + 1) / 2;
    return;
  }
  const int full_m = int(p.tiled_m / kTileM), full_n = int(p.tiled_n / kTileN);
  if (t < full_m * full_n) {
    constexpr int kGroup = 8;
    const int per_group = kGroup * full_n, first = t / per_group * kGroup, rows = min(kGroup, full_m - first);
    tm = first + (t % per_group) % rows;
    tn = (t % per_group) / rows;
    return;
  }
  int r = t - full_m * full_n;
  const int last_column = p.tiles_n > full_n ? full_m : 0;  // tiles of the ragged column, above the ragged row
  if (r < last_column) {
    tm = r, tn = full_n;
  } else {
    tm = full_m, tn = r - last_column;
  }
}

// Where an MMA accumulator sits in the warp's 64×32 part of the tile: element e of the (mi, ni)
// 16×8 MMA tile is row lane/4 (+8 for e ≥ 2) and column 2·(lane%4) + e%2 of it. A thread thus
// holds 8 rows (mi, e/2) × 8 columns (ni, e%2) of the tile.
__device__ inline int fragment_row(int warp_m, int lane, int mi, int e) { return warp_m * 64 + mi * 16 + lane / 4 + (e / 2) * 8; }
__device__ inline int fragment_col(int warp_n, int lane, int ni, int e) { return warp_n * 32 + ni * 8 + 2 * (lane % 4) + e % 2; }

// One stage of K from shared memory into the accumulators: `steps` MMA steps of 8 words. Guarded,
// it runs only the MMA tiles below m_tiles × n_tiles (those that hold C) and the given steps.
template <Route R, bool kGuarded>
__device__ __forceinline__ void mma_stage(int (&acc)[4][4][4], std::uint32_t a_frag, std::uint32_t b_frag, int lane,
                                          int steps, int m_tiles, int n_tiles) {
#pragma unroll
  for (int step = 0; step < kStageWords / 8; ++step) {  // 8 words: one MMA's K
    if (kGuarded && step >= steps) break;
    std::uint32_t af[4][4], bf[2][4];
    // A: lanes 0-15 address rows 0-15 of the step's first 16 bytes, lanes 16-31 its second
    // 16 bytes (registers a0..a3 as the MMA wants them), 16 rows further for each mi.
    const std::uint32_t a_chunk = ((2 * step + lane / 16) ^ (lane % 8)) << 4;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
      if (!kGuarded || mi < m_tiles) ldmatrix_x4(af[mi], a_frag + mi * 16 * kRowBytes + a_chunk);
    // Bᵀ: lanes 0-7 address n 0-7 in the first 16 bytes (b0 of n-tile 2nj), 8-15 the second
    // 16 bytes (its b1), 16-31 the same for n 8-15 (n-tile 2nj+1).
    const std::uint32_t b_chunk = ((2 * step + (lane / 8) % 2) ^ (lane % 8)) << 4;
#pragma unroll
    for (int nj = 0; nj < 2; ++nj)
      if (!kGuarded || 2 * nj < n_tiles) ldmatrix_x4(bf[nj], b_frag + nj * 16 * kRowBytes + b_chunk);
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
        if (!kGuarded || (mi < m_tiles && ni < n_tiles))
          mma<R>(acc[mi][ni], af[mi], bf[ni / 2][(ni % 2) * 2], bf[ni / 2][(ni % 2) * 2 + 1]);
  }
}

// ---- fringe ---------------------------------------------------------------------------------------

// C's ragged last rows and columns (m, n mod 128), when at most kFringeLines, on CUDA cores: as MMA
// tiles they keep at most 16 of 128 rows (or columns) live, so run at most 1/8 of their MMAs, yet
// hold a block slot for all of K; at 4097³ their 65 tiles made a fifth wave after 4096³'s 3.9.
// Instead blocks after the tiles' take them, in the last wave's free slots. A fringe block holds
// the thin side's ≤ 16 packed rows (C's ragged rows of A, or ragged columns of Bᵀ) in shared
// memory, kFringeChunk words of each at a time, and takes kFringeSpan lines of the long side (the
// other operand's rows), 2 threads a line: each reads every other 16-byte group of the line,
// kFringeDepth groups in flight, and ANDs each with the thin rows' groups. Its work grows with the
// thin lines (4 ANDs a line a group) where a ragged tile's does not; 16 lines, one MMA tile's
// rows, are where a tile starts to use its MMAs.
constexpr int kFringeLines = 16;
constexpr int kFringeSpan = kThreads / 2;
constexpr int kFringeChunk = kSharedBytes / (kFringeLines * 4);  // 1536 words: K = 49152 bits a chunk
constexpr int kFringeDepth = 8;                                   // 128 bytes in flight a thread
static_assert(kFringeChunk % 8 == 0, "chunks of whole pairs of 16-byte groups");
static_assert(kTileM % kFringeSpan == 0 && kTileN % kFringeSpan == 0, "a fringe block's long lines lie in the padded rows");

// Fringe block f: the row fringe's blocks first (C's rows tiled_m..m against all n columns), then
// the column fringe's (columns tiled_n..n against rows 0..tiled_m). Aᵀ·A has the row fringe only:
// the lower triangle's ragged columns lie in its ragged rows, mirrored from there.
__device__ inline void fringe_block(const KernelArgs& p, int f, unsigned char* smem) {
  const bool rows_thin = f < p.row_fringe_blocks;
  const index_t thin0 = rows_thin ? p.tiled_m : p.tiled_n;
  const int lines = int((rows_thin ? p.m : p.n) - thin0);
  const index_t span = rows_thin ? p.n : p.tiled_m;  // the long side's lines
  const index_t line = index_t(rows_thin ? f : f - p.row_fringe_blocks) * kFringeSpan + threadIdx.x / 2;
  const int half = threadIdx.x % 2;
  uint4* thin = reinterpret_cast<uint4*>(smem);  // [kFringeLines][kFringeChunk / 4]
  for (index_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const std::uint32_t* a = p.a + z * p.member_a;
    const std::uint32_t* bt = p.bt + z * p.member_b;
    const std::uint32_t* thin_rows = (rows_thin ? a : bt) + thin0 * p.words;
    // Lines past the long side are padding of the packed operand (zeros): read, never written.
    const std::uint32_t* long_row = (rows_thin ? bt : a) + line * p.words;
    std::uint32_t any[kFringeLines] = {};  // a thin line each: the OR of the ANDed words
    for (index_t c0 = 0; c0 < p.words_used; c0 += kFringeChunk) {
      const int chunk = int(p.words_used - c0 < kFringeChunk ? p.words_used - c0 : kFringeChunk);  // a multiple of 8
      __syncthreads();  // every thread is done with the previous chunk (or member)
      for (int g = threadIdx.x; g < lines * (chunk / 4); g += kThreads) {
        const int q = g / (chunk / 4), group = g % (chunk / 4);
        copy16_async(shared_address(thin + q * (kFringeChunk / 4) + group), thin_rows + q * p.words + c0 + 4 * group);
      }
      commit_group();
      wait_group<0>();
      __syncthreads();
      const uint4* groups = reinterpret_cast<const uint4*>(long_row + c0) + half;  // this thread's: every other
      for (int g0 = 0; g0 < chunk / 8; g0 += kFringeDepth) {
        uint4 x[kFringeDepth];
#pragma unroll
        for (int d = 0; d < kFringeDepth; ++d) x[d] = g0 + d < chunk / 8 ? groups[2 * (g0 + d)] : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int d = 0; d < kFringeDepth; ++d) {
          if (g0 + d >= chunk / 8) break;
#pragma unroll
          for (int q = 0; q < kFringeLines; ++q) {
            if (q >= lines) break;
            const uint4 y = thin[q * (kFringeChunk / 4) + 2 * (g0 + d) + half];
            any[q] |= (x[d].x & y.x) | (x[d].y & y.y) | (x[d].z & y.z) | (x[d].w & y.w);
          }
        }
      }
    }
    std::uint8_t* c = p.c + z * p.stride_c;
#pragma unroll
    for (int q = 0; q < kFringeLines; ++q) {
      any[q] |= __shfl_xor_sync(0xffffffffu, any[q], 1);  // the line's other half
      if (q >= lines || line >= span || q % 2 != half) continue;  // the two threads of a line write alternate outputs
      const index_t i = rows_thin ? thin0 + q : line, j = rows_thin ? line : thin0 + q;
      if (!(p.symmetric && j > i)) finish(p, c, i, j, any[q] != 0);
    }
  }
}

// ---- the kernel -----------------------------------------------------------------------------------

template <Route R>
__global__ void __launch_bounds__(kThreads, 2) or_and_mma_kernel(KernelArgs p) {
  extern __shared__ __align__(128) unsigned char smem[];
  if (int(blockIdx.x) >= p.tiles) {
    fringe_block(p, int(blockIdx.x) - p.tiles, smem);
    return;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp / 4, warp_n = warp % 4;  // 2 × 4 warps
  int tm, tn;
  tile_of(p, tm, tn);
  // The 16-row and 8-column MMA tiles of this warp that hold any of C: a ragged tile skips the others.
  auto holding = [](index_t left, int size) { return left <= 0 ? 0 : int(left >= 4 * size ? 4 : (left + size - 1) / size); };
  const int m_tiles = holding(p.tiled_m - tm * index_t(kTileM) - warp_m * 64, 16);
  const int n_tiles = holding(p.tiled_n - tn * index_t(kTileN) - warp_n * 32, 8);
  const bool ragged = m_tiles < 4 || n_tiles < 4;
  // The rows this thread addresses in ldmatrix, as byte offsets in a stage's A and Bᵀ parts.
  // Each is ≡ lane (mod 8), so the XOR swizzle of every fragment chunk depends on the lane only.
  const std::uint32_t a_row = (warp_m * 64 + lane % 16) * kRowBytes;
  const std::uint32_t b_row = (warp_n * 32 + lane % 8 + (lane / 16) * 8) * kRowBytes;

  for (index_t z = blockIdx.z; z < p.batch; z += gridDim.z) {
    const std::uint32_t* a_tile = p.a + z * p.member_a + index_t(tm) * kTileM * p.words;
    const std::uint32_t* b_tile = p.bt + z * p.member_b + index_t(tn) * kTileN * p.words;

    // Stage s of K into slot: 128 + 128 rows of 8 chunks of 16 bytes, 8 chunks a thread.
    auto load_stage = [&](index_t s, int slot) {
      unsigned char* base = smem + slot * kStageBytes;
      const std::uint32_t a_base = shared_address(base), b_base = shared_address(base + kTileM * kRowBytes);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int chunk_id = threadIdx.x + i * kThreads, row = chunk_id / 8, chunk = chunk_id % 8;
        copy16_async(a_base + swizzled(row, chunk), a_tile + row * p.words + s * kStageWords + chunk * 4);
        copy16_async(b_base + swizzled(row, chunk), b_tile + row * p.words + s * kStageWords + chunk * 4);
      }
    };

    int acc[4][4][4] = {};  // [m16 tile][n8 tile][fragment]
    // K's short tail: into slot stages % 3 (kTailPitch), or slot 2 when fewer than 2 stages never use it.
    unsigned char* tail = smem + (p.stages >= kStages - 1 ? int(p.stages % kStages) : kStages - 1) * kStageBytes + kFlagBytes;
    auto load_tail = [&] {  // this thread's row of the tail: rows of A, then of Bᵀ
      static_assert(kThreads == kTileM + kTileN && kTailWords == 8, "a thread copies one row's 8 words");
      const int row = threadIdx.x;  // packed rows hold the kTailWords words past the stages (split_k)
      const std::uint32_t* src = (row < kTileM ? a_tile + row * p.words : b_tile + (row - kTileM) * p.words) + p.stages * kStageWords;
      copy16_async(shared_address(tail + row * kTailPitch), src);
      if (p.tail_words > 4) copy16_async(shared_address(tail + row * kTailPitch + 16), src + 4);  // the epilogue reads tail_words
    };
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < p.stages) load_stage(s, s);
      if (s == kStages - 2 && p.stages < kStages - 1 && p.tail_words > 0) load_tail();
      commit_group();
    }
    for (index_t s = 0; s < p.stages; ++s) {
      wait_group<kStages - 2>();
      __syncthreads();  // stage s is in; every warp is done with the slot refilled next
      if (s + kStages - 1 < p.stages) load_stage(s + kStages - 1, int((s + kStages - 1) % kStages));
      else if (s + kStages - 1 == p.stages && p.tail_words > 0) load_tail();
      commit_group();

      const std::uint32_t a_frag = shared_address(smem + int(s % kStages) * kStageBytes) + a_row;
      const std::uint32_t b_frag = a_frag - a_row + kTileM * kRowBytes + b_row;
      // A ragged tile or a partial last stage runs the guarded copy of the loop; the rest none of its tests.
      const index_t steps_left = (p.words_used - s * kStageWords) / 8;
      const int steps = steps_left < kStageWords / 8 ? int(steps_left) : kStageWords / 8;
      if (ragged || steps < kStageWords / 8) mma_stage<R, true>(acc, a_frag, b_frag, lane, steps, m_tiles, n_tiles);
      else mma_stage<R, false>(acc, a_frag, b_frag, lane, kStageWords / 8, 4, 4);
    }
    wait_group<0>();
    __syncthreads();  // the pipeline's slots are free: the epilogue stages the tile's flags there

    if (p.tail_words > 0) {
      // K's short tail on CUDA cores, from the tail's shared memory (landed with wait_group<0> and
      // the barrier above): a tail word is 16 shared loads and 64 ANDs a thread. Counts are never
      // negative, so ORing the ANDed words into them keeps "nonzero" exact on both routes (int8's
      // words hold 0/1 bytes: their AND is nonzero when some k is shared).
#pragma unroll 1
      for (int w = 0; w < int(p.tail_words); ++w) {
        std::uint32_t a_word[4][2], b_word[4][2];  // [mi][e/2], [ni][e%2]
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            a_word[i][h] = *reinterpret_cast<const std::uint32_t*>(tail + fragment_row(warp_m, lane, i, 2 * h) * kTailPitch + 4 * w);
            b_word[i][h] = *reinterpret_cast<const std::uint32_t*>(tail + (kTileM + fragment_col(warp_n, lane, i, h)) * kTailPitch + 4 * w);
          }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
          for (int ni = 0; ni < 4; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][ni][e] |= int(a_word[mi][e / 2] & b_word[ni][e % 2]);
      }
    }

    // Epilogue, in two passes through shared memory so that C is read and written along its
    // contiguous dimension whatever its layout.
    unsigned char* flags = smem;
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
      for (int ni = 0; ni < 4; ++ni)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          flags[fragment_row(warp_m, lane, mi, e) * kFlagPitch + fragment_col(warp_n, lane, ni, e)] = acc[mi][ni][e] != 0;
    __syncthreads();
    std::uint8_t* c = p.c + z * p.stride_c;
    const bool rows_contiguous = p.c_cs == 1;
    for (int t = threadIdx.x; t < kTileM * kTileN; t += kThreads) {
      const int r = rows_contiguous ? t / kTileN : t % kTileM, col = rows_contiguous ? t % kTileN : t / kTileM;
      const index_t i = index_t(tm) * kTileM + r, j = index_t(tn) * kTileN + col;
      if (i >= p.tiled_m || j >= p.tiled_n || (p.symmetric && j > i)) continue;
      finish(p, c, i, j, flags[r * kFlagPitch + col] != 0);
    }
    __syncthreads();  // the next member's prologue refills the slots
  }
}

// ---- route --------------------------------------------------------------------------------------

// The 32-bit words K takes on route R.
template <Route R> index_t k_words(index_t k) { return (k + elements_per_word(R) - 1) / elements_per_word(R); }

// A packed operand: rows_padded rows `pitch` words apart for each member that has its own, of
// which pack() writes the first words_padded (split_k: the rest is never read).
struct Packed {
  DeviceBuffer<std::uint32_t> words;
  index_t member_words = 0;  // 0: one copy for every member
};

template <Route R>
Packed pack(const detail::Strided<const std::uint8_t>& x, index_t stride, index_t batch, index_t rows_padded,
            index_t words_padded, index_t pitch, cudaStream_t stream) {
  const index_t members = (stride == 0 || batch == 1) ? 1 : batch;
  Packed out;
  if (rows_padded * words_padded == 0) return out;  // K = 0: nothing to read
  if (x.cs != 1 && x.rs != 1)  // every MatrixView is row- or column-major: the walks rely on it
    throw Error(Errc::unsupported, "operand", "the tensor-core or-and packs views with one unit stride only");
  out.words = DeviceBuffer<std::uint32_t>(std::size_t(rows_padded * pitch * members), stream);
  out.member_words = members == 1 ? 0 : rows_padded * pitch;
  if (R == Route::bits && x.rs == 1 && x.cs != 1) {  // rows contiguous: through a shared-memory tile
    const index_t items = rows_padded / kTransposeRows * words_padded;
    const dim3 grid(unsigned(std::min<index_t>(items, 16 * index_t(multiprocessor_count()))),
                    unsigned(std::min<index_t>(members, 65535)));
    pack_bits_transposed_kernel<Route::bits><<<grid, 256, 0, stream>>>(out.words.get(), rows_padded, words_padded, pitch,
                                                                       out.member_words, x.p, x.rows, x.cols,
                                                                       x.cs, stride, members);
    check_launch("or_and_mma::pack_bits_transposed_kernel");
    return out;
  }
  // Along k a thread a word: measured 11.7 µs at 4096² (aligned rows), against 18.8 for a warp a
  // run of 16 words, 17 for that warp at 4097² with byte loads, 80 for a ballot a word.
  const bool along_k = x.cs == 1;  // else the rows are contiguous (int8 only: bits took them above)
  const index_t items = (along_k ? rows_padded : rows_padded / kRowsPerThread) * words_padded;
  const dim3 grid(unsigned(std::min<index_t>((items + 255) / 256, 16 * index_t(multiprocessor_count()))),
                  unsigned(std::min<index_t>(members, 65535)));
  auto kernel = pack_kernel<R, Walk::along_k>;
  if constexpr (R == Route::int8)
    if (!along_k) kernel = pack_kernel<R, Walk::across_rows>;
  kernel<<<grid, 256, 0, stream>>>(out.words.get(), rows_padded, words_padded, pitch, out.member_words, x.p, x.rows,
                                   x.cols, x.rs, x.cs, stride, members);
  check_launch("or_and_mma::pack_kernel");
  return out;
}

// The product of packed operands (a, bt: rows padded to tiles and laid out as split_k(words_used)
// says, K's words_used words of each packed and zero past K) into the strided u8 C of `args`,
// whose other fields the caller set.
template <Route R>
void launch(KernelArgs args, const Packed& a, const Packed& bt, index_t words_used, cudaStream_t stream) {
  const KSplit split = split_k(words_used);
  args.a = a.words.get(), args.member_a = a.member_words;
  args.bt = bt.words.get(), args.member_b = bt.member_words;
  args.words = split.pitch, args.words_used = round_up(words_used, 8);
  args.stages = split.stages, args.tail_words = split.tail_words;
  // C's ragged last rows and columns, when few, on the fringe's blocks (Aᵀ·A: the rows').
  const index_t ragged_m = args.m % kTileM, ragged_n = args.n % kTileN;
  const bool row_fringe = ragged_m > 0 && ragged_m <= kFringeLines;
  const bool column_fringe = !args.symmetric && ragged_n > 0 && ragged_n <= kFringeLines;
  args.tiled_m = args.m - (row_fringe ? ragged_m : 0);
  args.tiled_n = args.symmetric ? args.tiled_m : args.n - (column_fringe ? ragged_n : 0);
  args.tiles_m = int(ceil_div(args.tiled_m, kTileM)), args.tiles_n = int(ceil_div(args.tiled_n, kTileN));
  const index_t tiles = args.symmetric ? index_t(args.tiles_m) * (args.tiles_m + 1) / 2
                                       : index_t(args.tiles_m) * args.tiles_n;
  const index_t row_blocks = row_fringe ? ceil_div(args.n, kFringeSpan) : 0;
  const index_t blocks = tiles + row_blocks + (column_fringe ? ceil_div(args.tiled_m, kFringeSpan) : 0);
  if (blocks > 0x7fffffff) throw Error(Errc::invalid_argument, "C", "too many tiles for the tensor-core or-and kernel");
  args.tiles = int(tiles), args.row_fringe_blocks = int(row_blocks);
  // Per call: the attribute belongs to the current device, and a process may use several.
  cuda_check(cudaFuncSetAttribute(or_and_mma_kernel<R>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes),
             "cudaFuncSetAttribute");
  const dim3 grid(unsigned(blocks), 1, unsigned(std::min<index_t>(args.batch, 65535)));
  or_and_mma_kernel<R><<<grid, kThreads, kSharedBytes, stream>>>(args);
  check_launch("or_and_mma_kernel");
}

template <Route R> void multiply(const detail::Problem<OrAnd>& d, cudaStream_t stream) {
  const index_t m = d.m(), n = d.n(), k = d.k();
  const KSplit split = split_k(k_words<R>(k));
  const Packed a = pack<R>(d.a, d.stride_a, d.batch, round_up(m, kTileM), split.packed, split.pitch, stream);
  // Bᵀ, the N×K view of B; Aᵀ·A's Bᵀ is A itself.
  const detail::Strided<const std::uint8_t> bt{d.b.p, d.b.cols, d.b.rows, d.b.cs, d.b.rs};
  const Packed b =
      d.symmetric ? Packed{} : pack<R>(bt, d.stride_b, d.batch, round_up(n, kTileN), split.packed, split.pitch, stream);
  KernelArgs args{};
  args.c = d.c.p, args.m = m, args.n = n, args.c_rs = d.c.rs, args.c_cs = d.c.cs, args.stride_c = d.stride_c;
  args.batch = d.batch, args.alpha = d.alpha != 0, args.beta = d.beta != 0, args.symmetric = d.symmetric;
  launch<R>(args, a, d.symmetric ? a : b, k_words<R>(k), stream);  // by reference: no copies
}

}  // namespace or_and_mma

// Bytes the packed operands of d take on route R: rows padded to tiles and K to the pitch, a copy
// per batch member that has its own operand.
template <or_and_mma::Route R> double packed_bytes(const detail::Problem<OrAnd>& d) {
  using namespace or_and_mma;
  const double words = double(split_k(k_words<R>(d.k())).pitch);
  const double a_members = d.stride_a == 0 ? 1 : double(d.batch), b_members = d.stride_b == 0 ? 1 : double(d.batch);
  return 4 * words * (double(round_up(d.m(), kTileM)) * a_members + double(round_up(d.n(), kTileN)) * b_members);
}

// Whether or-and runs on the tensor cores: not when the caller named the SIMT kernels, for empty
// products, where the int32 counts could overflow (K ≥ 2³¹), nor for batches of matrices far below
// a tile, whose padded copies would take over 8 × their own size and 64 MiB (100 000 products of
// 16³: 3.2 GB against 51 MB); those run on the SIMT kernels, as before the tensor-core route.
// describe (engine.cuh) reports the route from the same rule.
template <class S> bool takes_or_and_mma(const Context& ctx, const detail::Problem<S>& d) {
  if constexpr (std::is_same_v<S, OrAnd>) {
    if (ctx.names_cuda_kernels() || d.batch == 0 || d.m() == 0 || d.n() == 0) return false;
    if (d.k() >= index_t(0x7fffffff)) return false;
    const double packed = ctx.boolean_mma == BooleanMma::int8 ? packed_bytes<or_and_mma::Route::int8>(d)
                                                               : packed_bytes<or_and_mma::Route::bits>(d);
    const double operands = double(d.k()) * (double(d.m()) * (d.stride_a == 0 ? 1 : double(d.batch)) +
                                             double(d.n()) * (d.stride_b == 0 ? 1 : double(d.batch)));
    return !(d.batch > 1 && packed > 64.0 * (1 << 20) && packed > 8 * operands);
  } else {
    return false;
  }
}

// The engine's route for or-and: true when the product ran on the tensor cores (takes_or_and_mma),
// false with nothing done otherwise.
template <class S> bool run_or_and_mma(const Context& ctx, const detail::Problem<S>& d, cudaStream_t stream) {
  if constexpr (std::is_same_v<S, OrAnd>) {
    if (!takes_or_and_mma(ctx, d)) return false;
    if (ctx.boolean_mma == BooleanMma::int8) or_and_mma::multiply<or_and_mma::Route::int8>(d, stream);
    else or_and_mma::multiply<or_and_mma::Route::bits>(d, stream);
    return true;
  } else {
    return false;
  }
}

}  // namespace ringmm::cuda_detail
