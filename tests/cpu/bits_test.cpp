// b1 (ringmm/bits.hpp): the or-and products against the u8 or-and reference (cpu::reference_gemm),
// the counts against a direct count, every instruction set this CPU runs, and the converters.
// Inputs carry garbage in their tail bits and padding words, which must be ignored; outputs are
// poisoned where the contract says they are not read, and padding words of a b1 C must survive.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ringmm/bits.hpp"
#include "ringmm/detail/bits.hpp"
#include "bit_matrices.hpp"
#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::HostMatrix;
namespace b1 = detail::b1;
using testing::BitBuffer;
using testing::bits_of;

// A random boolean matrix as u8 (nonzero bytes other than 1 included), dense enough that about half
// of the products of inner dimension k are true.
HostMatrix<std::uint8_t> random_bools(index_t rows, index_t cols, index_t k, std::mt19937_64& rng, Layout layout = Layout::row_major,
                                      index_t pad = 0) {
  return testing::random_matrix<OrAnd>(rows, cols, layout, pad, rng, k);
}

// Everything one shape is checked with: A (M×K), Bᵀ (N×K), C0 (what C holds before a β = 1 call)
// and the expected products without α and β.
struct Shape {
  index_t m, n, k;
};

struct Inputs {
  HostMatrix<std::uint8_t> a_u8, bt_u8, c0_u8;
  BitBuffer a, bt, c0_bits;
  HostMatrix<std::int32_t> c0_count;
  HostMatrix<std::uint8_t> product;   // the u8 or-and reference: A·B with α = 1, β = 0
  HostMatrix<std::int32_t> count;     // the number of k with A(i, k) and Bᵀ(j, k)
};

Inputs make_inputs(const Shape& s, index_t pad_words, std::mt19937_64& rng) {
  auto a_u8 = random_bools(s.m, s.k, s.k, rng);
  auto bt_u8 = random_bools(s.n, s.k, s.k, rng);
  auto c0_u8 = random_bools(s.m, s.n, 4, rng);
  Inputs in{a_u8, bt_u8, c0_u8, bits_of(a_u8, pad_words, rng), bits_of(bt_u8, pad_words, rng),
            bits_of(c0_u8, pad_words, rng), HostMatrix<std::int32_t>(s.m, s.n, Layout::row_major),
            HostMatrix<std::uint8_t>(s.m, s.n, Layout::row_major), HostMatrix<std::int32_t>(s.m, s.n, Layout::row_major)};
  for (auto& x : in.c0_count.storage) x = std::int32_t(rng() % 2001) - 1000;
  auto p = detail::make_problem<OrAnd>(Op::N, a_u8.cview(), Op::T, bt_u8.cview(), in.product.view, OrAnd::one(), OrAnd::zero());
  cpu::reference_gemm<OrAnd>(p);
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = 0; j < s.n; ++j) {
      std::int32_t c = 0;
      for (index_t k = 0; k < s.k; ++k) c += a_u8(i, k) != 0 && bt_u8(j, k) != 0;
      in.count(i, j) = c;
    }
  return in;
}

// How the product is run: the public API (the widest instruction set), or run_cpu on one set.
struct Run {
  b1::Output output;
  int threads;
  std::int32_t alpha, beta;
  Layout c_layout = Layout::row_major;
  index_t c_pad = 0;  // u8 and count C: extra elements per line; b1 C: extra words per row
  bool api = true;
  b1::Isa isa = b1::Isa::generic;

  std::string describe() const {
    const char* out = output == b1::Output::u8 ? "u8" : output == b1::Output::bits ? "b1" : "count";
    return std::string("C ") + out + (c_layout == Layout::col_major ? " col-major" : "") + " pad " +
           std::to_string(c_pad) + " threads " + std::to_string(threads) + " alpha " + std::to_string(alpha) +
           " beta " + std::to_string(beta) + (api ? " [api]" : " [" + std::string(b1::to_string(isa)) + "]");
  }
};

