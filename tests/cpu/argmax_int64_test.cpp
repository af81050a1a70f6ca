// gemm_argmax with an int64 K* on the CPU: K cut into parts far shorter than the public call's
// 2³¹ − 1 so that a small K runs as several int32 products, against the rules applied entry by
// entry (support/argmax_int64.hpp); equality with the int32 K* where K fits; ties at the borders
// of parts; bad arguments.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "argmax_int64.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CpuArgmaxInt64 : public ::testing::Test {};
TYPED_TEST_SUITE(CpuArgmaxInt64, SelectingSemirings, SemiringNames);

TYPED_TEST(CpuArgmaxInt64, PartsFollowTheRules) {
  using S = TypeParam;
  std::mt19937_64 rng(17);
  for (const WideCase& w : wide_cases())
    for (int threads : {1, 2})
      for (bool alpha : {false, true}) {
        const auto x = wide_operands<S>(w, rng, alpha);
        auto c = x.c;
        auto ks = x.k_star;
        run_wide<S>(cpu_context(threads), w, x, x.a.data.data(), x.b.data.data(), c.data.data(), ks.data.data());
        auto want_c = x.c;
        auto want_k = x.k_star;
        expected_outputs<S>(w, x, want_c, want_k);
        const std::string what = w.name() + " threads " + std::to_string(threads) + (alpha ? " alpha" : "");
        EXPECT_TRUE(same_elements(want_c.data, c.data)) << what;
        EXPECT_TRUE(same_elements(want_k.data, ks.data)) << what;
      }
}

// The public int64 call (one part) and the int32 call give the same C and K* where K fits, and
// so do parts of 7: α, β and k offsets included.
TYPED_TEST(CpuArgmaxInt64, MatchesTheInt32ProductWhereKFits) {
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(23);
  for (WideCase w : wide_cases()) {
    if (w.k_offset > std::numeric_limits<std::int32_t>::max() - w.k) continue;
    auto x = wide_operands<S>(w, rng, true);
    for (auto& v : x.k_star.data) v = std::int64_t(rng() % 100000);  // incoming indexes int32 can hold
    auto c32 = x.c;
    std::vector<std::int32_t> k32(x.k_star.data.begin(), x.k_star.data.end());
    gemm_argmax_batched<S>(cpu_context(), w.op_a, x.a.over(static_cast<const T*>(x.a.data.data())), x.stride_a, w.op_b,
                           x.b.over(static_cast<const T*>(x.b.data.data())), x.b.stride, c32.over(c32.data.data()), x.c.stride,
                           x.k_star.over(k32.data()), x.k_star.stride, w.batch, x.alpha, x.beta, w.k_offset);
    const std::vector<std::int64_t> k32_wide(k32.begin(), k32.end());
    for (index_t part : {detail::argmax_part_max, index_t(7)}) {
      w.part = part;
      auto c64 = x.c;
      auto k64 = x.k_star;
      if (part == detail::argmax_part_max)  // the public overload
        gemm_argmax_batched<S>(cpu_context(), w.op_a, x.a.over(static_cast<const T*>(x.a.data.data())), x.stride_a, w.op_b,
                               x.b.over(static_cast<const T*>(x.b.data.data())), x.b.stride, c64.over(c64.data.data()), x.c.stride,
                               k64.over(k64.data.data()), x.k_star.stride, w.batch, x.alpha, x.beta, w.k_offset);
      else
        run_wide<S>(cpu_context(), w, x, x.a.data.data(), x.b.data.data(), c64.data.data(), k64.data.data());
      EXPECT_TRUE(same_elements(c32.data, c64.data)) << w.name();
      EXPECT_TRUE(same_elements(k32_wide, k64.data)) << w.name();
    }
  }
}

// Parts of 7 over K = 21 (borders after k = 6 and k = 13): every term equal gives the first k;
// equal best terms on both sides of a border give the one before it; a row of A all 0̄ gives −1;
// with β = 1̄ an incoming C equal to the best keeps its index past 2³¹, and a 0̄ one gives way.
TYPED_TEST(CpuArgmaxInt64, TiesAtPartBordersGoToTheSmallestK) {
  using S = TypeParam;
  using T = typename S::value_type;
  const index_t m = 5, n = 3, k = 21, part = 7, offset = index_t(1) << 32, incoming = (index_t(1) << 31) + 9;
  HostMatrix<T> a(m, k, Layout::row_major), b(k, n, Layout::col_major), c(m, n, Layout::row_major);
  HostMatrix<std::int64_t> ks(m, n, Layout::col_major);
  for (auto& v : b.storage) v = S::one();
  for (index_t i = 0; i < m; ++i)
    for (index_t kk = 0; kk < k; ++kk) a(i, kk) = i == 0 ? S::one() : S::zero();
  a(1, 6) = a(1, 7) = S::one();    // across the first border
  a(2, 13) = a(2, 14) = S::one();  // across the second
  a(3, 20) = S::one();             // the last term alone
  auto run = [&](T beta) {
    detail::gemm_argmax_batched_in_parts<S>(cpu_context(), Op::N, a.cview(), 0, Op::N, b.cview(), 0, c.view, 0, ks.view, 0, 1,
                                            S::one(), beta, offset, part);
  };
  for (auto& v : ks.storage) v = 12345;
  run(S::zero());
  const std::int64_t want[] = {0, 6, 13, 20, -1};
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      EXPECT_EQ(ks(i, j), want[i] < 0 ? -1 : offset + want[i]) << i << "," << j;
      EXPECT_TRUE(c(i, j) == (i == 4 ? S::zero() : S::one())) << i << "," << j;
    }
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) c(i, j) = j == 0 ? S::one() : S::zero(), ks(i, j) = incoming;
  run(S::one());
  for (index_t i = 0; i < m; ++i) {
    EXPECT_EQ(ks(i, 0), incoming) << i;  // β ⊗ C ties with the best (or beats a 0̄ row): kept
    EXPECT_EQ(ks(i, 1), want[i] < 0 ? incoming : offset + want[i]) << i;  // 0̄ ⊕ 0̄ keeps it too
  }
}

