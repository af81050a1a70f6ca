// gemm_argmax on the CPU: every pair whose ⊕ selects, at every instruction set this CPU runs,
// against an oracle that takes the reference product's value and looks for the first k whose term
// equals it; deliberate ties; entries of 0̄; β carrying indexes across a K split into parts; bad
// arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "nan_policy.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CpuArgmax : public ::testing::Test {};
TYPED_TEST_SUITE(CpuArgmax, SelectingSemirings, SemiringNames);

// The expected K* of a product with α = 1̄, β = 0̄ whose result is `c`: the first k whose term
// equals the result, −1 where the result is 0̄.
template <class S>
std::vector<std::int32_t> oracle_indexes(const detail::Problem<S>& p, const HostMatrix<typename S::value_type>& c) {
  std::vector<std::int32_t> expected(std::size_t(p.m() * p.n()), -1);
  for (index_t i = 0; i < p.m(); ++i)
    for (index_t j = 0; j < p.n(); ++j) {
      if (c(i, j) == S::zero()) continue;
      for (index_t k = 0; k < p.k(); ++k)
        if (semiring_traits<S>::finalize(S::mul(p.a(i, k), p.b(k, j))) == c(i, j)) {
          expected[std::size_t(i * p.n() + j)] = std::int32_t(k);
          break;
        }
    }
  return expected;
}

// Two threads at the widest instruction set, and one at each (the kernel is built per set).
std::vector<std::pair<int, CpuIsa>> threads_and_levels() {
  std::vector<std::pair<int, CpuIsa>> runs{{2, CpuIsa::automatic}};
  for (CpuIsa isa : cpu_isa_levels()) runs.emplace_back(1, isa);
  return runs;
}

struct Shape {
  index_t m, n, k;
  Op op_a, op_b;
  Layout layout;
  index_t pad;
};

TYPED_TEST(CpuArgmax, OddShapesMatchTheOracle) {
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(7);
  const Shape shapes[] = {{0, 5, 3, Op::N, Op::N, Layout::row_major, 0},   {1, 1, 1, Op::N, Op::N, Layout::row_major, 0},
                          {7, 7, 7, Op::T, Op::N, Layout::col_major, 2},   {33, 127, 129, Op::N, Op::T, Layout::row_major, 1},
                          {129, 33, 1000, Op::T, Op::T, Layout::col_major, 0}, {5, 6, 0, Op::N, Op::N, Layout::row_major, 0},
                          {2, 1025, 9, Op::N, Op::N, Layout::row_major, 3}};
  for (const Shape& s : shapes)
    for (const auto& [threads, isa] : threads_and_levels()) {
      const auto a = random_matrix<S>(s.op_a == Op::N ? s.m : s.k, s.op_a == Op::N ? s.k : s.m, s.layout, s.pad, rng, s.k);
      const auto b = random_matrix<S>(s.op_b == Op::N ? s.k : s.n, s.op_b == Op::N ? s.n : s.k, s.layout, s.pad, rng, s.k);
      HostMatrix<T> c(s.m, s.n, Layout::row_major), expected(s.m, s.n, Layout::row_major);
      HostMatrix<std::int32_t> ks(s.m, s.n, s.layout, s.pad);
      for (auto& x : ks.storage) x = 12345;  // poison: every entry must be written
      gemm_argmax<S>(cpu_context(threads, isa), s.op_a, a.cview(), s.op_b, b.cview(), c.view, ks.view);
      auto p = detail::make_problem<S>(s.op_a, a.cview(), s.op_b, b.cview(), expected.view, S::one(), S::zero());
      cpu::reference_gemm<S>(p);
      const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                               " threads " + std::to_string(threads) + " " + std::string(to_string(isa));
      ASSERT_TRUE(same_bits(c.storage, expected.storage)) << what;
      const auto want = oracle_indexes<S>(p, expected);
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j)
          ASSERT_EQ(ks(i, j), want[std::size_t(i * s.n + j)]) << what << " at (" << i << ", " << j << ")";
    }
}

