// Every refused call throws the specific ringmm::Error, names its argument, and leaves C untouched.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <random>

#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::cpu_context;
using testing::HostMatrix;

// Runs `call`, expects Error{code, subject}, and checks that `c` kept every byte.
template <class T>
void expect_refused(const std::function<void()>& call, Errc code, const std::string& subject, const HostMatrix<T>& c) {
  const auto before = c.storage;
  try {
    call();
    ADD_FAILURE() << "call was accepted; expected " << to_string(code) << " on " << subject;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.subject(), subject) << e.what();
    EXPECT_NE(std::string(e.what()).find(subject), std::string::npos) << "message must name the argument";
  }
  EXPECT_TRUE(testing::same_bits(before, c.storage)) << "C was modified by a refused call";
}

class Validation : public ::testing::Test {
 protected:
  using S = MaxPlus<float>;
  std::mt19937_64 rng{42};
  HostMatrix<float> a = testing::random_matrix<S>(4, 3, Layout::row_major, 0, rng);
  HostMatrix<float> b = testing::random_matrix<S>(3, 5, Layout::row_major, 0, rng);
  HostMatrix<float> c = testing::random_matrix<S>(4, 5, Layout::row_major, 0, rng);
  Context ctx = cpu_context();
  void gemm_ab(MatrixView<const float> av, MatrixView<const float> bv, MatrixView<float> cv, Op oa = Op::N,
               Op ob = Op::N) {
    gemm<S>(ctx, oa, av, ob, bv, cv);
  }
};

TEST_F(Validation, RowsOfOpAMustMatchC) {
  auto bad = a.cview();
  bad.rows = 3;
  expect_refused([&] { gemm_ab(bad, b.cview(), c.view); }, Errc::dimension_mismatch, "A", c);
}

TEST_F(Validation, ColsOfOpBMustMatchC) {
  auto bad = b.cview();
  bad.cols = 4;
  expect_refused([&] { gemm_ab(a.cview(), bad, c.view); }, Errc::dimension_mismatch, "B", c);
}

TEST_F(Validation, InnerDimensionsMustAgree) {
  auto bad = b.cview();
  bad.rows = 2;
  expect_refused([&] { gemm_ab(a.cview(), bad, c.view); }, Errc::dimension_mismatch, "B", c);
}

// Shapes that read alike (op(A) 4x3 against op(B) 4x3) must not make the message look like nonsense.
TEST_F(Validation, InnerDimensionMessageNamesTheTwoNumbers) {
  HostMatrix<float> at = testing::random_matrix<S>(3, 4, Layout::row_major, 0, rng);
  HostMatrix<float> b43 = testing::random_matrix<S>(4, 3, Layout::row_major, 0, rng);
  HostMatrix<float> c3 = testing::random_matrix<S>(4, 3, Layout::row_major, 0, rng);
  try {
    gemm_ab(at.cview(), b43.cview(), c3.view, Op::T);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "B: op(A) is 4x3 (A transposed) but op(B) is 4x3: inner dimensions 3 and 4 differ");
  }
}

TEST_F(Validation, TransposeChangesWhichDimensionsMustAgree) {
  // op(A) = Aᵀ is 3×4: its rows no longer match C's 4.
  expect_refused([&] { gemm_ab(a.cview(), b.cview(), c.view, Op::T); }, Errc::dimension_mismatch, "A", c);
}

TEST_F(Validation, ZeroLeadingDimensionIsRefused) {
  auto bad = a.cview();
  bad.ld = 0;
  expect_refused([&] { gemm_ab(bad, b.cview(), c.view); }, Errc::invalid_leading_dim, "ldA", c);
}

TEST_F(Validation, RowMajorLeadingDimensionBelowColsIsRefused) {
  auto bad = b.cview();
  bad.ld = 4;  // B has 5 columns
  expect_refused([&] { gemm_ab(a.cview(), bad, c.view); }, Errc::invalid_leading_dim, "ldB", c);
}

