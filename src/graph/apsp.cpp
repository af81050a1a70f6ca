// All-pairs shortest paths (ringmm/apsp.hpp): blocked Floyd–Warshall over min-plus (max-plus for
// longest paths) with the successor matrix carried through argmax products.
//
// Round K (vertices k0 … k0+b−1), on dist D and successors NEXT:
//   1. phase 1: Floyd–Warshall inside the diagonal block D[K,K] (a small kernel / loop), so that
//      D[K,K] becomes its closure D*; NEXT[i][j] ← NEXT[i][k] on each strict improvement.
//   2. column panel: D[:,K] ← D[:,K] ⊕ D[:,K]·D*   (gemm_argmax, β = 1̄, n×b·b×b)
//   3. everything:   D ← D ⊕ D[:,K]·D[K,:]         (gemm_argmax, β = 1̄, ONE n×b·b×n product)
//      with the column panel of step 2 and the row panel as phase 1 left it.
// Step 3 also performs the classic row-panel update (phase 2 for D[K,:]), because the rows K of
// the updated column panel are D*·D* = D*: for i ∈ K it computes min over k of D*[i][k] + D[k][j].
// For every other i it computes min over k2 of (min over k1 of D[i][k1] + D*[k1][k2]) + D[k2][j],
// which is every path through K. Entries of the column panel and of D[K,K] are offered values
// they already hold (D·D*·D* = D·D*, D*·D* = D*: the closure is idempotent when no cycle of the
// wrong sign exists), and ties keep C and its index, so revisiting them changes nothing. The
// winner k2 of an entry (i, j) also satisfies D_new[k2][j] = D_old[k2][j] (else a smaller term
// through k2 would exist), so the route through k2 stays consistent.
//
// Successors: every product writes, per entry, the local index c of the winning k (or −1 where
// C ⊕ kept its value: β = 1̄ keeps the incoming index, which is −1 because the gather resets it).
// The gather then sets NEXT[i][j] ← NEXT[i][k0+c], read from a copy of NEXT's column panel taken
// after step 2: the first hop towards k is the first hop towards j. That copy is final for this
// round (entries of D[:,K] do not improve in step 3), so the gather is one cheap O(n²) pass.
//
// The driver below is shared by the CPU (loops + the CPU argmax kernel) and CUDA (kernels in
// apsp_cuda.cu + the CUDA argmax kernel on device pointers, no host round trip per round). The
// distributed solver (src/dist/apsp.cpp) keeps this sequence on a block-cyclic matrix: it runs the
// host steps of fw_host.hpp on its blocks and broadcasts the panels along the process grid between
// the local argmax products.
#include "ringmm/apsp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include <omp.h>

#include "fw_buffers.hpp"
#include "fw_host.hpp"
#include "ringmm/gemm.hpp"

#if defined(RINGMM_APSP_CUDA)
#include <cuda_runtime.h>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#endif

