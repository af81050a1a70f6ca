// The lab's kernels: the ladder against cpu::reference_gemm for every built-in semiring (odd and
// rectangular shapes, both layouts, transposes, padded leading dimensions, α/β, batches), its
// timings, and the published Aᵀ·A kernels against a direct sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "lab_kernels.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

struct Shape {
  index_t m, n, k;
};
const Shape kShapes[] = {{1, 1, 1}, {7, 7, 7}, {33, 33, 33}, {127, 129, 33}, {129, 127, 1},
                         {1, 129, 127}, {65, 1, 70}, {0, 5, 3}, {5, 7, 0}};

template <class S> class LadderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_device_available(&why)) GTEST_SKIP() << why;
  }

  // C ← α ⊗ op(A)·op(B) ⊕ β ⊗ C on `kernel` and on the reference; C is poisoned (β = 0̄) or random.
  void check(const std::string& kernel, Shape s, Op op_a, Op op_b, Layout layout, index_t pad, bool use_beta,
             index_t batch = 1) {
    using T = typename S::value_type;
    std::mt19937_64 rng(s.m * 1000003 + s.n * 1009 + s.k + pad + int(op_a) * 7 + int(layout) * 3 + batch);
    const index_t a_rows = op_a == Op::N ? s.m : s.k, a_cols = op_a == Op::N ? s.k : s.m;
    const index_t b_rows = op_b == Op::N ? s.k : s.n, b_cols = op_b == Op::N ? s.n : s.k;
    // A batch is `batch` matrices stacked as rows of one taller matrix, member stride = one member's rows.
    auto a = random_matrix<S>(a_rows * batch, a_cols, layout, pad, rng, s.k);
    auto b = random_matrix<S>(b_rows * batch, b_cols, layout, pad, rng, s.k);
    auto c = random_matrix<S>(s.m * batch, s.n, layout, pad, rng, s.k);
    if (!use_beta)
      for (index_t i = 0; i < s.m * batch; ++i)
        for (index_t j = 0; j < s.n; ++j) c(i, j) = poison<T>();
    auto member = [&](auto& x, index_t rows) {
      auto v = x.view;
      v.rows = rows;
      return v;
    };
    auto stride = [&](const auto& x, index_t rows) { return layout == Layout::row_major ? rows * x.view.ld : rows; };
    // Column-major members of a stacked matrix are rows apart: ld spans the whole stack.
    const T alpha = use_beta ? random_value<S>(rng, s.k) : S::one();
    const T beta = use_beta ? random_value<S>(rng, s.k) : S::zero();
    auto p = detail::make_problem<S>(op_a, member(a, a_rows), op_b, member(b, b_rows), member(c, s.m), alpha, beta);
    p.batch = batch;
    p.stride_a = stride(a, a_rows);
    p.stride_b = stride(b, b_rows);
    p.stride_c = stride(c, s.m);

    auto expected = c;
    auto p_ref = p;
    p_ref.c.p = expected.view.data;
    cpu::reference_gemm<S>(p_ref);
    const auto c_before = c;
    detail::Strided<const T> before{c_before.view.data, p.c.rows, p.c.cols, p.c.rs, p.c.cs};
    lab::ladder_gemm<S>(kernel, p);
    EXPECT_TRUE(matrices_match<S>(p, p_ref.c, p.c, &before))
        << kernel << " " << s.m << "x" << s.n << "x" << s.k << " op " << to_string(op_a) << to_string(op_b) << " "
        << to_string(layout) << " pad " << pad << (use_beta ? " with beta" : "") << " batch " << batch;
    // Nothing outside the product's elements changed (padding of C keeps its poison).
    for (std::size_t e = 0; e < c.storage.size(); ++e) {
      const index_t within = index_t(e) % c.view.ld;
      if (within >= (layout == Layout::row_major ? s.n : s.m * batch))
        ASSERT_EQ(std::memcmp(&c.storage[e], &c_before.storage[e], sizeof(T)), 0)  // bits: the poison is NaN
            << kernel << ": wrote outside C at element " << e;
    }
  }
};

TYPED_TEST_SUITE(LadderTest, BuiltinSemirings, SemiringNames);

