// log-plus on the CPU: the semiring's own operations, the shift trick (ringmm/cpu/log_plus.hpp),
// the streaming kernel and the backend's choice between them, against a long-double reference,
// on random log-probabilities and on data built to break the shift trick. The typed suites
// (blocked_gemm_test.cpp) cover log-plus's shapes, layouts and products like every other pair.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ringmm/cpu/log_plus.hpp"
#include "log_plus_products.hpp"
#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::log_plus::Fill;
using testing::log_plus::make_product;
using testing::log_plus::Product;
using testing::log_plus::Shape;
using testing::log_plus::split_maxima;
using testing::log_plus::log_probabilities;
using testing::log_plus::finite_log_probabilities;
template <class T> using LP = LogPlus<T>;

// ---- the semiring's operations ---------------------------------------------------------------

template <class T> class LogPlusOps : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(LogPlusOps, Floats);

TYPED_TEST(LogPlusOps, AddIsLogSumExpWithMinusInfinityAsIdentity) {
  using T = TypeParam;
  using S = LP<T>;
  const T ninf = S::zero();
  EXPECT_EQ(S::add(ninf, ninf), ninf);
  EXPECT_EQ(S::add(T(3), ninf), T(3));
  EXPECT_EQ(S::add(ninf, T(-7)), T(-7));
  EXPECT_NEAR(double(S::add(T(0), T(0))), std::log(2.0), 1e-7);
  EXPECT_NEAR(double(S::add(T(-1000), T(-1000))), -1000 + std::log(2.0), 1e-4);  // no underflow to −∞
  EXPECT_NEAR(double(S::add(T(80), T(80))), 80 + std::log(2.0), 1e-5);           // no overflow to +∞
}

TYPED_TEST(LogPlusOps, StreamingAccumulatorNeverOverflowsUnderflowsOrMakesNaN) {
  using T = TypeParam;
  using S = LP<T>;
  using traits = semiring_traits<S>;
  // No terms, or only −∞ terms: −∞, not NaN.
  auto acc = traits::initial();
  EXPECT_EQ(traits::finalize(acc), S::zero());
  for (int i = 0; i < 3; ++i) acc = traits::fma(acc, S::zero(), T(1));
  EXPECT_EQ(traits::finalize(acc), S::zero());
  // Terms far outside exp's range, rising then falling: log(3·e^500 + e^-500) = 500 + log 3.
  for (T x : {T(-500), T(400), T(500), T(500), S::zero(), T(500), T(-500)}) acc = traits::fma(acc, x, T(0));
  EXPECT_NEAR(double(traits::finalize(acc)), 500 + std::log(3.0), 1e-4);
  // α ⊗ x and the epilogue: α = 0̄ annihilates, β = 0̄ leaves C unread.
  EXPECT_EQ(traits::scale(S::zero(), T(5)), S::zero());
  const T c_old = std::numeric_limits<T>::quiet_NaN();
  EXPECT_EQ(traits::epilogue(T(2), traits::initial(), S::zero(), &c_old), S::zero());
}

TYPED_TEST(LogPlusOps, InputDomainIsFiniteOrMinusInfinity) {
  using T = TypeParam;
  using S = LP<T>;
  EXPECT_TRUE(S::valid_input(S::zero()));
  EXPECT_TRUE(S::valid_input(std::numeric_limits<T>::lowest()));
  EXPECT_TRUE(S::valid_input(std::numeric_limits<T>::max()));
  EXPECT_FALSE(S::valid_input(std::numeric_limits<T>::infinity()));
  EXPECT_FALSE(S::valid_input(std::numeric_limits<T>::quiet_NaN()));
}

// ---- products --------------------------------------------------------------------------------

enum class Path { backend, shift, streaming };
const char* path_name(Path p) { return p == Path::backend ? "backend" : p == Path::shift ? "shift trick" : "streaming"; }

struct Outcome {
  cpu::ShiftStats stats;
  double max_error = 0;     // largest |result − reference|
  double max_fraction = 0;  // largest |result − reference| / the semiring's bound
};