namespace ringmm {

namespace {

using graph::FwBuffers;
using graph::improves;

// ---- the CPU steps ---------------------------------------------------------------------------

int threads_of(const Context& ctx) { return ctx.cpu_threads > 0 ? ctx.cpu_threads : 0; }

// Weights → D, NEXT (graph::initial_entry); NaN and −∞ weights are refused before any change.
template <class T> void host_prepare(const FwBuffers<T>& b) {
  for (index_t i = 0; i < b.n; ++i)
    for (index_t j = 0; j < b.n; ++j)
      if (const T w = b.dist[i * b.ld_dist + j]; graph::refused_weight(w)) throw graph::refused_weight_error(i, j, w);
  for (index_t i = 0; i < b.n; ++i)
    for (index_t j = 0; j < b.n; ++j) graph::initial_entry(i, j, b.longest, b.dist[i * b.ld_dist + j], b.next[i * b.ld_next + j]);
}

template <class T> void host_phase1(const FwBuffers<T>& b, index_t k0, index_t kb) {
  T* d = b.dist + k0 * b.ld_dist + k0;
  std::int32_t* nx = b.next + k0 * b.ld_next + k0;
  for (index_t k = 0; k < kb; ++k)
    for (index_t i = 0; i < kb; ++i) {
      const T dik = d[i * b.ld_dist + k];
      const std::int32_t via = nx[i * b.ld_next + k];
      for (index_t j = 0; j < kb; ++j) {
        const T term = dik + d[k * b.ld_dist + j];
        if (improves(term, d[i * b.ld_dist + j], b.longest)) {
          d[i * b.ld_dist + j] = term;
          nx[i * b.ld_next + j] = via;
        }
      }
    }
}

template <class T> void host_copy_panels(const FwBuffers<T>& b, index_t k0, index_t kb, bool row_too, int threads) {
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads()) if (b.n > 256)
  for (index_t i = 0; i < b.n; ++i)
    for (index_t c = 0; c < kb; ++c) {
      b.col[i * b.block + c] = b.dist[i * b.ld_dist + k0 + c];
      b.next_col[i * b.block + c] = b.next[i * b.ld_next + k0 + c];
    }
  if (row_too)
    for (index_t r = 0; r < kb; ++r) std::copy_n(b.dist + (k0 + r) * b.ld_dist, b.n, b.row + r * b.n);
}

// ---- the driver --------------------------------------------------------------------------------

template <class S, class Steps>
void blocked_floyd_warshall(const Context& gemm_ctx, const FwBuffers<element_t<S>>& b, const Steps& steps);

// The diagonal block at k0 as a problem of its own, for closing a large block with blocked
// Floyd–Warshall on sub-blocks of `sub_block` vertices; `scratch` holds the sub-problem's panels
// (sized for kb). Its successors are global vertices already, as everything in NEXT is.
template <class T> FwBuffers<T> diagonal_subproblem(const FwBuffers<T>& b, index_t k0, index_t kb, index_t sub_block,
                                                    FwBuffers<T> scratch) {
  scratch.n = kb, scratch.block = sub_block, scratch.longest = b.longest;
  scratch.dist = b.dist + k0 * b.ld_dist + k0, scratch.ld_dist = b.ld_dist;
  scratch.next = b.next + k0 * b.ld_next + k0, scratch.ld_next = b.ld_next;
  return scratch;
}

// The steps of one round on the CPU. Diagonal blocks above host_phase1_max vertices are closed on
// sub-blocks through the driver, as CUDA does (so the CPU tests cover that path too).
constexpr index_t host_phase1_max = 64;
template <class S> struct HostSteps {
  using T = element_t<S>;
  int threads;
  const Context* gemm_ctx;
  void phase1(const FwBuffers<T>& b, index_t k0, index_t kb) const {
    if (kb <= host_phase1_max) {
      host_phase1(b, k0, kb);
      return;
    }
    const std::size_t panel = std::size_t(kb * host_phase1_max);
    std::vector<T> col(panel), row(panel);
    std::vector<std::int32_t> next_col(panel), k_col(panel, -1), k_all(std::size_t(kb * kb), -1);
    FwBuffers<T> scratch;
    scratch.col = col.data(), scratch.row = row.data(), scratch.next_col = next_col.data();
    scratch.k_col = k_col.data(), scratch.k_all = k_all.data();
    blocked_floyd_warshall<S>(*gemm_ctx, diagonal_subproblem(b, k0, kb, host_phase1_max, scratch), *this);
  }
  void copy_panels(const FwBuffers<T>& b, index_t k0, index_t kb, bool row_too) const {
    host_copy_panels(b, k0, kb, row_too, threads);
  }
  void gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
              const std::int32_t* next_col, index_t ld_col) const {
    graph::host_gather(next, ld_next, k, ld_k, rows, cols, next_col, ld_col, threads);
  }
};