TEST_F(Validation, ColMajorLeadingDimensionBelowRowsIsRefused) {
  HostMatrix<float> acm(4, 3, Layout::col_major);
  auto bad = acm.cview();
  bad.ld = 3;  // col-major needs ld ≥ rows = 4
  expect_refused([&] { gemm_ab(bad, b.cview(), c.view); }, Errc::invalid_leading_dim, "ldA", c);
}

TEST_F(Validation, TooSmallLeadingDimensionOfCIsRefused) {
  auto bad = c.view;
  bad.ld = 2;
  expect_refused([&] { gemm_ab(a.cview(), b.cview(), bad); }, Errc::invalid_leading_dim, "ldC", c);
}

TEST_F(Validation, NegativeSizeIsRefused) {
  auto bad = a.cview();
  bad.rows = -4;
  expect_refused([&] { gemm_ab(bad, b.cview(), c.view); }, Errc::invalid_argument, "A", c);
}

TEST_F(Validation, NullAWithNonzeroSizeIsRefused) {
  auto bad = a.cview();
  bad.data = nullptr;
  expect_refused([&] { gemm_ab(bad, b.cview(), c.view); }, Errc::null_pointer, "A", c);
}

TEST_F(Validation, NullBWithNonzeroSizeIsRefused) {
  auto bad = b.cview();
  bad.data = nullptr;
  expect_refused([&] { gemm_ab(a.cview(), bad, c.view); }, Errc::null_pointer, "B", c);
}

TEST_F(Validation, NullCWithNonzeroSizeIsRefused) {
  auto bad = c.view;
  bad.data = nullptr;
  expect_refused([&] { gemm_ab(a.cview(), b.cview(), bad); }, Errc::null_pointer, "C", c);
}

TEST_F(Validation, NullPointersWithZeroSizeAreAccepted) {
  MatrixView<const float> a0{nullptr, 4, 0, 1, Layout::row_major};
  MatrixView<const float> b0{nullptr, 0, 5, 5, Layout::row_major};
  gemm_ab(a0, b0, c.view);  // K = 0: C = α ⊗ 0̄ ⊕ β ⊗ C with β = 0̄ gives 0̄ everywhere
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 5; ++j) EXPECT_EQ(c(i, j), S::zero());
}

TEST_F(Validation, CEqualToAIsRefused) {
  HostMatrix<float> sq = testing::random_matrix<S>(4, 4, Layout::row_major, 0, rng);
  HostMatrix<float> sb = testing::random_matrix<S>(4, 4, Layout::row_major, 0, rng);
  expect_refused([&] { gemm<S>(ctx, Op::N, sq.cview(), Op::N, sb.cview(), sq.view); }, Errc::aliasing, "C", sq);
}

TEST_F(Validation, COverlappingPartOfBIsRefused) {
  // B and C are overlapping windows of one 8×8 array.
  HostMatrix<float> big = testing::random_matrix<S>(8, 8, Layout::row_major, 0, rng);
  MatrixView<const float> bv{big.storage.data(), 4, 4, 8, Layout::row_major};
  MatrixView<float> cv{big.storage.data() + 2 * 8 + 2, 4, 4, 8, Layout::row_major};
  HostMatrix<float> av = testing::random_matrix<S>(4, 4, Layout::row_major, 0, rng);
  expect_refused([&] { gemm<S>(ctx, Op::N, av.cview(), Op::N, bv, cv); }, Errc::aliasing, "C", big);
}

