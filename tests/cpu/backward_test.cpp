// Backward products (ringmm/backward.hpp) on the CPU: log-plus and every selecting semiring
// against central finite differences of L = Σ G ⊙ (A ⊗ B) in f64, log-plus also against the
// direct formula in long double on data that breaks the shift trick; −∞ rows and columns give
// zero gradients and never NaN; layouts; refused arguments write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ringmm/backward.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

constexpr double minus_inf = -std::numeric_limits<double>::infinity();

struct Dense {
  index_t rows, cols;
  std::vector<double> v;
  Dense(index_t r, index_t c, double fill = 0) : rows(r), cols(c), v(std::size_t(r * c), fill) {}
  double& operator()(index_t i, index_t j) { return v[std::size_t(i * cols + j)]; }
  double operator()(index_t i, index_t j) const { return v[std::size_t(i * cols + j)]; }
  MatrixView<const double> cview() const { return row_major<const double>(v.data(), rows, cols); }
  MatrixView<double> view() { return row_major(v.data(), rows, cols); }
};

// log Σ_k exp(a_ik + b_kj) in long double, −∞ for no terms.
long double lse_entry(const Dense& a, const Dense& b, index_t i, index_t j) {
  long double top = -INFINITY;
  for (index_t k = 0; k < a.cols; ++k) top = std::max(top, (long double)a(i, k) + b(k, j));
  if (top == -INFINITY) return top;
  long double sum = 0;
  for (index_t k = 0; k < a.cols; ++k) sum += std::exp((long double)a(i, k) + b(k, j) - top);
  return top + std::log(sum);
}

Dense log_plus_forward(const Dense& a, const Dense& b) {
  Dense c(a.rows, b.cols);
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < b.cols; ++j) c(i, j) = double(lse_entry(a, b, i, j));
  return c;
}

// Σ_ij G_ij C_ij over a semiring, in long double (entries of 0̄ count 0: no gradient flows).
template <class F> long double loss(const Dense& g, F&& entry, index_t m, index_t n) {
  long double l = 0;
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      const long double c = entry(i, j);
      if (std::isfinite(double(c))) l += g(i, j) * c;
    }
  return l;
}

// Central differences of L in every element of x (A or B), step h.
template <class L> Dense finite_differences(Dense& x, L&& l, double h) {
  Dense d(x.rows, x.cols);
  for (std::size_t e = 0; e < x.v.size(); ++e) {
    const double keep = x.v[e];
    if (!std::isfinite(keep)) continue;  // −∞ stays −∞: its gradient is 0
    x.v[e] = keep + h;
    const long double up = l();
    x.v[e] = keep - h;
    const long double down = l();
    x.v[e] = keep;
    d.v[e] = double((up - down) / (2 * h));
  }
  return d;
}

Dense random_dense(index_t r, index_t c, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  Dense d(r, c);
  for (double& x : d.v) x = u(rng);
  return d;
}

void expect_near_all(const Dense& got, const Dense& want, double tol, const std::string& what) {
  for (index_t i = 0; i < got.rows; ++i)
    for (index_t j = 0; j < got.cols; ++j) {
      ASSERT_FALSE(std::isnan(got(i, j))) << what << " NaN at (" << i << ", " << j << ")";
      ASSERT_NEAR(got(i, j), want(i, j), tol * (1 + std::fabs(want(i, j)))) << what << " at (" << i << ", " << j << ")";
    }
}

struct Shape {
  index_t m, n, k;
};
const Shape shapes[] = {{1, 1, 1}, {7, 7, 7}, {3, 5, 33}, {33, 7, 5}, {6, 33, 1}};

// ---- log-plus ---------------------------------------------------------------------------------

void log_plus_gradients(const Dense& a, const Dense& b, const Dense& g, Dense& da, Dense& db, int threads = 0) {
  const Dense c = log_plus_forward(a, b);
  log_plus_backward<double>(cpu_context(threads), a.cview(), b.cview(), c.cview(), g.cview(), da.view(), db.view());
}