TYPED_TEST(CpuArgmaxInt64, Batched) {
  using S = TypeParam;
  std::mt19937_64 rng(29);
  const WideCase w{9, 13, 40, Op::N, Op::N, Layout::row_major, 0, 4, true, 9, true, 3'000'000'000, false};
  const auto x = wide_operands<S>(w, rng, false);
  auto c = x.c;
  auto ks = x.k_star;
  run_wide<S>(cpu_context(2), w, x, x.a.data.data(), x.b.data.data(), c.data.data(), ks.data.data());
  // Member by member, each against its own one-member product.
  for (index_t bt = 0; bt < w.batch; ++bt) {
    WideCase one = w;
    one.batch = 1;
    WideOperands<S> y = x;
    y.b.data.assign(x.b.data.begin() + bt * x.b.stride, x.b.data.begin() + (bt + 1) * x.b.stride);
    y.c.data.assign(x.c.data.begin() + bt * x.c.stride, x.c.data.begin() + (bt + 1) * x.c.stride);
    y.k_star.data.assign(x.k_star.data.begin() + bt * x.k_star.stride, x.k_star.data.begin() + (bt + 1) * x.k_star.stride);
    auto want_c = y.c;
    auto want_k = y.k_star;
    expected_outputs<S>(one, y, want_c, want_k);
    const std::vector<typename S::value_type> got_c(c.data.begin() + bt * x.c.stride, c.data.begin() + (bt + 1) * x.c.stride);
    const std::vector<std::int64_t> got_k(ks.data.begin() + bt * x.k_star.stride, ks.data.begin() + (bt + 1) * x.k_star.stride);
    EXPECT_TRUE(same_elements(want_c.data, got_c)) << "member " << bt;
    EXPECT_TRUE(same_elements(want_k.data, got_k)) << "member " << bt;
  }
}

// A refused call names K* (or the argument at fault) and writes nothing.
TEST(CpuArgmaxInt64Refusals, BadIndexMatrixOffsetAndPart) {
  using S = MaxPlus<float>;
  std::vector<float> a(12, 1.0f), b(12, 2.0f), c(9, 0.0f);
  std::vector<std::int64_t> ks(9, 77);
  const MatrixView<const float> av{a.data(), 3, 4, 4, Layout::row_major};
  const MatrixView<const float> bv{b.data(), 4, 3, 3, Layout::row_major};
  const MatrixView<float> cv{c.data(), 3, 3, 3, Layout::row_major};
  const MatrixView<std::int64_t> good{ks.data(), 3, 3, 3, Layout::row_major};
  auto refused = [&](auto&& call, Errc code, const std::string& subject, const std::string& words) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected a refusal naming " << subject;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.subject(), subject) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(ks, std::vector<std::int64_t>(9, 77));
    EXPECT_EQ(c, std::vector<float>(9, 0.0f));
  };
  refused([&] { gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, MatrixView<std::int64_t>{ks.data(), 3, 2, 2, Layout::row_major}); },
          Errc::dimension_mismatch, "K*", "3x2");
  std::vector<float> shared(9 + 2 * 9);  // C and K* in one buffer
  refused([&] {
    gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, MatrixView<float>{shared.data(), 3, 3, 3, Layout::row_major},
                   MatrixView<std::int64_t>{reinterpret_cast<std::int64_t*>(shared.data() + 2), 3, 3, 3, Layout::row_major});
  }, Errc::aliasing, "K*", "overlaps C");
  refused([&] {
    gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, good, 0.0f, -INFINITY, std::numeric_limits<std::int64_t>::max() - 3);
  }, Errc::unsupported, "K*", "int64");
  // Two members: C has room for both (a C past its buffer could overlap A or B, whose check comes
  // first, wherever the heap put them), K* members 4 apart overlap.
  std::vector<float> c_two(18, 0.0f);
  refused([&] {
    gemm_argmax_batched<S>(cpu_context(), Op::N, av, 0, Op::N, bv, 0, MatrixView<float>{c_two.data(), 3, 3, 3, Layout::row_major}, 9,
                           good, 4, 2);
  }, Errc::aliasing, "stride_k", "overlap");
  refused([&] {
    detail::gemm_argmax_batched_in_parts<S>(cpu_context(), Op::N, av, 0, Op::N, bv, 0, cv, 0, good, 0, 1, 0.0f, -INFINITY, 0, 0);
  }, Errc::invalid_argument, "k_part", "1 to 2^31");
  // The int32 K* points to the int64 one past its range.
  std::vector<std::int32_t> k32(9, 77);
  try {
    gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, MatrixView<std::int32_t>{k32.data(), 3, 3, 3, Layout::row_major}, 0.0f,
                   -INFINITY, std::numeric_limits<std::int32_t>::max() - 3);
    ADD_FAILURE() << "an int32 K* took k offset + K past 2^31 - 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "K*");
    EXPECT_NE(std::string(e.what()).find("int64"), std::string::npos) << e.what();
  }
  // ... which takes it.
  gemm_argmax<S>(cpu_context(), Op::N, av, Op::N, bv, cv, good, 0.0f, -INFINITY, std::numeric_limits<std::int32_t>::max() - 3);
  for (std::int64_t v : ks) EXPECT_EQ(v, std::int64_t(std::numeric_limits<std::int32_t>::max()) - 3);
}

}  // namespace
}  // namespace ringmm::testing
