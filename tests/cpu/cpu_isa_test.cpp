// Context::cpu_isa through the public gemm: every built-in semiring and type at every instruction
// set this CPU runs (generic x86-64, AVX2, AVX-512), against the reference; the b1 kernels at each
// level give the same bits and counts (the argmax kernel's levels: argmax_test.cpp); a level above the CPU's is refused, naming both.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "ringmm/bits.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CpuIsaTest : public ::testing::Test {};
TYPED_TEST_SUITE(CpuIsaTest, BuiltinSemirings, SemiringNames);

TYPED_TEST(CpuIsaTest, EveryLevelMatchesTheReference) {
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(30);
  for (const auto& [m, n, k] : {std::tuple<index_t, index_t, index_t>{33, 129, 127}, {7, 1025, 1}, {1, 1, 1000}}) {
    const auto a = random_matrix<S>(m, k, Layout::row_major, 1, rng, k);
    const auto b = random_matrix<S>(k, n, Layout::col_major, 0, rng, k);
    HostMatrix<T> expected(m, n, Layout::row_major);
    const auto p = make_problem<S>(Op::N, a.cview(), Op::N, b.cview(), expected.view, S::one(), S::zero());
    cpu::reference_gemm<S>(p);
    for (CpuIsa isa : cpu_isa_levels()) {
      Context ctx = cpu_context(2);
      ctx.cpu_isa = isa;
      ctx.vendor_blas = false;  // ringmm's own kernel for plus-times too
      HostMatrix<T> c(m, n, Layout::row_major);
      gemm<S>(ctx, Op::N, a.cview(), Op::N, b.cview(), c.view);
      const detail::Strided<T> want{expected.view.data, m, n, expected.view.ld, 1}, got{c.view.data, m, n, c.view.ld, 1};
      EXPECT_TRUE(matrices_match<S>(p, want, got)) << to_string(isa) << " " << m << "x" << n << "x" << k;
    }
  }
}

TEST(CpuIsa, BitKernelsAgreeAtEveryLevel) {
  std::mt19937_64 rng(31);
  const index_t m = 37, n = 45, k = 1000;
  std::vector<bit_word> a_words(std::size_t(m * words_for_bits(k))), b_words(std::size_t(n * words_for_bits(k)));
  for (auto& w : a_words) w = rng() & rng();  // sparse enough that or-and is not all true
  for (auto& w : b_words) w = rng() & rng() & rng();
  const auto a = bit_matrix<const bit_word>(a_words.data(), m, k), bt = bit_matrix<const bit_word>(b_words.data(), n, k);
  std::vector<std::int32_t> first_counts;
  std::vector<std::uint8_t> first_or;
  for (CpuIsa isa : cpu_isa_levels()) {
    Context ctx = cpu_context(2);
    ctx.cpu_isa = isa;
    std::vector<std::int32_t> counts(std::size_t(m * n));
    std::vector<std::uint8_t> ors(std::size_t(m * n));
    gemm_b1_count(ctx, a, bt, MatrixView<std::int32_t>{counts.data(), m, n, n, Layout::row_major});
    gemm_b1(ctx, a, bt, MatrixView<std::uint8_t>{ors.data(), m, n, n, Layout::row_major});
    if (first_counts.empty()) {
      first_counts = counts, first_or = ors;
      // The generic level against the definition, one entry (the last word's bits past k are not read).
      int popcount = 0;
      for (index_t w = 0; w < words_for_bits(k); ++w) {
        const index_t bits = std::min<index_t>(64, k - 64 * w);
        const bit_word mask = bits == 64 ? ~bit_word(0) : (bit_word(1) << bits) - 1;
        popcount += __builtin_popcountll(a_words[std::size_t(w)] & b_words[std::size_t(w)] & mask);
      }
      EXPECT_EQ(counts[0], popcount);
      continue;
    }
    EXPECT_EQ(counts, first_counts) << to_string(isa);
    EXPECT_EQ(ors, first_or) << to_string(isa);
  }
}

TEST(CpuIsa, ALevelAboveTheCpusIsRefused) {
  EXPECT_NE(detected_cpu_isa(), CpuIsa::automatic);
  EXPECT_EQ(resolved_cpu_isa(CpuIsa::generic), CpuIsa::generic);
  if (detected_cpu_isa() == CpuIsa::avx512) GTEST_SKIP() << "this CPU runs every level";
  Context ctx = cpu_context(1);
  ctx.cpu_isa = CpuIsa::avx512;
  std::vector<float> x(4, 0.f);
  const MatrixView<const float> v{x.data(), 2, 2, 2, Layout::row_major};
  std::vector<float> c(4);
  try {
    gemm<MaxPlus<float>>(ctx, Op::N, v, Op::N, v, MatrixView<float>{c.data(), 2, 2, 2, Layout::row_major});
    ADD_FAILURE() << "avx512 accepted on a CPU without it";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_NE(std::string(e.what()).find("does not run avx512"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ringmm::testing
