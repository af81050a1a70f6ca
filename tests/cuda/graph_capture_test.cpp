// Calls captured in a CUDA graph (cudaStreamBeginCapture) and replayed give the results of the same
// calls made directly, on the data the buffers hold at replay: one graph over every route of the
// engine (small and large kernels, split-K, a batch, Aᵀ·A, argmax, cuBLAS, or-and's tensor cores,
// log-plus's shift trick, a checked pair with Context::trust_inputs). A call that would wait for
// the device or copy host memory is refused while capturing, naming what to change (label gpu;
// skips without a device).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

// A device buffer of `count` elements of T, refilled with random valid inputs of S on demand.
struct Buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::function<std::vector<unsigned char>(std::mt19937_64&)> draw;  // null: an output
};

// The calls of one graph and the buffers they read and write.
class CallSet {
 public:
  CallSet() = default;
  CallSet(const CallSet&) = delete;
  CallSet& operator=(const CallSet&) = delete;
  ~CallSet() {
    for (Buffer& b : buffers_) cudaFree(b.ptr);
  }

  template <class S> typename S::value_type* input(std::size_t count, index_t k) {
    using T = typename S::value_type;
    Buffer b;
    b.bytes = count * sizeof(T);
    b.draw = [count, k](std::mt19937_64& rng) {
      std::vector<unsigned char> bytes(count * sizeof(T));
      for (std::size_t i = 0; i < count; ++i) {
        const T x = random_value<S>(rng, k);
        std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
      }
      return bytes;
    };
    return static_cast<T*>(add(b));
  }
  template <class T> T* output(std::size_t count) {
    Buffer b;
    b.bytes = count * sizeof(T);
    return static_cast<T*>(add(b));
  }
  void call(std::string name, std::function<void(const Context&)> run) { calls_.push_back({std::move(name), std::move(run)}); }

