// The b1 products on the CPU (ringmm/bits.hpp): argument checks, routing, and the kernel.
//
// The kernel ANDs rows of A with rows of Bᵀ a vector at a time and ORs the words together (or adds
// their popcounts), MR rows of A × NR rows of Bᵀ per micro-tile, K cut into chunks that keep the
// micro-panels in L1, C cut into blocks, and blocks into items that the OpenMP threads claim, as in
// the blocked kernel (ringmm/cpu/blocked.hpp). The micro-tile is written once (bits_kernel.inc)
// and compiled per instruction set — generic 64-bit words, AVX2, AVX-512, AVX-512 with VPOPCNTDQ
// for counts — each inside its own target region, and the widest the CPU runs is picked at run
// time, so the library needs no -march flag.
// Over 500 lines because the checks, the routing and the per-ISA instances of one kernel belong
// together.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ringmm/bits.hpp"
#include "ringmm/detail/bits.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/error.hpp"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define RINGMM_B1_X86 1
#include <immintrin.h>
#else
#define RINGMM_B1_X86 0
#endif

#if RINGMM_HAVE_CUDA
#include "ringmm/cuda/device.hpp"
#endif

#define RINGMM_B1_INLINE [[gnu::always_inline]] inline
#define RINGMM_B1_PRAGMA(text) _Pragma(#text)
#if defined(__clang__)
#define RINGMM_B1_TARGET_BEGIN(features) \
  RINGMM_B1_PRAGMA(clang attribute push(__attribute__((target(features))), apply_to = function))
#define RINGMM_B1_TARGET_END RINGMM_B1_PRAGMA(clang attribute pop)
#else
#define RINGMM_B1_TARGET_BEGIN(features) RINGMM_B1_PRAGMA(GCC push_options) RINGMM_B1_PRAGMA(GCC target(features))
#define RINGMM_B1_TARGET_END RINGMM_B1_PRAGMA(GCC pop_options)
#endif

