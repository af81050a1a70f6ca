// time_ringmm and time_cublas (gpu_measure.hpp): ringmm's kernels and the cuBLAS baseline, timed
// alike on the same random operand sets; describe_devices.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "ringmm/cuda/cublas.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/gpu_timer.cuh"
#include "ringmm/dispatch.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/narrow.hpp"

namespace ringmm::measure {

namespace {

// Operand shapes of one timed product: A is a_rows×a_cols, B b_rows×b_cols, C c_rows×c_cols,
// all row-major and compact, `batch` members each; k is the inner dimension.
struct Shapes {
  index_t a_rows, a_cols, b_rows, b_cols, c_rows, c_cols, batch, k;
  std::size_t a_count() const { return std::size_t(a_rows * a_cols * batch); }
  std::size_t b_count() const { return std::size_t(b_rows * b_cols * batch); }
  std::size_t c_count() const { return std::size_t(c_rows * c_cols * batch); }
};

Shapes shapes_of(Product product, index_t m, index_t n, index_t k, index_t batch) {
  if (m <= 0 || n <= 0 || k <= 0) throw Error(Errc::invalid_argument, "m", "timed shapes must be positive");
  switch (product) {
    case Product::gemm:
    case Product::argmax: return {m, k, k, n, m, n, 1, k};
    case Product::batched:
      if (batch <= 0) throw Error(Errc::invalid_argument, "batch", "a timed batch needs at least one member");
      return {m, k, k, n, m, n, batch, k};
    case Product::syrk:
      if (m != n) throw Error(Errc::invalid_argument, "m", "syrk computes C = AᵀA with A k×n, so m must equal n");
      return {k, n, 0, 0, n, n, 1, k};  // B is A itself
  }
  throw Error(Errc::invalid_argument, "product", "unknown product");
}

// The random operand sets of one timed product, as many as rotation needs.
template <class S> OperandSets<S> operand_sets(const Shapes& s, cudaStream_t stream) {
  const double set_bytes = double(s.a_count() + s.b_count() + s.c_count()) * sizeof(typename S::value_type);
  return OperandSets<S>(s.a_count(), s.b_count(), s.c_count(), s.k, rotation_sets(set_bytes), stream);
}

// Host operands of the with-transfers timings, in pageable or pinned memory (HostMemory).
template <class T> class HostBuffer {
 public:
  HostBuffer(std::size_t count, HostMemory memory) : count_(count) {
    if (memory == HostMemory::pageable) pageable_.resize(count);
    else if (memory == HostMemory::pinned && count)
      cuda_check(cudaMallocHost(reinterpret_cast<void**>(&pinned_), count * sizeof(T)), "cudaMallocHost");
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() {
    if (pinned_) cudaFreeHost(pinned_);
  }
  T* data() { return pinned_ ? pinned_ : pageable_.data(); }
  std::size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  std::size_t count_;
  std::vector<T> pageable_;
  T* pinned_ = nullptr;
};

// Fills `host` with as many elements from `device`.
template <class T> void download(const T* device, HostBuffer<T>& host) {
  if (!host.empty())
    cuda_check(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost), "download");
}

// ---- ringmm --------------------------------------------------------------------------------------
template <class S>
void call_ringmm(const Context& ctx, Product product, Op op_a, const Shapes& s, const typename S::value_type* a,
                 const typename S::value_type* b, typename S::value_type* c, std::int32_t* k_star) {
  using T = typename S::value_type;
  // op(A) = T: the same elements read as the transpose of a k×m row-major A.
  const MatrixView<const T> av = op_a == Op::N
                                     ? MatrixView<const T>{a, s.a_rows, s.a_cols, s.a_cols, Layout::row_major}
                                     : MatrixView<const T>{a, s.a_cols, s.a_rows, s.a_rows, Layout::row_major};
  const MatrixView<T> cv{c, s.c_rows, s.c_cols, s.c_cols, Layout::row_major};
  if (product == Product::syrk) {
    syrk<S>(ctx, Op::N, av, cv);
    return;
  }
  const MatrixView<const T> bv{b, s.b_rows, s.b_cols, s.b_cols, Layout::row_major};
  if (product == Product::argmax) {
    if constexpr (semiring_traits<S>::selects)
      gemm_argmax<S>(ctx, op_a, av, Op::N, bv, cv, MatrixView<std::int32_t>{k_star, s.c_rows, s.c_cols, s.c_cols, Layout::row_major});
    else
      throw Error(Errc::unsupported, "product", "argmax products need a semiring whose ⊕ selects one term");
    return;
  }
  if (product == Product::batched)
    gemm_batched<S>(ctx, op_a, av, s.a_rows * s.a_cols, Op::N, bv, s.b_rows * s.b_cols, cv, s.c_rows * s.c_cols,
                    s.batch);
  else
    gemm<S>(ctx, op_a, av, Op::N, bv, cv);
}

// x ← −|x| (sign −1) or |x| (sign +1).
__global__ void fold_signs_kernel(float* x, std::size_t count, float sign) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    x[i] = sign * fabsf(x[i]);
}

// The operand sets folded into S's sign-known domain.
template <class S> void fold_into_sign_known_domain(const OperandSets<S>& sets, const Shapes& s, cudaStream_t stream) {
  if constexpr (cuda_detail::sign_known<S>::available) {
    const float sign = cuda_detail::sign_known<S>::in_domain(-1.0f) ? -1.0f : 1.0f;
    for (int i = 0; i < sets.sets(); ++i)
      for (const auto& [p, count] : {std::pair{sets.a[i].get(), s.a_count()}, std::pair{sets.b[i].get(), s.b_count()}})
        if (count) fold_signs_kernel<<<1024, 256, 0, stream>>>(p, count, sign);
    cuda_check(cudaStreamSynchronize(stream), "fold_signs_kernel");
  } else {
    throw Error(Errc::unsupported, "sign_known", "sign-known data exist for max-plus f32 (values <= 0) and min-plus f32 "
                                                 "(values >= 0) only");
  }
}

template <class S>
Timing time_ringmm_typed(const Context& ctx_in, Product product, const Shapes& s, int reps, HostMemory memory,
                         Op op_a, bool sign_known) {
  using T = typename S::value_type;
  Context ctx = ctx_in;
  ctx.backend = Backend::cuda;
  const auto stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const OperandSets<S> sets = operand_sets<S>(s, stream);
  if (sign_known) fold_into_sign_known_domain<S>(sets, s, stream);

  // The index matrix of argmax products, on the device and on the host.
  const std::size_t k_count = product == Product::argmax ? s.c_count() : 0;
  const DeviceBuffer<std::int32_t> k_device(k_count, stream);
  HostBuffer<std::int32_t> k_host(k_count, memory);
  Timing t;
  t.kernel_seconds = median_seconds(reps, EventClock(stream), [&](int r) {
    const int i = r % sets.sets();
    call_ringmm<S>(ctx, product, op_a, s, sets.a[i].get(), sets.b[i].get(), sets.c.get(), k_device.get());
  });
  if (memory == HostMemory::none) return t;
  HostBuffer<T> a(s.a_count(), memory), b(s.b_count(), memory), c(s.c_count(), memory);
  download(sets.a[0].get(), a);
  download(sets.b[0].get(), b);
  t.with_transfers_seconds = median_seconds(reps, DeviceWallClock{}, [&](int) {
    call_ringmm<S>(ctx, product, op_a, s, a.data(), b.data(), c.data(), k_host.data());
  });
  return t;
}

// The i32 operand x as i8 (random_data.hpp: int8_operand).
__global__ void int8_operand_kernel(const std::int32_t* x, std::int8_t* to, std::size_t count, std::int32_t zero,
                                    std::int8_t sentinel) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x)
    to[i] = int8_operand(x[i], zero, sentinel);
}