TEST_F(Validation, DisjointBlocksOfOneArrayAreAccepted) {
  // A and C side by side in one row-major 4×8 array: their address ranges interleave, elements don't.
  HostMatrix<float> big = testing::random_matrix<S>(4, 8, Layout::row_major, 0, rng);
  HostMatrix<float> sb = testing::random_matrix<S>(4, 4, Layout::row_major, 0, rng);
  MatrixView<const float> av{big.storage.data(), 4, 4, 8, Layout::row_major};
  MatrixView<float> cv{big.storage.data() + 4, 4, 4, 8, Layout::row_major};
  HostMatrix<float> a_copy(4, 4, Layout::row_major), expected(4, 4, Layout::row_major);
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 4; ++j) a_copy(i, j) = av(i, j);
  gemm<S>(ctx, Op::N, a_copy.cview(), Op::N, sb.cview(), expected.view);
  gemm<S>(ctx, Op::N, av, Op::N, sb.cview(), cv);
  for (index_t i = 0; i < 4; ++i)
    for (index_t j = 0; j < 4; ++j) EXPECT_EQ(cv(i, j), expected(i, j));
}

// ---- value ranges ------------------------------------------------------------------------------

class IntegerRanges : public ::testing::Test {
 protected:
  using S = MaxPlus<std::int32_t>;
  static constexpr std::int32_t r = tropical_int_limits<std::int32_t>::finite_max;
  std::mt19937_64 rng{7};
  HostMatrix<std::int32_t> a = testing::random_matrix<S>(5, 6, Layout::row_major, 0, rng);
  HostMatrix<std::int32_t> b = testing::random_matrix<S>(6, 7, Layout::col_major, 1, rng);
  HostMatrix<std::int32_t> c = testing::random_matrix<S>(5, 7, Layout::row_major, 0, rng);
  Context ctx = cpu_context();
  void run(std::int32_t alpha = 0, std::int32_t beta = S::zero()) {
    gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view, alpha, beta);
  }
};

TEST_F(IntegerRanges, FiniteValueAboveRangeInAIsRefused) {
  a(2, 3) = r + 1;
  expect_refused([&] { run(); }, Errc::value_out_of_range, "A", c);
}

TEST_F(IntegerRanges, WrongInfinityInBIsRefused) {
  b(4, 1) = MinPlus<std::int32_t>::zero();  // +∞ has no place in max-plus
  expect_refused([&] { run(); }, Errc::value_out_of_range, "B", c);
}

TEST_F(IntegerRanges, Int32MinInBIsRefused) {
  b(0, 0) = std::numeric_limits<std::int32_t>::min();
  expect_refused([&] { run(); }, Errc::value_out_of_range, "B", c);
}

TEST_F(IntegerRanges, OutOfRangeCIsRefusedWhenRead) {
  c(1, 1) = -r - 1;
  expect_refused([&] { run(0, 0); }, Errc::value_out_of_range, "C", c);
}

TEST_F(IntegerRanges, OutOfRangeCIsIgnoredWhenBetaIsZero) {
  c(1, 1) = std::numeric_limits<std::int32_t>::max();  // β = 0̄: C is write-only
  EXPECT_NO_THROW(run());
  EXPECT_NE(c(1, 1), std::numeric_limits<std::int32_t>::max());
}

// Context::trust_inputs skips the check: the value reaches the kernel instead of an error.
TEST_F(IntegerRanges, TrustedInputsAreNotChecked) {
  a(2, 3) = r + 1;
  ctx.trust_inputs = true;
  for (auto& x : c.storage) x = 12345;
  EXPECT_NO_THROW(run());
  EXPECT_NE(c(0, 0), 12345);  // the product ran
  std::vector<std::int32_t> k_star(std::size_t(5 * 7));
  EXPECT_NO_THROW(gemm_argmax<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view, row_major(k_star.data(), 5, 7)));
  ctx.trust_inputs = false;
  expect_refused([&] { run(); }, Errc::value_out_of_range, "A", c);
}

// An operand of over a million elements is scanned by several threads: the first bad element in
// row order is still the one named.
TEST(IntegerRangesLarge, TheFirstBadElementIsNamedWhenThreadsScan) {
  using S = MaxPlus<std::int32_t>;
  const index_t m = 1100, k = 1000, n = 3;
  HostMatrix<std::int32_t> a(m, k, Layout::row_major), b(k, n, Layout::row_major), c(m, n, Layout::row_major);
  const std::int32_t r = tropical_int_limits<std::int32_t>::finite_max;
  a(1000, 5) = r + 1;
  a(700, 999) = r + 2;
  a(900, 0) = r + 3;
  try {
    gemm<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view);
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("element (700, 999)"), std::string::npos) << e.what();
  }
}