void check_run(const Shape& s, const Inputs& in, const Run& r, std::mt19937_64& rng) {
  SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " + r.describe());
  Context ctx;  // automatic: b1 products run on the CPU for host memory
  ctx.cpu_threads = r.threads;
  b1::Product p;
  p.a = in.a.cview();
  p.bt = in.bt.cview();
  p.output = r.output;
  p.alpha = r.alpha;
  p.beta = r.beta;
  auto run = [&] {
    if (!r.api) return b1::run_cpu(p, r.threads, r.isa);
    if (r.output == b1::Output::u8) gemm_b1(ctx, p.a, p.bt, p.c_u8, r.alpha != 0, r.beta != 0);
    else if (r.output == b1::Output::bits) gemm_b1(ctx, p.a, p.bt, p.c_bits, r.alpha != 0, r.beta != 0);
    else gemm_b1_count(ctx, p.a, p.bt, p.c_count, r.alpha, r.beta);
  };
  index_t bad = 0;
  std::string first;
  auto expect_eq = [&](index_t i, index_t j, long long expected, long long got) {
    if (expected != got && bad++ == 0)
      first = "(" + std::to_string(i) + ", " + std::to_string(j) + "): expected " + std::to_string(expected) + ", got " +
              std::to_string(got);
  };
  if (r.output == b1::Output::u8) {
    HostMatrix<std::uint8_t> c(s.m, s.n, r.c_layout, r.c_pad);
    for (auto& x : c.storage) x = testing::poison<std::uint8_t>();
    if (r.beta)
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j) c(i, j) = in.c0_u8(i, j);
    const auto before = c.storage;
    p.c_u8 = c.view;
    run();
    for (index_t i = 0; i < s.m; ++i)
      for (index_t j = 0; j < s.n; ++j)
        expect_eq(i, j, (r.alpha && in.product(i, j)) || (r.beta && in.c0_u8(i, j) != 0), c(i, j));
    for (std::size_t x = 0; x < before.size(); ++x) {  // what lies outside C keeps its poison
      const index_t line = index_t(x) / c.view.ld, pos = index_t(x) % c.view.ld;
      const bool inside = pos < (r.c_layout == Layout::row_major ? s.n : s.m) && line < (r.c_layout == Layout::row_major ? s.m : s.n);
      if (!inside) EXPECT_EQ(c.storage[x], before[x]) << "storage " << x << " outside C was written";
    }
  } else if (r.output == b1::Output::bits) {
    BitBuffer c(s.m, s.n, r.c_pad, rng);  // garbage everywhere: tail bits and padding words too
    if (r.beta) c = in.c0_bits;
    const std::vector<bit_word> before = c.words;
    p.c_bits = c.view;
    run();
    for (index_t i = 0; i < s.m; ++i) {
      for (index_t j = 0; j < s.n; ++j)
        expect_eq(i, j, (r.alpha && in.product(i, j)) || (r.beta && in.c0_u8(i, j) != 0), c.view(i, j));
      const index_t words = c.view.row_words();
      if (words > 0)
        EXPECT_EQ(c.view.row(i)[words - 1] & ~b1::last_word_mask(s.n), 0u) << "row " << i << ": tail bits not cleared";
      for (index_t w = words; w < c.view.stride_words; ++w)
        EXPECT_EQ(c.view.row(i)[w], before[std::size_t(i * c.view.stride_words + w)]) << "padding word written";
    }
  } else {
    HostMatrix<std::int32_t> c(s.m, s.n, r.c_layout, r.c_pad);
    for (auto& x : c.storage) x = testing::poison<std::int32_t>();
    if (r.beta)
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j) c(i, j) = in.c0_count(i, j);
    p.c_count = c.view;
    run();
    for (index_t i = 0; i < s.m; ++i)
      for (index_t j = 0; j < s.n; ++j)
        expect_eq(i, j, (long long)r.alpha * in.count(i, j) + (r.beta ? (long long)r.beta * in.c0_count(i, j) : 0), c(i, j));
  }
  EXPECT_EQ(bad, 0) << bad << " of " << s.m * s.n << " entries differ; first at " << first;
}

// The instruction sets this CPU runs other than the one the API picks, for or-and and counts.
std::vector<b1::Isa> narrower_sets(bool count) {
  std::vector<b1::Isa> sets;
  for (b1::Isa isa : {b1::Isa::generic, b1::Isa::avx2, b1::Isa::avx512, b1::Isa::avx512_popcnt})
    if (b1::cpu_has(isa) && isa != b1::best_isa(count)) sets.push_back(isa);
  return sets;
}