template <class S, class E>
Timing time_narrow_typed(const Context& ctx_in, const Shapes& s, int reps) {
  Context ctx = ctx_in;
  ctx.backend = Backend::cuda;
  const auto stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const OperandSets<S> sets = operand_sets<S>(s, stream);
  // The random operand sets narrowed: f32 rounded as ringmm rounds a narrow C, i32 by int8_operand.
  std::vector<DeviceBuffer<E>> a, b;
  for (int i = 0; i < sets.sets(); ++i)
    for (auto [from, to, count] : {std::tuple{sets.a[i].get(), &a, s.a_count()}, std::tuple{sets.b[i].get(), &b, s.b_count()}}) {
      to->emplace_back(count, stream);
      if constexpr (std::is_same_v<E, std::int8_t>) {
        int8_operand_kernel<<<1024, 256, 0, stream>>>(from, to->back().get(), count, S::zero(), detail::i8_sentinel<S>());
        cuda::check_launch("int8_operand_kernel");
      } else {
        cuda_detail::round_runs(detail::narrow_element<E>(), from, 1, index_t(count), to->back().get(), index_t(count), stream);
      }
    }
  cuda_check(cudaStreamSynchronize(stream), "narrowing the operands");
  Timing t;
  t.kernel_seconds = median_seconds(reps, EventClock(stream), [&](int r) {
    const int i = r % sets.sets();
    gemm<S>(ctx, Op::N, row_major<const E>(a[i].get(), s.a_rows, s.a_cols), Op::N,
            row_major<const E>(b[i].get(), s.b_rows, s.b_cols), row_major(sets.c.get(), s.c_rows, s.c_cols));
  });
  return t;
}