TEST_F(IntegerRanges, OutOfRangeAlphaIsRefused) {
  expect_refused([&] { run(r + 5); }, Errc::value_out_of_range, "alpha", c);
}

TEST_F(IntegerRanges, OutOfRangeBetaIsRefused) {
  expect_refused([&] { run(0, -r - 5); }, Errc::value_out_of_range, "beta", c);
}

TEST(IntegerRangesI16x2, OneLaneOutOfRangeIsRefused) {
  using S = MinPlus<i16x2>;
  std::mt19937_64 rng(3);
  auto a = testing::random_matrix<S>(3, 4, Layout::row_major, 0, rng);
  auto b = testing::random_matrix<S>(4, 2, Layout::row_major, 0, rng);
  auto c = testing::random_matrix<S>(3, 2, Layout::row_major, 0, rng);
  a(1, 2).hi = std::int16_t(tropical_int_limits<std::int16_t>::finite_max + 1);
  expect_refused([&] { gemm<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view); },
                 Errc::value_out_of_range, "A", c);
}

TEST(PlusTimesI32, PossibleOverflowIsRefused) {
  using S = PlusTimes<std::int32_t>;
  testing::HostMatrix<std::int32_t> a(2, 3, Layout::row_major), b(3, 2, Layout::row_major), c(2, 2, Layout::row_major);
  for (auto& x : a.storage) x = 40000;
  for (auto& x : b.storage) x = 40000;  // 3 · 40000² = 4.8e9 > INT32_MAX
  expect_refused([&] { gemm<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view); },
                 Errc::value_out_of_range, "A", c);
}

TEST(PlusTimesI32, ProductJustInsideTheBoundIsExact) {
  using S = PlusTimes<std::int32_t>;
  testing::HostMatrix<std::int32_t> a(1, 2, Layout::row_major), b(2, 1, Layout::row_major), c(1, 1, Layout::row_major);
  a(0, 0) = a(0, 1) = 32767;
  b(0, 0) = b(1, 0) = 32767;  // 2 · 32767² = 2147352578 ≤ INT32_MAX
  gemm<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view);
  EXPECT_EQ(c(0, 0), 2147352578);
}

TEST_F(IntegerRanges, MessageGivesPositionValueAndDomain) {
  a(2, 3) = r + 1;
  try {
    run();
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "A: element (2, 3) = 268435457 is outside the inputs max-plus i32 accepts (finite values within "
              "±268435456, or the 0̄ sentinel -1073741823)");
  }
}

TEST(PlusTimesI32, OverflowMessageGivesTheBoundAndTheLimit) {
  using S = PlusTimes<std::int32_t>;
  testing::HostMatrix<std::int32_t> a(2, 3, Layout::row_major), b(3, 2, Layout::row_major), c(2, 2, Layout::row_major);
  for (auto& x : a.storage) x = 40000;
  for (auto& x : b.storage) x = -40000;
  try {
    gemm<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1*3*40000*40000"), std::string::npos) << what;
    EXPECT_NE(what.find("exceeds 2147483647"), std::string::npos) << what;
  }
}

// max-times accepts the finite nonnegative numbers: 0̄ = 0 annihilates only there.
class MaxTimesDomain : public ::testing::Test {
 protected:
  using S = MaxTimes<double>;
  std::mt19937_64 rng{11};
  HostMatrix<double> a = testing::random_matrix<S>(4, 6, Layout::row_major, 0, rng);
  HostMatrix<double> b = testing::random_matrix<S>(6, 3, Layout::col_major, 2, rng);
  HostMatrix<double> c = testing::random_matrix<S>(4, 3, Layout::row_major, 0, rng);
  Context ctx = cpu_context();
  void run(double alpha = 1, double beta = 0) { gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view, alpha, beta); }
};