// Runs x's product on `path` and checks every entry against the long-double reference, the
// storage outside C's members against its poison, and that no entry is NaN.
template <class T> Outcome run_and_check(const Product<T>& x, Path path, bool vendor_blas = true) {
  using S = LP<T>;
  SCOPED_TRACE(x.s.describe() + " [" + path_name(path) + (vendor_blas ? "" : ", no vendor BLAS") + "]");
  std::vector<T> actual = x.c;
  Context ctx;
  ctx.backend = Backend::cpu;
  ctx.vendor_blas = vendor_blas;
  Outcome o;
  const auto p = x.problem(actual);
  const MatrixView<const T> av{x.a.data(), x.av.rows, x.av.cols, x.av.ld, x.av.layout};
  const MatrixView<const T> bv{x.b.data(), x.bv.rows, x.bv.cols, x.bv.ld, x.bv.layout};
  MatrixView<T> cv = x.cv;
  cv.data = actual.data();
  switch (path) {
    case Path::shift: o.stats = cpu::log_plus_shift_gemm(ctx, p); break;
    case Path::streaming: cpu::blocked_gemm<S>(p, 0); break;
    case Path::backend:
      if (x.s.syrk && x.s.batch > 1) detail::run<S>(ctx, p);  // what syrk runs, for a batch the API does not offer
      else if (x.s.syrk) syrk<S>(ctx, x.s.op_a, av, cv, x.alpha, x.beta);
      else if (x.s.batch > 1)
        gemm_batched<S>(ctx, x.s.op_a, av, x.stride_a, x.s.op_b, bv, x.stride_b, cv, x.stride_c, x.s.batch, x.alpha, x.beta);
      else gemm<S>(ctx, x.s.op_a, av, x.s.op_b, bv, cv, x.alpha, x.beta);
      break;
  }
  if (x.expected.empty()) x.expected = testing::log_plus::reference(x);
  const auto& ref = x.expected;
  std::vector<bool> in_c(actual.size(), false);
  index_t bad = 0;
  for (index_t bt = 0; bt < p.batch; ++bt)
    for (index_t i = 0; i < p.m(); ++i)
      for (index_t j = 0; j < p.n(); ++j) {
        const std::size_t at = std::size_t(bt * p.stride_c + i * p.c.rs + j * p.c.cs);
        in_c[at] = true;
        const double e = double(ref[std::size_t((bt * p.m() + i) * p.n() + j)]), got = double(actual[at]);
        const bool ok = !std::isnan(got) && semiring_traits<S>::within_tolerance(e, got, p.k(), 0);
        if (std::isfinite(e) && std::isfinite(got)) {
          const double err = std::fabs(got - e);
          o.max_error = std::max(o.max_error, err);
          o.max_fraction = std::max(o.max_fraction, err / (S::absolute_tolerance + S::relative_tolerance * std::fabs(e)));
        }
        if (!ok && bad++ < 3)
          ADD_FAILURE() << "batch " << bt << " (" << i << ", " << j << "): expected " << e << ", got " << got;
      }
  EXPECT_EQ(bad, 0);
  index_t touched = 0;
  for (std::size_t e = 0; e < actual.size(); ++e)
    if (!in_c[e] && std::memcmp(&actual[e], &x.c[e], sizeof(T)) != 0) ++touched;
  EXPECT_EQ(touched, 0) << "elements outside C were written";
  return o;
}

void report(const std::string& what, const Outcome& o) {
  std::printf("  %-52s max error %.3g (%.3f of the bound), %lld entries recomputed\n", what.c_str(), o.max_error,
              o.max_fraction, (long long)o.stats.recomputed);
}

template <class T> class LogPlusProduct : public ::testing::Test {};
TYPED_TEST_SUITE(LogPlusProduct, Floats);

