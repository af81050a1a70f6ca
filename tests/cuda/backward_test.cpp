// log_plus_backward and argmax_backward on the CUDA backend against the CPU backend (label gpu;
// skips without a device): random data, split maxima that break the shift trick, −∞ rows and
// columns, column-major views, every floating-point selecting pair; refused K* and host memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/backward.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

Context with(Backend backend) {
  Context ctx;
  ctx.backend = backend;
  return ctx;
}

template <class T> HostMatrix<T> uniform(index_t r, index_t c, Layout layout, std::mt19937_64& rng, double lo, double hi) {
  HostMatrix<T> m(r, c, layout, layout == Layout::col_major ? 2 : 0);
  std::uniform_real_distribution<double> u(lo, hi);
  for (T& x : m.storage) x = T(u(rng));
  return m;
}

template <class T> void expect_close(const std::vector<T>& got, const std::vector<T>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t e = 0; e < got.size(); ++e)
    ASSERT_NEAR(double(got[e]), double(want[e]), tol * (1 + std::fabs(double(want[e])))) << what << " element " << e;
}

template <class T> class CudaLogPlusBackward : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaLogPlusBackward, Floats);

TYPED_TEST(CudaLogPlusBackward, MatchesTheCpu) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(12);
  struct Case {
    index_t m, n, k;
    Layout layout;
    bool adversarial;
  };
  const Case cases[] = {{1, 1, 1, Layout::row_major, false}, {7, 7, 7, Layout::col_major, false},
                        {33, 5, 129, Layout::row_major, false}, {40, 37, 50, Layout::row_major, true},
                        {300, 260, 70, Layout::col_major, true}};
  for (const Case& s : cases) {
    auto a = uniform<T>(s.m, s.k, s.layout, rng, -5, 0), b = uniform<T>(s.k, s.n, s.layout, rng, -5, 0);
    if (s.adversarial) {  // row maxima at k = 0, column maxima at k = 1, everything else far below
      for (T& x : a.storage) x -= T(600);
      for (T& x : b.storage) x -= T(600);
      for (index_t i = 0; i < s.m; ++i) a(i, 0) = T(-double(i % 5));
      for (index_t j = 0; j < s.n; ++j) b(1, j) = T(-double(j % 3));
      for (index_t kk = 0; kk < s.k; ++kk) a(2 % s.m, kk) = -std::numeric_limits<T>::infinity();  // a −∞ row
      for (index_t kk = 0; kk < s.k; ++kk) b(kk, 1 % s.n) = -std::numeric_limits<T>::infinity();  // a −∞ column
    }
    HostMatrix<T> c(s.m, s.n, s.layout, s.layout == Layout::col_major ? 2 : 0);
    gemm<LogPlus<T>>(with(Backend::cpu), Op::N, a.cview(), Op::N, b.cview(), c.view);
    const auto g = uniform<T>(s.m, s.n, s.layout, rng, -1, 1);
    HostMatrix<T> want_a(s.m, s.k, s.layout, 1), want_b(s.k, s.n, s.layout, 1), da = want_a, db = want_b;
    log_plus_backward<T>(with(Backend::cpu), a.cview(), b.cview(), c.cview(), g.cview(), want_a.view, want_b.view);

    DeviceCopy<T> d_a(a.storage), d_b(b.storage), d_c(c.storage), d_g(g.storage), d_da(da.storage), d_db(db.storage);
    log_plus_backward<T>(with(Backend::cuda), d_a.on_device(a.cview()), d_b.on_device(b.cview()), d_c.on_device(c.cview()),
                         d_g.on_device(g.cview()), d_da.on_device(da.view), d_db.on_device(db.view));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    d_da.to_host(da.storage);
    d_db.to_host(db.storage);
    const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    // Both sum in f64 (cuBLAS and OpenBLAS in different orders): agreement to f64 rounding.
    const double tol = std::is_same_v<T, float> ? 1e-6 : 1e-11;
    expect_close(da.storage, want_a.storage, tol, "dA " + what);
    expect_close(db.storage, want_b.storage, tol, "dB " + what);
  }
}