namespace ringmm::detail::b1 {

namespace {

enum class Mode { or_and, count };

// Cache blocking (Zen 4: 32 KiB L1d, 1 MiB L2 per core). A K chunk of kc_words keeps an MR-row and
// an NR-row micro-panel (2 KiB a row) in L1; the A block of mc_rows × kc_words (256 KiB) stays in
// L2 while the NR-row micro-panels of Bᵀ pass; nc_cols columns of C are one block's workspace.
constexpr index_t kc_words = 256;
constexpr index_t mc_rows = 128;
constexpr index_t nc_cols = 512;
// or-and tests whether a whole micro-tile is true every exit_words words (8192 bits) of K.
constexpr index_t exit_words = 128;
static_assert(nc_cols % bits_per_word == 0 && kc_words % 8 == 0 && exit_words % 8 == 0);

// The last vector of K: the words past the whole vectors (at most one vector's worth), the final
// one with only its bits below K kept.
struct Tail {
  index_t words = 0;                // 0: K ends on a whole vector
  alignas(64) bit_word lanes[8]{};  // ~0 for each word read (the AVX2 masked load takes it as is)
  alignas(64) bit_word keep[8]{};   // the bits of each word that are inside K
};

struct Workspace {
  std::vector<bit_word> flags;       // or-and: the block's products so far, mc_rows × nc_cols bits
  std::vector<std::int32_t> counts;  // counts: the block's sums so far, mc_rows × nc_cols
};

// One call as the threads share it: items are rows [band·r, +band) × columns [group·g, +group).
struct Call {
  const Product* p;
  index_t k_words;      // words per row: ceil(K / 64)
  index_t whole_words;  // words with every bit inside K: floor(K / 64)
  bit_word last_mask;   // the valid bits of the last word
  index_t band, group;  // rows (a multiple of MR) and columns (a multiple of 64) per item
  index_t n_bands, n_groups;
  std::vector<Workspace>* spaces;
  std::atomic<index_t>* next_item;
};

// `whole`: the words the whole vectors cover.
Tail make_tail(const Call& call, index_t whole) {
  Tail t;
  t.words = call.k_words - whole;
  for (index_t l = 0; l < t.words; ++l) {
    t.lanes[l] = ~bit_word(0);
    t.keep[l] = l == t.words - 1 ? call.last_mask : ~bit_word(0);
  }
  return t;
}

// C ← P ∨ (β ∧ C) on rows [r0, r1) × columns [c0, c1), c0 a multiple of 64. P comes as bit rows
// `flags` (`stride` words apart, column c0 at bit 0), or is all false where flags is null (α = 0
// or K = 0). With β = 0 C is not read. b1 C: whole words, the tail bits cleared.
void epilogue_or_and(const Product& p, index_t r0, index_t r1, index_t c0, index_t c1, const bit_word* flags,
                     index_t stride) {
  const bool beta = p.beta != 0;
  if (p.output == Output::bits) {
    const BitMatrixView<bit_word>& c = p.c_bits;
    const index_t w0 = c0 / bits_per_word, w1 = words_for_bits(c1), last = c.row_words() - 1;
    for (index_t i = r0; i < r1; ++i) {
      bit_word* row = c.row(i);
      const bit_word* f = flags ? flags + (i - r0) * stride : nullptr;
      for (index_t w = w0; w < w1; ++w) {
        bit_word word = f ? f[w - w0] : 0;
        if (beta) word |= row[w];
        row[w] = w == last ? word & last_word_mask(c.cols) : word;
      }
    }
    return;
  }
  const MatrixView<std::uint8_t>& c = p.c_u8;
  for (index_t i = r0; i < r1; ++i) {
    const bit_word* f = flags ? flags + (i - r0) * stride : nullptr;
    auto bit = [&](index_t j) { return f && ((f[(j - c0) / bits_per_word] >> ((j - c0) % bits_per_word)) & 1u); };
    index_t j = c0;
    if (c.col_stride() == 1) {  // a row of bytes: eight at a time
      std::uint8_t* row = c.data + i * c.row_stride();
      for (; j + 8 <= c1; j += 8) {
        const index_t off = j - c0;
        std::uint64_t bytes = f ? bytes_of_bits[(f[off / bits_per_word] >> (off % bits_per_word)) & 0xffu] : 0;
        if (beta) {
          std::uint64_t old;
          std::memcpy(&old, row + j, 8);
          bytes |= nonzero_bytes(old);
        }
        std::memcpy(row + j, &bytes, 8);
      }
    }
    for (; j < c1; ++j) {
      std::uint8_t& cij = c(i, j);
      cij = std::uint8_t(bit(j) || (beta && cij != 0));
    }
  }
}

// C ← α·P + β·C on rows [r0, r1) × columns [c0, c1); P is `counts` (rows `stride` apart, column
// c0 first), or zero where counts is null. gemm_b1_count has checked |α|·K + |β|·max|C| against
// INT32_MAX, so neither term nor their sum overflows int32.
void epilogue_count(const Product& p, index_t r0, index_t r1, index_t c0, index_t c1, const std::int32_t* counts,
                    index_t stride) {
  const MatrixView<std::int32_t>& c = p.c_count;
  const std::int32_t alpha = p.alpha, beta = p.beta;
  for (index_t i = r0; i < r1; ++i) {
    const std::int32_t* src = counts ? counts + (i - r0) * stride : nullptr;  // column c0 first
    if (c.col_stride() == 1) {  // a row: a loop the compiler vectorises
      std::int32_t* row = c.data + i * c.row_stride() + c0;
      if (beta == 0)
        for (index_t j = 0; j < c1 - c0; ++j) row[j] = src ? alpha * src[j] : 0;
      else
        for (index_t j = 0; j < c1 - c0; ++j) row[j] = (src ? alpha * src[j] : 0) + beta * row[j];
    } else {
      for (index_t j = c0; j < c1; ++j) c(i, j) = (src ? alpha * src[j - c0] : 0) + (beta == 0 ? 0 : beta * c(i, j));
    }
  }
}

// ---- the instruction sets ------------------------------------------------------------------------

// The popcount of each nibble value, once per 16-byte lane of a 512-bit vector: the table of the
// nibble-lookup popcounts below.
alignas(64) constexpr std::uint8_t nibble_counts[64] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                                        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                                        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                                        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

namespace generic {
struct Vec {  // one 64-bit word; 4 × 2 sums and the six row pointers fit the 16 registers
  using type = bit_word;
  static constexpr int words = 1, mr = 4, nr = 2;
  static type zero() { return 0; }
  static type load(const bit_word* p) { return *p; }
  static type load_tail(const bit_word* p, const Tail& t) { return *p & t.keep[0]; }
  static type or_and(type acc, type a, type b) { return acc | (a & b); }
  static bool nonzero(type x) { return x != 0; }
  static type add_count(type acc, type a, type b) { return acc + type(std::popcount(a & b)); }
  static std::int64_t total(type acc) { return std::int64_t(acc); }
};
#include "bits_kernel.inc"
}  // namespace generic

#if RINGMM_B1_X86
namespace avx2 {
RINGMM_B1_TARGET_BEGIN("avx2,popcnt")
struct Vec {  // 16 registers: 4 × 2 accumulators, 2 of Bᵀ, 1 of A, the popcount table and temporaries
  using type = __m256i;
  static constexpr int words = 4, mr = 4, nr = 2;
  RINGMM_B1_INLINE static type zero() { return _mm256_setzero_si256(); }
  RINGMM_B1_INLINE static type load(const bit_word* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  RINGMM_B1_INLINE static type load_tail(const bit_word* p, const Tail& t) {
    const __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(t.lanes));
    return _mm256_and_si256(_mm256_maskload_epi64(reinterpret_cast<const long long*>(p), lanes),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(t.keep)));
  }
  RINGMM_B1_INLINE static type or_and(type acc, type a, type b) { return _mm256_or_si256(acc, _mm256_and_si256(a, b)); }
  RINGMM_B1_INLINE static bool nonzero(type x) { return !_mm256_testz_si256(x, x); }
  // Popcount by nibble lookup (no vector popcount before AVX-512), summed per 64-bit lane.
  RINGMM_B1_INLINE static type add_count(type acc, type a, type b) {
    const __m256i table = _mm256_load_si256(reinterpret_cast<const __m256i*>(nibble_counts));
    const __m256i low = _mm256_set1_epi8(0x0f);
    const __m256i v = _mm256_and_si256(a, b);
    const __m256i bytes = _mm256_add_epi8(_mm256_shuffle_epi8(table, _mm256_and_si256(v, low)),
                                          _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(v, 4), low)));
    return _mm256_add_epi64(acc, _mm256_sad_epu8(bytes, _mm256_setzero_si256()));
  }
  RINGMM_B1_INLINE static std::int64_t total(type acc) {
    return _mm256_extract_epi64(acc, 0) + _mm256_extract_epi64(acc, 1) + _mm256_extract_epi64(acc, 2) +
           _mm256_extract_epi64(acc, 3);
  }
};
#include "bits_kernel.inc"
RINGMM_B1_TARGET_END
}  // namespace avx2

