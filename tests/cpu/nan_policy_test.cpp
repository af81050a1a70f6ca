// The NaN policy on the CPU: the reference, the blocked kernel on one and two threads (a packed
// panel with a NaN must take fma, not fma_nan_free), batches and Aᵀ·A, for every float pair.
#include <gtest/gtest.h>

#include "nan_policy.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CpuNanPolicy : public ::testing::Test {};
TYPED_TEST_SUITE(CpuNanPolicy, FloatSemirings, SemiringNames);

TYPED_TEST(CpuNanPolicy, ReferenceFollowsTheOracle) {
  for (const NanSpec& spec : nan_specs()) {
    auto x = make_nan_product<TypeParam>(spec);
    auto actual = x.c;
    cpu::reference_gemm<TypeParam>(x.problem(actual));
    EXPECT_TRUE(follows_nan_policy<TypeParam>(x, actual)) << describe(spec);
  }
}

TYPED_TEST(CpuNanPolicy, BlockedKernelOnOneAndTwoThreads) {
  for (int threads : {1, 2})
    for (const NanSpec& spec : nan_specs()) {
      auto x = make_nan_product<TypeParam>(spec);
      auto actual = x.c;
      Context ctx;
      ctx.backend = Backend::cpu;
      ctx.cpu_threads = threads;
      ctx.vendor_blas = false;  // plus-times through ringmm's kernel, not OpenBLAS
      run_public<TypeParam>(ctx, x, x.a.data(), x.b.data(), actual.data());
      EXPECT_TRUE(follows_nan_policy<TypeParam>(x, actual)) << describe(spec) << " threads " << threads;
    }
}

// The default context: plus-times f32/f64 through OpenBLAS where the build has it.
TYPED_TEST(CpuNanPolicy, DefaultContext) {
  for (const NanSpec& spec : nan_specs()) {
    auto x = make_nan_product<TypeParam>(spec);
    auto actual = x.c;
    Context ctx;
    ctx.backend = Backend::cpu;
    run_public<TypeParam>(ctx, x, x.a.data(), x.b.data(), actual.data());
    EXPECT_TRUE(follows_nan_policy<TypeParam>(x, actual)) << describe(spec);
  }
}

}  // namespace
}  // namespace ringmm::testing