// Every term equal: the first k wins everywhere. Equal maxima at k = 3 and k = 8: k = 3 wins. A
// row of A that is all 0̄: its entries are 0̄ with index −1.
TYPED_TEST(CpuArgmax, TiesGoToTheSmallestKAndZeroRowsToMinusOne) {
  using S = TypeParam;
  using T = typename S::value_type;
  const index_t m = 5, n = 6, k = 12;
  HostMatrix<T> a(m, k, Layout::row_major), b(k, n, Layout::row_major), c(m, n, Layout::row_major);
  HostMatrix<std::int32_t> ks(m, n, Layout::row_major);
  for (auto& x : a.storage) x = S::one();
  for (auto& x : b.storage) x = S::one();
  for (index_t kk = 0; kk < k; ++kk) a(4, kk) = S::zero();
  gemm_argmax<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view, ks.view);
  for (index_t j = 0; j < n; ++j) {
    for (index_t i = 0; i < 4; ++i) EXPECT_EQ(ks(i, j), 0) << i << "," << j;
    EXPECT_EQ(ks(4, j), -1);
    EXPECT_TRUE(c(4, j) == S::zero());
  }
  // Row 0 of A: 0̄ except two equal best terms at k = 3 and k = 8.
  for (index_t kk = 0; kk < k; ++kk) a(0, kk) = S::zero();
  a(0, 3) = a(0, 8) = S::one();
  gemm_argmax<S>(cpu_context(2), Op::N, a.cview(), Op::N, b.cview(), c.view, ks.view);
  for (index_t j = 0; j < n; ++j) EXPECT_EQ(ks(0, j), 3);
}

// K split into three consecutive parts, the later ones with β = 1̄ and their k offsets, gives the
// one-shot product's C and K* exactly (ties across parts included: the data has many).
TYPED_TEST(CpuArgmax, BetaCarriesIndexesAcrossParts) {
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(3);
  const index_t m = 20, n = 17, k = 90;
  auto a = random_matrix<S>(m, k, Layout::row_major, 0, rng, k);
  auto b = random_matrix<S>(k, n, Layout::row_major, 0, rng, k);
  if constexpr (std::is_integral_v<T>) {  // a part's results are C's inputs next: keep them within ±R
    for (auto* x : {&a, &b})
      for (T& v : x->storage) v = v == S::zero() ? v : T(v / 2);
  }
  for (index_t i = 0; i < m; ++i) a(i, 70) = a(i, 10);  // the same terms again in a later part
  for (index_t j = 0; j < n; ++j) b(70, j) = b(10, j);
  HostMatrix<T> whole(m, n, Layout::row_major), parts(m, n, Layout::row_major);
  HostMatrix<std::int32_t> k_whole(m, n, Layout::row_major), k_parts(m, n, Layout::col_major);
  gemm_argmax<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), whole.view, k_whole.view);
  const index_t cuts[] = {0, 31, 64, k};
  for (int part = 0; part < 3; ++part) {
    const index_t k0 = cuts[part], len = cuts[part + 1] - k0;
    const MatrixView<const T> a_part{a.storage.data() + k0, m, len, a.view.ld, Layout::row_major};
    const MatrixView<const T> b_part{b.storage.data() + k0 * b.view.ld, len, n, b.view.ld, Layout::row_major};
    gemm_argmax<S>(cpu_context(), Op::N, a_part, Op::N, b_part, parts.view, k_parts.view, S::one(),
                   part == 0 ? S::zero() : S::one(), k0);
  }
  EXPECT_TRUE(same_bits(whole.storage, parts.storage));
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) ASSERT_EQ(k_whole(i, j), k_parts(i, j)) << i << "," << j;
}