// Every output through the API on 1 and 2 threads with α, β ∈ {0, 1} (counts: also 3 and −2), and
// the other instruction sets with α = 1, β = 0.
void check_shape(const Shape& s, index_t pad_words = 0) {
  std::mt19937_64 rng(std::uint64_t(s.m * 1000003 + s.n * 1009 + s.k * 7 + pad_words));
  const Inputs in = make_inputs(s, pad_words, rng);
  for (b1::Output out : {b1::Output::u8, b1::Output::bits, b1::Output::count})
    for (int threads : {1, 2})
      for (auto [alpha, beta] : {std::pair{1, 0}, {0, 0}, {1, 1}, {0, 1}}) {
        const bool count = out == b1::Output::count;
        check_run(s, in, {out, threads, count && alpha ? 3 : alpha, count && beta ? -2 : beta, Layout::row_major, pad_words}, rng);
        if (::testing::Test::HasFailure()) return;
      }
  for (b1::Output out : {b1::Output::u8, b1::Output::count})
    for (b1::Isa isa : narrower_sets(out == b1::Output::count)) {
      check_run(s, in, {out, 1, 1, 0, Layout::row_major, 0, false, isa}, rng);
      if (::testing::Test::HasFailure()) return;
    }
}

const index_t odd_sizes[] = {0, 1, 7, 33, 63, 64, 65, 127, 129};

TEST(B1Product, EveryOddShapeEveryOutput) {
  for (index_t m : odd_sizes)
    for (index_t n : odd_sizes)
      for (index_t k : odd_sizes) {
        check_shape({m, n, k});
        if (HasFailure()) return;
      }
}

TEST(B1Product, LargeAndRectangularShapes) {
  for (const Shape& s : {Shape{1000, 1025, 65}, Shape{1025, 1000, 1}, Shape{1000, 1025, 0}, Shape{1025, 63, 1000},
                         Shape{7, 1000, 1025}, Shape{1000, 1, 1025}, Shape{129, 1025, 1000}, Shape{1025, 1000, 1025}})
    check_shape(s);
}

// Long K: several K chunks, so the early exit between chunks and the count sums across them run.
TEST(B1Product, KLongerThanOneChunk) {
  for (const Shape& s : {Shape{33, 65, 16384 + 65}, Shape{9, 130, 40000}, Shape{64, 64, 3 * 16384}}) check_shape(s);
}

TEST(B1Product, PaddedStridesAndOtherCLayouts) {
  for (const Shape& s : {Shape{33, 65, 129}, Shape{64, 127, 64}, Shape{65, 200, 1000}}) {
    check_shape(s, 3);
    std::mt19937_64 rng(7);
    const Inputs in = make_inputs(s, 1, rng);
    for (auto [alpha, beta] : {std::pair{1, 0}, {1, 1}}) {
      check_run(s, in, {b1::Output::u8, 2, alpha, beta, Layout::col_major, 5}, rng);
      check_run(s, in, {b1::Output::u8, 1, alpha, beta, Layout::row_major, 9}, rng);
      check_run(s, in, {b1::Output::count, 2, alpha, beta, Layout::col_major, 2}, rng);
    }
  }
}

// A product whose every entry is true: the early exit ends each tile long before K does.
TEST(B1Product, AllTrueEndsEarlyAndStaysExact) {
  const Shape s{70, 130, 3 * 16384 + 5};
  std::mt19937_64 rng(3);
  BitBuffer a(s.m, s.k, 0, rng), bt(s.n, s.k, 0, rng);
  for (bit_word& w : a.words) w = ~bit_word(0);
  for (bit_word& w : bt.words) w = ~bit_word(0);
  HostMatrix<std::uint8_t> c(s.m, s.n, Layout::row_major);
  gemm_b1(Context{}, a.cview(), bt.cview(), c.view);
  HostMatrix<std::int32_t> counts(s.m, s.n, Layout::row_major);
  gemm_b1_count(Context{}, a.cview(), bt.cview(), counts.view);
  for (index_t i = 0; i < s.m; ++i)
    for (index_t j = 0; j < s.n; ++j) {
      ASSERT_EQ(c(i, j), 1) << i << ", " << j;
      ASSERT_EQ(counts(i, j), s.k) << i << ", " << j;
    }
}

// ---- argument checks: each refused call names its argument and writes nothing ---------------------

