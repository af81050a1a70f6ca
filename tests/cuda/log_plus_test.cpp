// log-plus on CUDA: the shift trick (ringmm/cuda/log_plus.cuh) and the streaming kernels, on host
// and device pointers, against the long-double reference on random data and on data built to
// break the trick (tests/support/log_plus_products.hpp, shared with the CPU's tests).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "log_plus_products.hpp"
#include "ringmm/ringmm.hpp"

namespace ringmm {
namespace {

using testing::log_plus::Fill;
using testing::log_plus::finite_log_probabilities;
using testing::log_plus::log_probabilities;
using testing::log_plus::make_product;
using testing::log_plus::Product;
using testing::log_plus::Shape;
using testing::log_plus::split_maxima;
template <class T> using LP = LogPlus<T>;

// How a product runs on the GPU.
enum class Route {
  shift,      // the default: the shift trick where it pays, its GEMM on cuBLAS
  own_gemm,   // the trick with ringmm's own plus-times kernel (vendor_blas off)
  streaming,  // a border policy named: the streaming kernels
  tf32,       // Context::allow_tf32
};
const char* route_name(Route r) {
  switch (r) {
    case Route::shift: return "shift trick";
    case Route::own_gemm: return "shift trick, own GEMM";
    case Route::streaming: return "streaming";
    case Route::tf32: return "shift trick, TF32";
  }
  return "";
}

struct Outcome {
  double max_error = 0, max_fraction = 0;
  index_t bad = 0;
};

// Runs x on `route` with host or device pointers and compares every entry with the reference
// (within `slack` × the semiring's bound), every element outside C with its poison, and no NaN.
template <class T> Outcome run_and_check(const Product<T>& x, Route route, bool device, double slack = 1) {
  using S = LP<T>;
  SCOPED_TRACE(x.s.describe() + " [" + route_name(route) + (device ? ", device pointers" : ", host pointers") + "]");
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.vendor_blas = route != Route::own_gemm;
  ctx.allow_tf32 = route == Route::tf32;
  if (route == Route::streaming) ctx.border = BorderPolicy::predicate;
  std::vector<T> actual = x.c;
  const MatrixView<const T> av{x.a.data(), x.av.rows, x.av.cols, x.av.ld, x.av.layout};
  const MatrixView<const T> bv{x.b.data(), x.bv.rows, x.bv.cols, x.bv.ld, x.bv.layout};
  MatrixView<T> cv = x.cv;
  cv.data = actual.data();
  auto call = [&](MatrixView<const T> a, MatrixView<const T> b, MatrixView<T> c) {
    if (x.s.syrk) syrk<S>(ctx, x.s.op_a, a, c, x.alpha, x.beta);
    else if (x.s.batch > 1)
      gemm_batched<S>(ctx, x.s.op_a, a, x.stride_a, x.s.op_b, b, x.stride_b, c, x.stride_c, x.s.batch, x.alpha, x.beta);
    else gemm<S>(ctx, x.s.op_a, a, x.s.op_b, b, c, x.alpha, x.beta);
  };
  if (device) {
    const testing::DeviceCopy<T> da(x.a), db(x.b.empty() ? std::vector<T>(1) : x.b), dc(actual);
    call(da.on_device(av), db.on_device(bv), dc.on_device(cv));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dc.to_host(actual);
  } else {
    call(av, bv, cv);
  }
  if (x.expected.empty()) x.expected = testing::log_plus::reference(x);
  Outcome o;
  std::vector<bool> in_c(actual.size(), false);
  const index_t m = x.s.m, n = x.s.n, k = x.s.k;
  for (index_t bt = 0; bt < x.s.batch; ++bt)
    for (index_t i = 0; i < m; ++i)
      for (index_t j = 0; j < n; ++j) {
        const std::size_t at = std::size_t(bt * x.stride_c + i * x.cv.row_stride() + j * x.cv.col_stride());
        in_c[at] = true;
        const double e = double(x.expected[std::size_t((bt * m + i) * n + j)]), got = double(actual[at]);
        const double bound = slack * (S::absolute_tolerance + S::relative_tolerance * std::fabs(e));
        bool ok = !std::isnan(got);
        if (std::isfinite(e) && std::isfinite(got)) {
          const double err = std::fabs(got - e);
          o.max_error = std::max(o.max_error, err);
          o.max_fraction = std::max(o.max_fraction, err / (bound / slack));
          ok = ok && err <= bound;
        } else {
          ok = ok && e == got;
        }
        if (!ok && o.bad++ < 3) ADD_FAILURE() << "batch " << bt << " (" << i << ", " << j << "): expected " << e << ", got " << got;
      }
  (void)k;
  EXPECT_EQ(o.bad, 0);
  index_t touched = 0;
  for (std::size_t e = 0; e < actual.size(); ++e)
    if (!in_c[e] && std::memcmp(&actual[e], &x.c[e], sizeof(T)) != 0) ++touched;
  EXPECT_EQ(touched, 0) << "elements outside C were written";
  return o;
}

void report(const std::string& what, const Outcome& o) {
  std::printf("  %-58s max error %.3g (%.3f of the bound)\n", what.c_str(), o.max_error, o.max_fraction);
}

template <class T> class CudaLogPlus : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaLogPlus, Floats);

// Odd shapes, transposes, both layouts, padding, α and β, batches (one with a shared A) and Aᵀ·A,
// on every route, host and device pointers.
TYPED_TEST(CudaLogPlus, RandomDataEveryRouteAndShape) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(21);
  std::vector<Shape> shapes;
  for (index_t size : {0, 1, 7, 33, 127, 129}) shapes.push_back({size, size, size});
  shapes.push_back({1000, 7, 1025, Op::T, Op::N, Layout::col_major, 2});
  shapes.push_back({33, 1025, 129, Op::N, Op::T, Layout::row_major, 1, 1, false, false, true});
  shapes.push_back({129, 127, 1000, Op::T, Op::T, Layout::row_major, 3, 1, false, false, true});
  shapes.push_back({40, 33, 70, Op::N, Op::N, Layout::col_major, 1, 4, false, false, true});  // batched
  shapes.push_back({33, 17, 129, Op::T, Op::N, Layout::row_major, 0, 3, true});              // batched, one A
  shapes.push_back({127, 127, 65, Op::N, Op::N, Layout::row_major, 2, 1, false, true, true});  // Aᵀ·A
  for (const Shape& s : shapes) {
    const auto x = make_product<T>(s, log_probabilities<T>(rng), log_probabilities<T>(rng), rng);
    for (Route route : {Route::shift, Route::own_gemm, Route::streaming})
      for (bool device : {false, true}) run_and_check(x, route, device);
  }
}