TYPED_TEST(CpuArgmax, BatchedWithASharedOperand) {
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(11);
  const index_t m = 9, n = 13, k = 40, batch = 4;
  const auto a = random_matrix<S>(m, k, Layout::row_major, 0, rng, k);  // shared: stride 0
  std::vector<HostMatrix<T>> bs;
  std::vector<T> b_all, c_all(std::size_t(batch * m * n));
  std::vector<std::int32_t> k_all(std::size_t(batch * m * n));
  for (index_t bt = 0; bt < batch; ++bt) {
    bs.push_back(random_matrix<S>(k, n, Layout::row_major, 0, rng, k));
    b_all.insert(b_all.end(), bs.back().storage.begin(), bs.back().storage.end());
  }
  gemm_argmax_batched<S>(cpu_context(2), Op::N, a.cview(), 0, Op::N, MatrixView<const T>{b_all.data(), k, n, n, Layout::row_major},
                         k * n, MatrixView<T>{c_all.data(), m, n, n, Layout::row_major}, m * n,
                         MatrixView<std::int32_t>{k_all.data(), m, n, n, Layout::row_major}, m * n, batch);
  for (index_t bt = 0; bt < batch; ++bt) {
    HostMatrix<T> c(m, n, Layout::row_major);
    HostMatrix<std::int32_t> ks(m, n, Layout::row_major);
    gemm_argmax<S>(cpu_context(1), Op::N, a.cview(), Op::N, bs[std::size_t(bt)].cview(), c.view, ks.view);
    for (index_t e = 0; e < m * n; ++e) {
      ASSERT_TRUE(c.storage[std::size_t(e)] == c_all[std::size_t(bt * m * n + e)]) << "member " << bt;
      ASSERT_EQ(ks.storage[std::size_t(e)], k_all[std::size_t(bt * m * n + e)]) << "member " << bt;
    }
  }
}

template <class S> class CpuArgmaxNanIncoming : public ::testing::Test {};
TYPED_TEST_SUITE(CpuArgmaxNanIncoming, NanProductSelectingSemirings, SemiringNames);

// β ⊗ C that is NaN counts as 0̄: the index names the product's winning term, not C's index.
TYPED_TEST(CpuArgmaxNanIncoming, IndexComesFromTheProduct) {
  using S = TypeParam;
  using T = typename S::value_type;
  for (const auto& [m, n, k] : {std::tuple<index_t, index_t, index_t>{1, 1, 2}, {7, 33, 129}, {33, 7, 1000}})
    for (int threads : {1, 2}) {
      const std::string failure = check_nan_incoming_argmax<S>(m, n, k, [&](const T* a, const T* b, T* c, std::int32_t* ks, T beta) {
        gemm_argmax<S>(cpu_context(threads), Op::N, MatrixView<const T>{a, m, k, k, Layout::row_major}, Op::N,
                       MatrixView<const T>{b, k, n, n, Layout::row_major}, MatrixView<T>{c, m, n, n, Layout::row_major},
                       MatrixView<std::int32_t>{ks, m, n, n, Layout::row_major}, S::one(), beta);
      });
      EXPECT_EQ(failure, "") << m << "x" << n << "x" << k << " threads " << threads;
    }
}

TEST(CpuArgmaxRefusals, BadIndexMatrixAndOffset) {
  using S = MaxPlus<float>;
  std::vector<float> a(12, 1.0f), b(12, 2.0f), c(9, 0.0f);
  std::vector<std::int32_t> ks(9, 0);
  const MatrixView<const float> av{a.data(), 3, 4, 4, Layout::row_major};
  const MatrixView<const float> bv{b.data(), 4, 3, 3, Layout::row_major};
  const MatrixView<float> cv{c.data(), 3, 3, 3, Layout::row_major};
  const MatrixView<std::int32_t> wrong{ks.data(), 3, 2, 2, Layout::row_major};
  try {
    gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, wrong);
    FAIL() << "a 3x2 index matrix for a 3x3 C was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::dimension_mismatch);
    EXPECT_NE(std::string(e.what()).find("3x2"), std::string::npos) << e.what();
  }
  const MatrixView<std::int32_t> good{ks.data(), 3, 3, 3, Layout::row_major};
  EXPECT_THROW(gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, good, 0.0f, -INFINITY, -1), Error);
}

}  // namespace
}  // namespace ringmm::testing
