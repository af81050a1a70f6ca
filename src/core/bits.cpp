// The b1 converters: u8 ↔ b1, np.packbits bytes ↔ b1 and 32-bit words ↔ b1 (ringmm/bits.hpp).
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "ringmm/bits.hpp"
#include "ringmm/detail/bits.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/error.hpp"

namespace ringmm {

namespace {

using detail::bytes_of;
using detail::ranges_overlap;
using detail::b1::last_word_mask;

constexpr std::array<std::uint8_t, 256> reversed_byte = [] {
  std::array<std::uint8_t, 256> t{};
  for (unsigned v = 0; v < 256; ++v)
    for (unsigned k = 0; k < 8; ++k) t[v] |= std::uint8_t(((v >> k) & 1u) << (7 - k));
  return t;
}();

void require_same_shape(index_t rows, index_t cols, index_t out_rows, index_t out_cols, const char* what) {
  if (rows != out_rows || cols != out_cols)
    throw Error(Errc::dimension_mismatch, "out",
                std::string(what) + " is " + std::to_string(rows) + "x" + std::to_string(cols) + " but out is " +
                    std::to_string(out_rows) + "x" + std::to_string(out_cols));
}

// packed must be rows × units, the bytes or 32-bit words (`unit_name`) that hold `cols` bits.
template <class T>
void require_packed_shape(const MatrixView<T>& packed, index_t rows, index_t cols, index_t units,
                          const char* unit_name) {
  if (packed.rows != rows || packed.cols != units)
    throw Error(Errc::dimension_mismatch, "packed",
                "a " + std::to_string(rows) + "x" + std::to_string(cols) + " bit matrix packs into " +
                    std::to_string(rows) + "x" + std::to_string(units) + " " + unit_name + ", but packed is " +
                    std::to_string(packed.rows) + "x" + std::to_string(packed.cols));
}

}  // namespace

std::string_view to_string(BitOrder order) { return order == BitOrder::big ? "big" : "little"; }

BitOrder parse_bit_order(std::string_view text, std::string_view what) {
  if (text == "big") return BitOrder::big;
  if (text == "little") return BitOrder::little;
  throw Error(Errc::invalid_argument, std::string(what), "unknown bit order '" + std::string(text) + "' (valid: big, little)");
}

void pack_bits(MatrixView<const std::uint8_t> x, BitMatrixView<bit_word> out) {
  detail::validate_view(x, "x");
  detail::validate_bits(out, "out");
  require_same_shape(x.rows, x.cols, out.rows, out.cols, "x");
  if (ranges_overlap(x.data, bytes_of(x), out.data, bytes_of(out))) throw Error(Errc::aliasing, "out", "out overlaps x");
  const index_t words = out.row_words();
  for (index_t i = 0; i < x.rows; ++i) {
    bit_word* row = out.row(i);
    for (index_t w = 0; w < words; ++w) {
      const index_t j0 = w * bits_per_word, count = std::min(bits_per_word, x.cols - j0);
      bit_word word = 0;
      index_t j = 0;
      if (x.col_stride() == 1) {  // a row of bytes: eight at a time
        const std::uint8_t* src = &x(i, j0);
        for (; j + 8 <= count; j += 8) {
          std::uint64_t v;
          std::memcpy(&v, src + j, 8);
          word |= bit_word(detail::b1::bits_of_bytes(detail::b1::nonzero_bytes(v))) << j;
        }
      }
      for (; j < count; ++j) word |= bit_word(x(i, j0 + j) != 0) << j;
      row[w] = word;
    }
  }
}

void unpack_bits(BitMatrixView<const bit_word> x, MatrixView<std::uint8_t> out) {
  detail::validate_bits(x, "x");
  detail::validate_view(out, "out");
  require_same_shape(x.rows, x.cols, out.rows, out.cols, "x");
  if (ranges_overlap(x.data, bytes_of(x), out.data, bytes_of(out))) throw Error(Errc::aliasing, "out", "out overlaps x");
  for (index_t i = 0; i < x.rows; ++i) {
    const bit_word* row = x.row(i);
    index_t j = 0;
    if (out.col_stride() == 1) {  // a row of bytes: eight at a time
      std::uint8_t* dst = &out(i, 0);
      for (; j + 8 <= x.cols; j += 8) {
        const std::uint64_t bytes = detail::b1::bytes_of_bits[(row[j / bits_per_word] >> (j % bits_per_word)) & 0xffu];
        std::memcpy(dst + j, &bytes, 8);
      }
    }
    for (; j < x.cols; ++j) out(i, j) = std::uint8_t((row[j / bits_per_word] >> (j % bits_per_word)) & 1u);
  }
}

void bits_from_packbits(MatrixView<const std::uint8_t> packed, BitOrder order, BitMatrixView<bit_word> out) {
  detail::validate_view(packed, "packed");
  detail::validate_bits(out, "out");
  require_packed_shape(packed, out.rows, out.cols, bytes_for_bits(out.cols), "bytes");
  if (ranges_overlap(packed.data, bytes_of(packed), out.data, bytes_of(out)))
    throw Error(Errc::aliasing, "out", "out overlaps packed");
  const index_t words = out.row_words();
  for (index_t i = 0; i < out.rows; ++i) {
    bit_word* row = out.row(i);
    for (index_t w = 0; w < words; ++w) {
      const index_t b0 = w * 8, b1 = std::min(b0 + 8, packed.cols);
      bit_word word = 0;
      for (index_t b = b0; b < b1; ++b) {
        const std::uint8_t v = packed(i, b);
        word |= bit_word(order == BitOrder::big ? reversed_byte[v] : v) << (8 * (b - b0));
      }
      row[w] = w == words - 1 ? word & last_word_mask(out.cols) : word;  // the pad bits are ignored
    }
  }
}

void packbits_from_bits(BitMatrixView<const bit_word> x, BitOrder order, MatrixView<std::uint8_t> packed) {
  detail::validate_bits(x, "x");
  detail::validate_view(packed, "packed");
  require_packed_shape(packed, x.rows, x.cols, bytes_for_bits(x.cols), "bytes");
  if (ranges_overlap(x.data, bytes_of(x), packed.data, bytes_of(packed)))
    throw Error(Errc::aliasing, "packed", "packed overlaps x");
  const index_t bytes = packed.cols;
  const unsigned pad_mask = x.cols % 8 == 0 ? 0xffu : (1u << (x.cols % 8)) - 1;  // little order: low bits are columns
  for (index_t i = 0; i < x.rows; ++i) {
    const bit_word* row = x.row(i);
    for (index_t b = 0; b < bytes; ++b) {
      unsigned v = unsigned(row[b / 8] >> (8 * (b % 8))) & 0xffu;
      if (b == bytes - 1) v &= pad_mask;
      packed(i, b) = order == BitOrder::big ? reversed_byte[v] : std::uint8_t(v);
    }
  }
}

void bits_from_words32(MatrixView<const std::uint32_t> packed, BitMatrixView<bit_word> out) {
  detail::validate_view(packed, "packed");
  detail::validate_bits(out, "out");
  require_packed_shape(packed, out.rows, out.cols, words32_for_bits(out.cols), "32-bit words");
  if (ranges_overlap(packed.data, bytes_of(packed), out.data, bytes_of(out)))
    throw Error(Errc::aliasing, "out", "out overlaps packed");
  const index_t words = out.row_words(), halves = packed.cols;
  for (index_t i = 0; i < out.rows; ++i) {
    bit_word* row = out.row(i);
    for (index_t w = 0; w < words; ++w) {
      // Word w holds halves 2w (low) and 2w + 1 (high); an odd count leaves the last high half empty.
      bit_word word = packed(i, 2 * w);
      if (2 * w + 1 < halves) word |= bit_word(packed(i, 2 * w + 1)) << 32;
      row[w] = w == words - 1 ? word & last_word_mask(out.cols) : word;  // the tail bits are ignored
    }
  }
}

void words32_from_bits(BitMatrixView<const bit_word> x, MatrixView<std::uint32_t> packed) {
  detail::validate_bits(x, "x");
  detail::validate_view(packed, "packed");
  require_packed_shape(packed, x.rows, x.cols, words32_for_bits(x.cols), "32-bit words");
  if (ranges_overlap(x.data, bytes_of(x), packed.data, bytes_of(packed)))
    throw Error(Errc::aliasing, "packed", "packed overlaps x");
  const index_t halves = packed.cols;
  const std::uint32_t tail_mask = x.cols % 32 == 0 ? ~std::uint32_t(0) : (std::uint32_t(1) << (x.cols % 32)) - 1;
  for (index_t i = 0; i < x.rows; ++i) {
    const bit_word* row = x.row(i);
    for (index_t h = 0; h < halves; ++h) {
      const auto half = std::uint32_t(row[h / 2] >> (32 * (h % 2)));
      packed(i, h) = h == halves - 1 ? half & tail_mask : half;
    }
  }
}

}  // namespace ringmm
