// The b1 products as the CPU kernel receives them (src/cpu/bits.cpp), and the checks every b1
// entry point shares. Tests call run_cpu directly to cover each instruction set.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <string>

#include "ringmm/bits.hpp"
#include "ringmm/context.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/error.hpp"

namespace ringmm::detail {

// A bit matrix view must be a shape with a legal stride over memory that can exist.
template <class Word> void validate_bits(const BitMatrixView<Word>& v, const std::string& name) {
  if (v.rows < 0 || v.cols < 0)
    throw Error(Errc::invalid_argument, name, "negative size " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  const index_t words = v.row_words();
  if (v.stride_words < 1 || v.stride_words < words)
    throw Error(Errc::invalid_leading_dim, "stride" + name,
                "stride_words " + std::to_string(v.stride_words) + " must be >= max(1, ceil(" + std::to_string(v.cols) +
                    " / 64)) = " + std::to_string(words > 1 ? words : 1));
  if (!v.empty()) {
    const auto last_row = checked_mul(v.rows - 1, v.stride_words);
    if (!last_row || *last_row > std::numeric_limits<index_t>::max() - words ||
        !checked_mul(*last_row + words, index_t(sizeof(bit_word))))
      throw Error(Errc::invalid_argument, name,
                  "a " + std::to_string(v.rows) + "x" + std::to_string(v.cols) + " bit matrix with stride_words " +
                      std::to_string(v.stride_words) + " spans more than any array can hold");
  }
  if (v.data == nullptr && !v.empty())
    throw Error(Errc::null_pointer, name, "null data pointer for a " + std::to_string(v.rows) + "x" +
                                              std::to_string(v.cols) + " bit matrix");
}

// The CUDA backend of gemm_b1 (src/cuda/bits.cu; src/core/no_cuda.cpp without CUDA), after the
// checks: true when it ran the product, on device memory; false, having done nothing, when the
// call belongs to the CPU (Backend::cpu, or automatic with an operand in host memory). Exactly one
// of c_u8 and c_bits is set.
bool gemm_b1_cuda(const Context& ctx, BitMatrixView<const bit_word> a, BitMatrixView<const bit_word> bt,
                  const MatrixView<std::uint8_t>* c_u8, const BitMatrixView<bit_word>* c_bits, bool alpha, bool beta);

// Do the byte ranges [x, x + x_bytes) and [y, y + y_bytes) meet?
inline bool ranges_overlap(const void* x, index_t x_bytes, const void* y, index_t y_bytes) {
  if (x_bytes == 0 || y_bytes == 0) return false;
  const auto xb = reinterpret_cast<std::uintptr_t>(x), yb = reinterpret_cast<std::uintptr_t>(y);
  return xb < yb + std::uintptr_t(y_bytes) && yb < xb + std::uintptr_t(x_bytes);
}
template <class Word> index_t bytes_of(const BitMatrixView<Word>& v) { return v.extent_words() * index_t(sizeof(bit_word)); }
template <class T> index_t bytes_of(const MatrixView<T>& v) { return v.extent() * index_t(sizeof(T)); }

namespace b1 {

// Eight booleans of a u8 row, loaded as one little-endian 64-bit word, and eight bits.
// bytes_of_bits[v]: bit k of v as byte k, 0 or 1.
inline constexpr std::array<std::uint64_t, 256> bytes_of_bits = [] {
  std::array<std::uint64_t, 256> t{};
  for (unsigned v = 0; v < 256; ++v)
    for (unsigned k = 0; k < 8; ++k) t[v] |= std::uint64_t((v >> k) & 1u) << (8 * k);
  return t;
}();
// Byte k of the result is 1 where byte k of v is nonzero, else 0 (no byte carries into the next:
// (v & 0x7f) + 0x7f stays below 0x100).
constexpr std::uint64_t nonzero_bytes(std::uint64_t v) {
  constexpr std::uint64_t low7 = 0x7f7f7f7f7f7f7f7full, high = 0x8080808080808080ull;
  return ((((v & low7) + low7) | v) & high) >> 7;
}
// Bytes that are 0 or 1 → bit k = byte k. The partial products of the multiply land on distinct
// bits, so nothing carries and the top byte collects the eight booleans.
constexpr std::uint8_t bits_of_bytes(std::uint64_t ones) { return std::uint8_t((ones * 0x0102040810204080ull) >> 56); }

// The valid bits of a row's last word: bits past `cols` are the tail, which writers clear.
constexpr bit_word last_word_mask(index_t cols) {
  return cols % bits_per_word == 0 ? ~bit_word(0) : (bit_word(1) << (cols % bits_per_word)) - 1;
}

// The instruction sets the kernel is built for. avx512 needs F, BW, DQ and VL; counts on
// avx512_popcnt also use VPOPCNTDQ (or-and has no use for it).
enum class Isa { generic, avx2, avx512, avx512_popcnt };
std::string_view to_string(Isa isa);
bool cpu_has(Isa isa);
// The widest set this CPU runs for or-and (count = false) or for counts.
Isa best_isa(bool count);
// The set a call runs with Context::cpu_isa = `requested` (resolved_cpu_isa: refused above the CPU's).
Isa isa_for(CpuIsa requested, bool count);

enum class Output { u8, bits, count };

// A checked product: C ← α ⊗ (A·B) ⊕ β ⊗ C with A (M×K) and Bᵀ (N×K) packed along K, C in the form
// `output` names (the other two views are unused). For or-and α and β are 0 or 1.
struct Product {
  BitMatrixView<const bit_word> a, bt;
  Output output = Output::u8;
  MatrixView<std::uint8_t> c_u8{};
  BitMatrixView<bit_word> c_bits{};
  MatrixView<std::int32_t> c_count{};
  std::int32_t alpha = 1, beta = 0;

  index_t m() const { return a.rows; }
  index_t n() const { return bt.rows; }
  index_t k() const { return a.cols; }
};

// Runs `p` on `threads` OpenMP threads (0 = OpenMP's default) with the kernel built for `isa`,
// which this CPU must have (cpu_has).
void run_cpu(const Product& p, int threads, Isa isa);

}  // namespace b1
}  // namespace ringmm::detail