// The rounds of blocked Floyd–Warshall (the comment at the top of this file). k_col and k_all must
// hold −1 on entry; they do again on return.
template <class S, class Steps>
void blocked_floyd_warshall(const Context& gemm_ctx, const FwBuffers<element_t<S>>& b, const Steps& steps) {
  using T = element_t<S>;
  const index_t n = b.n;
  const MatrixView<T> dist{b.dist, n, n, b.ld_dist, Layout::row_major};
  const MatrixView<std::int32_t> k_all{b.k_all, n, n, n, Layout::row_major};
  for (index_t k0 = 0; k0 < n; k0 += b.block) {
    const index_t kb = std::min(b.block, n - k0);
    steps.phase1(b, k0, kb);
    if (kb == n) break;  // one block: phase 1 was the whole closure
    // 2. column panel, from a copy (C may not overlap A or B).
    steps.copy_panels(b, k0, kb, false);
    const MatrixView<const T> col{b.col, n, kb, b.block, Layout::row_major};
    const MatrixView<const T> closure{b.col + k0 * b.block, kb, kb, b.block, Layout::row_major};
    gemm_argmax<S>(gemm_ctx, Op::N, col, Op::N, closure, MatrixView<T>{b.dist + k0, n, kb, b.ld_dist, Layout::row_major},
                   MatrixView<std::int32_t>{b.k_col, n, kb, b.block, Layout::row_major}, S::one(), S::one());
    steps.gather(b.next + k0, b.ld_next, b.k_col, b.block, n, kb, b.next_col, b.block);
    // 3. everything, through the updated column panel and the row panel.
    steps.copy_panels(b, k0, kb, true);
    const MatrixView<const T> row{b.row, kb, n, n, Layout::row_major};
    gemm_argmax<S>(gemm_ctx, Op::N, col, Op::N, row, dist, k_all, S::one(), S::one());
    steps.gather(b.next, b.ld_next, b.k_all, n, n, n, b.next_col, b.block);
  }
}

#if defined(RINGMM_APSP_CUDA)
// The steps of one round on CUDA. Diagonal blocks larger than the phase-1 kernel takes are closed
// on sub-blocks of cuda_phase1_max through the driver, with the device scratch `inner` (sized for
// the largest block).
template <class S> struct CudaSteps {
  using T = element_t<S>;
  void* stream;
  const Context* gemm_ctx;
  FwBuffers<T> inner;
  void phase1(const FwBuffers<T>& b, index_t k0, index_t kb) const {
    if (kb <= graph::cuda_phase1_max) {
      graph::cuda_phase1(b, k0, kb, stream);
      return;
    }
    blocked_floyd_warshall<S>(*gemm_ctx, diagonal_subproblem(b, k0, kb, graph::cuda_phase1_max, inner), *this);
  }
  void copy_panels(const FwBuffers<T>& b, index_t k0, index_t kb, bool row_too) const {
    graph::cuda_copy_panels(b, k0, kb, row_too, stream);
  }
  void gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
              const std::int32_t* next_col, index_t ld_col) const {
    graph::cuda_gather(next, ld_next, k, ld_k, rows, cols, next_col, ld_col, stream);
  }
};
#endif

