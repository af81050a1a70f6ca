// The NaN policy on the CUDA engine: every configuration (and the heuristic's choice, which
// splits K for the long-K case) × both border policies × host and device pointers, batches and
// Aᵀ·A, for every float pair; plus-times through cuBLAS and through ringmm's kernel.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "cuda_testing.hpp"
#include "nan_policy.hpp"
#include "ringmm/cuda/configs.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CudaNanPolicy : public ::testing::Test {};
TYPED_TEST_SUITE(CudaNanPolicy, FloatSemirings, SemiringNames);

template <class S> void check_on(const Context& ctx, const NanSpec& spec, bool device) {
  using T = typename S::value_type;
  auto x = make_nan_product<S>(spec);
  auto actual = x.c;
  if (device) {
    DeviceCopy<T> da(x.a), db(x.b.empty() ? x.a : x.b), dc(actual);
    run_public<S>(ctx, x, da.ptr, db.ptr, dc.ptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dc.to_host(actual);
  } else {
    run_public<S>(ctx, x, x.a.data(), x.b.data(), actual.data());
  }
  EXPECT_TRUE(follows_nan_policy<S>(x, actual))
      << describe(spec) << " config " << (ctx.cuda_config.empty() ? "auto" : ctx.cuda_config) << " border "
      << to_string(ctx.border) << (device ? " device" : " host") << (ctx.vendor_blas ? "" : " own-kernels");
}

TYPED_TEST(CudaNanPolicy, EveryConfigurationBorderAndPath) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::vector<std::string> configs{""};
  for (const cuda_detail::ConfigInfo& c : cuda_detail::config_table) configs.emplace_back(c.name);
  int i = 0;
  for (const std::string& config : configs)
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (const NanSpec& spec : nan_specs()) {
        Context ctx;
        ctx.backend = Backend::cuda;
        ctx.cuda_config = config;
        ctx.border = border;
        ctx.vendor_blas = i % 2 == 0;  // plus-times alternates between cuBLAS and ringmm's kernel
        check_on<TypeParam>(ctx, spec, i++ % 3 != 0);
      }
}

}  // namespace
}  // namespace ringmm::testing
