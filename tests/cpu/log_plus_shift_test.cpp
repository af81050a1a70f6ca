// The shift trick's shared pieces on the CPU (ringmm/cpu/log_plus_shift.hpp, cpu/log_plus.hpp,
// detail/log_plus_shift.hpp): the factors of either orientation, the product with factors the
// caller computed once, and the backward product from precomputed factors, against the streaming
// kernel and the plain calls, on odd shapes, −∞ rows and columns, and the NaN of −∞ − −∞.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "ringmm/backward.hpp"
#include "ringmm/cpu/log_plus.hpp"
#include "ringmm/cpu/log_plus_shift.hpp"
#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using Sum = cpu::log_plus_detail::Sum;

template <class T> std::vector<T> random_logs(std::size_t count, std::mt19937_64& rng, double spread) {
  std::normal_distribution<double> d(-3.0, spread);
  std::vector<T> x(count);
  for (auto& v : x) v = T(d(rng));
  return x;
}

template <class T> bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

template <class T> class LogPlusShiftShared : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LogPlusShiftShared, Floats);

// The scalar math: a factor of −∞ − −∞ (NaN) or below the flush gap is 0; an entry's value is
// r + c + log S rounded once.
TEST(LogPlusShiftMath, FactorsFlushAndNaN) {
  const Sum flush = detail::shift_flush_gap<Sum>();
  EXPECT_EQ((detail::shift_factor<Sum, Sum>(std::numeric_limits<Sum>::quiet_NaN(), flush)), 0.0);
  EXPECT_EQ((detail::shift_factor<Sum, Sum>(-flush - 1, flush)), 0.0);
  EXPECT_EQ((detail::shift_factor<Sum, Sum>(-flush, flush)), std::exp(-flush));
  EXPECT_EQ((detail::shift_factor<Sum, Sum>(0.0, flush)), 1.0);
  EXPECT_EQ((detail::shifted_value<double, double>(-1.5, 2.25, 0.5)), -1.5 + 2.25 + std::log(0.5));
  EXPECT_EQ((detail::shifted_value<float, float>(-1.5f, 2.25f, 0.5)), float(-1.5 + 2.25 + double(std::log(0.5f))));
  Sum log_f = -7;
  const float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(detail::classify_weight(ninf, 0.0f, 0.0f, log_f), detail::WeightEntry::none);
  EXPECT_EQ(detail::classify_weight(0.0f, ninf, 0.0f, log_f), detail::WeightEntry::none);
  EXPECT_EQ(log_f, -7);
  EXPECT_EQ(detail::classify_weight(-20.0f, 0.0f, 0.0f, log_f), detail::WeightEntry::direct);
  EXPECT_EQ(detail::classify_weight(-2.0f, 0.0f, 0.0f, log_f), detail::WeightEntry::weighted);
  EXPECT_EQ(log_f, 2.0);
  EXPECT_EQ((detail::direct_weight<float, Sum>(ninf, 1.0f, 0.0f)), 0.0);
}

// shift_rows reads row-major and column-major operands alike (the latter in tiles of lines):
// the same maxima and factors, bit for bit; a line of −∞ has maximum −∞ and factors 0, not NaN.
TYPED_TEST(LogPlusShiftShared, FactorsOfEitherOrientation) {
  using T = TypeParam;
  std::mt19937_64 rng(71);
  const T ninf = LogPlus<T>::zero();
  for (index_t rows : {1, 5, 33, 70})
    for (index_t cols : {1, 3, 37}) {
      std::vector<T> x = random_logs<T>(std::size_t(rows * cols), rng, 30);
      for (index_t c = 0; c < cols; ++c) x[std::size_t(std::min<index_t>(2, rows - 1) * cols + c)] = ninf;  // a row of −∞
      std::vector<T> xt(x.size());  // the same matrix, column-major
      for (index_t r = 0; r < rows; ++r)
        for (index_t c = 0; c < cols; ++c) xt[std::size_t(c * rows + r)] = x[std::size_t(r * cols + c)];
      std::vector<Sum> f1(x.size()), f2(x.size());
      std::vector<T> m1(static_cast<std::size_t>(rows)), m2(static_cast<std::size_t>(rows));
      cpu::log_plus_detail::shift_rows<T>({x.data(), rows, cols, cols, 1}, 0, 1, f1.data(), m1.data(), 2);
      cpu::log_plus_detail::shift_rows<T>({xt.data(), rows, cols, 1, rows}, 0, 1, f2.data(), m2.data(), 2);
      EXPECT_TRUE(same_bits(m1, m2)) << rows << "x" << cols;
      EXPECT_TRUE(same_bits(f1, f2)) << rows << "x" << cols;
      const index_t dead = std::min<index_t>(2, rows - 1);
      EXPECT_EQ(m1[std::size_t(dead)], ninf);
      for (index_t r = 0; r < rows; ++r)
        for (index_t c = 0; c < cols; ++c) {
          const Sum f = f1[std::size_t(r * cols + c)];
          ASSERT_FALSE(std::isnan(f));
          if (r == dead) EXPECT_EQ(f, 0.0);
          else EXPECT_EQ(f, (detail::shift_factor<Sum, Sum>(Sum(x[std::size_t(r * cols + c)]) - Sum(m1[std::size_t(r)]),
                                                              detail::shift_flush_gap<Sum>())));
        }
    }
}

