// The engine's workspace from a caller's source (ringmm::cuda::ScopedWorkspace), as XLA's custom
// calls lend theirs, and products captured in a CUDA graph with it (label gpu; skips without a
// device): the products that check no values neither allocate elsewhere nor synchronise.
#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/ringmm.hpp"

namespace ringmm::testing {
namespace {

// A bump allocator over one cudaMalloc'd arena, counting what it lends.
class Arena final : public cuda::WorkspaceSource {
 public:
  explicit Arena(std::size_t bytes) : size_(bytes) { EXPECT_EQ(cudaMalloc(&base_, bytes), cudaSuccess); }
  ~Arena() { cudaFree(base_); }
  void* allocate(std::size_t bytes) override {
    const std::size_t at = (used_ + 255) / 256 * 256;
    if (at + bytes > size_) throw Error(Errc::out_of_memory, "arena", "the test's arena is full");
    used_ = at + bytes;
    ++allocations_;
    return static_cast<char*>(base_) + at;
  }
  int allocations() const { return allocations_; }

 private:
  void* base_ = nullptr;
  std::size_t size_, used_ = 0;
  int allocations_ = 0;
};

std::vector<float> random_values(std::size_t count, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> v(count);
  for (float& x : v) x = u(rng);
  return v;
}

struct Product {
  static constexpr index_t m = 129, n = 127, k = 33;  // odd: the padded border needs workspace
  std::mt19937 rng{29};
  DeviceCopy<float> a{random_values(std::size_t(m * k), rng)}, b{random_values(std::size_t(k * n), rng)};
  DeviceCopy<float> c{std::vector<float>(std::size_t(m * n))};

  void run(cudaStream_t stream) {
    Context ctx;
    ctx.backend = Backend::cuda;
    ctx.border = BorderPolicy::pad;
    ctx.cuda_stream = stream;
    gemm<MaxPlus<float>>(ctx, Op::N, row_major<const float>(a.ptr, m, k), Op::N, row_major<const float>(b.ptr, k, n),
                         row_major(c.ptr, m, n));
  }
  std::vector<float> result() const {
    std::vector<float> host(std::size_t(m * n));
    c.to_host(host);
    return host;
  }
};

TEST(CudaWorkspace, ComesFromTheInstalledSourceAndGivesTheSameResult) {
  RINGMM_SKIP_WITHOUT_GPU();
  Product p;
  p.run(nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> from_pool = p.result();
  Arena arena(std::size_t(64) << 20);
  {
    const cuda::ScopedWorkspace use(arena);
    EXPECT_EQ(cuda::installed_workspace(), &arena);
    p.run(nullptr);
  }
  EXPECT_EQ(cuda::installed_workspace(), nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_GT(arena.allocations(), 0);
  EXPECT_EQ(p.result(), from_pool);
}

TEST(CudaWorkspace, ScopesNestAndRestoreThePreviousSource) {
  RINGMM_SKIP_WITHOUT_GPU();
  Arena outer(1 << 20), inner(1 << 20);
  const cuda::ScopedWorkspace a(outer);
  {
    const cuda::ScopedWorkspace b(inner);
    EXPECT_EQ(cuda::installed_workspace(), &inner);
  }
  EXPECT_EQ(cuda::installed_workspace(), &outer);
}

TEST(CudaWorkspace, ProductsCapturedInAGraphReplayTheirResults) {
  RINGMM_SKIP_WITHOUT_GPU();
  Product p;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  p.run(stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const std::vector<float> want = p.result();
  ASSERT_EQ(cudaMemsetAsync(p.c.ptr, 0, sizeof(float) * std::size_t(p.m * p.n), stream), cudaSuccess);

  Arena arena(std::size_t(64) << 20);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const cuda::ScopedWorkspace use(arena);
    for (int i = 0; i < 3; ++i) p.run(stream);
  }
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_NE(p.result(), want);  // captured, not run
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(p.result(), want);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace ringmm::testing
