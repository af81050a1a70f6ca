// log_plus_backward and argmax_backward on the CUDA backend (ringmm/backward.hpp), on device
// memory: the CPU's arithmetic. log-plus takes the shift trick's maxima and factors (in f64) and
// its plus-times GEMM (cuBLAS where the context allows) from the log-plus product
// (ringmm/cuda/log_plus.cuh), the weights' scalar math from ringmm/detail/log_plus_shift.hpp, and
// has its own small kernels for the weights and the sums. No atomics in the sums: each gradient
// element is summed by one thread in a fixed order, so results do not vary from run to run.
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <string>
#include <type_traits>

#include "ringmm/backward.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/log_plus.cuh"
#include "ringmm/detail/log_plus_shift.hpp"

namespace ringmm::detail {

namespace {

using cuda_detail::check_launch;
using cuda_detail::cuda_check;
using cuda_detail::DeviceBuffer;
using Sum = double;

constexpr int block_threads = 256;

unsigned blocks_for(index_t n) {
  return unsigned(std::min<index_t>((n + block_threads - 1) / block_threads, 16 * index_t(cuda_detail::multiprocessor_count())));
}
unsigned lines_for(index_t n) { return unsigned(std::min<index_t>(n, 65535)); }

template <class T> Strided<const T> strided(MatrixView<const T> v) { return apply_op(Op::N, v); }
template <class T> Strided<T> strided(MatrixView<T> v) { return apply_op(Op::N, v); }

// ---- value checks (the one host wait) -------------------------------------------------------

// first_bad ← the smallest row-major position of an element `bad` finds.
template <class T, class Bad> __global__ void scan_kernel(Strided<const T> x, Bad bad, unsigned long long* first_bad) {
  const index_t n = x.rows * x.cols;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    if (bad(x(e / x.cols, e % x.cols))) atomicMin(first_bad, (unsigned long long)e);
}

struct NotLog {  // NaN or +∞
  template <class T> __device__ bool operator()(T x) const { return !(x < T(INFINITY)); }
};
struct NotFinite {
  template <class T> __device__ bool operator()(T x) const { return !isfinite(x); }
};
struct OutsideIndexes {  // K* entries outside [−1, K)
  index_t k;
  __device__ bool operator()(std::int32_t x) const { return x < -1 || x >= k; }
};

// Scans every (view, name, domain, test) and refuses the first that fails, naming the element.
struct Scan {
  const char* name;
  const char* domain;
};
template <class... Checks> void check_on_device(cudaStream_t stream, const Checks&... checks) {
  constexpr int count = sizeof...(Checks);
  DeviceBuffer<unsigned long long> slots(count, stream);
  cuda_check(cudaMemsetAsync(slots.get(), 0xff, count * sizeof(unsigned long long), stream), "cudaMemsetAsync");
  int at = 0;
  auto launch = [&](const auto& item) {
    const auto& [view, bad, what] = item;
    const index_t n = view.rows * view.cols;
    if (n > 0) {
      scan_kernel<<<blocks_for(n), block_threads, 0, stream>>>(view, bad, slots.get() + at);
      check_launch("scan_kernel");
    }
    ++at;
  };
  (launch(checks), ...);
  unsigned long long found[count];
  cuda_check(cudaMemcpyAsync(found, slots.get(), sizeof found, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "value check (cudaStreamSynchronize)");
  at = 0;
  auto report = [&](const auto& item) {
    const auto& [view, bad, what] = item;
    const unsigned long long e = found[at++];
    if (e == ULLONG_MAX) return;
    const index_t i = index_t(e) / view.cols, j = index_t(e) % view.cols;
    using V = std::remove_const_t<std::remove_reference_t<decltype(*view.p)>>;
    V value{};
    cuda_check(cudaMemcpy(&value, view.p + i * view.rs + j * view.cs, sizeof(V), cudaMemcpyDeviceToHost), "cudaMemcpy");
    throw Error(Errc::value_out_of_range, what.name,
                "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is " + std::to_string(double(value)) + "; " +
                    what.name + " must hold " + what.domain);
  };
  (report(checks), ...);
}
template <class T, class Bad> struct Check {
  Strided<const T> view;
  Bad bad;
  Scan what;
};
template <class T, class Bad> Check<T, Bad> check(MatrixView<const T> v, Bad bad, const char* name, const char* domain) {
  return {strided(v), bad, {name, domain}};
}

// Device memory or not: A decides (an empty A, with no data, goes by `required`); every other
// operand must agree.
bool on_device(std::initializer_list<std::pair<const void*, const char*>> operands, bool required) {
  const auto& [a, a_name] = *operands.begin();
  const bool device = a ? cuda_detail::is_device_pointer(a) : required;
  if (!device && required)
    throw Error(Errc::invalid_argument, a_name, "is host memory; the CUDA backend takes device memory (or use Backend::cpu)");
  for (const auto& [p, name] : operands)
    if (p && cuda_detail::is_device_pointer(p) != device)
      throw Error(Errc::invalid_argument, name,
                  std::string(device ? "is host memory but " : "is device memory but ") + a_name + " is " +
                      (device ? "device" : "host") + " memory: every operand must live in the same place");
  return device;
}

// ---- log-plus -------------------------------------------------------------------------------

// W = G ⊙ F, 0 where there are no terms; direct[i·N + j] = 1 where F is too large for W, and then
// row_direct[i] = col_direct[j] = 1 (so that the finishing kernels skip the lines without any).
template <class T>
__global__ void weights(Strided<const T> c, Strided<const T> g, const T* row_max, const T* col_max, Sum* w,
                        unsigned char* direct, int* row_direct, int* col_direct) {
  const index_t n = c.rows * c.cols;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x) {
    const index_t i = e / c.cols, j = e % c.cols;
    Sum w_ij = 0, log_f = 0;
    unsigned char d = 0;
    switch (classify_weight(c(i, j), row_max[i], col_max[j], log_f)) {
      case WeightEntry::none: break;
      case WeightEntry::direct:
        d = 1;
        atomicOr(row_direct + i, 1);  // an or: the same result in any order
        atomicOr(col_direct + j, 1);
        break;
      case WeightEntry::weighted: w_ij = Sum(g(i, j)) * exp(log_f); break;
    }
    w[e] = w_ij;
    direct[e] = d;
  }
}

template <class T> __device__ Sum weight(Strided<const T> a, Strided<const T> b, Strided<const T> c, index_t i, index_t k, index_t j) {
  return direct_weight<T, Sum>(a(i, k), b(k, j), c(i, j));
}

// One block per row i: dA_ik = ea_ik·(W·E_Bᵀ)_ik + Σ over direct j (in order) of G_ij·P_ikj.
template <class T>
__global__ void __launch_bounds__(block_threads)
    finish_rows(Strided<const T> a, Strided<const T> b, Strided<const T> c, Strided<const T> g, Strided<const Sum> ea, const Sum* da,
                const unsigned char* direct, const int* row_direct, Strided<T> grad_a) {
  const index_t m = a.rows, k = a.cols, n = b.cols;
  for (index_t i = blockIdx.x; i < m; i += gridDim.x)
    for (index_t kk = threadIdx.x; kk < k; kk += blockDim.x) {
      Sum acc = ea(i, kk) * da[i * k + kk];
      if (row_direct[i])
        for (index_t j = 0; j < n; ++j)
        if (direct[i * n + j]) acc += Sum(g(i, j)) * weight(a, b, c, i, kk, j);
      grad_a(i, kk) = T(acc);
    }
}

// One block per column j: dB_kj = eb_kj·(E_Aᵀ·W)_kj + Σ over direct i (in order) of G_ij·P_ikj.
template <class T>
__global__ void __launch_bounds__(block_threads)
    finish_columns(Strided<const T> a, Strided<const T> b, Strided<const T> c, Strided<const T> g, Strided<const Sum> eb,
                   const Sum* db, const unsigned char* direct, const int* col_direct, Strided<T> grad_b) {
  const index_t m = a.rows, k = a.cols, n = b.cols;
  for (index_t j = blockIdx.x; j < n; j += gridDim.x)
    for (index_t kk = threadIdx.x; kk < k; kk += blockDim.x) {
      Sum acc = eb(kk, j) * db[kk * n + j];
      if (col_direct[j])
        for (index_t i = 0; i < m; ++i)
        if (direct[i * n + j]) acc += Sum(g(i, j)) * weight(a, b, c, i, kk, j);
      grad_b(kk, j) = T(acc);
    }
}

template <class T> __global__ void fill_zero(Strided<T> x) {
  const index_t n = x.rows * x.cols;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    x(e / x.cols, e % x.cols) = T(0);
}

// ---- selecting semirings --------------------------------------------------------------------

// The shares of G_ij that go to a and to b (ringmm/backward.hpp's table).
template <class S> __device__ void partials(element_t<S> x, element_t<S> y, Sum& to_a, Sum& to_b) {
  constexpr SemiringKind kind = S::kind;
  if constexpr (kind == SemiringKind::max_plus || kind == SemiringKind::min_plus) to_a = 1, to_b = 1;
  else if constexpr (kind == SemiringKind::max_times) to_a = Sum(y), to_b = Sum(x);
  else if constexpr (kind == SemiringKind::max_min) to_a = x <= y ? 1 : 0, to_b = x <= y ? 0 : 1;
  else to_a = x >= y ? 1 : 0, to_b = x >= y ? 0 : 1;  // min-max
}

// One block per row i: dA_ik = Σ over j with K*_ij = k (in order) of G_ij·∂/∂a.
template <class S>
__global__ void __launch_bounds__(block_threads)
    argmax_rows(Strided<const element_t<S>> a, Strided<const element_t<S>> b, Strided<const std::int32_t> ks,
                Strided<const element_t<S>> g, Strided<element_t<S>> grad_a) {
  const index_t m = a.rows, k = a.cols, n = b.cols;
  for (index_t i = blockIdx.x; i < m; i += gridDim.x)
    for (index_t kk = threadIdx.x; kk < k; kk += blockDim.x) {
      Sum acc = 0;
      for (index_t j = 0; j < n; ++j)
        if (ks(i, j) == kk) {
          Sum to_a, to_b;
          partials<S>(a(i, kk), b(kk, j), to_a, to_b);
          acc += __dmul_rn(Sum(g(i, j)), to_a);  // never fused into an FMA: the CPU rounds the product
        }
      grad_a(i, kk) = element_t<S>(acc);
    }
}

// One block per column j: dB_kj = Σ over i with K*_ij = k (in order) of G_ij·∂/∂b.
template <class S>
__global__ void __launch_bounds__(block_threads)
    argmax_columns(Strided<const element_t<S>> a, Strided<const element_t<S>> b, Strided<const std::int32_t> ks,
                   Strided<const element_t<S>> g, Strided<element_t<S>> grad_b) {
  const index_t m = a.rows, k = a.cols, n = b.cols;
  for (index_t j = blockIdx.x; j < n; j += gridDim.x)
    for (index_t kk = threadIdx.x; kk < k; kk += blockDim.x) {
      Sum acc = 0;
      for (index_t i = 0; i < m; ++i)
        if (ks(i, j) == kk) {
          Sum to_a, to_b;
          partials<S>(a(i, kk), b(kk, j), to_a, to_b);
          acc += __dmul_rn(Sum(g(i, j)), to_b);
        }
      grad_b(kk, j) = element_t<S>(acc);
    }
}

}  // namespace

template <class T>
bool log_plus_backward_cuda(const Context& ctx, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c,
                            MatrixView<const T> grad_c, MatrixView<T> grad_a, MatrixView<T> grad_b, bool required) {
  if (!on_device({{a.data, "A"}, {b.data, "B"}, {c.data, "C"}, {grad_c.data, "dC"}, {grad_a.data, "dA"}, {grad_b.data, "dB"}},
                 required))
    return false;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  if (!ctx.trust_inputs)
    check_on_device(stream, check(a, NotLog{}, "A", "finite values or −∞"), check(b, NotLog{}, "B", "finite values or −∞"),
                    check(c, NotLog{}, "C", "finite values or −∞ (the forward product)"),
                    check(grad_c, NotFinite{}, "dC", "finite values"));
  const index_t m = a.rows, k = a.cols, n = b.cols;
  if (m == 0 || k == 0 || n == 0) {  // no terms: every gradient is 0
    if (m * k > 0) fill_zero<T><<<blocks_for(m * k), block_threads, 0, stream>>>(strided(grad_a));
    if (k * n > 0) fill_zero<T><<<blocks_for(k * n), block_threads, 0, stream>>>(strided(grad_b));
    check_launch("fill_zero");
    return true;
  }
  DeviceBuffer<T> row_max(static_cast<std::size_t>(m), stream), col_max(static_cast<std::size_t>(n), stream);
  DeviceBuffer<Sum> ea(std::size_t(m * k), stream), eb(std::size_t(k * n), stream), w(std::size_t(m * n), stream),
      da(std::size_t(m * k), stream), db(std::size_t(k * n), stream);
  DeviceBuffer<unsigned char> direct(std::size_t(m * n), stream);
  DeviceBuffer<int> row_direct(static_cast<std::size_t>(m), stream), col_direct(static_cast<std::size_t>(n), stream);
  cuda_check(cudaMemsetAsync(row_direct.get(), 0, std::size_t(m) * sizeof(int), stream), "cudaMemsetAsync");
  cuda_check(cudaMemsetAsync(col_direct.get(), 0, std::size_t(n) * sizeof(int), stream), "cudaMemsetAsync");
  // The forward product's maxima and factors, in f64 and laid out like their operands: E_A (M×K)
  // from A's rows, E_B (K×N) from B's columns, the rows of Bᵀ.
  namespace lp = cuda_detail::log_plus_gpu;
  const Strided<const Sum> fa = lp::shift_rows<T, Sum, Sum>(strided(a), 0, 1, row_max.get(), ea.get(), stream);
  const Strided<const Sum> fb = lp::transposed(lp::shift_rows<T, Sum, Sum>(lp::transposed(strided(b)), 0, 1, col_max.get(), eb.get(), stream));
  weights<T><<<blocks_for(m * n), block_threads, 0, stream>>>(strided(c), strided(grad_c), row_max.get(), col_max.get(),
                                                               w.get(), direct.get(), row_direct.get(), col_direct.get());
  check_launch("weights");
  Context cuda = ctx;
  cuda.backend = Backend::cuda;
  const Strided<const Sum> wv{w.get(), m, n, n, 1};
  lp::factor_gemm<Sum>(cuda, Problem<PlusTimes<Sum>>{wv, lp::transposed(fb), {da.get(), m, k, k, 1}, Sum(1), Sum(0)}, stream);
  lp::factor_gemm<Sum>(cuda, Problem<PlusTimes<Sum>>{lp::transposed(fa), wv, {db.get(), k, n, n, 1}, Sum(1), Sum(0)}, stream);
  finish_rows<T><<<lines_for(m), block_threads, 0, stream>>>(strided(a), strided(b), strided(c), strided(grad_c), fa,
                                                             da.get(), direct.get(), row_direct.get(), strided(grad_a));
  check_launch("finish_rows");
  finish_columns<T><<<lines_for(n), block_threads, 0, stream>>>(strided(a), strided(b), strided(c), strided(grad_c), fb,
                                                                db.get(), direct.get(), col_direct.get(), strided(grad_b));
  check_launch("finish_columns");
  return true;
}

template <class S>
bool argmax_backward_cuda(const Context& ctx, MatrixView<const element_t<S>> a, MatrixView<const element_t<S>> b,
                          MatrixView<const std::int32_t> k_star, MatrixView<const element_t<S>> grad_c,
                          MatrixView<element_t<S>> grad_a, MatrixView<element_t<S>> grad_b, bool required) {
  if (!on_device({{a.data, "A"}, {b.data, "B"}, {k_star.data, "K*"}, {grad_c.data, "dC"}, {grad_a.data, "dA"}, {grad_b.data, "dB"}},
                 required))
    return false;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const index_t m = a.rows, k = a.cols, n = b.cols;
  check_on_device(stream, check(k_star, OutsideIndexes{k}, "K*", "indexes in [-1, K)"));
  if (m * k > 0) {
    argmax_rows<S><<<lines_for(m), block_threads, 0, stream>>>(strided(a), strided(b), strided(k_star), strided(grad_c),
                                                               strided(grad_a));
    check_launch("argmax_rows");
  }
  if (k * n > 0) {
    argmax_columns<S><<<lines_for(n), block_threads, 0, stream>>>(strided(a), strided(b), strided(k_star), strided(grad_c),
                                                                  strided(grad_b));
    check_launch("argmax_columns");
  }
  return true;
}

template bool log_plus_backward_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>,
                                            MatrixView<const float>, MatrixView<const float>, MatrixView<float>,
                                            MatrixView<float>, bool);
template bool log_plus_backward_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                             MatrixView<const double>, MatrixView<const double>, MatrixView<double>,
                                             MatrixView<double>, bool);
template auto instantiate_argmax_backward_cuda(builtin_semirings);

}  // namespace ringmm::detail