TEST_F(MaxTimesDomain, RandomInputsAreAcceptedAndExact) {
  HostMatrix<double> expected = c;
  cpu::reference_gemm<S>({detail::apply_op(Op::N, a.cview()), detail::apply_op(Op::N, b.cview()),
                          detail::apply_op(Op::N, expected.view), 0.5, 2.0});
  run(0.5, 2.0);
  EXPECT_TRUE(testing::same_bits(expected.storage, c.storage));
}

TEST_F(MaxTimesDomain, NegativeValueIsRefusedWithItsPosition) {
  a(3, 1) = -0.25;
  expect_refused([&] { run(); }, Errc::value_out_of_range, "A", c);
  try {
    run();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "A: element (3, 1) = -0.25 is outside the inputs max-times f64 accepts (finite nonnegative values)");
  }
}

TEST_F(MaxTimesDomain, InfinityIsRefused) {
  b(5, 2) = std::numeric_limits<double>::infinity();
  expect_refused([&] { run(); }, Errc::value_out_of_range, "B", c);
}

TEST_F(MaxTimesDomain, NegativeScalarsAreRefused) {
  expect_refused([&] { run(-1.0); }, Errc::value_out_of_range, "alpha", c);
  expect_refused([&] { run(1.0, -2.0); }, Errc::value_out_of_range, "beta", c);
}

TEST_F(MaxTimesDomain, BatchMemberIsNamed) {
  using T = double;
  HostMatrix<T> batch_a(3 * 4, 6, Layout::row_major), batch_c(3 * 4, 3, Layout::row_major);
  for (auto& x : batch_a.storage) x = 0.5;
  batch_a(2 * 4 + 1, 5) = -1;  // member 2, element (1, 5)
  const MatrixView<const T> av{batch_a.storage.data(), 4, 6, 6, Layout::row_major};
  const MatrixView<T> cv{batch_c.storage.data(), 4, 3, 3, Layout::row_major};
  try {
    gemm_batched<S>(ctx, Op::N, av, 24, Op::N, b.cview(), 0, cv, 12, 3);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "A");
    EXPECT_NE(std::string(e.what()).find("element (1, 5) of batch member 2 = -1"), std::string::npos) << e.what();
  }
}

TEST_F(IntegerRanges, SyrkIgnoresTheUnreadUpperTriangleOfC) {
  HostMatrix<std::int32_t> sq = testing::random_matrix<S>(7, 7, Layout::row_major, 0, rng);
  sq(0, 6) = std::numeric_limits<std::int32_t>::max();  // upper triangle: never read by syrk
  EXPECT_NO_THROW(syrk<S>(ctx, Op::N, b.cview(), sq.view, 0, 0));
  sq(6, 0) = std::numeric_limits<std::int32_t>::max();  // lower triangle: read, so refused
  expect_refused([&] { syrk<S>(ctx, Op::N, b.cview(), sq.view, 0, 0); }, Errc::value_out_of_range, "C", sq);
}

// ---- batched and syrk --------------------------------------------------------------------------

TEST_F(Validation, NegativeBatchCountIsRefused) {
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, a.cview(), 0, Op::N, b.cview(), 0, c.view, 20, -1); },
                 Errc::invalid_argument, "batch", c);
}

TEST_F(Validation, NegativeBatchStrideIsRefused) {
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, a.cview(), -12, Op::N, b.cview(), 0, c.view, 20, 1); },
                 Errc::invalid_argument, "stride_a", c);
}

TEST_F(Validation, OverlappingBatchMembersOfCAreRefused) {
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, a.cview(), 0, Op::N, b.cview(), 0, c.view, 10, 2); },
                 Errc::aliasing, "stride_c", c);
}