namespace avx512 {
RINGMM_B1_TARGET_BEGIN("avx512f,avx512bw,avx512dq,avx512vl,avx2,popcnt")
struct Vec {  // 32 registers: 4 × 4 accumulators, 4 of Bᵀ, 1 of A
  using type = __m512i;
  static constexpr int words = 8, mr = 4, nr = 4;
  RINGMM_B1_INLINE static type zero() { return _mm512_setzero_si512(); }
  RINGMM_B1_INLINE static type load(const bit_word* p) { return _mm512_loadu_si512(p); }
  RINGMM_B1_INLINE static type load_tail(const bit_word* p, const Tail& t) {
    return _mm512_and_si512(_mm512_maskz_loadu_epi64(__mmask8((1u << t.words) - 1), p), _mm512_load_si512(t.keep));
  }
  // acc | (a & b) in one instruction: 0xF8 is the truth table of x | (y & z).
  RINGMM_B1_INLINE static type or_and(type acc, type a, type b) { return _mm512_ternarylogic_epi64(acc, a, b, 0xF8); }
  RINGMM_B1_INLINE static bool nonzero(type x) { return _mm512_test_epi64_mask(x, x) != 0; }
  RINGMM_B1_INLINE static type add_count(type acc, type a, type b) {  // nibble lookup, as AVX2
    const __m512i table = _mm512_load_si512(nibble_counts);
    const __m512i low = _mm512_set1_epi8(0x0f);
    const __m512i v = _mm512_and_si512(a, b);
    const __m512i bytes = _mm512_add_epi8(_mm512_shuffle_epi8(table, _mm512_and_si512(v, low)),
                                          _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(v, 4), low)));
    return _mm512_add_epi64(acc, _mm512_sad_epu8(bytes, _mm512_setzero_si512()));
  }
  RINGMM_B1_INLINE static std::int64_t total(type acc) {
    alignas(64) std::int64_t lanes[8];
    _mm512_store_si512(lanes, acc);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
  }
  // A row of four entries reduced together: two rounds of shuffles fold the four vectors into
  // one, so that one test (or one store) ends the row instead of four reductions. Fold: | or +.
  template <bool add> RINGMM_B1_INLINE static type fold(type x, type y) {
    if constexpr (add) return _mm512_add_epi64(x, y);
    else return _mm512_or_si512(x, y);
  }
  template <bool add> RINGMM_B1_INLINE static type fold4(const type (&acc)[4]) {
    // t01's 128-bit lane q: [a0(2q) ∘ a0(2q+1), a1(2q) ∘ a1(2q+1)]; t23 likewise.
    const type t01 = fold<add>(_mm512_unpacklo_epi64(acc[0], acc[1]), _mm512_unpackhi_epi64(acc[0], acc[1]));
    const type t23 = fold<add>(_mm512_unpacklo_epi64(acc[2], acc[3]), _mm512_unpackhi_epi64(acc[2], acc[3]));
    // 128-bit lanes: [a0 a1 over words 0-3], [a0 a1 over 4-7], [a2 a3 over 0-3], [a2 a3 over 4-7].
    return fold<add>(_mm512_shuffle_i64x2(t01, t23, _MM_SHUFFLE(2, 0, 2, 0)),
                     _mm512_shuffle_i64x2(t01, t23, _MM_SHUFFLE(3, 1, 3, 1)));
  }
  RINGMM_B1_INLINE static bit_word nonzero_bits4(const type (&acc)[4]) {
    const type u = fold4<false>(acc);
    const unsigned k = _mm512_test_epi64_mask(u, u);  // bits 0-7: a0 a1 a0 a1 a2 a3 a2 a3
    const unsigned m = k | (k >> 2);
    return (m & 3u) | ((m >> 2) & 0xcu);
  }
  RINGMM_B1_INLINE static void totals4(const type (&acc)[4], std::int64_t (&out)[4]) {
    type u = fold4<true>(acc);
    u = _mm512_add_epi64(u, _mm512_shuffle_i64x2(u, u, _MM_SHUFFLE(2, 3, 0, 1)));  // lanes 0, 1, 4, 5: a0 a1 a2 a3
    alignas(64) std::int64_t lanes[8];
    _mm512_store_si512(lanes, u);
    out[0] = lanes[0], out[1] = lanes[1], out[2] = lanes[4], out[3] = lanes[5];
  }
};
#include "bits_kernel.inc"
RINGMM_B1_TARGET_END
}  // namespace avx512