template <class F> void expect_refused(F&& call, Errc code, const std::string& subject) {
  try {
    call();
    ADD_FAILURE() << "expected ringmm::Error " << to_string(code);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.subject(), subject) << e.what();
  }
}

TEST(B1Product, RefusesBadArgumentsWithoutWriting) {
  std::mt19937_64 rng(11);
  BitBuffer a(5, 70, 0, rng), bt(6, 70, 0, rng), bt_short(6, 69, 0, rng);
  HostMatrix<std::uint8_t> c(5, 6, Layout::row_major);
  for (auto& x : c.storage) x = testing::poison<std::uint8_t>();
  const auto before = c.storage;
  const Context ctx;
  expect_refused([&] { gemm_b1(ctx, a.cview(), bt_short.cview(), c.view); }, Errc::dimension_mismatch, "B");
  HostMatrix<std::uint8_t> c_wrong(5, 7, Layout::row_major);
  expect_refused([&] { gemm_b1(ctx, a.cview(), bt.cview(), c_wrong.view); }, Errc::dimension_mismatch, "C");
  auto narrow = a.cview();
  narrow.stride_words = 1;  // a row of 70 bits needs 2 words
  expect_refused([&] { gemm_b1(ctx, narrow, bt.cview(), c.view); }, Errc::invalid_leading_dim, "strideA");
  auto negative = bt.cview();
  negative.rows = -1;
  expect_refused([&] { gemm_b1(ctx, a.cview(), negative, c.view); }, Errc::invalid_argument, "B");
  auto null = a.cview();
  null.data = nullptr;
  expect_refused([&] { gemm_b1(ctx, null, bt.cview(), c.view); }, Errc::null_pointer, "A");
  Context cuda;
  cuda.backend = Backend::cuda;
  // or-and on CUDA reads device memory (these are host arrays); a build without CUDA has no backend.
  if (cuda_compiled())
    expect_refused([&] { gemm_b1(cuda, a.cview(), bt.cview(), c.view); }, Errc::unsupported, "A");
  else
    expect_refused([&] { gemm_b1(cuda, a.cview(), bt.cview(), c.view); }, Errc::backend_unavailable, "backend");
  expect_refused([&] { gemm_b1_count(cuda, a.cview(), bt.cview(), HostMatrix<std::int32_t>(5, 6, Layout::row_major).view); },
                 Errc::unsupported, "backend");
  EXPECT_EQ(c.storage, before);

  // A b1 C over A's own words (squaring in place) is refused.
  BitBuffer square(70, 70, 0, rng);
  expect_refused([&] { gemm_b1(ctx, square.cview(), square.cview(), square.view); }, Errc::aliasing, "C");
}

TEST(B1Product, CountsRefuseWhatCouldOverflow) {
  std::mt19937_64 rng(5);
  BitBuffer a(2, 3, 0, rng), bt(2, 3, 0, rng);
  HostMatrix<std::int32_t> c(2, 2, Layout::row_major);
  const Context ctx;
  // |α|·K = 3·715827883 > 2^31 − 1.
  expect_refused([&] { gemm_b1_count(ctx, a.cview(), bt.cview(), c.view, 715827883); }, Errc::value_out_of_range, "A");
  c(1, 1) = 1 << 30;
  expect_refused([&] { gemm_b1_count(ctx, a.cview(), bt.cview(), c.view, 1, 2); }, Errc::value_out_of_range, "A");
  // A bound inside the range passes: |α|·K + |β|·max|C| = 3·2^28 + 2^30 < 2^31.
  gemm_b1_count(ctx, a.cview(), bt.cview(), c.view, 1 << 28, 1);
  EXPECT_EQ(c(1, 1) - (1 << 30), (1 << 28) * [&] {
    int n = 0;
    for (index_t k = 0; k < 3; ++k) n += a.view(1, k) && bt.view(1, k);
    return n;
  }());
}

// ---- converters ----------------------------------------------------------------------------------

