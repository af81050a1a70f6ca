// The semiring structs and the integer tropical policy at its boundaries.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::HostMatrix;

TEST(Semiring, IdentitiesHoldForEveryBuiltin) {
  auto check = [](auto tag) {
    using S = typename decltype(tag)::type;
    using traits = semiring_traits<S>;
    std::mt19937_64 rng(7);
    for (int i = 0; i < 200; ++i) {
      const auto x = testing::random_value<S>(rng);
      const auto canon = traits::finalize(x);
      EXPECT_EQ(traits::finalize(S::add(x, S::zero())), canon) << to_string(S::kind);
      EXPECT_EQ(traits::finalize(S::mul(x, S::one())), canon) << to_string(S::kind);
      EXPECT_EQ(traits::finalize(S::mul(x, S::zero())), S::zero()) << to_string(S::kind);
    }
  };
#define RINGMM_BUILTIN(semiring, dtype, S) check(semiring_tag<::ringmm::S>{});
#include "ringmm/builtins.def"
}

TEST(IntegerPolicy, ConstantsAreThoseDocumented) {
  EXPECT_EQ(MaxPlus<std::int32_t>::zero(), -1073741823);
  EXPECT_EQ(MinPlus<std::int32_t>::zero(), 1073741823);
  EXPECT_EQ(tropical_int_limits<std::int32_t>::finite_max, 268435456);
  EXPECT_EQ(MaxPlus<i16x2>::zero().lo, -16383);
  EXPECT_EQ(MinPlus<i16x2>::zero().hi, 16383);
  EXPECT_EQ(tropical_int_limits<std::int16_t>::finite_max, 4096);
}

TEST(IntegerPolicy, AcceptsBoundaryValuesAndRefusesTheNextOnes) {
  const std::int32_t r = tropical_int_limits<std::int32_t>::finite_max;
  EXPECT_TRUE(MaxPlus<std::int32_t>::valid_input(r));
  EXPECT_TRUE(MaxPlus<std::int32_t>::valid_input(-r));
  EXPECT_TRUE(MaxPlus<std::int32_t>::valid_input(MaxPlus<std::int32_t>::zero()));
  EXPECT_FALSE(MaxPlus<std::int32_t>::valid_input(r + 1));
  EXPECT_FALSE(MaxPlus<std::int32_t>::valid_input(-r - 1));
  EXPECT_FALSE(MaxPlus<std::int32_t>::valid_input(MinPlus<std::int32_t>::zero()));  // +∞ is not max-plus
  EXPECT_FALSE(MaxPlus<std::int32_t>::valid_input(std::numeric_limits<std::int32_t>::min()));
  EXPECT_FALSE(MinPlus<std::int32_t>::valid_input(MaxPlus<std::int32_t>::zero()));
  const std::int16_t r16 = tropical_int_limits<std::int16_t>::finite_max;
  EXPECT_TRUE(MaxPlus<i16x2>::valid_input({r16, std::int16_t(-r16)}));
  EXPECT_FALSE(MaxPlus<i16x2>::valid_input({std::int16_t(r16 + 1), 0}));
  EXPECT_FALSE(MinPlus<i16x2>::valid_input({0, std::int16_t(-r16 - 1)}));
}

// Extreme inputs through a whole product: results stay exact, sentinels stay sentinels.
template <class S> void extreme_product() {
  using T = typename S::value_type;
  using lim = tropical_int_limits<std::int32_t>;
  const T r = lim::finite_max, z = S::zero();
  const index_t k = 3;
  HostMatrix<T> a(2, k, Layout::row_major), b(k, 2, Layout::row_major), c(2, 2, Layout::row_major);
  // Row 0 of A: all finite extremes; row 1: all sentinels. B column 0 finite, column 1 mixed.
  const T sign = S::kind == SemiringKind::max_plus ? T(1) : T(-1);
  for (index_t j = 0; j < k; ++j) {
    a(0, j) = T(sign * r);
    a(1, j) = z;
    b(j, 0) = T(sign * r);
    b(j, 1) = j == 0 ? z : T(-sign * r);
  }
  c(0, 0) = T(sign * r); c(0, 1) = z; c(1, 0) = z; c(1, 1) = T(-sign * r);
  const T alpha = T(sign * r), beta = T(sign * r);
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view, alpha, beta);
  EXPECT_EQ(c(0, 0), T(sign * 3 * r));          // α + r + r, beats β + c = 2r
  EXPECT_EQ(c(0, 1), T(sign * r + sign * r - sign * r));  // α + (r − r); the β term is 0̄
  EXPECT_EQ(c(1, 0), z);                        // every product has a sentinel
  EXPECT_EQ(c(1, 1), T(sign * r - sign * r));   // only β ⊗ c survives: r + (−r)
}

TEST(IntegerPolicy, ExtremeMaxPlusProductIsExact) { extreme_product<MaxPlus<std::int32_t>>(); }
TEST(IntegerPolicy, ExtremeMinPlusProductIsExact) { extreme_product<MinPlus<std::int32_t>>(); }

TEST(IntegerPolicy, SentinelPlusSentinelDoesNotWrap) {
  using S = MaxPlus<std::int32_t>;
  const std::int32_t z = S::zero();
  EXPECT_EQ(semiring_traits<S>::fma(z, z, z), z);
  EXPECT_EQ(semiring_traits<S>::finalize(z + z), z);
  using S16 = MinPlus<i16x2>;
  const i16x2 z16 = S16::zero();
  EXPECT_EQ(semiring_traits<S16>::finalize(semiring_traits<S16>::fma(z16, z16, z16)), z16);
}

TEST(UserSemiring, MinimalStructRunsOnTheCpu) {
  // Max-times over doubles (Viterbi probabilities), declared with only the required members.
  struct MaxTimes {
    using value_type = double;
    static constexpr double zero() { return 0.0; }
    static constexpr double one() { return 1.0; }
    static double add(double a, double b) { return a > b ? a : b; }
    static double mul(double a, double b) { return a * b; }
  };
  HostMatrix<double> a(2, 2, Layout::row_major), b(2, 2, Layout::row_major), c(2, 2, Layout::row_major);
  a(0, 0) = 0.5; a(0, 1) = 0.25; a(1, 0) = 1.0; a(1, 1) = 0.0;
  b(0, 0) = 0.5; b(0, 1) = 1.0; b(1, 0) = 4.0; b(1, 1) = 0.5;
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm<MaxTimes>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view);
  EXPECT_EQ(c(0, 0), 1.0);
  EXPECT_EQ(c(0, 1), 0.5);
  EXPECT_EQ(c(1, 0), 0.5);
  EXPECT_EQ(c(1, 1), 1.0);
}

}  // namespace
}  // namespace ringmm