TEST(LogPlusBackward, MatchesFiniteDifferences) {
  std::mt19937_64 rng(11);
  for (const Shape& s : shapes) {
    Dense a = random_dense(s.m, s.k, rng, -3, 1), b = random_dense(s.k, s.n, rng, -2, 2);
    const Dense g = random_dense(s.m, s.n, rng, -1, 1);
    Dense da(s.m, s.k, NAN), db(s.k, s.n, NAN);
    log_plus_gradients(a, b, g, da, db);
    auto l = [&] { return loss(g, [&](index_t i, index_t j) { return lse_entry(a, b, i, j); }, s.m, s.n); };
    const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    expect_near_all(da, finite_differences(a, l, 1e-5), 1e-7, "dA " + what);
    expect_near_all(db, finite_differences(b, l, 1e-5), 1e-7, "dB " + what);
  }
}

// The exact gradient, Σ_j G_ij exp(a_ik + b_kj − c_ij), in long double.
void direct_gradients(const Dense& a, const Dense& b, const Dense& g, Dense& da, Dense& db) {
  std::fill(da.v.begin(), da.v.end(), 0.0);
  std::fill(db.v.begin(), db.v.end(), 0.0);
  std::vector<long double> sa(da.v.size(), 0), sb(db.v.size(), 0);
  for (index_t i = 0; i < a.rows; ++i)
    for (index_t j = 0; j < b.cols; ++j) {
      const long double c = lse_entry(a, b, i, j);
      if (c == -INFINITY) continue;
      for (index_t k = 0; k < a.cols; ++k) {
        const long double p = std::exp((long double)a(i, k) + b(k, j) - c);
        sa[std::size_t(i * a.cols + k)] += g(i, j) * p;
        sb[std::size_t(k * b.cols + j)] += g(i, j) * p;
      }
    }
  for (std::size_t x = 0; x < sa.size(); ++x) da.v[x] = double(sa[x]);
  for (std::size_t x = 0; x < sb.size(); ++x) db.v[x] = double(sb[x]);
}

// Row maxima of A and column maxima of B at different k, hundreds apart: F = exp(r + s − c) is
// e^800 for some entries (W would overflow), moderate for others; the answer must still be exact.
TEST(LogPlusBackward, SplitMaximaBreakingTheShiftTrick) {
  std::mt19937_64 rng(5);
  const index_t m = 9, n = 8, k = 40;
  Dense a = random_dense(m, k, rng, -1000, -900), b = random_dense(k, n, rng, -1000, -900);
  for (index_t i = 0; i < m; ++i) a(i, 0) = -double(i);          // row maxima at k = 0
  for (index_t j = 0; j < n; ++j) b(1, j) = -double(j);          // column maxima at k = 1
  for (index_t j = 0; j < n; j += 2) b(0, j) = -800 - double(j);  // even columns: a term near −800
  for (index_t i = 0; i < m; i += 3) a(i, 1) = -20;                // some rows: a term near −20
  a(2, 5) = -850, b(5, 3) = -40;                                   // a third k in play
  const Dense g = random_dense(m, n, rng, -2, 2);
  Dense da(m, k, NAN), db(k, n, NAN), want_a(m, k), want_b(k, n);
  for (int threads : {1, 2}) {
    log_plus_gradients(a, b, g, da, db, threads);
    direct_gradients(a, b, g, want_a, want_b);
    expect_near_all(da, want_a, 1e-12, "dA");
    expect_near_all(db, want_b, 1e-12, "dB");
  }
  auto l = [&] { return loss(g, [&](index_t i, index_t j) { return lse_entry(a, b, i, j); }, m, n); };
  expect_near_all(da, finite_differences(a, l, 1e-5), 1e-7, "dA (finite differences)");
  expect_near_all(db, finite_differences(b, l, 1e-5), 1e-7, "dB (finite differences)");
}