TEST_F(Validation, BatchOfCRunningIntoAIsRefused) {
  // Two members of C, 20 elements apart, inside one buffer whose second half is A.
  HostMatrix<float> buf = testing::random_matrix<S>(1, 40, Layout::row_major, 0, rng);
  MatrixView<float> cv{buf.storage.data(), 4, 5, 5, Layout::row_major};
  MatrixView<const float> av{buf.storage.data() + 30, 4, 3, 3, Layout::row_major};
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, av, 0, Op::N, b.cview(), 0, cv, 20, 2); }, Errc::aliasing, "C",
                 buf);
}

TEST_F(Validation, SyrkNeedsSquareC) {
  expect_refused([&] { syrk<S>(ctx, Op::N, a.cview(), c.view); }, Errc::dimension_mismatch, "C", c);
}

TEST_F(Validation, SyrkWithCOverlappingAIsRefused) {
  HostMatrix<float> sq = testing::random_matrix<S>(3, 3, Layout::row_major, 0, rng);
  expect_refused([&] { syrk<S>(ctx, Op::N, sq.cview(), sq.view); }, Errc::aliasing, "C", sq);
}

TEST_F(Validation, SyrkWithWrongCSizeIsRefused) {
  HostMatrix<float> c4 = testing::random_matrix<S>(4, 4, Layout::row_major, 0, rng);  // AᵀA of a 4×3 A is 3×3
  expect_refused([&] { syrk<S>(ctx, Op::N, a.cview(), c4.view); }, Errc::dimension_mismatch, "A", c4);
}

// ---- sizes that overflow: refused up front, never wrapped round --------------------------------

TEST(CheckedMul, ReportsOverflowAndNegativeFactors) {
  EXPECT_EQ(checked_mul(3, 5, 7), 105);
  EXPECT_EQ(checked_mul(index_t(0), std::numeric_limits<index_t>::max(), 8), 0);
  EXPECT_EQ(checked_mul(index_t(1) << 31, index_t(1) << 31, 2), std::nullopt);  // 2^63: one past the maximum
  EXPECT_EQ(checked_mul(index_t(1) << 31, index_t(1) << 31, std::size_t(4)), std::nullopt);  // 2^64 bytes
  EXPECT_EQ(checked_mul(index_t(1) << 31, index_t(1) << 31, std::size_t(1)), index_t(1) << 62);
  EXPECT_EQ(checked_mul(index_t(4611686018427387905), 4), std::nullopt);  // wrapped to 4 before
  EXPECT_EQ(checked_mul(-1, 3), std::nullopt);
}

TEST(CheckedMul, ExtentSaturatesInsteadOfWrapping) {
  float x = 0;
  const MatrixView<float> v{&x, index_t(4611686018427387905), 4, 4, Layout::row_major};
  EXPECT_EQ(v.checked_extent(), std::nullopt);
  EXPECT_EQ(v.extent(), std::numeric_limits<index_t>::max());
  const MatrixView<float> fits{&x, 3, 4, 6, Layout::col_major};
  EXPECT_EQ(fits.checked_extent(), 3 * 6 + 3);
}

// A 2^40 x 2^40 C (the CLI once passed it on after m·n wrapped) and a C whose rows·ld wraps.
TEST_F(Validation, ViewLargerThanAnyArrayIsRefused) {
  const index_t huge = index_t(1) << 40;
  const MatrixView<const float> a0{a.storage.data(), huge, 0, 1, Layout::row_major};
  const MatrixView<const float> b0{b.storage.data(), 0, huge, huge, Layout::row_major};
  const MatrixView<float> cv{c.storage.data(), huge, huge, huge, Layout::row_major};
  expect_refused([&] { gemm_ab(a0, b0, cv); }, Errc::invalid_argument, "C", c);
  try {
    gemm_ab(a0, b0, cv);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a 1099511627776x1099511627776 view with leading dimension 1099511627776 spans "
                                         "4.84 YB, more than any array can hold"),
              std::string::npos)
        << e.what();
  }
  const index_t rows = 4611686018427387905;  // (rows - 1) * 4 + 4 = 2^64 + 4 elements
  const MatrixView<const float> at{a.storage.data(), 0, rows, rows, Layout::row_major};
  const MatrixView<const float> b4{b.storage.data(), 0, 4, 4, Layout::row_major};
  const MatrixView<float> c4{c.storage.data(), rows, 4, 4, Layout::row_major};
  expect_refused([&] { gemm_ab(at, b4, c4, Op::T); }, Errc::invalid_argument, "C", c);
}