// Every path on odd shapes, transposes, both layouts, padding, scalars, batches and Aᵀ·A.
TYPED_TEST(LogPlusProduct, RandomDataEveryPathAndShape) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  std::vector<Shape> shapes;
  for (index_t size : {0, 1, 7, 33, 127, 129}) shapes.push_back({size, size, size});
  shapes.push_back({1000, 7, 1025, Op::T, Op::N, Layout::col_major, 2});
  shapes.push_back({33, 1025, 129, Op::N, Op::T, Layout::row_major, 1, 1, false, false, true});
  shapes.push_back({129, 127, 1000, Op::T, Op::T, Layout::row_major, 3, 1, false, false, true});
  shapes.push_back({40, 33, 70, Op::N, Op::N, Layout::col_major, 1, 4, false, false, true});  // batched
  shapes.push_back({33, 17, 129, Op::T, Op::N, Layout::row_major, 0, 3, true});              // batched, one A
  shapes.push_back({127, 127, 65, Op::N, Op::N, Layout::row_major, 2, 1, false, true, true});  // Aᵀ·A
  shapes.push_back({129, 129, 33, Op::T, Op::N, Layout::col_major, 0, 2, false, true, false}); // A·Aᵀ, batched
  for (const Shape& s : shapes) {
    const auto x = make_product<T>(s, log_probabilities<T>(rng), log_probabilities<T>(rng), rng);
    for (Path path : {Path::backend, Path::shift, Path::streaming}) {
      const Outcome o = run_and_check(x, path);
      if (path == Path::shift) EXPECT_EQ(o.stats.recomputed, 0) << s.describe();
    }
  }
}

// K up to 8192 on random data, through the backend (the shift trick at these sizes).
TYPED_TEST(LogPlusProduct, LongInnerDimension) {
  using T = TypeParam;
  std::mt19937_64 rng(12);
  for (index_t k : {2048, 8192}) {
    const Shape s{64, 48, k, Op::N, Op::T};
    const auto x = make_product<T>(s, log_probabilities<T>(rng), log_probabilities<T>(rng), rng);
    std::vector<T> scratch = x.c;
    ASSERT_TRUE(cpu::log_plus_shift_pays(x.problem(scratch)));
    report("random, K = " + std::to_string(k) + " (shift trick)", run_and_check(x, Path::shift));
    report("random, K = " + std::to_string(k) + " (streaming)", run_and_check(x, Path::streaming));
  }
}

TYPED_TEST(LogPlusProduct, AdversarialMaximaAtDifferentK) {
  using T = TypeParam;
  std::mt19937_64 rng(13);
  // Gaps where the trick's sum is tiny (exp(−2·gap) ≈ 1e-13), past the flush (0: all digits lost),
  // and past f32's whole exponent range.
  for (T gap : {T(15), T(50), T(120), T(400)}) {
    for (index_t k : {64, 8192}) {
      const Shape s{33, 31, k, Op::N, Op::N, Layout::row_major, 0, 1, false, false, true};
      const auto all = split_maxima<T>(s, gap, s.m, rng);
      const std::string what = "split maxima, gap " + std::to_string(int(gap)) + ", K = " + std::to_string(k);
      const Outcome o = run_and_check(all, Path::shift);
      EXPECT_EQ(o.stats.recomputed, s.m * s.n) << what;
      report(what + ", all rows", o);
      const auto few = split_maxima<T>(s, gap, 2, rng);
      const Outcome f = run_and_check(few, Path::shift);
      EXPECT_EQ(f.stats.recomputed, 2 * s.n) << what;
      report(what + ", two rows", f);
      run_and_check(few, Path::backend);
    }
  }
}

