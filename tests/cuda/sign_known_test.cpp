// Sign-known tropical products (gemm_kernel.cuh: sign_known): f32 max-plus on values ≤ 0 and
// min-plus on values ≥ 0 take the three-input integer minimum on bit patterns. Against the CPU
// reference on data built to stress the bit-pattern order: ±0, the semiring's 0̄ (−∞ / +∞),
// ties, tiny and huge magnitudes; shapes past the scan's threshold, odd, rectangular, transposed,
// strided, batched, both borders; and the same data with one value of the wrong sign (the generic
// update); the argmax products on the same data. Results must be equal as floats (+0 and −0
// equal), argmax indexes identical (label gpu; skips without a device).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

// A value of the sign-known domain of S: sign · (a magnitude drawn to make ties, zeros of both
// signs, 0̄ and values far apart).
template <class S> float domain_value(std::mt19937_64& rng) {
  const float sign = std::is_same_v<S, MaxPlus<float>> ? -1.0f : 1.0f;
  switch (rng() % 10) {
    case 0: return 0.0f;
    case 1: return -0.0f;
    case 2: return S::zero();
    case 3: return sign * float(rng() % 4);  // ties
    case 4: return sign * std::ldexp(float(rng() % 1000 + 1), -100);
    case 5: return sign * std::ldexp(float(rng() % 1000 + 1), 100);
    default: return sign * std::uniform_real_distribution<float>(0.0f, 64.0f)(rng);
  }
}

struct Shape {
  index_t m, n, k, batch = 1;
  bool trans_a = false;
  index_t pad = 0;  // extra elements per line of A, B and C
};

std::string describe(const Shape& s, BorderPolicy border, bool flipped) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
         std::to_string(s.batch) + (s.trans_a ? " A^T" : "") + " pad " + std::to_string(s.pad) + " border " +
         std::string(to_string(border)) + (flipped ? " (one value of the other sign)" : "");
}

template <class S> void check(const Shape& s, BorderPolicy border, bool flip, std::uint64_t seed) {
  SCOPED_TRACE(describe(s, border, flip));
  std::mt19937_64 rng(seed);
  // Row-major members with `pad` extra elements per row; A stored k×m when transposed.
  const index_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
  const index_t lda = a_cols + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad;
  const index_t stride_a = a_rows * lda, stride_b = s.k * ldb, stride_c = s.m * ldc;
  std::vector<float> a(std::size_t(stride_a * s.batch)), b(std::size_t(stride_b * s.batch)),
      c(std::size_t(stride_c * s.batch), std::numeric_limits<float>::quiet_NaN());
  for (float& x : a) x = domain_value<S>(rng);
  for (float& x : b) x = domain_value<S>(rng);
  if (flip) b[b.size() / 2] = std::is_same_v<S, MaxPlus<float>> ? 0.5f : -0.5f;

  const Op op_a = s.trans_a ? Op::T : Op::N;
  const MatrixView<const float> av{a.data(), a_rows, a_cols, lda, Layout::row_major};
  const MatrixView<const float> bv{b.data(), s.k, s.n, ldb, Layout::row_major};
  std::vector<float> want = c;
  gemm_batched<S>(cpu_context(), op_a, av, stride_a, Op::N, bv, stride_b,
                  MatrixView<float>{want.data(), s.m, s.n, ldc, Layout::row_major}, stride_c, s.batch);

  DeviceCopy<float> da(a), db(b), dc(c);
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.border = border;
  gemm_batched<S>(ctx, op_a, da.on_device(av), stride_a, Op::N, db.on_device(bv), stride_b,
                  MatrixView<float>{dc.ptr, s.m, s.n, ldc, Layout::row_major}, stride_c, s.batch);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(c.size());
  dc.to_host(got);
  index_t bad = 0;
  std::string first;
  for (index_t bt = 0; bt < s.batch; ++bt)
    for (index_t i = 0; i < s.m; ++i)
      for (index_t j = 0; j < s.n; ++j) {
        const std::size_t at = std::size_t(bt * stride_c + i * ldc + j);
        if (got[at] == want[at]) continue;  // as floats: +0 == -0
        if (bad++ == 0)
          first = "(" + std::to_string(bt) + ", " + std::to_string(i) + ", " + std::to_string(j) + "): expected " +
                  show(want[at]) + ", got " + show(got[at]);
      }
  EXPECT_EQ(bad, 0) << "first mismatch at " << first;
  for (std::size_t at = 0; at < got.size(); ++at)
    if (std::isnan(c[at]) && index_t(at % std::size_t(ldc)) >= s.n) EXPECT_TRUE(std::isnan(got[at])) << "padding written";
}

// The scan's threshold lowered so that shapes a CPU reference checks quickly take the route.
template <class S> class SignKnown : public ::testing::Test {
 protected:
  void SetUp() override { cuda_detail::sign_scan_min_updates() = double(1 << 27); }
  void TearDown() override { cuda_detail::sign_scan_min_updates() = saved_; }

 private:
  double saved_ = cuda_detail::sign_scan_min_updates();
};
using SignKnownSemirings = ::testing::Types<MaxPlus<float>, MinPlus<float>>;
TYPED_TEST_SUITE(SignKnown, SignKnownSemirings);

// Past the lowered threshold (2^27 updates), odd and rectangular, transposed, strided, batched.
const std::vector<Shape> large_shapes = {
    {513, 511, 1025}, {1000, 1025, 129}, {129, 2049, 520}, {1025, 127, 1031, 1, true},
    {300, 257, 260, 8, false, 3}, {640, 640, 384, 1, false, 5},
};