// K up to 8192 on random data.
TYPED_TEST(CudaLogPlus, LongInnerDimension) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(22);
  for (index_t k : {2048, 8192}) {
    const auto x = make_product<T>({64, 48, k, Op::N, Op::T}, log_probabilities<T>(rng), log_probabilities<T>(rng), rng);
    for (Route route : {Route::shift, Route::own_gemm, Route::streaming})
      report("random, K = " + std::to_string(k) + " (" + route_name(route) + ")", run_and_check(x, route, true));
  }
}

// Row maxima and column maxima at different k (every entry, or two rows, must be repaired by
// streaming), gaps from a tiny shifted sum to past f32's exponent range.
TYPED_TEST(CudaLogPlus, AdversarialMaximaAtDifferentK) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(23);
  for (T gap : {T(15), T(50), T(120), T(400)})
    for (index_t k : {64, 8192}) {
      const Shape s{33, 31, k, Op::N, Op::N, Layout::row_major, 0, 1, false, false, true};
      const std::string what = "split maxima, gap " + std::to_string(int(gap)) + ", K = " + std::to_string(k);
      report(what + ", all rows", run_and_check(split_maxima<T>(s, gap, s.m, rng), Route::shift, true));
      const auto few = split_maxima<T>(s, gap, 2, rng);
      report(what + ", two rows", run_and_check(few, Route::shift, false));
      run_and_check(few, Route::own_gemm, true);
    }
}