// Vertices whose diagonal left 0: they lie on a cycle of the wrong sign.
template <class T> void check_cycles(const std::vector<T>& diagonal, bool longest) {
  std::vector<index_t> bad;
  for (std::size_t v = 0; v < diagonal.size(); ++v)
    if (!(diagonal[v] == T(0))) bad.push_back(index_t(v));
  if (!bad.empty()) throw CycleError(longest, std::move(bad));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T> void validate_square(const MatrixView<T>& m, const char* name) {
  if (m.rows != m.cols)
    throw Error(Errc::dimension_mismatch, name, "must be square, got " + std::to_string(m.rows) + "x" + std::to_string(m.cols));
  if (m.rows > std::numeric_limits<std::int32_t>::max())
    throw Error(Errc::unsupported, name, std::to_string(m.rows) + " vertices do not fit the int32 successor matrix");
  if (m.layout != Layout::row_major) throw Error(Errc::unsupported, name, "must be row-major");
  if (m.rows > 0 && m.data == nullptr) throw Error(Errc::null_pointer, name, "null data");
  if (m.rows > 0 && m.ld < m.cols)
    throw Error(Errc::invalid_leading_dim, name, "leading dimension " + std::to_string(m.ld) + " < " + std::to_string(m.cols));
}

template <class S> double solve_on_host(const Context& ctx, FwBuffers<element_t<S>> b) {
  using T = element_t<S>;
  host_prepare(b);
  const auto start = std::chrono::steady_clock::now();
  const auto panel = std::size_t(b.n) * std::size_t(b.block);
  std::vector<T> col(panel), row(panel);
  std::vector<std::int32_t> next_col(panel), k_col(panel, -1), k_all(std::size_t(b.n) * std::size_t(b.n), -1);
  b.col = col.data(), b.row = row.data(), b.next_col = next_col.data(), b.k_col = k_col.data(), b.k_all = k_all.data();
  Context gemm_ctx = ctx;
  gemm_ctx.backend = Backend::cpu;
  blocked_floyd_warshall<S>(gemm_ctx, b, HostSteps<S>{threads_of(ctx), &gemm_ctx});
  const double seconds = seconds_since(start);
  std::vector<T> diagonal(std::size_t(b.n));
  for (index_t v = 0; v < b.n; ++v) diagonal[v] = b.dist[v * b.ld_dist + v];
  check_cycles(diagonal, b.longest);
  return seconds;
}

#if defined(RINGMM_APSP_CUDA)
// A plain device allocation for the lifetime of one solve.
template <class T> struct DeviceArray {
  T* ptr = nullptr;
  explicit DeviceArray(std::size_t count) {
    if (count) cuda_detail::cuda_check(cudaMalloc(&ptr, count * sizeof(T)), "cudaMalloc (apsp)");
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(ptr); }
};

// dist and next on the device (the caller's pointers, or copies of host ones).
template <class S> double solve_on_device(const Context& ctx, FwBuffers<element_t<S>> b) {
  using T = element_t<S>;
  using cuda_detail::cuda_check;
  const bool on_device = cuda_detail::is_device_pointer(b.dist) && cuda_detail::is_device_pointer(b.next);
  if (!on_device && (cuda_detail::is_device_pointer(b.dist) || cuda_detail::is_device_pointer(b.next)))
    throw Error(Errc::unsupported, "next", "dist and next must both be host or both be device memory");
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const std::size_t n = std::size_t(b.n), panel = n * std::size_t(b.block);
  T* host_dist = b.dist;
  std::int32_t* host_next = b.next;
  const index_t host_ld_dist = b.ld_dist, host_ld_next = b.ld_next;
  DeviceArray<T> dist(on_device ? 0 : n * n);
  DeviceArray<std::int32_t> next(on_device ? 0 : n * n);
  if (!on_device) {
    cuda_check(cudaMemcpy2DAsync(dist.ptr, n * sizeof(T), host_dist, host_ld_dist * sizeof(T), n * sizeof(T), n,
                                 cudaMemcpyHostToDevice, stream),
               "cudaMemcpy2DAsync (apsp weights)");
    b.dist = dist.ptr, b.ld_dist = index_t(n), b.next = next.ptr, b.ld_next = index_t(n);
  }
  DeviceArray<T> col(panel), row(panel);
  DeviceArray<std::int32_t> next_col(panel), k_col(panel), k_all(n * n);
  DeviceArray<unsigned long long> bad(1);
  b.col = col.ptr, b.row = row.ptr, b.next_col = next_col.ptr, b.k_col = k_col.ptr, b.k_all = k_all.ptr;
  // Scratch of the sub-blocks when the block is larger than the phase-1 kernel takes.
  const bool split = b.block > graph::cuda_phase1_max;
  const std::size_t block = std::size_t(b.block), inner_panel = split ? block * std::size_t(graph::cuda_phase1_max) : 0;
  DeviceArray<T> inner_col(inner_panel), inner_row(inner_panel);
  DeviceArray<std::int32_t> inner_next_col(inner_panel), inner_k_col(inner_panel), inner_k_all(split ? block * block : 0);
  FwBuffers<T> inner;
  inner.col = inner_col.ptr, inner.row = inner_row.ptr, inner.next_col = inner_next_col.ptr;
  inner.k_col = inner_k_col.ptr, inner.k_all = inner_k_all.ptr;
  cuda_check(cudaMemsetAsync(k_col.ptr, 0xff, panel * sizeof(std::int32_t), stream), "cudaMemsetAsync");  // −1
  cuda_check(cudaMemsetAsync(k_all.ptr, 0xff, n * n * sizeof(std::int32_t), stream), "cudaMemsetAsync");
  if (split) {
    cuda_check(cudaMemsetAsync(inner_k_col.ptr, 0xff, inner_panel * sizeof(std::int32_t), stream), "cudaMemsetAsync");
    cuda_check(cudaMemsetAsync(inner_k_all.ptr, 0xff, block * block * sizeof(std::int32_t), stream), "cudaMemsetAsync");
  }
  cuda_check(cudaMemsetAsync(bad.ptr, 0xff, sizeof(unsigned long long), stream), "cudaMemsetAsync");
  graph::cuda_prepare(b, bad.ptr, stream);
  unsigned long long first_bad = 0;
  cuda_check(cudaMemcpyAsync(&first_bad, bad.ptr, sizeof first_bad, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp prepare)");
  if (first_bad != ~0ull) {
    const index_t i = index_t(first_bad / n), j = index_t(first_bad % n);
    T w{};
    cuda_check(cudaMemcpy(&w, on_device ? b.dist + i * b.ld_dist + j : host_dist + i * host_ld_dist + j, sizeof(T),
                          on_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost),
               "cudaMemcpy");
    throw graph::refused_weight_error(i, j, w);
  }

  const auto start = std::chrono::steady_clock::now();
  Context gemm_ctx = ctx;
  gemm_ctx.backend = Backend::cuda;
  gemm_ctx.cuda_stream = stream;
  blocked_floyd_warshall<S>(gemm_ctx, b, CudaSteps<S>{stream, &gemm_ctx, inner});
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp)");
  const double seconds = seconds_since(start);

  std::vector<T> diagonal(n);
  cuda_check(cudaMemcpy2DAsync(diagonal.data(), sizeof(T), b.dist, (b.ld_dist + 1) * sizeof(T), sizeof(T), n,
                               cudaMemcpyDeviceToHost, stream),
             "cudaMemcpy2DAsync (apsp diagonal)");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp diagonal)");
  check_cycles(diagonal, b.longest);  // before any result reaches the caller's host buffers
  if (!on_device) {
    cuda_check(cudaMemcpy2DAsync(host_dist, host_ld_dist * sizeof(T), b.dist, n * sizeof(T), n * sizeof(T), n,
                                 cudaMemcpyDeviceToHost, stream),
               "cudaMemcpy2DAsync (apsp distances)");
    cuda_check(cudaMemcpy2DAsync(host_next, host_ld_next * sizeof(std::int32_t), b.next, n * sizeof(std::int32_t),
                                 n * sizeof(std::int32_t), n, cudaMemcpyDeviceToHost, stream),
               "cudaMemcpy2DAsync (apsp successors)");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp download)");
  }
  return seconds;
}
#endif