// The product with B's factors computed once (one set for every member, as the HMM forward
// passes them) equals the product computing them itself, bit for bit, and the streaming kernel
// within log-plus's bound; −∞ rows of A and columns of B give −∞, never NaN.
TYPED_TEST(LogPlusShiftShared, PrecomputedFactorsMatchOwnAndStreaming) {
  using T = TypeParam;
  using S = LogPlus<T>;
  std::mt19937_64 rng(72);
  const T ninf = S::zero();
  Context ctx;
  ctx.backend = Backend::cpu;
  for (const auto& [m, n, k, batch] : {std::array<index_t, 4>{7, 9, 13, 1}, {33, 5, 65, 3}, {1, 17, 129, 2}, {65, 31, 3, 2}}) {
    std::vector<T> a = random_logs<T>(std::size_t(batch * m * k), rng, 4), b = random_logs<T>(std::size_t(k * n), rng, 4);
    for (index_t bt = 0; bt < batch; ++bt)
      for (index_t kk = 0; kk < k; ++kk) a[std::size_t((bt * m + m / 2) * k + kk)] = ninf;  // row m/2 of every member
    for (index_t kk = 0; kk < k; ++kk) b[std::size_t(kk * n + n - 1)] = ninf;              // the last column
    // Maxima at different k in a row of A and column 0 of B, so that some entries fall below
    // the threshold and are streamed (not the −∞ row: with one row there is none to spare).
    if (m > 1) a[std::size_t(((m / 2 + 1) % m) * k)] = T(200);
    b[std::size_t((k - 1) * n)] = T(150);
    std::vector<T> own(std::size_t(batch * m * n), T(7)), given = own, streamed = own;
    auto problem = [&](std::vector<T>& c) {
      detail::Problem<S> p{{a.data(), m, k, k, 1}, {b.data(), k, n, n, 1}, {c.data(), m, n, n, 1}, S::one(), S::zero()};
      p.batch = batch, p.stride_a = m * k, p.stride_b = 0, p.stride_c = m * n;
      return p;
    };
    const auto s1 = cpu::log_plus_shift_gemm<T>(ctx, problem(own));
    std::vector<Sum> bf(std::size_t(n * k));
    std::vector<T> bm(static_cast<std::size_t>(n));
    const cpu::ShiftedLines<T> pre = cpu::shift_lines<T>({b.data(), n, k, 1, n}, bf.data(), bm.data(), 2);
    const auto s2 = cpu::log_plus_shift_gemm<T>(ctx, problem(given), &pre);
    cpu::blocked_gemm<S>(problem(streamed), 0);
    SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " batch " << batch);
    EXPECT_TRUE(same_bits(own, given));
    EXPECT_EQ(s1.recomputed, s2.recomputed);
    for (std::size_t e = 0; e < own.size(); ++e) {
      ASSERT_FALSE(std::isnan(own[e])) << e;
      if (streamed[e] == ninf) {
        EXPECT_EQ(own[e], ninf) << e;
        continue;
      }
      EXPECT_TRUE(semiring_traits<S>::within_tolerance(double(streamed[e]), double(own[e]), k, 0))
          << e << ": " << own[e] << " vs " << streamed[e];
    }
    const index_t i = m / 2;
    for (index_t j = 0; j < n; ++j) EXPECT_EQ(own[std::size_t(i * n + j)], ninf);
    for (index_t r = 0; r < m; ++r) EXPECT_EQ(own[std::size_t(r * n + n - 1)], ninf);
  }
}

// log_plus_backward_shifted from factors computed beforehand gives log_plus_backward's gradients.
TEST(LogPlusShiftShared, BackwardFromPrecomputedFactors) {
  using T = double;
  std::mt19937_64 rng(73);
  const index_t m = 9, k = 14, n = 11;
  std::vector<T> a = random_logs<T>(std::size_t(m * k), rng, 3), b = random_logs<T>(std::size_t(k * n), rng, 3);
  for (index_t kk = 0; kk < k; ++kk) a[std::size_t(4 * k + kk)] = -INFINITY;
  a[0] = 60, b[std::size_t((k - 1) * n + 1)] = 60;  // split maxima: some entries summed directly
  std::vector<T> c(std::size_t(m * n)), g = random_logs<T>(std::size_t(m * n), rng, 1);
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm<LogPlus<T>>(ctx, Op::N, row_major<const T>(a.data(), m, k), Op::N, row_major<const T>(b.data(), k, n),
                   row_major(c.data(), m, n));
  std::vector<T> da1(std::size_t(m * k)), db1(std::size_t(k * n)), da2 = da1, db2 = db1;
  const auto av = row_major<const T>(a.data(), m, k), bv = row_major<const T>(b.data(), k, n), cv = row_major<const T>(c.data(), m, n),
             gv = row_major<const T>(g.data(), m, n);
  log_plus_backward<T>(ctx, av, bv, cv, gv, row_major(da1.data(), m, k), row_major(db1.data(), k, n));
  std::vector<Sum> ea(std::size_t(m * k)), ebt(std::size_t(k * n));
  std::vector<T> r(static_cast<std::size_t>(m)), s(static_cast<std::size_t>(n));
  const auto fa = cpu::shift_lines<T>({a.data(), m, k, k, 1}, ea.data(), r.data(), 1);
  const auto fb = cpu::shift_lines<T>({b.data(), n, k, 1, n}, ebt.data(), s.data(), 1);
  backward_detail::log_plus_backward_shifted<T>(ctx, av, bv, cv, gv, row_major(da2.data(), m, k), row_major(db2.data(), k, n), fa, fb);
  EXPECT_TRUE(same_bits(da1, da2));
  EXPECT_TRUE(same_bits(db1, db2));
  for (index_t kk = 0; kk < k; ++kk) EXPECT_EQ(da1[std::size_t(4 * k + kk)], 0.0);
  for (const T x : da1) EXPECT_FALSE(std::isnan(x));
  for (const T x : db1) EXPECT_FALSE(std::isnan(x));
}

}  // namespace
}  // namespace ringmm