template <class S> class CudaArgmaxBackward : public ::testing::Test {};
using SelectingFloats = ::testing::Types<MaxPlus<float>, MaxPlus<double>, MinPlus<float>, MinPlus<double>, MaxMin<float>,
                                         MaxTimes<float>, MaxTimes<double>, MinMax<float>>;
TYPED_TEST_SUITE(CudaArgmaxBackward, SelectingFloats);

TYPED_TEST(CudaArgmaxBackward, MatchesTheCpuExactly) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = element_t<S>;
  std::mt19937_64 rng(13);
  const index_t shapes[][3] = {{1, 1, 1}, {7, 9, 5}, {64, 33, 130}, {200, 150, 40}};
  for (const auto& [m, n, k] : shapes) {
    auto a = uniform<T>(m, k, Layout::row_major, rng, 0.25, 2), b = uniform<T>(k, n, Layout::col_major, rng, 0.25, 2);
    if (m > 2)
      for (index_t kk = 0; kk < k; ++kk) a(2, kk) = S::zero();  // entries of 0̄: K* = −1
    HostMatrix<T> c(m, n, Layout::row_major);
    HostMatrix<std::int32_t> ks(m, n, Layout::row_major);
    gemm_argmax<S>(with(Backend::cpu), Op::N, a.cview(), Op::N, b.cview(), c.view, ks.view);
    const auto g = uniform<T>(m, n, Layout::row_major, rng, -1, 1);
    HostMatrix<T> want_a(m, k, Layout::row_major), want_b(k, n, Layout::row_major), da = want_a, db = want_b;
    argmax_backward<S>(with(Backend::cpu), a.cview(), b.cview(), ks.cview(), g.cview(), want_a.view, want_b.view);
    DeviceCopy<T> d_a(a.storage), d_b(b.storage), d_g(g.storage), d_da(da.storage), d_db(db.storage);
    DeviceCopy<std::int32_t> d_ks(ks.storage);
    argmax_backward<S>(with(Backend::cuda), d_a.on_device(a.cview()), d_b.on_device(b.cview()), d_ks.on_device(ks.cview()),
                       d_g.on_device(g.cview()), d_da.on_device(da.view), d_db.on_device(db.view));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    d_da.to_host(da.storage);
    d_db.to_host(db.storage);
    EXPECT_EQ(da.storage, want_a.storage) << m << "x" << n << "x" << k;  // the same f64 sums in the same order
    EXPECT_EQ(db.storage, want_b.storage) << m << "x" << n << "x" << k;
  }
}

TEST(CudaBackwardArguments, RefusesBadIndexesAndHostMemory) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<float>;
  std::mt19937_64 rng(3);
  auto a = uniform<float>(4, 5, Layout::row_major, rng, -1, 1), b = uniform<float>(5, 3, Layout::row_major, rng, -1, 1);
  auto g = uniform<float>(4, 3, Layout::row_major, rng, -1, 1);
  HostMatrix<std::int32_t> ks(4, 3, Layout::row_major);
  for (auto& x : ks.storage) x = 1;
  ks(3, 2) = 5;  // K = 5: out of range
  HostMatrix<float> da(4, 5, Layout::row_major), db(5, 3, Layout::row_major);
  for (float& x : da.storage) x = 7;
  DeviceCopy<float> d_a(a.storage), d_b(b.storage), d_g(g.storage), d_da(da.storage), d_db(db.storage);
  DeviceCopy<std::int32_t> d_ks(ks.storage);
  try {
    argmax_backward<S>(with(Backend::cuda), d_a.on_device(a.cview()), d_b.on_device(b.cview()), d_ks.on_device(ks.cview()),
                       d_g.on_device(g.cview()), d_da.on_device(da.view), d_db.on_device(db.view));
    ADD_FAILURE() << "K* = 5 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "K*");
    EXPECT_NE(std::string(e.what()).find("(3, 2)"), std::string::npos) << e.what();
  }
  d_da.to_host(da.storage);
  for (float x : da.storage) EXPECT_EQ(x, 7.0f);
  EXPECT_THROW(argmax_backward<S>(with(Backend::cuda), a.cview(), b.cview(), ks.cview(), g.cview(), da.view, db.view), Error);
}

}  // namespace
}  // namespace ringmm::testing
