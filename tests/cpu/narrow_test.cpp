// Narrow element types (ringmm/narrow.hpp): the conversions of bf16 and f16, exhaustively and by
// the nearest-value property, and the products of bf16, f16 and i8 operands against the reference
// product of the widened operands, on odd shapes, transposed and strided views, with bf16/f16 C.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ringmm/cpu/reference.hpp"
#include "narrow_values.hpp"
#include "ringmm/narrow.hpp"

namespace ringmm {
namespace {

template <class E> E from_bits(std::uint32_t bits) { return E{std::uint16_t(bits)}; }
template <class E> float widen(E x) { return to_float(x); }
using testing::narrow;
using testing::random_narrow;

template <class E> class NarrowFloat : public ::testing::Test {};
using NarrowFloats = ::testing::Types<bf16, f16>;
TYPED_TEST_SUITE(NarrowFloat, NarrowFloats);

// Every bit pattern widens and narrows back to itself; NaNs stay NaNs.
TYPED_TEST(NarrowFloat, EveryPatternRoundTrips) {
  using E = TypeParam;
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float x = widen(from_bits<E>(bits));
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(widen(narrow<E>(x)))) << bits;
      continue;
    }
    EXPECT_EQ(narrow<E>(x).bits, bits) << bits;
  }
}

// Narrowing rounds to the nearest value, ties to the even pattern, on random floats of every
// magnitude the type holds (and beyond it: to ±∞ past the largest value plus half an ulp).
TYPED_TEST(NarrowFloat, RoundsToNearestEven) {
  using E = TypeParam;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int trial = 0; trial < 200000; ++trial) {
    const float x = std::bit_cast<float>(any(rng));
    if (std::isnan(x)) continue;
    const E h = narrow<E>(x);
    const float y = widen(h);
    if (std::isinf(y)) {  // beyond the largest finite value by at least half its ulp
      const std::uint16_t largest = std::uint16_t((h.bits & 0x8000u) | (std::is_same_v<E, bf16> ? 0x7f7fu : 0x7bffu));
      const double top = std::abs(double(widen(from_bits<E>(largest))));
      const double ulp = top - std::abs(double(widen(from_bits<E>(largest - 1u))));
      EXPECT_GE(std::abs(double(x)), top + ulp / 2) << x;
      continue;
    }
    const double err = std::abs(double(x) - double(y));
    for (int step : {-1, 1}) {  // the neighbouring patterns of the same sign are no closer
      const std::uint32_t nb = std::uint32_t(int(h.bits) + step);
      if ((nb & 0x7fffu) == 0x7fffu || ((nb ^ h.bits) & 0x8000u)) continue;
      const float z = widen(from_bits<E>(nb));
      if (std::isnan(z) || std::isinf(z)) continue;
      const double other = std::abs(double(x) - double(z));
      EXPECT_LE(err, other) << x;
      if (err == other) EXPECT_EQ(h.bits & 1u, 0u) << "a tie went to the odd pattern: " << x;
    }
  }
}

// Hand-checked ties and edges.
TEST(NarrowFloatEdges, TiesOverflowAndSubnormals) {
  EXPECT_EQ(to_f16(1.0f + 0x1p-11f).bits, 0x3c00u);          // halfway between 1 and 1 + 2⁻¹⁰: even, 1
  EXPECT_EQ(to_f16(1.0f + 3 * 0x1p-11f).bits, 0x3c02u);      // halfway to the odd pattern: up
  EXPECT_EQ(to_f16(65504.0f).bits, 0x7bffu);
  EXPECT_EQ(to_f16(65519.99f).bits, 0x7bffu);
  EXPECT_EQ(to_f16(65520.0f).bits, 0x7c00u);                 // the tie past the largest: ∞
  EXPECT_EQ(to_f16(-65520.0f).bits, 0xfc00u);
  EXPECT_EQ(to_f16(0x1p-25f).bits, 0x0000u);                 // half the smallest subnormal: to 0
  EXPECT_EQ(to_f16(3 * 0x1p-25f).bits, 0x0002u);             // between 1 and 2 units: even, 2
  EXPECT_EQ(to_f16(0x1p-14f - 0x1p-26f).bits, 0x0400u);      // rounds up into the smallest normal
  EXPECT_EQ(to_f16(-0.0f).bits, 0x8000u);
  EXPECT_EQ(to_bf16(1.0f + 0x1p-8f).bits, 0x3f80u);          // tie: even
  EXPECT_EQ(to_bf16(std::numeric_limits<float>::max()).bits, 0x7f80u);
  EXPECT_EQ(to_bf16(-std::numeric_limits<float>::infinity()).bits, 0xff80u);
  EXPECT_TRUE(std::isnan(to_float(to_bf16(std::numeric_limits<float>::quiet_NaN()))));
#if defined(__FLT16_MAX__)  // the compiler's own binary16 conversion, where it has one
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int trial = 0; trial < 100000; ++trial) {
    const float x = std::bit_cast<float>(any(rng));
    if (std::isnan(x)) continue;
    EXPECT_EQ(to_f16(x).bits, std::bit_cast<std::uint16_t>(static_cast<_Float16>(x))) << x;
  }