TYPED_TEST(SignKnown, MatchTheReferenceOnEveryShapeAndBorder) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::uint64_t seed = 1;
  for (const Shape& s : large_shapes)
    for (BorderPolicy border : {BorderPolicy::automatic, BorderPolicy::pad, BorderPolicy::predicate})
      check<TypeParam>(s, border, false, seed++);
}

TYPED_TEST(SignKnown, OneValueOfTheOtherSignTakesTheGenericUpdate) {
  RINGMM_SKIP_WITHOUT_GPU();
  check<TypeParam>({513, 511, 1025}, BorderPolicy::automatic, true, 7);
  check<TypeParam>({300, 257, 260, 8, false, 3}, BorderPolicy::pad, true, 8);
}

// Under the threshold the product never scans; the generic update gives the same answers.
TYPED_TEST(SignKnown, SmallShapesMatchTheReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::uint64_t seed = 20;
  for (const Shape& s : std::vector<Shape>{{0, 5, 7}, {1, 1, 1}, {7, 33, 127}, {129, 127, 33, 3}, {64, 64, 64}})
    check<TypeParam>(s, BorderPolicy::automatic, false, seed++);
}

// The argmax product on the same data (argmax.cuh: its max kernel takes the pair step): C equal as
// floats and K* identical to the CPU reference's, ties to the smallest k; with β = 1̄ the incoming
// C and K* enter, and where β ⊗ C wins the entry keeps its index.
template <class S> void check_argmax(const Shape& s, bool flip, bool with_c, std::uint64_t seed) {
  SCOPED_TRACE(describe(s, BorderPolicy::automatic, flip) + " argmax" + (with_c ? " beta 1" : ""));
  std::mt19937_64 rng(seed);
  const index_t a_rows = s.trans_a ? s.k : s.m, a_cols = s.trans_a ? s.m : s.k;
  const index_t lda = a_cols + s.pad, ldb = s.n + s.pad, ldc = s.n + s.pad;
  const index_t stride_a = a_rows * lda, stride_b = s.k * ldb, stride_c = s.m * ldc;
  std::vector<float> a(std::size_t(stride_a * s.batch)), b(std::size_t(stride_b * s.batch)),
      c(std::size_t(stride_c * s.batch));
  for (float& x : a) x = domain_value<S>(rng);
  for (float& x : b) x = domain_value<S>(rng);
  for (float& x : c) x = domain_value<S>(rng);
  if (flip) a[a.size() / 3] = std::is_same_v<S, MaxPlus<float>> ? 0.25f : -0.25f;
  std::vector<std::int32_t> k_star(c.size());
  for (auto& k : k_star) k = std::int32_t(rng() % 5000);
  const float beta = with_c ? S::one() : S::zero();

  const Op op_a = s.trans_a ? Op::T : Op::N;
  const MatrixView<const float> av{a.data(), a_rows, a_cols, lda, Layout::row_major};
  const MatrixView<const float> bv{b.data(), s.k, s.n, ldb, Layout::row_major};
  std::vector<float> want = c;
  std::vector<std::int32_t> want_k = k_star;
  gemm_argmax_batched<S>(cpu_context(), op_a, av, stride_a, Op::N, bv, stride_b,
                         MatrixView<float>{want.data(), s.m, s.n, ldc, Layout::row_major}, stride_c,
                         MatrixView<std::int32_t>{want_k.data(), s.m, s.n, ldc, Layout::row_major}, stride_c, s.batch,
                         S::one(), beta);

  DeviceCopy<float> da(a), db(b), dc(c);
  DeviceCopy<std::int32_t> dk(k_star);
  Context ctx;
  ctx.backend = Backend::cuda;
  gemm_argmax_batched<S>(ctx, op_a, da.on_device(av), stride_a, Op::N, db.on_device(bv), stride_b,
                         MatrixView<float>{dc.ptr, s.m, s.n, ldc, Layout::row_major}, stride_c,
                         MatrixView<std::int32_t>{dk.ptr, s.m, s.n, ldc, Layout::row_major}, stride_c, s.batch,
                         S::one(), beta);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> got(c.size());
  std::vector<std::int32_t> got_k(k_star.size());
  dc.to_host(got);
  dk.to_host(got_k);
  index_t bad = 0;
  std::string first;
  for (std::size_t at = 0; at < got.size(); ++at) {
    if (got[at] == want[at] && got_k[at] == want_k[at]) continue;  // values as floats: +0 == -0
    if (bad++ == 0)
      first = "element " + std::to_string(at) + ": expected " + show(want[at]) + " at k " + std::to_string(want_k[at]) +
              ", got " + show(got[at]) + " at k " + std::to_string(got_k[at]);
  }
  EXPECT_EQ(bad, 0) << "first mismatch at " << first;
}

TYPED_TEST(SignKnown, ArgmaxProductsMatchTheReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_argmax<TypeParam>({513, 511, 1025}, false, false, 31);
  check_argmax<TypeParam>({1025, 127, 1031, 1, true}, false, false, 32);
  check_argmax<TypeParam>({300, 257, 260, 8, false, 3}, false, true, 33);
  check_argmax<TypeParam>({129, 2049, 520}, false, true, 34);
  check_argmax<TypeParam>({513, 511, 1025}, true, false, 35);  // one value of the other sign: generic
}

}  // namespace
}  // namespace ringmm::testing