// Every row of A has one spike of +40 and every column of B one, at different k; the rest are
// log-probabilities. The largest terms (spike + log-probability) lie ≈ 40 below rᵢ + cⱼ.
TYPED_TEST(LogPlusProduct, AdversarialSpikesFarAboveEveryTerm) {
  using T = TypeParam;
  std::mt19937_64 rng(14);
  for (index_t k : {100, 8192}) {
    const Shape s{45, 37, k, Op::T, Op::N, Layout::col_major, 1};
    auto random = log_probabilities<T>(rng);
    const Fill<T> fa = [=](index_t b, index_t i, index_t kk) { return kk == i % 7 ? T(40) : random(b, i, kk); };
    const Fill<T> fb = [=](index_t b, index_t kk, index_t j) { return kk == 7 + j % 5 ? T(40) : random(b, kk, j); };
    const auto x = make_product<T>(s, fa, fb, rng);
    const Outcome o = run_and_check(x, Path::shift);
    EXPECT_EQ(o.stats.recomputed, s.m * s.n);
    report("spikes at different k, K = " + std::to_string(k), o);
    run_and_check(x, Path::backend);
  }
}

// Entries just above the threshold stay with the trick: the accuracy it keeps where it loses most.
TYPED_TEST(LogPlusProduct, JustAboveTheThresholdStaysAccurate) {
  using T = TypeParam;
  std::mt19937_64 rng(15);
  const index_t k = 8192;
  // The shifted sum is 2·exp(−gap) + (K − 2)·exp(−2·gap): just above the threshold.
  const T gap = T(std::floor(-std::log(cpu::log_plus_detail::threshold(k) / 2) * 8) / 8);
  const Shape s{20, 24, k};
  const auto x = split_maxima<T>(s, gap, s.m, rng);
  const Outcome o = run_and_check(x, Path::shift);
  EXPECT_EQ(o.stats.recomputed, 0);  // the trick kept every entry
  report("split maxima just above the threshold, K = 8192", o);
}

// Sums that lose digits in the precision of the inputs: entry (i, j) has one term 0 and K − 1 terms
// e^−15.6 ≈ 1.4 units in the last place of 1 (f32), so that every f32 addition rounds most of a
// term away (an f32 GEMM lost 4·10⁻⁴ here). Both paths must keep such sums to rounding.
TYPED_TEST(LogPlusProduct, ManyTermsNearTheLastDigitOfTheSum) {
  using T = TypeParam;
  std::mt19937_64 rng(17);
  const Shape s{24, 20, 8192};
  const Fill<T> fa = [](index_t, index_t, index_t) { return T(0); };
  const Fill<T> fb = [](index_t, index_t k, index_t j) { return k == j ? T(0) : T(-15.6); };
  const auto x = make_product<T>(s, fa, fb, rng);
  for (bool vendor : {true, false}) report(std::string("near the last digit, K = 8192") + (vendor ? "" : ", no vendor BLAS"),
                                          run_and_check(x, Path::shift, vendor));
  report("near the last digit, K = 8192 (streaming)", run_and_check(x, Path::streaming));
}

// −∞ rows and columns give −∞, never NaN, on every path; so do entries whose finite values never
// meet (every term has a −∞), and inputs that are all −∞; K = 0 leaves α ⊗ 0̄ ⊕ β ⊗ C.
TYPED_TEST(LogPlusProduct, MinusInfinityRowsColumnsAndEmptySums) {
  using T = TypeParam;
  const T ninf = LP<T>::zero();
  std::mt19937_64 rng(16);
  auto random = log_probabilities<T>(rng);
  for (index_t k : {1, 40, 300}) {
    const Shape s{30, 26, k, Op::N, Op::T, Layout::row_major, 0, 2, false, false, true};
    // Rows 0 and 5 of A and columns 1 and 9 of B are −∞; row 3 of A is finite only at even k
    // and column 4 of B only at odd k, so entry (3, 4) has no finite term.
    const Fill<T> fa = [=](index_t b, index_t i, index_t kk) {
      if (i == 0 || i == 5) return ninf;
      if (i == 3) return kk % 2 == 0 ? T(-1) : ninf;
      return random(b, i, kk);
    };
    const Fill<T> fb = [=](index_t b, index_t kk, index_t j) {
      if (j == 1 || j == 9) return ninf;
      if (j == 4) return kk % 2 == 1 ? T(-2) : ninf;
      return random(b, kk, j);
    };
    for (bool scalars : {false, true}) {
      Shape t = s;
      t.scalars = scalars;
      const auto x = make_product<T>(t, fa, fb, rng);
      for (Path path : {Path::backend, Path::shift, Path::streaming}) run_and_check(x, path);
    }
  }
  const Fill<T> none = [=](index_t, index_t, index_t) { return ninf; };
  for (bool scalars : {false, true}) {
    const Shape all{50, 40, 60, Op::T, Op::N, Layout::col_major, 1, 1, false, false, scalars};
    const auto x = make_product<T>(all, none, none, rng);
    for (Path path : {Path::backend, Path::shift, Path::streaming}) run_and_check(x, path);
    const Shape empty{9, 11, 0, Op::N, Op::N, Layout::row_major, 2, 1, false, false, scalars};
    run_and_check(make_product<T>(empty, none, none, rng), Path::backend);
  }
}

