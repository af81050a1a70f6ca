// b1: booleans packed 64 to a word, and the or-and products over them.
//
// Layout (fixed: the CUDA tensor-core kernel reads the same words). A rows × cols bit matrix is
// stored row by row, each row packed along its columns into 64-bit words, least significant bit
// first: column c of row i is bit c % 64 of word i·stride_words + c / 64, with stride_words ≥
// ceil(cols / 64). Bits past `cols` in a row's last word (the tail bits) are ignored by every
// reader, never assumed zero, and written as zero by every writer; the words between ceil(cols/64)
// and stride_words are never touched. This is np.packbits(x, axis=1, bitorder="little") with each
// row padded to a multiple of 8 bytes, read as uint64 on a little-endian host.
//
// Products take both operands packed along K: A as an M×K bit matrix and B as its transpose Bᵀ, an
// N×K bit matrix, so that entry (i, j) scans two rows: OR over words of (A_i,w AND Bᵀ_j,w) != 0.
// They run on the CPU backend (AND and early-exit OR, or AND and POPCNT, on the widest vectors the
// CPU has) and, for or-and, on the CUDA backend: the tensor cores' 1-bit AND+POPC MMA takes bits in
// this order, so the words are only copied into rows padded to its tiles (src/cuda/bits.cu,
// ringmm/cuda/or_and_mma.cuh). CUDA takes device memory only and K < 2³¹; Backend::automatic runs a
// call on CUDA when its operands are device memory, on the CPU when they are host memory, and
// refuses a mix.
// Counts (gemm_b1_count) run on the CPU only.
//
// Every call checks its arguments first and throws ringmm::Error (naming A, B, C or the option);
// a refused call writes nothing.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

#include "ringmm/context.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/types.hpp"

namespace ringmm {

using bit_word = std::uint64_t;
inline constexpr index_t bits_per_word = 64;

// What the command line and the benchmark records call the type.
inline constexpr std::string_view b1_type_name = "b1";

// The semirings with a b1 product: or-and (gemm_b1) and plus-times (gemm_b1_count, the number of
// k where both are true).
constexpr bool b1_supports(SemiringKind kind) { return kind == SemiringKind::or_and || kind == SemiringKind::plus_times; }

// Words that hold a row of `cols` bits (cols ≥ 0), and bytes in np.packbits layout (below).
constexpr index_t words_for_bits(index_t cols) { return cols / bits_per_word + (cols % bits_per_word != 0); }
constexpr index_t bytes_for_bits(index_t cols) { return cols / 8 + (cols % 8 != 0); }

// A view of a bit matrix; never owns. Word is bit_word or const bit_word.
template <class Word> struct BitMatrixView {
  static_assert(std::is_same_v<std::remove_const_t<Word>, bit_word>, "b1 matrices are made of 64-bit words");
  Word* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;          // booleans per row
  index_t stride_words = 0;  // words from one row to the next, ≥ max(1, words_for_bits(cols))

  index_t row_words() const { return words_for_bits(cols); }
  Word* row(index_t i) const { return data + i * stride_words; }
  bool operator()(index_t i, index_t j) const { return (row(i)[j / bits_per_word] >> (j % bits_per_word)) & 1u; }
  bool empty() const { return rows == 0 || cols == 0; }
  // Words from the first to one past the last word a reader touches (0 when empty).
  index_t extent_words() const { return empty() ? 0 : (rows - 1) * stride_words + row_words(); }
  // A template, as MatrixView's, so that the const view declares no conversion to itself.
  template <class U = Word>
    requires(!std::is_const_v<U>)
  operator BitMatrixView<const U>() const {
    return {data, rows, cols, stride_words};
  }
};

// A compact view: rows one after another, stride_words = max(1, words_for_bits(cols)).
template <class Word> BitMatrixView<Word> bit_matrix(Word* data, index_t rows, index_t cols) {
  const index_t words = words_for_bits(cols);
  return {data, rows, cols, words > 1 ? words : 1};
}

// ---- converters -------------------------------------------------------------------------------

// u8 → b1: out(i, j) = x(i, j) != 0, for x in any layout. Same shape; out's tail bits become zero.
void pack_bits(MatrixView<const std::uint8_t> x, BitMatrixView<bit_word> out);
// b1 → u8: out(i, j) = x(i, j) as 0 or 1, out in any layout. Same shape.
void unpack_bits(BitMatrixView<const bit_word> x, MatrixView<std::uint8_t> out);

// np.packbits(x, axis=1, bitorder=...) layout: each row's booleans in bytes, eight to a byte, the
// last byte padded. big (numpy's default) puts column 8b of a row in byte b's most significant
// bit, little in its least significant bit.
enum class BitOrder { big, little };
std::string_view to_string(BitOrder order);
BitOrder parse_bit_order(std::string_view text, std::string_view what = "bitorder");

// Packed bytes → b1. `packed` is rows × ceil(out.cols / 8) bytes in any layout; the pad bits of
// each row's last byte are ignored (np.packbits writes zeros there; nothing relies on it).
void bits_from_packbits(MatrixView<const std::uint8_t> packed, BitOrder order, BitMatrixView<bit_word> out);
// b1 → packed bytes, rows × ceil(x.cols / 8); the pad bits are written as zero, as numpy does.
void packbits_from_bits(BitMatrixView<const bit_word> x, BitOrder order, MatrixView<std::uint8_t> packed);

// 32-bit words: each row's booleans in ceil(cols / 32) uint32 words, column c of a row at bit c % 32
// of word c / 32, least significant bit first. This is the b1 layout cut into 32-bit halves (and
// np.packbits(x, axis=1, bitorder="little") with rows padded to 4 bytes, read as '<u4'), the
// natural form of booleans packed into 32-bit integers; a word's bits have no other order.
constexpr index_t words32_for_bits(index_t cols) { return cols / 32 + (cols % 32 != 0); }
// 32-bit words → b1. `packed` is rows × ceil(out.cols / 32) words in any layout; the tail bits of
// each row's last word are ignored.
void bits_from_words32(MatrixView<const std::uint32_t> packed, BitMatrixView<bit_word> out);
// b1 → 32-bit words, rows × ceil(x.cols / 32); the tail bits are written as zero.
void words32_from_bits(BitMatrixView<const bit_word> x, MatrixView<std::uint32_t> packed);

// ---- products -----------------------------------------------------------------------------------

// or-and: C(M×N) ← (α ∧ A·B) ∨ (β ∧ C) with (A·B)(i, j) = OR_k A(i, k) AND Bᵀ(j, k). A is M×K, Bᵀ
// is N×K, both packed along K. With β false C is never read. C as u8 0/1 (any layout; with β true
// a nonzero byte of the old C is true), or as b1 packed along N, so that squarings and closures
// chain (C must not overlap A or Bᵀ).
void gemm_b1(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
             MatrixView<std::uint8_t> c, bool alpha = true, bool beta = false);
void gemm_b1(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
             BitMatrixView<bit_word> c, bool alpha = true, bool beta = false);

// plus-times over booleans: C(M×N) ← α·count + β·C with count(i, j) = the number of k where A(i, k)
// and Bᵀ(j, k) are both true (popcount of the ANDed words). Exact or refused, as for plus-times
// i32: a call where |α|·K + |β|·max|C| could exceed INT32_MAX throws Errc::value_out_of_range.
void gemm_b1_count(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
                   MatrixView<std::int32_t> c, std::int32_t alpha = 1, std::int32_t beta = 0);

}  // namespace ringmm