// Calls back to back in rounds of up to 200 (fewer than the launch queue holds, so that the host
// never waits for room): the host's time per call, the device's per call, and the device's per
// call when the round is one CUDA graph. Medians over the rounds, after a warm-up round.
template <class S> CallCost time_calls_typed(const Context& ctx_in, Product product, const Shapes& s, int calls, Op op_a) {
  struct OwnStream {
    cudaStream_t s = nullptr;
    OwnStream() { cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
    ~OwnStream() { cudaStreamDestroy(s); }
  } own;
  Context ctx = ctx_in;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = own.s;
  const OperandSets<S> sets = operand_sets<S>(s, own.s);
  const DeviceBuffer<std::int32_t> k_star(product == Product::argmax ? s.c_count() : 0, own.s);
  auto call = [&] { call_ringmm<S>(ctx, product, op_a, s, sets.a[0].get(), sets.b[0].get(), sets.c.get(), k_star.get()); };
  const int round = std::min(calls, 200), rounds = std::max(1, calls / round);
  auto run_round = [&] {
    for (int i = 0; i < round; ++i) call();
  };
  EventClock events(own.s);
  events(run_round);
  std::vector<double> host, device;
  for (int r = 0; r < rounds; ++r) {
    double enqueue = 0;
    device.push_back(events([&] { enqueue = HostClock{}(run_round); }) / round);
    host.push_back(enqueue / round);
  }
  CallCost cost;
  cost.host_seconds = median(host);
  cost.stream_seconds = median(device);

  cudaGraph_t graph = nullptr;
  cuda_check(cudaStreamBeginCapture(own.s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  try {
    run_round();
  } catch (const Error& e) {
    cost.graph_refusal = e.what();
  }
  const cudaError_t ended = cudaStreamEndCapture(own.s, &graph);
  if (!cost.graph_refusal.empty()) {
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    return cost;
  }
  cuda_check(ended, "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  std::vector<double> replays;
  const auto launch = [&] { cuda_check(cudaGraphLaunch(exec, own.s), "cudaGraphLaunch"); };
  events(launch);
  for (int r = 0; r < std::max(rounds, 3); ++r) replays.push_back(events(launch) / round);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cost.graph_seconds = median(replays);
  return cost;
}

// ---- cuBLAS --------------------------------------------------------------------------------------
using cuda::cublas;
using cuda::cublas_check;

class CublasHandle {
 public:
  CublasHandle() {
    cublas_check(cublas().create(&handle_), "cublasCreate");
    // Pedantic: no TF32 or other reduced-precision paths (DGEMM still uses the FP64 tensor cores,
    // which are full precision: 47 TFLOP/s on the H100, docs/perf/cuda-engine.md run 7).
    cublas_check(cublas().set_math_mode(handle_, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() { cublas().destroy(handle_); }
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_{};
};

// cuBLAS is column-major: a row-major X is a column-major Xᵀ, so C = A·B is computed as
// Cᵀ = Bᵀ·Aᵀ, and C = AᵀA (A k×n row-major, Aᵀ n×k column-major) as syrk of Aᵀ, lower triangle.
template <class T> void call_cublas(cublasHandle_t h, Product product, const Shapes& s, const T* a, const T* b, T* c) {
  const T one = 1, zero = 0;
  const int m = int(s.c_rows), n = int(s.c_cols), k = int(s.k);
  if constexpr (std::is_same_v<T, float>) {
    if (product == Product::gemm)
      cublas_check(cublas().sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n), "cublasSgemm");
    else if (product == Product::batched)
      cublas_check(cublas().sgemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, s.b_rows * s.b_cols,
                                                   a, k, s.a_rows * s.a_cols, &zero, c, n, s.c_rows * s.c_cols,
                                                   int(s.batch)),
                   "cublasSgemmStridedBatched");
    else
      cublas_check(cublas().ssyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &one, a, n, &zero, c, n),
                   "cublasSsyrk");
  } else {
    if (product == Product::gemm)
      cublas_check(cublas().dgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n), "cublasDgemm");
    else if (product == Product::batched)
      cublas_check(cublas().dgemm_strided_batched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, s.b_rows * s.b_cols,
                                                   a, k, s.a_rows * s.a_cols, &zero, c, n, s.c_rows * s.c_cols,
                                                   int(s.batch)),
                   "cublasDgemmStridedBatched");
    else
      cublas_check(cublas().dsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &one, a, n, &zero, c, n),
                   "cublasDsyrk");
  }
}

template <class T> Timing time_cublas_typed(Product product, const Shapes& s, int reps, HostMemory memory) {
  using S = PlusTimes<T>;
  const cudaStream_t stream = nullptr;
  CublasHandle handle;
  cublas_check(cublas().set_stream(handle.get(), stream), "cublasSetStream");
  const OperandSets<S> sets = operand_sets<S>(s, stream);

  Timing t;
  t.kernel_seconds = median_seconds(reps, EventClock(stream), [&](int r) {
    const int i = r % sets.sets();
    call_cublas<T>(handle.get(), product, s, sets.a[i].get(), sets.b[i].get(), sets.c.get());
  });
  if (memory == HostMemory::none) return t;
  // With transfers, as a cuBLAS user with host buffers does it: upload, multiply, download.
  HostBuffer<T> a(s.a_count(), memory), b(s.b_count(), memory), c(s.c_count(), memory);
  download(sets.a[0].get(), a);
  download(sets.b[0].get(), b);
  const DeviceBuffer<T> da(s.a_count(), stream), db(s.b_count(), stream), dc(s.c_count(), stream);
  t.with_transfers_seconds = median_seconds(reps, DeviceWallClock{}, [&](int) {
    cuda_check(cudaMemcpy(da.get(), a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice), "upload A");
    if (!b.empty()) cuda_check(cudaMemcpy(db.get(), b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice), "upload B");
    call_cublas<T>(handle.get(), product, s, da.get(), db.get(), dc.get());
    cuda_check(cudaMemcpy(c.data(), dc.get(), c.size() * sizeof(T), cudaMemcpyDeviceToHost), "download C");
  });
  return t;
}

}  // namespace