// The backend picks the trick for all but the smallest products.
TEST(LogPlusShift, PaysOnlyForProductsOfSomeSize) {
  auto pays = [](index_t m, index_t n, index_t k) {
    detail::Problem<LP<float>> p;
    p.a = {nullptr, m, k, k, 1};
    p.b = {nullptr, k, n, n, 1};
    p.c = {nullptr, m, n, n, 1};
    return cpu::log_plus_shift_pays(p);
  };
  EXPECT_FALSE(pays(4, 4, 4));
  EXPECT_FALSE(pays(100, 100, 0));
  EXPECT_TRUE(pays(8, 8, 8));
  EXPECT_TRUE(pays(1, 256, 256));  // a vector by a matrix: measured 9× faster by the trick
  EXPECT_TRUE(pays(512, 512, 512));
}

// ---- refused inputs --------------------------------------------------------------------------

template <class T> class LogPlusRefusal : public ::testing::Test {};
TYPED_TEST_SUITE(LogPlusRefusal, Floats);

TYPED_TEST(LogPlusRefusal, PlusInfinityAndNaNAreRefusedAndCIsUntouched) {
  using T = TypeParam;
  using S = LP<T>;
  const T pinf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::mt19937_64 rng(17);
  const index_t m = 70, n = 65, k = 80;  // large enough for the shift trick
  auto a = testing::random_matrix<S>(m, k, Layout::row_major, 0, rng);
  auto b = testing::random_matrix<S>(k, n, Layout::col_major, 1, rng);
  auto c = testing::random_matrix<S>(m, n, Layout::row_major, 0, rng);
  Context ctx;
  ctx.backend = Backend::cpu;
  auto expect_refused = [&](const std::string& subject, const std::string& where, T alpha, T beta) {
    const std::vector<T> before = c.storage;
    try {
      gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view, alpha, beta);
      ADD_FAILURE() << subject << ": not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::value_out_of_range);
      EXPECT_EQ(e.subject(), subject);
      const std::string text = e.what();
      EXPECT_NE(text.find(where), std::string::npos) << text;
      EXPECT_NE(text.find("outside the inputs log-plus"), std::string::npos) << text;
      EXPECT_NE(text.find("(finite values or −∞)"), std::string::npos) << text;
    }
    EXPECT_TRUE(testing::same_bits(before, c.storage)) << subject << ": C was written";
  };
  a(3, 4) = pinf;
  expect_refused("A", "element (3, 4) = inf", S::one(), S::zero());
  a(3, 4) = T(-1);
  b(70, 2) = nan;
  expect_refused("B", "element (70, 2) = nan", S::one(), S::zero());
  b(70, 2) = T(-1);
  c(5, 6) = pinf;
  expect_refused("C", "element (5, 6) = inf", S::one(), T(0.5));
  expect_refused("alpha", "alpha = nan", nan, S::zero());
  expect_refused("beta", "beta = inf", S::one(), pinf);
  // β = 0̄: C is not read, so its +∞ is simply overwritten.
  gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view);
  EXPECT_TRUE(std::isfinite(c(5, 6)));
}

}  // namespace
}  // namespace ringmm