#endif
}

// The reference: the f32 product of the operands widened by hand.
template <class S, class E>
std::vector<float> reference(Op op_a, const MatrixView<const E>& a, Op op_b, const MatrixView<const E>& b, index_t m,
                             index_t n, std::vector<float> c, float alpha, float beta) {
  std::vector<float> wa(std::size_t(a.rows * a.cols)), wb(std::size_t(b.rows * b.cols));
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < a.cols; ++j) wa[std::size_t(i * a.cols + j)] = to_float(a(i, j));
  for (index_t i = 0; i < b.rows; ++i)
    for (index_t j = 0; j < b.cols; ++j) wb[std::size_t(i * b.cols + j)] = to_float(b(i, j));
  auto p = detail::make_problem<S>(op_a, row_major<const float>(wa.data(), a.rows, a.cols), op_b,
                                   row_major<const float>(wb.data(), b.rows, b.cols), row_major(c.data(), m, n), alpha,
                                   beta);
  cpu::reference_gemm<S>(p);
  return c;
}

template <class S, class E> void check_float_product(index_t m, index_t n, index_t k, Op op_a, Op op_b, index_t pad) {
  SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << (op_a == Op::T ? " A^T" : "") << (op_b == Op::T ? " B^T" : "")
                                  << " pad " << pad);
  std::mt19937_64 rng(std::uint64_t(m * 1000003 + n * 1009 + k));
  const index_t ar = op_a == Op::N ? m : k, ac = op_a == Op::N ? k : m;
  const index_t br = op_b == Op::N ? k : n, bc = op_b == Op::N ? n : k;
  const index_t lda = ac + pad, ldb = bc + pad;
  constexpr bool plus_infinity = !std::is_same_v<S, LogPlus<float>>;  // log-plus takes finite values and −∞
  const auto ad = random_narrow<E>(std::size_t(ar * lda), rng, plus_infinity);
  const auto bd = random_narrow<E>(std::size_t(br * ldb), rng, plus_infinity);
  const MatrixView<const E> a{ad.data(), ar, ac, std::max<index_t>(lda, 1), Layout::row_major};
  const MatrixView<const E> b{bd.data(), br, bc, std::max<index_t>(ldb, 1), Layout::row_major};
  Context ctx;
  ctx.backend = Backend::cpu;
  // f32 C, with β: the old C enters.
  std::vector<float> c0(std::size_t(m * n));
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (auto& v : c0) v = d(rng);
  std::vector<float> c = c0;
  const float alpha = S::one(), beta = std::is_same_v<S, LogPlus<float>> ? -0.5f : S::one();
  gemm<S>(ctx, op_a, a, op_b, b, row_major(c.data(), m, n), alpha, beta);
  const auto expect = reference<S, E>(op_a, a, op_b, b, m, n, c0, alpha, beta);
  // Tropical products are exact; log-plus within 4 ulp-scale of f32 at these magnitudes.
  for (std::size_t i = 0; i < c.size(); ++i) {
    if constexpr (std::is_same_v<S, LogPlus<float>>) {
      if (std::isinf(expect[i])) EXPECT_EQ(c[i], expect[i]) << i;
      else EXPECT_NEAR(c[i], expect[i], 1e-5f * (1 + std::abs(expect[i]))) << i;
    } else {
      EXPECT_EQ(std::bit_cast<std::uint32_t>(c[i]), std::bit_cast<std::uint32_t>(expect[i])) << i << ": " << c[i] << " vs " << expect[i];
    }
  }
  // C of the operands' type, β = 0̄: the f32 result of the widened operands, rounded.
  std::vector<E> cn(std::size_t(m * n), narrow<E>(123.0f));
  gemm<S>(ctx, op_a, a, op_b, b, row_major(cn.data(), m, n));
  const auto plain = reference<S, E>(op_a, a, op_b, b, m, n, std::vector<float>(std::size_t(m * n)), S::one(), S::zero());
  for (std::size_t i = 0; i < cn.size(); ++i) {
    if constexpr (std::is_same_v<S, LogPlus<float>>) {
      if (std::isinf(plain[i])) EXPECT_EQ(to_float(cn[i]), plain[i]) << i;
      else EXPECT_NEAR(to_float(cn[i]), plain[i], 0.02f * (1 + std::abs(plain[i]))) << i;  // the narrow type's rounding
    } else {
      EXPECT_EQ(cn[i].bits, narrow<E>(plain[i]).bits) << i;
    }
  }
}