// 2^62 f32 elements fit in index_t, their 2^64 bytes do not.
TEST_F(Validation, ViewWhoseBytesOverflowIsRefused) {
  const MatrixView<const float> av{a.storage.data(), index_t(1) << 61, 2, 2, Layout::row_major};
  expect_refused([&] { gemm_ab(av, b.cview(), c.view); }, Errc::invalid_argument, "A", c);
  const MatrixView<const std::uint8_t> bytes{reinterpret_cast<const std::uint8_t*>(a.storage.data()), index_t(1) << 61, 2,
                                             2, Layout::row_major};
  EXPECT_NO_THROW(detail::validate_view(bytes, "A"));  // 2^62 one-byte elements do fit
}

TEST_F(Validation, BatchSpanThatOverflowsIsRefused) {
  const index_t huge = index_t(1) << 40;
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, a.cview(), 0, Op::N, b.cview(), 0, c.view, huge, huge); },
                 Errc::invalid_argument, "batch", c);
  const index_t wraps = index_t(1) << 61;  // 19 members that far apart overflow
  expect_refused([&] { gemm_batched<S>(ctx, Op::N, a.cview(), wraps, Op::N, b.cview(), 0, c.view, 20, 20); },
                 Errc::invalid_argument, "batch", c);
}

// ---- backends and runtime names ---------------------------------------------------------------

TEST_F(Validation, CudaBackendWithoutDeviceIsRefused) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  ctx.backend = Backend::cuda;
  expect_refused([&] { gemm_ab(a.cview(), b.cview(), c.view); }, Errc::backend_unavailable, "backend", c);
}

TEST(RuntimeNames, UnsupportedSemiringTypePairIsRefused) {
  try {
    visit_semiring(SemiringKind::max_min, DType::f64, [](auto) { return 0; });
    ADD_FAILURE() << "max-min f64 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_EQ(e.subject(), "type");
    EXPECT_NE(std::string(e.what()).find("supported: f32, i32"), std::string::npos) << e.what();
  }
}

TEST(RuntimeNames, IsSupportedAgreesWithVisit) {
  for (auto kind : all_semirings)
    for (auto type : all_dtypes) {
      bool visited = false;
      try {
        visited = visit_semiring(kind, type, [](auto) { return true; });
      } catch (const Error&) {
      }
      EXPECT_EQ(visited, is_supported(kind, type)) << to_string(kind) << " " << to_string(type);
    }
}

TEST(RuntimeNames, UnknownNamesAreRefusedWithTheValidOnes) {
  try {
    parse_semiring("max-divide");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_EQ(e.subject(), "semiring");
    EXPECT_NE(std::string(e.what()).find("max-plus"), std::string::npos);
  }
  EXPECT_THROW(parse_dtype("float"), Error);
  EXPECT_THROW(parse_backend("gpu"), Error);
  EXPECT_THROW(parse_border("crop"), Error);
  EXPECT_EQ(parse_dtype("i16x2"), DType::i16x2);
}

TEST(RuntimeNames, InexactIntegerScalarIsRefused) {
  EXPECT_THROW(scalar_from_double<MaxPlus<std::int32_t>>(1.5, "alpha"), Error);
  EXPECT_THROW(scalar_from_double<PlusTimes<std::int32_t>>(3e10, "beta"), Error);
  EXPECT_EQ(scalar_from_double<MaxPlus<std::int32_t>>(-INFINITY, "beta"), MaxPlus<std::int32_t>::zero());
  EXPECT_EQ(scalar_from_double<MinPlus<i16x2>>(INFINITY, "beta"), MinPlus<i16x2>::zero());
}

}  // namespace
}  // namespace ringmm