  // New random inputs; outputs poisoned (all bits set), so that an output nobody writes shows.
  void refill(std::mt19937_64& rng) {
    for (Buffer& b : buffers_) {
      if (b.draw) {
        const std::vector<unsigned char> bytes = b.draw(rng);
        ASSERT_EQ(cudaMemcpy(b.ptr, bytes.data(), b.bytes, cudaMemcpyHostToDevice), cudaSuccess);
      } else {
        ASSERT_EQ(cudaMemset(b.ptr, 0xff, b.bytes), cudaSuccess);
      }
    }
  }
  void poison_outputs() {
    for (Buffer& b : buffers_)
      if (!b.draw) ASSERT_EQ(cudaMemset(b.ptr, 0xff, b.bytes), cudaSuccess);
  }
  // Every output's bytes, in order.
  std::vector<std::vector<unsigned char>> outputs() const {
    std::vector<std::vector<unsigned char>> out;
    for (const Buffer& b : buffers_)
      if (!b.draw) {
        out.emplace_back(b.bytes);
        EXPECT_EQ(cudaMemcpy(out.back().data(), b.ptr, b.bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      }
    return out;
  }
  void run_all(const Context& ctx) {
    for (auto& [name, run] : calls_) {
      SCOPED_TRACE(name);
      run(ctx);
    }
  }
  std::size_t calls() const { return calls_.size(); }

 private:
  void* add(Buffer b) {
    EXPECT_EQ(cudaMalloc(&b.ptr, std::max<std::size_t>(b.bytes, 1)), cudaSuccess);
    buffers_.push_back(b);
    return b.ptr;
  }
  std::vector<Buffer> buffers_;
  std::vector<std::pair<std::string, std::function<void(const Context&)>>> calls_;
};

template <class S> void add_gemm(CallSet& set, const std::string& name, index_t m, index_t n, index_t k, index_t batch = 1) {
  using T = typename S::value_type;
  const T* a = set.input<S>(std::size_t(m * k * batch), k);
  const T* b = set.input<S>(std::size_t(k * n * batch), k);
  T* c = set.output<T>(std::size_t(m * n * batch));
  set.call(name, [=](const Context& ctx) {
    gemm_batched<S>(ctx, Op::N, row_major(a, m, k), m * k, Op::N, row_major(b, k, n), k * n, row_major(c, m, n), m * n,
                    batch);
  });
}

template <class S> void add_argmax(CallSet& set, const std::string& name, index_t m, index_t n, index_t k) {
  using T = typename S::value_type;
  const T* a = set.input<S>(std::size_t(m * k), k);
  const T* b = set.input<S>(std::size_t(k * n), k);
  T* c = set.output<T>(std::size_t(m * n));
  std::int32_t* k_star = set.output<std::int32_t>(std::size_t(m * n));
  set.call(name, [=](const Context& ctx) {
    gemm_argmax<S>(ctx, Op::N, row_major(a, m, k), Op::N, row_major(b, k, n), row_major(c, m, n), row_major(k_star, m, n));
  });
}

template <class S> void add_syrk(CallSet& set, const std::string& name, index_t k, index_t n) {
  using T = typename S::value_type;
  const T* a = set.input<S>(std::size_t(k * n), k);
  T* c = set.output<T>(std::size_t(n * n));
  set.call(name, [=](const Context& ctx) { syrk<S>(ctx, Op::N, row_major(a, k, n), row_major(c, n, n)); });
}

// One graph over every route the engine takes on device operands.
void add_every_route(CallSet& set) {
  add_gemm<MaxPlus<float>>(set, "max-plus f32 64^3 (small kernel)", 64, 64, 64);
  add_gemm<MinPlus<float>>(set, "min-plus f32 513x257x1025 (large kernels, a ragged border)", 513, 257, 1025);
  add_gemm<MaxPlus<float>>(set, "max-plus f32 64x64x20000 (split-K)", 64, 64, 20000);
  add_gemm<MaxMin<float>>(set, "max-min f32 16 x 33^3 (a batch)", 33, 33, 33, 16);
  add_syrk<MaxPlus<float>>(set, "max-plus f32 A^T A, A 47x33", 47, 33);
  add_argmax<MaxPlus<float>>(set, "max-plus f32 argmax 129x127x33", 129, 127, 33);
  add_gemm<PlusTimes<float>>(set, "plus-times f32 127x129x33 (cuBLAS)", 127, 129, 33);
  add_gemm<OrAnd>(set, "or-and u8 256^3 (tensor cores)", 256, 256, 256);
  add_gemm<LogPlus<float>>(set, "log-plus f32 200^3", 200, 200, 200);
  add_gemm<MaxPlus<std::int32_t>>(set, "max-plus i32 100^3 (checked pair, trusted)", 100, 100, 100);
}

Context on(cudaStream_t stream) {
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = stream;
  ctx.trust_inputs = true;  // the checked pair among the calls
  return ctx;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

struct Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~Graph() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};

TEST(CudaGraphCapture, ReplaysEveryRouteOnTheDataOfEachReplay) {
  RINGMM_SKIP_WITHOUT_GPU();
  CallSet set;
  add_every_route(set);
  Stream stream;
  const Context ctx = on(stream.s);
  std::mt19937_64 rng(31);
  set.refill(rng);

  // Direct calls once first: kernels loaded and workspace pooled outside the capture.
  set.run_all(ctx);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  const auto direct = set.outputs();

  Graph g;
  set.poison_outputs();
  ASSERT_EQ(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  set.run_all(ctx);
  ASSERT_EQ(cudaStreamEndCapture(stream.s, &g.graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&g.exec, g.graph, 0), cudaSuccess);
  std::size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(g.graph, nullptr, &nodes), cudaSuccess);
  EXPECT_GE(nodes, set.calls());
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  EXPECT_NE(set.outputs(), direct) << "the capture ran the calls instead of recording them";

  ASSERT_EQ(cudaGraphLaunch(g.exec, stream.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  const auto replayed = set.outputs();
  ASSERT_EQ(replayed.size(), direct.size());
  for (std::size_t i = 0; i < direct.size(); ++i) EXPECT_TRUE(replayed[i] == direct[i]) << "output " << i;

  // New inputs in the same buffers: the replay reads them.
  set.refill(rng);
  set.run_all(ctx);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  const auto direct2 = set.outputs();
  EXPECT_NE(direct2, direct);
  set.poison_outputs();
  for (int replay = 0; replay < 3; ++replay) ASSERT_EQ(cudaGraphLaunch(g.exec, stream.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  const auto replayed2 = set.outputs();
  for (std::size_t i = 0; i < direct2.size(); ++i) EXPECT_TRUE(replayed2[i] == direct2[i]) << "output " << i;
}

// The capture of `run` on a fresh stream must be refused with `code` naming `subject` and saying
// `phrase`; the stream works afterwards.
template <class Run> void expect_refused_in_capture(Run&& run, Errc code, const std::string& subject,
                                                    const std::string& phrase) {
  Stream stream;
  ASSERT_EQ(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  try {
    run(stream.s);
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.subject(), subject) << e.what();
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << e.what();
  }
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream.s, &graph);
  if (graph) cudaGraphDestroy(graph);
  cudaGetLastError();
  EXPECT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
}

TEST(CudaGraphCapture, ACheckedPairWithoutTrustedInputsIsRefusedNamingTheSetting) {
  RINGMM_SKIP_WITHOUT_GPU();
  CallSet set;
  std::mt19937_64 rng(5);
  add_gemm<MaxPlus<std::int32_t>>(set, "max-plus i32", 33, 7, 129);
  set.refill(rng);
  expect_refused_in_capture(
      [&](cudaStream_t s) {
        Context ctx = on(s);
        ctx.trust_inputs = false;
        set.run_all(ctx);
      },
      Errc::unsupported, "trust_inputs", "capturing a CUDA graph");
  // Outside a capture the same call checks its inputs and runs.
  Stream stream;
  Context ctx = on(stream.s);
  ctx.trust_inputs = false;
  EXPECT_NO_THROW(set.run_all(ctx));
  EXPECT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
}

TEST(CudaGraphCapture, HostOperandsAreRefused) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t m = 7, n = 9, k = 5;
  std::vector<float> a(std::size_t(m * k), 1.0f), b(std::size_t(k * n), 2.0f), c(std::size_t(m * n), -1.0f);
  DeviceCopy<float> da(a), dc(c);
  expect_refused_in_capture(
      [&](cudaStream_t s) {
        gemm<MaxPlus<float>>(on(s), Op::N, row_major<const float>(da.ptr, m, k), Op::N,
                             row_major<const float>(b.data(), k, n), row_major(dc.ptr, m, n));
      },
      Errc::unsupported, "B", "capturing a CUDA graph");
  std::vector<std::int32_t> k_star(std::size_t(m * n), 7);
  DeviceCopy<float> db(b);
  expect_refused_in_capture(
      [&](cudaStream_t s) {
        gemm_argmax<MaxPlus<float>>(on(s), Op::N, row_major<const float>(da.ptr, m, k), Op::N,
                                    row_major<const float>(db.ptr, k, n), row_major(dc.ptr, m, n),
                                    row_major(k_star.data(), m, n));
      },
      Errc::unsupported, "K*", "capturing a CUDA graph");
  EXPECT_EQ(k_star, std::vector<std::int32_t>(std::size_t(m * n), 7));  // nothing written
}

// Context::trust_inputs skips the device check too: the value reaches the kernel instead of an error.
TEST(CudaGraphCapture, TrustedInputsSkipTheDeviceCheck) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t n = 3;
  std::vector<float> a(std::size_t(n * n), 1.0f), b(std::size_t(n * n), 1.0f), c(std::size_t(n * n));
  a[4] = -2.0f;  // max-times takes nonnegative values
  DeviceCopy<float> da(a), db(b), dc(c);
  Context ctx;
  ctx.backend = Backend::cuda;
  auto run = [&] {
    gemm<MaxTimes<float>>(ctx, Op::N, row_major<const float>(da.ptr, n, n), Op::N, row_major<const float>(db.ptr, n, n),
                          row_major(dc.ptr, n, n));
  };
  EXPECT_THROW(run(), Error);
  ctx.trust_inputs = true;
  EXPECT_NO_THROW(run());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dc.to_host(c);
  EXPECT_EQ(c[0], 1.0f);
}

}  // namespace
}  // namespace ringmm::testing