namespace avx512_popcnt {  // counts only: or-and has no use for VPOPCNTDQ
RINGMM_B1_TARGET_BEGIN("avx512f,avx512bw,avx512dq,avx512vl,avx512vpopcntdq,avx2,popcnt")
struct Vec : avx512::Vec {
  RINGMM_B1_INLINE static type add_count(type acc, type a, type b) {
    return _mm512_add_epi64(acc, _mm512_popcnt_epi64(_mm512_and_si512(a, b)));
  }
};
#include "bits_kernel.inc"
RINGMM_B1_TARGET_END
}  // namespace avx512_popcnt
#endif

// The team function of one instruction set and mode, and its micro-tile's rows (items are cut
// in multiples of them).
struct Kernel {
  void (*team)(const Call&, int);
  int mr;
};

Kernel kernel_for(Isa isa, Mode mode) {
  switch (isa) {
    case Isa::generic: return {mode == Mode::or_and ? generic::run_team<Mode::or_and> : generic::run_team<Mode::count>, generic::Vec::mr};
#if RINGMM_B1_X86
    case Isa::avx2: return {mode == Mode::or_and ? avx2::run_team<Mode::or_and> : avx2::run_team<Mode::count>, avx2::Vec::mr};
    case Isa::avx512:
      return {mode == Mode::or_and ? avx512::run_team<Mode::or_and> : avx512::run_team<Mode::count>, avx512::Vec::mr};
    case Isa::avx512_popcnt:  // or-and runs the avx512 kernel: the same instructions
      return {mode == Mode::or_and ? avx512::run_team<Mode::or_and> : avx512_popcnt::run_team<Mode::count>,
              avx512::Vec::mr};
#else
    default: break;
#endif
  }
  throw Error(Errc::unsupported, "isa", "the b1 kernel for " + std::string(to_string(isa)) + " is not built for this CPU");
}

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::generic: return "generic";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    case Isa::avx512_popcnt: return "avx512-vpopcntdq";
  }
  return "?";
}

