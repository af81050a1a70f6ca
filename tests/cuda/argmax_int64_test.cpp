// gemm_argmax with an int64 K* on the CUDA backend: K cut into short parts so that a small K runs
// as several int32 products and the kernels that join them, on host and device pointers, against
// the rules applied entry by entry on the host (support/argmax_int64.hpp); and equality with the
// GPU's int32 K* where K fits.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "argmax_int64.hpp"
#include "cuda_testing.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class S> class CudaArgmaxInt64 : public ::testing::Test {};
TYPED_TEST_SUITE(CudaArgmaxInt64, SelectingSemirings, SemiringNames);

Context gpu() {
  Context ctx;
  ctx.backend = Backend::cuda;
  return ctx;
}

// The case on the GPU, its operands in host memory or copied to the device; C and K* come back.
template <class S>
void run_on_gpu(const WideCase& w, const WideOperands<S>& x, bool device, std::vector<typename S::value_type>& c,
                std::vector<std::int64_t>& ks) {
  using T = typename S::value_type;
  c = x.c.data, ks = x.k_star.data;
  if (!device) {
    run_wide<S>(gpu(), w, x, x.a.data.data(), x.b.data.data(), c.data(), ks.data());
    return;
  }
  const DeviceCopy<T> da(x.a.data), db(x.b.data), dc(c);
  const DeviceCopy<std::int64_t> dk(ks);
  run_wide<S>(gpu(), w, x, da.ptr, db.ptr, dc.ptr, dk.ptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dc.to_host(c);
  dk.to_host(ks);
}

TYPED_TEST(CudaArgmaxInt64, PartsFollowTheRules) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(31);
  for (const WideCase& w : wide_cases())
    for (bool device : {false, true})
      for (bool alpha : {false, true}) {
        const auto x = wide_operands<S>(w, rng, alpha);
        std::vector<T> c;
        std::vector<std::int64_t> ks;
        run_on_gpu<S>(w, x, device, c, ks);
        auto want_c = x.c;
        auto want_k = x.k_star;
        expected_outputs<S>(w, x, want_c, want_k);
        const std::string what = w.name() + (device ? " device" : " host") + (alpha ? " alpha" : "");
        EXPECT_TRUE(same_elements(want_c.data, c)) << what;
        EXPECT_TRUE(same_elements(want_k.data, ks)) << what;
      }
}

// Where K fits, the int64 K* (one part, and parts of 7) equals the GPU's int32 one.
TYPED_TEST(CudaArgmaxInt64, MatchesTheInt32ProductWhereKFits) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = TypeParam;
  using T = typename S::value_type;
  std::mt19937_64 rng(37);
  for (WideCase w : wide_cases()) {
    if (w.k_offset > std::numeric_limits<std::int32_t>::max() - w.k) continue;
    auto x = wide_operands<S>(w, rng, true);
    for (auto& v : x.k_star.data) v = std::int64_t(rng() % 100000);
    auto c32 = x.c;
    std::vector<std::int32_t> k32(x.k_star.data.begin(), x.k_star.data.end());
    gemm_argmax_batched<S>(gpu(), w.op_a, x.a.over(static_cast<const T*>(x.a.data.data())), x.stride_a, w.op_b,
                           x.b.over(static_cast<const T*>(x.b.data.data())), x.b.stride, c32.over(c32.data.data()),
                           x.c.stride, x.k_star.over(k32.data()), x.k_star.stride, w.batch, x.alpha, x.beta, w.k_offset);
    const std::vector<std::int64_t> k32_wide(k32.begin(), k32.end());
    for (index_t part : {detail::argmax_part_max, index_t(7)}) {
      w.part = part;
      std::vector<T> c;
      std::vector<std::int64_t> ks;
      run_on_gpu<S>(w, x, true, c, ks);
      EXPECT_TRUE(same_elements(c32.data, c)) << w.name();
      EXPECT_TRUE(same_elements(k32_wide, ks)) << w.name();
    }
  }
}

}  // namespace
}  // namespace ringmm::testing