constexpr index_t cuda_max_block = 1024;  // the phase-1 kernel stages a block's row and column in shared memory

template <class T>
double solve(const Context& ctx, MatrixView<T> dist, MatrixView<std::int32_t> next, const ApspOptions& options) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "apsp takes float or double weights");
  validate_square(dist, "dist");
  validate_square(next, "next");
  if (next.rows != dist.rows)
    throw Error(Errc::dimension_mismatch, "next", "is " + std::to_string(next.rows) + "x" + std::to_string(next.cols) +
                                                      " but dist is " + std::to_string(dist.rows) + "x" + std::to_string(dist.cols));
  if (options.block < 0) throw Error(Errc::invalid_argument, "block", "negative block size " + std::to_string(options.block));
  const Backend backend = ctx.resolved_backend();
  if (backend == Backend::cuda && options.block > cuda_max_block)
    throw Error(Errc::invalid_argument, "block", "block size " + std::to_string(options.block) +
                                                     " is larger than the CUDA backend's maximum " + std::to_string(cuda_max_block));
  FwBuffers<T> b;
  b.n = dist.rows;
  b.block = std::max<index_t>(1, std::min(options.block > 0 ? options.block : apsp_default_block(backend), b.n));
  b.longest = options.longest;
  b.dist = dist.data, b.ld_dist = dist.ld, b.next = next.data, b.ld_next = next.ld;
  if (b.n == 0) return 0;
  auto run = [&](auto semiring) -> double {
    using S = decltype(semiring);
    if (backend == Backend::cuda) {
#if defined(RINGMM_APSP_CUDA)
      return solve_on_device<S>(ctx, b);
#else
      throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
#endif
    }
    return solve_on_host<S>(ctx, b);
  };
  return options.longest ? run(MaxPlus<T>{}) : run(MinPlus<T>{});
}