TYPED_TEST(LadderTest, OddAndRectangularShapes) {
  for (const auto& kernel : lab::ladder_kernels())
    for (const Shape& s : kShapes) this->check(kernel, s, Op::N, Op::N, Layout::row_major, 0, false);
}

TYPED_TEST(LadderTest, TransposesLayoutsAndLeadingDimensions) {
  for (const auto& kernel : lab::ladder_kernels())
    for (Op op_a : {Op::N, Op::T})
      for (Op op_b : {Op::N, Op::T})
        for (Layout layout : {Layout::row_major, Layout::col_major})
          this->check(kernel, {33, 17, 40}, op_a, op_b, layout, 3, false);
}

TYPED_TEST(LadderTest, AlphaBetaEpilogue) {
  for (const auto& kernel : lab::ladder_kernels()) {
    this->check(kernel, {37, 29, 45}, Op::N, Op::N, Layout::row_major, 2, true);
    this->check(kernel, {7, 7, 0}, Op::N, Op::N, Layout::row_major, 0, true);
  }
}

TYPED_TEST(LadderTest, Batched) {
  for (const auto& kernel : lab::ladder_kernels()) {
    this->check(kernel, {33, 21, 17}, Op::N, Op::N, Layout::row_major, 1, false, 3);
    this->check(kernel, {19, 40, 9}, Op::T, Op::N, Layout::row_major, 0, true, 2);
  }
}

TEST(LadderArguments, UnknownKernelAndSyrkAreRefused) {
  std::vector<float> a(4, 1.0f), c(4, 0.0f);
  auto p = detail::make_problem<PlusTimes<float>>(Op::N, row_major<const float>(a.data(), 2, 2), Op::N,
                                                  row_major<const float>(a.data(), 2, 2), row_major(c.data(), 2, 2),
                                                  1.0f, 0.0f);
  try {
    lab::ladder_gemm<PlusTimes<float>>("tiled64", p);
    FAIL() << "an unknown kernel name was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_EQ(e.subject(), "kernel");
  }
  p.symmetric = true;
  try {
    lab::ladder_gemm<PlusTimes<float>>("tiled16", p);
    FAIL() << "a symmetric problem was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
  }
}

}  // namespace
}  // namespace ringmm::testing

namespace ringmm::testing {
namespace {

// The published Aᵀ·A kernels (naive, and 48×48 tiles with 3×3 per thread, one triangle mirrored)
// against a direct sum: small integers keep every f64 sum exact, so the match is exact; sizes
// straddle the 48-wide tiles and the 16-deep k-tiles.
TEST(Seed003Syrk, BothKernelsMatchTheDirectSum) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << why;
  std::mt19937_64 rng(3);
  for (index_t n : {1, 7, 47, 48, 49, 100, 129})
    for (index_t k : {1, 15, 16, 17, 33}) {
      std::vector<double> a(std::size_t(n * k)), want(std::size_t(n * n), 0);
      for (double& x : a) x = double(int(rng() % 9) - 4);
      for (index_t i = 0; i < n; ++i)
        for (index_t j = 0; j < n; ++j)
          for (index_t kk = 0; kk < k; ++kk) want[std::size_t(i * n + j)] += a[std::size_t(kk * n + i)] * a[std::size_t(kk * n + j)];
      for (const std::string& kernel : lab::seed003_kernels()) {
        std::vector<double> c(want.size(), -1e300);
        lab::seed003_syrk(kernel, a.data(), n, k, c.data());
        EXPECT_EQ(c, want) << kernel << " n " << n << " k " << k;
      }
    }
}

TEST(TimeLadder, EveryKernelGivesAPositiveTime) {
  std::string why;
  if (!cuda_device_available(&why)) GTEST_SKIP() << why;
  for (const auto& kernel : lab::ladder_kernels()) {
    const auto t = lab::time_ladder(SemiringKind::max_plus, DType::f32, kernel, 257, 129, 65, 3);
    EXPECT_GT(t.kernel_seconds, 0) << kernel;
    EXPECT_TRUE(std::isfinite(t.kernel_seconds)) << kernel;
  }
  try {
    lab::time_ladder(SemiringKind::max_plus, DType::f32, "tiled7", 8, 8, 8, 1);
    ADD_FAILURE() << "an unknown kernel was timed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
  }
}

}  // namespace
}  // namespace ringmm::testing