namespace {
// The shapes of a timed ringmm product, its arguments checked and a device required.
Shapes checked_ringmm_case(SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                           index_t batch, int repetitions, const char* what, Op op_a) {
  const Shapes s = shapes_of(product, m, n, k, batch);
  if (repetitions <= 0) throw Error(Errc::invalid_argument, what, "must be at least 1");
  if (product == Product::syrk && op_a != Op::N)
    throw Error(Errc::invalid_argument, "op_a", "syrk computes AᵀA of its one operand; A is not transposed");
  visit_semiring(kind, type, [](auto) {});  // Errc::unsupported for a pair the library does not ship
  require_device();
  return s;
}
}  // namespace

Timing time_ringmm(const Context& ctx, SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                   index_t batch, int reps, HostMemory host, Op op_a, bool sign_known) {
  const Shapes s = checked_ringmm_case(kind, type, product, m, n, k, batch, reps, "reps", op_a);
  return visit_semiring(kind, type, [&](auto tag) {
    return time_ringmm_typed<typename decltype(tag)::type>(ctx, product, s, reps, host, op_a, sign_known);
  });
}

Timing time_ringmm_narrow(const Context& ctx, SemiringKind kind, DType type, const std::string& element, index_t m,
                          index_t n, index_t k, int reps) {
  const Shapes s = checked_ringmm_case(kind, type, Product::gemm, m, n, k, 1, reps, "reps", Op::N);
  return visit_semiring(kind, type, [&](auto tag) -> Timing {
    using S = typename decltype(tag)::type;
    if constexpr (detail::narrow_operand_v<S, bf16>) {
      if (element == "bf16") return time_narrow_typed<S, bf16>(ctx, s, reps);
      if (element == "f16") return time_narrow_typed<S, f16>(ctx, s, reps);
    } else if constexpr (detail::narrow_operand_v<S, std::int8_t>) {
      if (element == "i8") return time_narrow_typed<S, std::int8_t>(ctx, s, reps);
    }
    throw Error(Errc::unsupported, "element",
                element + " operands do not multiply in " + std::string(to_string(kind)) + " " +
                    std::string(to_string(type)) + " (bf16 and f16: semirings of f32; i8: max-plus and min-plus i32)");
  });
}