TEST(B1Convert, U8RoundTripInEveryLayout) {
  std::mt19937_64 rng(17);
  for (index_t rows : {0, 1, 5, 64})
    for (index_t cols : {0, 1, 7, 8, 63, 64, 65, 130})
      for (Layout layout : {Layout::row_major, Layout::col_major}) {
        SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + (layout == Layout::row_major ? " R" : " C"));
        HostMatrix<std::uint8_t> x(rows, cols, layout, 3);
        for (auto& v : x.storage) v = std::uint8_t(rng() % 4 == 0 ? rng() : 0);  // nonzero bytes of every value
        BitBuffer bits(rows, cols, 2, rng);
        const std::vector<bit_word> before = bits.words;
        pack_bits(x.cview(), bits.view);
        for (index_t i = 0; i < rows; ++i) {
          for (index_t j = 0; j < cols; ++j) ASSERT_EQ(bits.view(i, j), x(i, j) != 0) << i << ", " << j;
          const index_t words = bits.view.row_words();
          if (words > 0) EXPECT_EQ(bits.view.row(i)[words - 1] & ~b1::last_word_mask(cols), 0u) << "tail bits not cleared";
          for (index_t w = words; w < bits.view.stride_words; ++w)
            EXPECT_EQ(bits.view.row(i)[w], before[std::size_t(i * bits.view.stride_words + w)]);
        }
        HostMatrix<std::uint8_t> back(rows, cols, layout == Layout::row_major ? Layout::col_major : Layout::row_major, 1);
        for (auto& v : back.storage) v = 0xee;
        unpack_bits(bits.cview(), back.view);
        for (index_t i = 0; i < rows; ++i)
          for (index_t j = 0; j < cols; ++j) ASSERT_EQ(back(i, j), std::uint8_t(x(i, j) != 0)) << i << ", " << j;
      }
}

TEST(B1Convert, PackbitsBothOrdersIgnorePadBitsAndRoundTrip) {
  std::mt19937_64 rng(19);
  for (BitOrder order : {BitOrder::big, BitOrder::little})
    for (index_t cols : {0, 1, 7, 8, 9, 63, 64, 65, 130}) {
      SCOPED_TRACE(std::string(to_string(order)) + " cols " + std::to_string(cols));
      const index_t rows = 4, bytes = (cols + 7) / 8;
      HostMatrix<std::uint8_t> packed(rows, bytes, Layout::row_major, 2);
      for (auto& v : packed.storage) v = std::uint8_t(rng());  // pad bits of each last byte: garbage
      BitBuffer bits(rows, cols, 1, rng);
      bits_from_packbits(packed.cview(), order, bits.view);
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < cols; ++j) {
          const unsigned byte = packed(i, j / 8), bit = order == BitOrder::big ? 7 - j % 8 : j % 8;  // numpy's rule
          ASSERT_EQ(bits.view(i, j), ((byte >> bit) & 1u) != 0) << i << ", " << j;
        }
      for (index_t i = 0; i < rows && cols > 0; ++i)  // tail bits are garbage again: a reader ignores them
        bits.view.row(i)[bits.view.row_words() - 1] |= ~b1::last_word_mask(cols);
      HostMatrix<std::uint8_t> back(rows, bytes, Layout::col_major);
      packbits_from_bits(bits.cview(), order, back.view);
      for (index_t i = 0; i < rows; ++i)
        for (index_t b = 0; b < bytes; ++b) {
          const index_t valid = std::min<index_t>(8, cols - 8 * b);
          const unsigned keep = order == BitOrder::big ? (0xff00u >> valid) & 0xffu : (1u << valid) - 1;
          ASSERT_EQ(back(i, b), packed(i, b) & keep) << i << ", " << b << ": pad bits must be written as zero";
        }
    }
}