std::string cycle_message(bool longest, const std::vector<index_t>& vertices) {
  constexpr std::size_t shown = 20;
  std::string list;
  for (std::size_t v = 0; v < std::min(shown, vertices.size()); ++v) list += (v ? ", " : "") + std::to_string(vertices[v]);
  if (vertices.size() > shown) list += " and " + std::to_string(vertices.size() - shown) + " more";
  return std::string("the graph has a ") + (longest ? "positive" : "negative") + " cycle, so " +
         (longest ? "longest" : "shortest") + " paths are unbounded; " + std::to_string(vertices.size()) +
         (vertices.size() == 1 ? " vertex lies" : " vertices lie") + " on one (0-based): " + list;
}

}  // namespace

namespace graph {

template <class T>
void close_diagonal_on_host(const Context& ctx, T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next,
                            index_t kb, bool longest) {
  FwBuffers<T> b;
  b.n = b.block = kb, b.longest = longest;
  b.dist = dist, b.ld_dist = ld_dist, b.next = next, b.ld_next = ld_next;
  Context gemm_ctx = ctx;
  gemm_ctx.backend = Backend::cpu;
  // The single-process round's phase 1 on a problem that is this block alone: the same steps.
  auto close = [&](auto semiring) { HostSteps<decltype(semiring)>{threads_of(ctx), &gemm_ctx}.phase1(b, 0, kb); };
  longest ? close(MaxPlus<T>{}) : close(MinPlus<T>{});
}

void host_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, int threads) {
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads()) if (rows > 256)
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) {
      std::int32_t& c = k[i * ld_k + j];
      if (c >= 0) {
        next[i * ld_next + j] = next_col[i * ld_col + c];
        c = -1;
      }
    }
}

template void close_diagonal_on_host<float>(const Context&, float*, index_t, std::int32_t*, index_t, index_t, bool);
template void close_diagonal_on_host<double>(const Context&, double*, index_t, std::int32_t*, index_t, index_t, bool);

}  // namespace graph

CycleError::CycleError(bool longest, std::vector<index_t> vertices)
    : Error(Errc::value_out_of_range, longest ? "positive cycle" : "negative cycle", cycle_message(longest, vertices)),
      vertices_(std::move(vertices)) {}

