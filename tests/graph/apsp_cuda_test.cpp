// ringmm::apsp on the CUDA backend (label gpu; skips without a device): the cases of the CPU test
// (apsp_cases.inc), a larger graph against the CPU backend, and device pointers in place.
#include <cuda_runtime.h>

#include "apsp_testing.hpp"
#include "cuda_testing.hpp"
#include "ringmm/cuda/device.hpp"

namespace ringmm::testing {
namespace {
Context apsp_context() {
  Context ctx;
  ctx.backend = Backend::cuda;
  return ctx;
}
}  // namespace
}  // namespace ringmm::testing
#define APSP_SUITE CudaApsp
#define APSP_PRECONDITION() RINGMM_SKIP_WITHOUT_GPU()
#include "apsp_cases.inc"

namespace ringmm::testing {
namespace {

TEST(CudaApsp, LargerGraphsMatchTheReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  for (index_t block : {0, 100, 256, 512, 1024}) check<float>({.n = 1100, .density = 0.01, .seed = 15}, block);
  check<float>({.n = 700, .density = 0.5, .max_weight = 5, .negative = true, .seed = 16}, 0);
  check<double>({.n = 600, .density = 0.05, .seed = 17}, 128);
  check<float>({.n = 600, .density = 0.05, .dag = true, .seed = 18}, 0, true);
  // Zero-weight cycles across the default block's sub-blocks.
  for (index_t block : {0, 300})
    check<float>({.n = 1100, .density = 0.004, .max_weight = 3, .negative = true, .zeros = 0.4, .undirected = true, .seed = 20},
                 block);
}

// Nonnegative weights make every product's data sign-known, so with the scan's threshold lowered
// the argmax products take the three-input minimum (argmax.cuh): distances and walked routes still
// match, zero-weight cycles (undirected zero edges) included.
TEST(CudaApsp, NonnegativeWeightsTakeTheSignKnownProducts) {
  RINGMM_SKIP_WITHOUT_GPU();
  const double saved = cuda_detail::sign_scan_min_updates();
  cuda_detail::sign_scan_min_updates() = double(1 << 20);
  for (index_t block : {0, 256})
    check<float>({.n = 1100, .density = 0.004, .max_weight = 3, .zeros = 0.4, .undirected = true, .seed = 21}, block);
  check<float>({.n = 700, .density = 0.2, .max_weight = 2, .zeros = 0.3, .seed = 22}, 128);
  cuda_detail::sign_scan_min_updates() = saved;
}

TEST(CudaApsp, DevicePointersInPlace) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t n = 300;
  const std::vector<double> w = random_graph({.n = n, .density = 0.05, .seed = 19});
  const std::vector<float> weights = converted<float>(w);
  DeviceCopy<float> dist(weights);
  DeviceCopy<std::int32_t> next(std::vector<std::int32_t>(std::size_t(n * n), 0));
  ApspOptions options;
  options.block = 64;
  apsp_in_place<float>(apsp_context(), row_major(dist.ptr, n, n), row_major(next.ptr, n, n), options);
  std::vector<float> d(weights.size());
  std::vector<std::int32_t> nx(weights.size());
  dist.to_host(d);
  next.to_host(nx);
  expect_solution(w, n, d, nx, false, "device pointers");
}

}  // namespace
}  // namespace ringmm::testing