// u8 → 32-bit words → b1 → u8, and b1 → 32-bit words, whose bytes must be np.packbits' little
// order padded to 4 bytes (checked through packbits_from_bits). Tail bits of both packed forms
// carry garbage on read and must come out as zero.
TEST(B1Convert, Words32RoundTripIgnoreTailBitsAndMatchLittlePackbits) {
  std::mt19937_64 rng(29);
  for (index_t cols : {0, 1, 31, 32, 33, 63, 64, 65, 1000})
    for (Layout layout : {Layout::row_major, Layout::col_major}) {
      SCOPED_TRACE("cols " + std::to_string(cols) + (layout == Layout::row_major ? " R" : " C"));
      const index_t rows = 5, words32 = (cols + 31) / 32;
      HostMatrix<std::uint8_t> x(rows, cols, Layout::row_major);
      for (auto& v : x.storage) v = std::uint8_t(rng() % 3 == 0 ? rng() : 0);
      BitBuffer bits(rows, cols, 1, rng);
      pack_bits(x.cview(), bits.view);
      for (index_t i = 0; i < rows && cols > 0; ++i)  // garbage in the b1 tail bits, which a writer must drop
        bits.view.row(i)[bits.view.row_words() - 1] |= ~b1::last_word_mask(cols);

      HostMatrix<std::uint32_t> packed(rows, words32, layout, 2);
      for (auto& v : packed.storage) v = std::uint32_t(rng());
      words32_from_bits(bits.cview(), packed.view);
      HostMatrix<std::uint8_t> little(rows, (cols + 7) / 8, Layout::row_major);
      packbits_from_bits(bits.cview(), BitOrder::little, little.view);
      for (index_t i = 0; i < rows; ++i) {
        for (index_t j = 0; j < cols; ++j)
          ASSERT_EQ((packed(i, j / 32) >> (j % 32)) & 1u, unsigned(x(i, j) != 0)) << i << ", " << j;
        for (index_t j = cols; j < 32 * words32; ++j)
          ASSERT_EQ((packed(i, j / 32) >> (j % 32)) & 1u, 0u) << "tail bit " << j << " of row " << i << " not zero";
        for (index_t b = 0; b < 4 * words32; ++b) {
          const unsigned byte = (packed(i, b / 4) >> (8 * (b % 4))) & 0xffu;
          ASSERT_EQ(byte, b < little.view.cols ? little(i, b) : 0u) << "byte " << b << " of row " << i;
        }
      }

      for (index_t i = 0; i < rows && cols % 32 != 0; ++i)  // tail bits are garbage again: a reader ignores them
        packed(i, words32 - 1) |= ~((std::uint32_t(1) << (cols % 32)) - 1);
      BitBuffer again(rows, cols, 2, rng);
      bits_from_words32(packed.cview(), again.view);
      HostMatrix<std::uint8_t> back(rows, cols, Layout::col_major, 1);
      unpack_bits(again.cview(), back.view);
      for (index_t i = 0; i < rows; ++i) {
        for (index_t j = 0; j < cols; ++j) ASSERT_EQ(back(i, j), std::uint8_t(x(i, j) != 0)) << i << ", " << j;
        if (cols > 0)
          EXPECT_EQ(again.view.row(i)[again.view.row_words() - 1] & ~b1::last_word_mask(cols), 0u) << "tail bits not cleared";
      }
    }
}

TEST(B1Convert, RefusesInconsistentShapes) {
  std::mt19937_64 rng(23);
  HostMatrix<std::uint8_t> packed(3, 2, Layout::row_major);  // 2 bytes hold 9 to 16 columns
  BitBuffer bits17(3, 17, 0, rng), bits8(3, 8, 0, rng), bits16(3, 16, 0, rng);
  expect_refused([&] { bits_from_packbits(packed.cview(), BitOrder::big, bits17.view); }, Errc::dimension_mismatch, "packed");
  expect_refused([&] { bits_from_packbits(packed.cview(), BitOrder::big, bits8.view); }, Errc::dimension_mismatch, "packed");
  bits_from_packbits(packed.cview(), BitOrder::big, bits16.view);
  HostMatrix<std::uint32_t> words(3, 1, Layout::row_major);  // 1 word holds 1 to 32 columns
  BitBuffer bits33(3, 33, 0, rng), bits32(3, 32, 0, rng);
  expect_refused([&] { bits_from_words32(words.cview(), bits33.view); }, Errc::dimension_mismatch, "packed");
  expect_refused([&] { words32_from_bits(bits33.cview(), words.view); }, Errc::dimension_mismatch, "packed");
  bits_from_words32(words.cview(), bits32.view);
  bits_from_words32(words.cview(), bits17.view);
  HostMatrix<std::uint8_t> x(3, 16, Layout::row_major);
  expect_refused([&] { pack_bits(x.cview(), bits17.view); }, Errc::dimension_mismatch, "out");
  EXPECT_EQ(parse_bit_order("little"), BitOrder::little);
  expect_refused([] { parse_bit_order("middle", "--bitorder"); }, Errc::invalid_argument, "--bitorder");
}

}  // namespace
}  // namespace ringmm