TYPED_TEST(CudaLogPlus, AdversarialSpikesFarAboveEveryTerm) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(24);
  for (index_t k : {100, 8192}) {
    const Shape s{45, 37, k, Op::T, Op::N, Layout::col_major, 1};
    auto random = log_probabilities<T>(rng);
    const Fill<T> fa = [=](index_t b, index_t i, index_t kk) { return kk == i % 7 ? T(40) : random(b, i, kk); };
    const Fill<T> fb = [=](index_t b, index_t kk, index_t j) { return kk == 7 + j % 5 ? T(40) : random(b, kk, j); };
    report("spikes at different k, K = " + std::to_string(k), run_and_check(make_product<T>(s, fa, fb, rng), Route::shift, true));
  }
}

// One term 0 and K − 1 terms near one unit in the last place of 1: an f32 GEMM would lose 4·10⁻⁴.
TYPED_TEST(CudaLogPlus, ManyTermsNearTheLastDigitOfTheSum) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(25);
  const Fill<T> fa = [](index_t, index_t, index_t) { return T(0); };
  const Fill<T> fb = [](index_t, index_t k, index_t j) { return k == j ? T(0) : T(-15.6); };
  const auto x = make_product<T>({24, 20, 8192}, fa, fb, rng);
  for (Route route : {Route::shift, Route::own_gemm, Route::streaming})
    report(std::string("near the last digit, K = 8192 (") + route_name(route) + ")", run_and_check(x, route, true));
}

// −∞ rows and columns, entries with no finite term, all −∞, and K = 0: −∞ (or β ⊗ C), never NaN.
TYPED_TEST(CudaLogPlus, MinusInfinityRowsColumnsAndEmptySums) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  const T ninf = LP<T>::zero();
  std::mt19937_64 rng(26);
  auto random = log_probabilities<T>(rng);
  for (index_t k : {1, 40, 300}) {
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
      const Shape s{30, 26, k, Op::N, Op::T, Layout::row_major, 0, 2, false, false, scalars};
      const auto x = make_product<T>(s, fa, fb, rng);
      for (Route route : {Route::shift, Route::streaming}) run_and_check(x, route, true);
    }
  }
  const Fill<T> none = [=](index_t, index_t, index_t) { return ninf; };
  for (bool scalars : {false, true}) {
    const auto x = make_product<T>({50, 40, 60, Op::T, Op::N, Layout::col_major, 1, 1, false, false, scalars}, none, none, rng);
    for (Route route : {Route::shift, Route::streaming}) run_and_check(x, route, false);
    run_and_check(make_product<T>({9, 11, 0, Op::N, Op::N, Layout::row_major, 2, 1, false, false, scalars}, none, none, rng),
                  Route::shift, true);
  }
}

// The TF32 opt-in: measured, and held to a bound 100× the f32 one (README, "log-plus").
TEST(CudaLogPlusTf32, AccuracyIsMeasuredAndBounded) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(27);
  for (index_t k : {256, 4096}) {
    const auto x = make_product<float>({96, 80, k}, finite_log_probabilities<float>(rng),
                                       finite_log_probabilities<float>(rng), rng);
    report("TF32, random, K = " + std::to_string(k), run_and_check(x, Route::tf32, true, 100));
  }
}

// Refusals happen before anything is written, on device pointers too.
TEST(CudaLogPlusRefusal, PlusInfinityOnTheDeviceIsRefusedAndCIsUntouched) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = LP<float>;
  std::mt19937_64 rng(28);
  auto a = testing::random_matrix<S>(70, 80, Layout::row_major, 0, rng);
  auto b = testing::random_matrix<S>(80, 65, Layout::col_major, 0, rng);
  auto c = testing::random_matrix<S>(70, 65, Layout::row_major, 0, rng);
  b.storage[17] = std::numeric_limits<float>::infinity();
  const std::vector<float> before = c.storage;
  const testing::DeviceCopy<float> da(a.storage), db(b.storage), dc(c.storage);
  Context ctx;
  ctx.backend = Backend::cuda;
  EXPECT_THROW(gemm<S>(ctx, Op::N, da.on_device(a.cview()), Op::N, db.on_device(b.cview()), dc.on_device(c.view)), Error);
  std::vector<float> after(c.storage.size());
  dc.to_host(after);
  EXPECT_EQ(0, std::memcmp(after.data(), before.data(), before.size() * sizeof(float)));
}

}  // namespace
}  // namespace ringmm