bool cpu_has(Isa isa) {
#if RINGMM_B1_X86
  __builtin_cpu_init();
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  switch (isa) {
    case Isa::generic: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    case Isa::avx512: return avx512;
    case Isa::avx512_popcnt: return avx512 && __builtin_cpu_supports("avx512vpopcntdq");
  }
  return false;
#else
  return isa == Isa::generic;
#endif
}

Isa best_isa(bool count) {
  static const Isa widest = [] {
    for (Isa isa : {Isa::avx512_popcnt, Isa::avx512, Isa::avx2})
      if (cpu_has(isa)) return isa;
    return Isa::generic;
  }();
  return count || widest != Isa::avx512_popcnt ? widest : Isa::avx512;
}

Isa isa_for(CpuIsa requested, bool count) {
  switch (resolved_cpu_isa(requested)) {
    case CpuIsa::avx512: return best_isa(count);  // with VPOPCNTDQ for counts where the CPU has it
    case CpuIsa::avx2: return Isa::avx2;
    default: return Isa::generic;
  }
}

void run_cpu(const Product& p, int threads, Isa isa) {
  const index_t m = p.m(), n = p.n();
  if (m == 0 || n == 0) return;
  const Mode mode = p.output == Output::count ? Mode::count : Mode::or_and;
  if (p.k() == 0 || p.alpha == 0) {  // no product terms: C ← β ⊗ C
    if (mode == Mode::count) epilogue_count(p, 0, m, 0, n, nullptr, 0);
    else epilogue_or_and(p, 0, m, 0, n, nullptr, 0);
    return;
  }
  if (!cpu_has(isa)) throw Error(Errc::unsupported, "isa", "this CPU does not run " + std::string(to_string(isa)));
  const Kernel kernel = kernel_for(isa, mode);

  Call call{};
  call.p = &p;
  call.k_words = words_for_bits(p.k());
  call.whole_words = p.k() / bits_per_word;
  call.last_mask = last_word_mask(p.k());
  // Small products do not pay for waking the team: about 2^18 word updates per thread at least.
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const double word_updates = double(m) * double(n) * double(call.k_words);
  const int useful = int(std::min<double>(team, std::max(1.0, word_updates / double(1 << 18))));
  // About 4 items per thread, cutting whichever of M and N is longer per piece; columns in whole
  // words, so that no two items write one word of a b1 C.
  const index_t mr = kernel.mr;
  index_t n_bands = 1, n_groups = 1;
  while (useful > 1 && n_bands * n_groups < 4 * index_t(useful)) {
    const bool can_cut_rows = m / (n_bands + 1) >= mr, can_cut_cols = n / (n_groups + 1) >= bits_per_word;
    if (can_cut_rows && (m / n_bands >= n / n_groups || !can_cut_cols)) ++n_bands;
    else if (can_cut_cols) ++n_groups;
    else break;
  }
  call.band = ((m + n_bands - 1) / n_bands + mr - 1) / mr * mr;
  call.group = ((n + n_groups - 1) / n_groups + bits_per_word - 1) / bits_per_word * bits_per_word;
  call.n_bands = (m + call.band - 1) / call.band;
  call.n_groups = (n + call.group - 1) / call.group;

  std::vector<Workspace> spaces(static_cast<std::size_t>(useful));
  const index_t block_rows = std::min(mc_rows, call.band);
  for (Workspace& ws : spaces) {
    if (mode == Mode::or_and) ws.flags.resize(std::size_t(block_rows * nc_cols / bits_per_word));
    else ws.counts.resize(std::size_t(block_rows * nc_cols));
  }
  call.spaces = &spaces;
  std::atomic<index_t> next_item{0};
  call.next_item = &next_item;
  if (useful == 1) {
    kernel.team(call, 0);
    return;
  }
#pragma omp parallel num_threads(useful)
  kernel.team(call, omp_get_thread_num());
}

}  // namespace ringmm::detail::b1