TEST(LogPlusBackward, MinusInfinityRowsAndColumnsGiveZeroGradients) {
  std::mt19937_64 rng(2);
  const index_t m = 6, n = 5, k = 7;
  Dense a = random_dense(m, k, rng, -2, 2), b = random_dense(k, n, rng, -2, 2);
  for (index_t kk = 0; kk < k; ++kk) a(1, kk) = minus_inf;  // row 1 of C: −∞
  for (index_t kk = 0; kk < k; ++kk) b(kk, 3) = minus_inf;  // column 3 of C: −∞
  a(4, 2) = minus_inf;                                       // one forbidden term
  for (index_t kk = 0; kk < k; ++kk) (kk % 2 ? a(5, kk) : b(kk, 0)) = minus_inf;  // C(5, 0): no k with both finite
  const Dense g = random_dense(m, n, rng, -1, 1);
  Dense da(m, k, NAN), db(k, n, NAN), want_a(m, k), want_b(k, n);
  log_plus_gradients(a, b, g, da, db);
  direct_gradients(a, b, g, want_a, want_b);
  expect_near_all(da, want_a, 1e-13, "dA");
  expect_near_all(db, want_b, 1e-13, "dB");
  for (index_t kk = 0; kk < k; ++kk) {
    EXPECT_EQ(da(1, kk), 0.0);
    EXPECT_EQ(db(kk, 3), 0.0);
  }
  EXPECT_EQ(da(4, 2), 0.0);
  // Everything −∞: all gradients 0.
  Dense za(3, 4, minus_inf), zb(4, 2, minus_inf), zg = random_dense(3, 2, rng, -1, 1), zda(3, 4, NAN), zdb(4, 2, NAN);
  log_plus_gradients(za, zb, zg, zda, zdb);
  for (double x : zda.v) EXPECT_EQ(x, 0.0);
  for (double x : zdb.v) EXPECT_EQ(x, 0.0);
}

TEST(LogPlusBackward, TrustedInputsSkipOnlyTheValueCheck) {
  std::mt19937_64 rng(5);
  Dense a = random_dense(3, 4, rng, -1, 0), b = random_dense(4, 2, rng, -1, 0), g = random_dense(3, 2, rng, -1, 1);
  Dense c = log_plus_forward(a, b), da(3, 4, 7.0), db(4, 2, 7.0);
  Dense bad_g = g;
  bad_g(0, 1) = INFINITY;
  Context trusted = cpu_context();
  trusted.trust_inputs = true;
  EXPECT_THROW(log_plus_backward<double>(cpu_context(), a.cview(), b.cview(), c.cview(), bad_g.cview(), da.view(),
                                         db.view()),
               Error);
  // Trusted, the call runs: row 1's gradients come from finite values and equal the checked call's.
  log_plus_backward<double>(trusted, a.cview(), b.cview(), c.cview(), bad_g.cview(), da.view(), db.view());
  Dense want_a(3, 4, 0.0), want_b(4, 2, 0.0);
  log_plus_backward<double>(cpu_context(), a.cview(), b.cview(), c.cview(), g.cview(), want_a.view(), want_b.view());
  for (index_t kk = 0; kk < 4; ++kk) EXPECT_DOUBLE_EQ(da(1, kk), want_a(1, kk));
  // The shapes are still checked.
  Dense wrong(3, 3);
  EXPECT_THROW(log_plus_backward<double>(trusted, a.cview(), b.cview(), c.cview(), g.cview(), wrong.view(), db.view()),
               Error);
}

TEST(LogPlusBackward, FloatAndColumnMajorViews) {
  std::mt19937_64 rng(9);
  const index_t m = 13, n = 10, k = 17;
  Dense a = random_dense(m, k, rng, -5, 0), b = random_dense(k, n, rng, -5, 0), g = random_dense(m, n, rng, -1, 1);
  const Dense c = log_plus_forward(a, b);
  Dense want_a(m, k), want_b(k, n);
  direct_gradients(a, b, g, want_a, want_b);
  // f32, every matrix column-major with a padded leading dimension.
  auto to_f32 = [](const Dense& d) {
    HostMatrix<float> h(d.rows, d.cols, Layout::col_major, 3);
    for (index_t i = 0; i < d.rows; ++i)
      for (index_t j = 0; j < d.cols; ++j) h(i, j) = float(d(i, j));
    return h;
  };
  const auto fa = to_f32(a), fb = to_f32(b), fc = to_f32(c), fg = to_f32(g);
  HostMatrix<float> fda(m, k, Layout::col_major, 1), fdb(k, n, Layout::col_major, 2);
  log_plus_backward<float>(cpu_context(), fa.cview(), fb.cview(), fc.cview(), fg.cview(), fda.view, fdb.view);
  for (index_t i = 0; i < m; ++i)
    for (index_t kk = 0; kk < k; ++kk) EXPECT_NEAR(fda(i, kk), want_a(i, kk), 1e-5 * (1 + std::fabs(want_a(i, kk))));
  for (index_t kk = 0; kk < k; ++kk)
    for (index_t j = 0; j < n; ++j) EXPECT_NEAR(fdb(kk, j), want_b(kk, j), 1e-5 * (1 + std::fabs(want_b(kk, j))));
}