CallCost time_calls(const Context& ctx, SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                    index_t batch, int calls, Op op_a) {
  const Shapes s = checked_ringmm_case(kind, type, product, m, n, k, batch, calls, "calls", op_a);
  return visit_semiring(kind, type, [&](auto tag) {
    return time_calls_typed<typename decltype(tag)::type>(ctx, product, s, calls, op_a);
  });
}

Timing time_cublas(DType type, Product product, index_t m, index_t n, index_t k, index_t batch, int reps,
                   HostMemory host) {
  const Shapes s = shapes_of(product, m, n, k, batch);
  if (reps <= 0) throw Error(Errc::invalid_argument, "reps", "at least one repetition");
  if (type != DType::f32 && type != DType::f64)
    throw Error(Errc::unsupported, "type", "cuBLAS baselines exist for f32 and f64 plus-times only, not " +
                                               std::string(to_string(type)));
  if (std::max({m, n, k, batch}) > 2147483647)
    throw Error(Errc::unsupported, "m", "cuBLAS takes 32-bit dimensions");
  require_device();
  return type == DType::f32 ? time_cublas_typed<float>(product, s, reps, host)
                            : time_cublas_typed<double>(product, s, reps, host);
}

Timing time_cublas_bf16(index_t m, index_t n, index_t k, int reps) {
  if (m <= 0 || n <= 0 || k <= 0) throw Error(Errc::invalid_argument, "m", "timed shapes must be positive");
  if (reps <= 0) throw Error(Errc::invalid_argument, "reps", "at least one repetition");
  if (std::max({m, n, k}) > 2147483647) throw Error(Errc::unsupported, "m", "cuBLAS takes 32-bit dimensions");
  require_device();
  const cudaStream_t stream = nullptr;
  CublasHandle handle;
  cublas_check(cublas().set_stream(handle.get(), stream), "cublasSetStream");
  // 0/1 operands (bf16 1.0 is 0x3f80), about half of them ones, as or-and's are.
  auto ones_and_zeros = [stream](index_t count) {
    std::vector<std::uint16_t> host(static_cast<std::size_t>(count));
    std::uint32_t state = 12345;
    for (auto& x : host) x = ((state = state * 1664525u + 1013904223u) >> 31) ? 0x3f80 : 0;
    DeviceBuffer<std::uint16_t> d(host.size(), stream);
    cuda_check(cudaMemcpy(d.get(), host.data(), host.size() * 2, cudaMemcpyHostToDevice), "upload bf16 operand");
    return d;
  };
  const DeviceBuffer<std::uint16_t> a = ones_and_zeros(m * k), b = ones_and_zeros(k * n);
  const DeviceBuffer<std::uint16_t> c(std::size_t(m * n), stream);
  const float one = 1, zero = 0;
  Timing t;
  t.kernel_seconds = median_seconds(reps, EventClock(stream), [&](int) {
    // Row-major C = A·B as column-major Cᵀ = Bᵀ·Aᵀ.
    cublas_check(cublas().gemm_ex(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(m), int(k), &one, b.get(),
                                  CUDA_R_16BF, int(n), a.get(), CUDA_R_16BF, int(k), &zero, c.get(), CUDA_R_16BF,
                                  int(n), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (bf16)");
  });
  return t;
}

std::vector<std::string> describe_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  std::vector<std::string> lines;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, d), "cudaGetDeviceProperties");
    int clock_khz = 0;
    cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d);
    char line[512];
    std::snprintf(line, sizeof line, "%d: %s, compute capability %d.%d, %d SMs, %.1f GiB, L2 %.0f MiB, %.0f MHz", d,
                  prop.name, prop.major, prop.minor, prop.multiProcessorCount,
                  double(prop.totalGlobalMem) / (1u << 30), double(prop.l2CacheSize) / (1u << 20), clock_khz / 1e3);
    lines.emplace_back(line);
  }
  return lines;
}

}  // namespace ringmm::measure