namespace ringmm {

namespace {

using detail::bytes_of;
using detail::ranges_overlap;

// The checks shared by the products, after each view's own: K of A and Bᵀ, C's shape against them.
void check_shapes(const BitMatrixView<const bit_word>& a, const BitMatrixView<const bit_word>& bt, index_t c_rows,
                  index_t c_cols) {
  if (a.cols != bt.cols)
    throw Error(Errc::dimension_mismatch, "B",
                "A is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) + " and B^T is " +
                    std::to_string(bt.rows) + "x" + std::to_string(bt.cols) + ": both are packed along K, and K is " +
                    std::to_string(a.cols) + " in A but " + std::to_string(bt.cols) + " in B^T");
  if (c_rows != a.rows || c_cols != bt.rows)
    throw Error(Errc::dimension_mismatch, "C",
                "C is " + std::to_string(c_rows) + "x" + std::to_string(c_cols) + " but A (M x K) and B^T (N x K) give " +
                    std::to_string(a.rows) + "x" + std::to_string(bt.rows));
}

void check_no_overlap(const void* c, index_t c_bytes, const BitMatrixView<const bit_word>& a,
                      const BitMatrixView<const bit_word>& bt) {
  if (ranges_overlap(c, c_bytes, a.data, bytes_of(a))) throw Error(Errc::aliasing, "C", "C overlaps A");
  if (ranges_overlap(c, c_bytes, bt.data, bytes_of(bt))) throw Error(Errc::aliasing, "C", "C overlaps B^T");
}

// b1 counts run on the CPU: the CUDA backend has no count kernel yet, and `automatic` needs host
// memory.
void require_cpu(const Context& ctx, std::initializer_list<std::pair<const void*, const char*>> operands) {
  if (ctx.backend == Backend::cuda)
    throw Error(Errc::unsupported, "backend",
                "b1 counts have no CUDA kernel yet; run them on the CPU backend (cpu, or automatic with host memory)");
#if RINGMM_HAVE_CUDA
  if (ctx.backend == Backend::automatic)
    for (const auto& [pointer, name] : operands)
      if (pointer && cuda_detail::is_device_pointer(pointer))
        throw Error(Errc::unsupported, name,
                    std::string(name) + " is in device memory, but b1 counts have no CUDA kernel yet and run on the "
                                        "CPU: pass host memory");
#else
  (void)operands;
#endif
}

detail::b1::Product product(BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt, std::int32_t alpha,
                            std::int32_t beta) {
  detail::b1::Product p;
  p.a = a;
  p.bt = bt;
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

}  // namespace

void gemm_b1(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
             MatrixView<std::uint8_t> c, bool alpha, bool beta) {
  detail::validate_bits(a, "A");
  detail::validate_bits(bt, "B");
  detail::validate_view(c, "C");
  check_shapes(a, bt, c.rows, c.cols);
  check_no_overlap(c.data, bytes_of(c), a, bt);
  if constexpr (config::cuda) {
    if (detail::gemm_b1_cuda(ctx, a, bt, &c, nullptr, alpha, beta)) return;
  } else {
    detail::refuse_cuda_request(ctx);
  }
  auto p = product(a, bt, alpha, beta);
  p.output = detail::b1::Output::u8;
  p.c_u8 = c;
  detail::b1::run_cpu(p, ctx.cpu_threads, detail::b1::isa_for(ctx.cpu_isa, false));
}

void gemm_b1(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
             BitMatrixView<bit_word> c, bool alpha, bool beta) {
  detail::validate_bits(a, "A");
  detail::validate_bits(bt, "B");
  detail::validate_bits(c, "C");
  check_shapes(a, bt, c.rows, c.cols);
  check_no_overlap(c.data, bytes_of(c), a, bt);
  if constexpr (config::cuda) {
    if (detail::gemm_b1_cuda(ctx, a, bt, nullptr, &c, alpha, beta)) return;
  } else {
    detail::refuse_cuda_request(ctx);
  }
  auto p = product(a, bt, alpha, beta);
  p.output = detail::b1::Output::bits;
  p.c_bits = c;
  detail::b1::run_cpu(p, ctx.cpu_threads, detail::b1::isa_for(ctx.cpu_isa, false));
}

void gemm_b1_count(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
                   MatrixView<std::int32_t> c, std::int32_t alpha, std::int32_t beta) {
  detail::validate_bits(a, "A");
  detail::validate_bits(bt, "B");
  detail::validate_view(c, "C");
  check_shapes(a, bt, c.rows, c.cols);
  check_no_overlap(c.data, bytes_of(c), a, bt);
  require_cpu(ctx, {{a.data, "A"}, {bt.data, "B"}, {c.data, "C"}});
  // Every entry is at most |α|·K + |β|·max|C| in magnitude (a count is at most K): refuse what
  // could wrap around. Doubles are exact below 2^53, and a bound above that is refused anyway.
  double max_c = 0;
  if (beta != 0)
    for (index_t i = 0; i < c.rows; ++i)
      for (index_t j = 0; j < c.cols; ++j) max_c = std::max(max_c, std::fabs(double(c(i, j))));
  const double bound = std::fabs(double(alpha)) * double(a.cols) + std::fabs(double(beta)) * max_c;
  constexpr double limit = double(std::numeric_limits<std::int32_t>::max());
  if (!c.empty() && bound > limit) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "plus-times b1 counts could overflow: |alpha|*K + |beta|*max|C| = %.0f*%lld + %.0f*%.0f = %.4g exceeds "
                  "%.0f; ringmm refuses rather than wrap around",
                  std::fabs(double(alpha)), (long long)a.cols, std::fabs(double(beta)), max_c, bound, limit);
    throw Error(Errc::value_out_of_range, "A", text);
  }
  auto p = product(a, bt, alpha, beta);
  p.output = detail::b1::Output::count;
  p.c_count = c;
  detail::b1::run_cpu(p, ctx.cpu_threads, detail::b1::isa_for(ctx.cpu_isa, true));
}

}  // namespace ringmm