template <class S> void check_every_shape() {
  for (index_t m : {0, 1, 7, 33, 129})
    for (index_t n : {1, 7, 33})
      for (index_t k : {0, 1, 7, 127}) {
        check_float_product<S, bf16>(m, n, k, Op::N, Op::N, 0);
        check_float_product<S, f16>(m, n, k, Op::T, Op::N, 3);
        check_float_product<S, bf16>(m, n, k, Op::N, Op::T, 1);
      }
}

TEST(NarrowGemm, MaxPlus) { check_every_shape<MaxPlus<float>>(); }
TEST(NarrowGemm, MinPlus) { check_every_shape<MinPlus<float>>(); }
TEST(NarrowGemm, MaxMin) { check_every_shape<MaxMin<float>>(); }
TEST(NarrowGemm, MinMax) { check_every_shape<MinMax<float>>(); }
TEST(NarrowGemm, LogPlus) { check_every_shape<LogPlus<float>>(); }

// i8 operands: −128 is −∞ for max-plus and 127 is +∞ for min-plus; the product equals the i32
// product of the operands widened by that rule, exactly.
template <class S> void check_i8(index_t m, index_t n, index_t k) {
  std::mt19937_64 rng(std::uint64_t(m * 31 + n * 7 + k));
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> a(std::size_t(m * k)), b(std::size_t(k * n));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  const std::int8_t sentinel = std::is_same_v<S, MaxPlus<std::int32_t>> ? -128 : 127;
  for (std::size_t i = 0; i < a.size(); i += 5) a[i] = sentinel;  // plenty of them
  const auto wide = [&](std::int8_t v) { return v == sentinel ? S::zero() : std::int32_t(v); };
  std::vector<std::int32_t> wa(a.size()), wb(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) wa[i] = wide(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) wb[i] = wide(b[i]);
  std::vector<std::int32_t> c(std::size_t(m * n), 5), expect = c;
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm<S>(ctx, Op::N, row_major<const std::int8_t>(a.data(), m, k), Op::N, row_major<const std::int8_t>(b.data(), k, n),
          row_major(c.data(), m, n), S::one(), S::one());
  auto p = detail::make_problem<S>(Op::N, row_major<const std::int32_t>(wa.data(), m, k), Op::N,
                                   row_major<const std::int32_t>(wb.data(), k, n), row_major(expect.data(), m, n), S::one(),
                                   S::one());
  cpu::reference_gemm<S>(p);
  EXPECT_EQ(c, expect) << m << "x" << n << "x" << k;
}

TEST(NarrowGemm, Int8MaxPlusAndMinPlus) {
  for (index_t m : {1, 7, 33, 129})
    for (index_t k : {1, 33, 127}) {
      check_i8<MaxPlus<std::int32_t>>(m, 33, k);
      check_i8<MinPlus<std::int32_t>>(m, 7, k);
    }
  // A row of sentinels gives the sentinel (plus a finite C under β = 1̄: C's value).
  std::vector<std::int8_t> a(4, -128), b(4, 100);
  std::vector<std::int32_t> c(1, MaxPlus<std::int32_t>::zero());
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm<MaxPlus<std::int32_t>>(ctx, Op::N, row_major<const std::int8_t>(a.data(), 1, 4), Op::N,
                              row_major<const std::int8_t>(b.data(), 4, 1), row_major(c.data(), 1, 1));
  EXPECT_EQ(c[0], MaxPlus<std::int32_t>::zero());
}