// CUDA: fewer rounds mean fewer whole-matrix argmax products, each with its per-call packing, sum
// and tile buffers and C and K* traffic, for a column-panel product that stays ≈ b/n of the work.
// Measured on the H100 at 16384 vertices: 1.14 s at b = 256, 0.84 s at 512, 0.69 s at 1024 (and at
// 8192 the sweep 128…1024 kept improving; bench/results/apsp-h100-2026-11-24-*.json).
index_t apsp_default_block(Backend backend) { return backend == Backend::cuda ? 1024 : 128; }

template <class T>
double apsp_in_place(const Context& ctx, MatrixView<T> dist, MatrixView<std::int32_t> next, const ApspOptions& options) {
  return solve(ctx, dist, next, options);
}

template <class T> ApspResult<T> apsp(const Context& ctx, MatrixView<const T> weights, const ApspOptions& options) {
  if (weights.rows != weights.cols)
    throw Error(Errc::dimension_mismatch, "weights", "an adjacency matrix must be square, got " +
                                                         std::to_string(weights.rows) + "x" + std::to_string(weights.cols));
  if (weights.rows > 0 && weights.data == nullptr) throw Error(Errc::null_pointer, "weights", "null data");
  ApspResult<T> r;
  r.vertices = weights.rows;
  const auto count = detail::checked_mul(weights.rows, weights.cols);
  if (!count) throw Error(Errc::invalid_argument, "weights", "size overflows");
  r.dist.resize(std::size_t(*count));
  r.next.resize(std::size_t(*count));
  for (index_t i = 0; i < r.vertices; ++i)
    for (index_t j = 0; j < r.vertices; ++j) r.dist[std::size_t(i * r.vertices + j)] = weights(i, j);
  r.backend = ctx.resolved_backend();
  r.block = std::max<index_t>(1, std::min(options.block > 0 ? options.block : apsp_default_block(r.backend), r.vertices));
  r.solve_seconds = apsp_in_place<T>(ctx, row_major(r.dist.data(), r.vertices, r.vertices),
                                     row_major(r.next.data(), r.vertices, r.vertices), options);
  return r;
}

std::vector<index_t> route(MatrixView<const std::int32_t> next, index_t i, index_t j) {
  const index_t n = next.rows;
  if (next.rows != next.cols)
    throw Error(Errc::dimension_mismatch, "next", "a successor matrix must be square, got " + std::to_string(next.rows) +
                                                      "x" + std::to_string(next.cols));
  for (const auto& [v, name] : {std::pair{i, "from"}, std::pair{j, "to"}})
    if (v < 0 || v >= n)
      throw Error(Errc::invalid_argument, name,
                  "vertex " + std::to_string(v) + " is out of range 0.." + std::to_string(n - 1) +
                      (n == 0 ? " (the graph has no vertices)" : ""));
  if (next(i, j) < 0) return {};
  std::vector<index_t> path{i};
  for (index_t v = i; v != j;) {
    const std::int32_t hop = next(v, j);
    if (hop < 0 || hop >= n || index_t(path.size()) > n)
      throw Error(Errc::format_error, "next", "the successor matrix does not lead from " + std::to_string(i) + " to " +
                                                  std::to_string(j) + " (stuck at vertex " + std::to_string(v) + ")");
    path.push_back(hop);
    v = hop;
  }
  return path;
}

template ApspResult<float> apsp<float>(const Context&, MatrixView<const float>, const ApspOptions&);
template ApspResult<double> apsp<double>(const Context&, MatrixView<const double>, const ApspOptions&);
template double apsp_in_place<float>(const Context&, MatrixView<float>, MatrixView<std::int32_t>, const ApspOptions&);
template double apsp_in_place<double>(const Context&, MatrixView<double>, MatrixView<std::int32_t>, const ApspOptions&);

}  // namespace ringmm
