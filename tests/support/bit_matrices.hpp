// Bit matrices for the b1 tests (CPU and CUDA): owning buffers whose tail bits and padding words
// hold random garbage, which every reader must ignore.
#pragma once

#include <algorithm>
#include <random>
#include <vector>

#include "ringmm/bits.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {

// An owning bit matrix whose every word starts as random garbage: a row's tail bits and the
// padding words past it keep their garbage; the logical bits are set from a u8 matrix.
struct BitBuffer {
  std::vector<bit_word> words;
  BitMatrixView<bit_word> view;
  BitBuffer(index_t rows, index_t cols, index_t pad_words, std::mt19937_64& rng) {
    const index_t stride = std::max<index_t>(1, words_for_bits(cols) + pad_words);
    words.resize(std::size_t(std::max<index_t>(1, rows * stride)));
    for (bit_word& w : words) w = rng();
    view = {words.data(), rows, cols, stride};
  }
  BitBuffer(const BitBuffer& o) : words(o.words), view(o.view) { view.data = words.data(); }
  BitBuffer& operator=(const BitBuffer& o) {
    words = o.words;
    view = o.view;
    view.data = words.data();
    return *this;
  }
  void set(index_t i, index_t j, bool value) {
    bit_word& w = view.row(i)[j / bits_per_word];
    const bit_word bit = bit_word(1) << (j % bits_per_word);
    w = value ? w | bit : w & ~bit;
  }
  BitMatrixView<const bit_word> cview() const { return view; }
};

inline BitBuffer bits_of(const HostMatrix<std::uint8_t>& x, index_t pad_words, std::mt19937_64& rng) {
  BitBuffer out(x.view.rows, x.view.cols, pad_words, rng);
  for (index_t i = 0; i < x.view.rows; ++i)
    for (index_t j = 0; j < x.view.cols; ++j) out.set(i, j, x(i, j) != 0);
  return out;
}

}  // namespace ringmm::testing