TEST(LogPlusBackward, RefusalsWriteNothing) {
  std::mt19937_64 rng(4);
  Dense a = random_dense(3, 4, rng, -1, 0), b = random_dense(4, 2, rng, -1, 0), g = random_dense(3, 2, rng, -1, 1);
  Dense c = log_plus_forward(a, b), da(3, 4, 7.0), db(4, 2, 7.0);
  auto call = [&](const Context& ctx, const Dense& cc, const Dense& gg, MatrixView<double> out_a) {
    log_plus_backward<double>(ctx, a.cview(), b.cview(), cc.cview(), gg.cview(), out_a, db.view());
  };
  Dense bad_c = c;
  bad_c(1, 1) = NAN;
  EXPECT_THROW(call(cpu_context(), bad_c, g, da.view()), Error);
  Dense bad_g = g;
  bad_g(0, 1) = INFINITY;
  EXPECT_THROW(call(cpu_context(), c, bad_g, da.view()), Error);
  Dense wrong(3, 3);
  EXPECT_THROW(call(cpu_context(), c, g, wrong.view()), Error);
  // Host memory on Backend::cuda: no CUDA (backend_unavailable), or host arrays (invalid_argument).
  Context on_gpu;
  on_gpu.backend = Backend::cuda;
  try {
    call(on_gpu, c, g, da.view());
    ADD_FAILURE() << "host memory on the CUDA backend was not refused";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == Errc::backend_unavailable || e.code() == Errc::invalid_argument) << e.what();
  }
  // dB overlapping C.
  EXPECT_THROW(log_plus_backward<double>(cpu_context(), a.cview(), b.cview(), c.cview(), g.cview(), da.view(),
                                         row_major(c.v.data(), 4, 2)),
               Error);
  for (double x : da.v) EXPECT_EQ(x, 7.0);
  for (double x : db.v) EXPECT_EQ(x, 7.0);
}

// ---- selecting semirings ----------------------------------------------------------------------

template <class S> class ArgmaxBackward : public ::testing::Test {};
using SelectingF64 = ::testing::Types<MaxPlus<double>, MinPlus<double>, MaxTimes<double>, MaxMin<double>, MinMax<double>>;
TYPED_TEST_SUITE(ArgmaxBackward, SelectingF64);

template <class S> long double entry_of(const Dense& a, const Dense& b, index_t i, index_t j) {
  double acc = S::zero();
  for (index_t k = 0; k < a.cols; ++k) acc = S::add(acc, S::mul(a(i, k), b(k, j)));
  return acc;
}

TYPED_TEST(ArgmaxBackward, MatchesFiniteDifferences) {
  using S = TypeParam;
  std::mt19937_64 rng(21);
  const bool positive = S::kind == SemiringKind::max_times;
  for (const Shape& s : shapes) {
    // Random reals: ties (between terms, or between a and b inside min/max) have probability 0,
    // and gaps below the difference step are vanishingly rare at these sizes.
    Dense a = random_dense(s.m, s.k, rng, positive ? 0.5 : -3, positive ? 2.0 : 3);
    Dense b = random_dense(s.k, s.n, rng, positive ? 0.5 : -3, positive ? 2.0 : 3);
    const Dense g = random_dense(s.m, s.n, rng, -1, 1);
    Dense c(s.m, s.n), da(s.m, s.k, NAN), db(s.k, s.n, NAN);
    HostMatrix<std::int32_t> ks(s.m, s.n, Layout::row_major);
    gemm_argmax<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view(), ks.view);
    argmax_backward<S>(cpu_context(), a.cview(), b.cview(), ks.cview(), g.cview(), da.view(), db.view());
    auto l = [&] { return loss(g, [&](index_t i, index_t j) { return entry_of<S>(a, b, i, j); }, s.m, s.n); };
    const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    expect_near_all(da, finite_differences(a, l, 1e-7), 1e-6, "dA " + what);
    expect_near_all(db, finite_differences(b, l, 1e-7), 1e-6, "dB " + what);
  }
}