// Batches (gemm_batched): each member equals its own narrow gemm, with members end to end, apart by
// more (the gaps untouched), or one operand broadcast (stride 0); a batch with a member of C out of
// range is refused before any member is written.
TEST(NarrowGemm, Batches) {
  using S = MinPlus<std::int32_t>;
  Context ctx;
  ctx.backend = Backend::cpu;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> d(-128, 127);
  const index_t m = 7, n = 5, k = 33, batch = 4, gap = 3;
  std::vector<std::int8_t> a(std::size_t(batch * (m * k + gap))), b(std::size_t(k * n));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  std::vector<std::int32_t> c(std::size_t(batch * (m * n + gap)), 77), expect = c;
  const auto av = row_major<const std::int8_t>(a.data(), m, k), bv = col_major<const std::int8_t>(b.data(), n, k);
  gemm_batched<S>(ctx, Op::N, av, m * k + gap, Op::T, bv, 0, row_major(c.data(), m, n), m * n + gap, batch, 2);
  for (index_t i = 0; i < batch; ++i)
    gemm<S>(ctx, Op::N, row_major<const std::int8_t>(a.data() + i * (m * k + gap), m, k), Op::T, bv,
            row_major(expect.data() + i * (m * n + gap), m, n), 2);
  EXPECT_EQ(c, expect);

  const std::vector<bf16> x = random_narrow<bf16>(std::size_t(batch * m * k), rng, false),
                          y = random_narrow<bf16>(std::size_t(batch * k * n), rng, false);
  std::vector<float> z(std::size_t(batch * m * n)), zexpect(z.size());
  gemm_batched<MaxPlus<float>>(ctx, Op::N, row_major<const bf16>(x.data(), m, k), m * k, Op::N,
                               row_major<const bf16>(y.data(), k, n), k * n, row_major(z.data(), m, n), m * n, batch);
  for (index_t i = 0; i < batch; ++i)
    gemm<MaxPlus<float>>(ctx, Op::N, row_major<const bf16>(x.data() + i * m * k, m, k), Op::N,
                         row_major<const bf16>(y.data() + i * k * n, k, n), row_major(zexpect.data() + i * m * n, m, n));
  EXPECT_EQ(z, zexpect);

  // The last member's C holds a value past the i32 pair's range: nothing is written.
  std::vector<std::int32_t> bad(std::size_t(batch * m * n), 1);
  bad.back() = std::int32_t(1) << 30;
  const std::vector<std::int32_t> before = bad;
  try {
    gemm_batched<S>(ctx, Op::N, av, m * k + gap, Op::T, bv, 0, row_major(bad.data(), m, n), m * n, batch, 0, 0);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::value_out_of_range) << e.what();
  }
  EXPECT_EQ(bad, before);
}

TEST(NarrowGemm, BadInputIsRefusedAndCUntouched) {
  Context ctx;
  ctx.backend = Backend::cpu;
  std::vector<bf16> a(6), b(6);
  std::vector<float> c(4, 9.0f);
  try {  // 2x3 times 2x3: inner dimensions differ
    gemm<MaxPlus<float>>(ctx, Op::N, row_major<const bf16>(a.data(), 2, 3), Op::N, row_major<const bf16>(b.data(), 2, 3),
                         row_major(c.data(), 2, 2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::dimension_mismatch);
  }
  EXPECT_EQ(c, std::vector<float>(4, 9.0f));
  // A narrow C on top of A.
  std::vector<f16> ab(16);
  try {
    gemm<MinPlus<float>>(ctx, Op::N, row_major<const f16>(ab.data(), 2, 2), Op::N, row_major<const f16>(ab.data() + 8, 2, 2),
                         row_major(ab.data() + 1, 2, 2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::aliasing);
  }
  // A negative leading dimension.
  try {
    gemm<MaxPlus<float>>(ctx, Op::N, MatrixView<const bf16>{a.data(), 2, 3, -1, Layout::row_major}, Op::N,
                         row_major<const bf16>(b.data(), 3, 2), row_major(c.data(), 2, 2));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_leading_dim);
  }
}

}  // namespace
}  // namespace ringmm