// Entries of 0̄ (K* = −1) pass nothing; the sums do not depend on the thread count; ties inside
// max-min / min-max's ⊗ go to A.
TYPED_TEST(ArgmaxBackward, ZeroEntriesTiesAndThreads) {
  using S = TypeParam;
  std::mt19937_64 rng(8);
  const index_t m = 5, n = 4, k = 6;
  Dense a = random_dense(m, k, rng, 0.5, 2), b = random_dense(k, n, rng, 0.5, 2), g = random_dense(m, n, rng, -1, 1);
  for (index_t kk = 0; kk < k; ++kk) a(2, kk) = S::zero();  // row 2 of C is 0̄
  Dense c(m, n), da(m, k), db(k, n), da1(m, k), db1(k, n);
  HostMatrix<std::int32_t> ks(m, n, Layout::row_major);
  gemm_argmax<S>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view(), ks.view);
  for (index_t j = 0; j < n; ++j) ASSERT_EQ(ks(2, j), -1);
  argmax_backward<S>(cpu_context(2), a.cview(), b.cview(), ks.cview(), g.cview(), da.view(), db.view());
  argmax_backward<S>(cpu_context(1), a.cview(), b.cview(), ks.cview(), g.cview(), da1.view(), db1.view());
  EXPECT_EQ(da.v, da1.v);
  EXPECT_EQ(db.v, db1.v);
  for (index_t kk = 0; kk < k; ++kk) EXPECT_EQ(da(2, kk), 0.0);
  // One entry, a tie inside ⊗: a 1×1×1 product with a = b.
  Dense ta(1, 1, 1.25), tb(1, 1, 1.25), tg(1, 1, 3.0), tc(1, 1), tda(1, 1), tdb(1, 1);
  HostMatrix<std::int32_t> tk(1, 1, Layout::row_major);
  gemm_argmax<S>(cpu_context(), Op::N, ta.cview(), Op::N, tb.cview(), tc.view(), tk.view);
  argmax_backward<S>(cpu_context(), ta.cview(), tb.cview(), tk.cview(), tg.cview(), tda.view(), tdb.view());
  if constexpr (S::kind == SemiringKind::max_min || S::kind == SemiringKind::min_max) {
    EXPECT_EQ(tda(0, 0), 3.0);
    EXPECT_EQ(tdb(0, 0), 0.0);
  } else if constexpr (S::kind == SemiringKind::max_times) {
    EXPECT_EQ(tda(0, 0), 3.0 * 1.25);
    EXPECT_EQ(tdb(0, 0), 3.0 * 1.25);
  } else {
    EXPECT_EQ(tda(0, 0), 3.0);
    EXPECT_EQ(tdb(0, 0), 3.0);
  }
}

TEST(ArgmaxBackwardArguments, BadIndexesAndFloat) {
  std::mt19937_64 rng(1);
  const index_t m = 4, n = 3, k = 5;
  HostMatrix<float> a(m, k, Layout::row_major), b(k, n, Layout::row_major), c(m, n, Layout::row_major),
      g(m, n, Layout::row_major), da(m, k, Layout::row_major), db(k, n, Layout::row_major);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto* x : {&a, &b, &g})
    for (float& v : x->storage) v = u(rng);
  HostMatrix<std::int32_t> ks(m, n, Layout::row_major);
  gemm_argmax<MaxPlus<float>>(cpu_context(), Op::N, a.cview(), Op::N, b.cview(), c.view, ks.view);
  argmax_backward<MaxPlus<float>>(cpu_context(), a.cview(), b.cview(), ks.cview(), g.cview(), da.view, db.view);
  float total_a = 0, total_g = 0;
  for (float x : da.storage) total_a += x;
  for (float x : g.storage) total_g += x;
  EXPECT_NEAR(total_a, total_g, 1e-5);  // each G_ij lands once in dA (∂/∂a = 1)
  for (float& x : da.storage) x = 7;
  ks(1, 2) = k;
  EXPECT_THROW(argmax_backward<MaxPlus<float>>(cpu_context(), a.cview(), b.cview(), ks.cview(), g.cview(), da.view, db.view), Error);
  ks(1, 2) = -2;
  EXPECT_THROW(argmax_backward<MaxPlus<float>>(cpu_context(), a.cview(), b.cview(), ks.cview(), g.cview(), da.view, db.view), Error);
  for (float x : da.storage) EXPECT_EQ(x, 7.0f);
}

}  // namespace
}  // namespace ringmm::testing
