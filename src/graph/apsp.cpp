// All-pairs shortest paths (ringmm/apsp.hpp): blocked Floyd–Warshall over min-plus (max-plus for
// longest paths) with the successor matrix carried through argmax products.
//
// Round K (vertices k0 … k0+b−1), on dist D and successors NEXT:
//   1. the column strip D[:,K] in the order of classic Floyd–Warshall over k ∈ K, in sub-blocks Ks
//      of at most s vertices (s ≤ b):
//      a. diagonal: classic Floyd–Warshall inside D[Ks,Ks], keeping each row k as it stood at its
//         own iteration k (the snapshot R: paths k → j through vertices of Ks before k);
//      b. relax: every other row, sequentially over k ∈ Ks: D[i][j] ← D[i][k] + R[k][j] for j ∈ Ks
//         on a strict improvement, NEXT[i][j] ← NEXT[i][k];
//      c. the rest of the strip through Ks: D[:,K] ⊕= D[:,Ks]·D[Ks,K] (gemm_argmax, β = 1̄).
//   2. everything: D ⊕= D[:,K]·D[K,:] (gemm_argmax, β = 1̄, ONE n×b·b×n product) with the strip of
//      step 1 and the row panel D[K,:] as step 1 left it (only its columns K changed).
// Step 2 also completes the row panel (for i ∈ K the strip's rows hold the closure D* of D[K,K],
// so it offers min over k of D*[i][k] + D[k][j]), and for every other i every path through K. Entries of the strip are offered values they
// already hold, and ties keep C and its index, so revisiting them changes nothing.
//
// Why the strip follows classic order: a product with the whole closure of K breaks ties between
// equal paths by the smallest k, and with zero-weight cycles the path through that k may come back
// through i itself: every successor is then on some shortest path, yet the successors of one
// target form a cycle. Classic Floyd–Warshall takes a successor only on a strict improvement over
// the paths through earlier vertices, which keeps each target's successors a tree; steps a and b
// reproduce its choices for the strip exactly, and the products of steps c and 2, which offer
// paths through a whole (sub-)block against entries that already hold every path through it, then
// choose consistently (tested on graphs with zero-weight cycles and negative edges, walking every
// route, in tests/graph/apsp_cases.inc).
//
// Successors: every product writes, per entry, the local index c of the winning k (or −1 where
// C ⊕ kept its value: β = 1̄ keeps the incoming index, which is −1 because the gather resets it).
// The gather then sets NEXT[i][j] ← NEXT[i][k0+c], read from a copy of NEXT's columns taken before
// the product: the first hop towards k is the first hop towards j.
//
// The driver below is shared by the CPU (loops + the CPU argmax kernel) and CUDA (kernels in
// apsp_cuda.cu + the CUDA argmax kernel on device pointers, no host round trip per round). The
// distributed solver (src/dist/apsp.cpp) keeps this sequence on a block-cyclic matrix: it runs the
// host steps of fw_host.hpp on its blocks and broadcasts the panels along the process grid between
// the local argmax products.
#include "ringmm/apsp.hpp"

#include <algorithm>
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
#include "ringmm/cuda/host_staging.hpp"
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

template <class T> void host_copy_columns(const FwBuffers<T>& b, index_t c0, index_t width, int threads) {
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads()) if (b.n > 256)
  for (index_t i = 0; i < b.n; ++i)
    for (index_t c = 0; c < width; ++c) {
      b.col[i * b.block + c] = b.dist[i * b.ld_dist + c0 + c];
      b.next_col[i * b.block + c] = b.next[i * b.ld_next + c0 + c];
    }
}

template <class T> void host_copy_rows(const FwBuffers<T>& b, index_t r0, index_t rows, index_t c0, index_t cols) {
  for (index_t r = 0; r < rows; ++r) std::copy_n(b.dist + (r0 + r) * b.ld_dist + c0, cols, b.row + r * cols);
}

// ---- the driver --------------------------------------------------------------------------------

// The steps of one round on the CPU: fw_host.hpp's loops, shared with the distributed solver.
struct HostSteps {
  int threads;
  template <class T> void diagonal(const FwBuffers<T>& b, index_t s0, index_t sb) const {
    graph::host_diagonal(b.dist + s0 * b.ld_dist + s0, b.ld_dist, b.next + s0 * b.ld_next + s0, b.ld_next, sb, b.longest,
                         b.snapshot);
  }
  template <class T> void relax(const FwBuffers<T>& b, index_t s0, index_t sb) const {
    graph::host_relax(b.dist + s0, b.ld_dist, b.next + s0, b.ld_next, b.n, sb, b.snapshot, b.longest, s0, threads);
  }
  template <class T> void copy_columns(const FwBuffers<T>& b, index_t c0, index_t width) const {
    host_copy_columns(b, c0, width, threads);
  }
  template <class T> void copy_rows(const FwBuffers<T>& b, index_t r0, index_t rows, index_t c0, index_t cols) const {
    host_copy_rows(b, r0, rows, c0, cols);
  }
  void gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
              const std::int32_t* next_col, index_t ld_col) const {
    graph::host_gather(next, ld_next, k, ld_k, rows, cols, next_col, ld_col, threads);
  }
};

// One argmax product D[:, c0 … c0+cols) ⊕= col · row into the view `c`, then the successor gather
// from next_col: the winner's first hop. `col` is b.col (n × width, row stride b.block), `row` is
// b.row (width × cols, row stride cols), `k` the −1-filled winners (row stride ld_k).
template <class S, class Steps>
void relax_through(const Context& gemm_ctx, const FwBuffers<element_t<S>>& b, const Steps& steps, index_t width,
                   index_t c0, index_t cols, std::int32_t* k, index_t ld_k) {
  using T = element_t<S>;
  const MatrixView<const T> col{b.col, b.n, width, b.block, Layout::row_major};
  const MatrixView<const T> row{b.row, width, cols, cols, Layout::row_major};
  gemm_argmax<S>(gemm_ctx, Op::N, col, Op::N, row, MatrixView<T>{b.dist + c0, b.n, cols, b.ld_dist, Layout::row_major},
                 MatrixView<std::int32_t>{k, b.n, cols, ld_k, Layout::row_major}, S::one(), S::one());
  steps.gather(b.next + c0, b.ld_next, k, ld_k, b.n, cols, b.next_col, b.block);
}

// The rounds of blocked Floyd–Warshall (the comment at the top of this file). k_col and k_all must
// hold −1 on entry; they do again on return.
template <class S, class Steps>
void blocked_floyd_warshall(const Context& gemm_ctx, const FwBuffers<element_t<S>>& b, const Steps& steps) {
  const index_t n = b.n;
  for (index_t k0 = 0; k0 < n; k0 += b.block) {
    const index_t kb = std::min(b.block, n - k0);
    // 1. the column strip, sub-block by sub-block.
    for (index_t s0 = k0; s0 < k0 + kb; s0 += b.sub_block) {
      const index_t sb = std::min(b.sub_block, k0 + kb - s0);
      steps.diagonal(b, s0, sb);
      steps.relax(b, s0, sb);
      if (sb == kb) continue;
      steps.copy_columns(b, s0, sb);
      steps.copy_rows(b, s0, sb, k0, kb);
      relax_through<S>(gemm_ctx, b, steps, sb, k0, kb, b.k_col, b.block);
    }
    if (kb == n) break;  // one block: the strip was the whole matrix
    // 2. everything, through the strip and the row panel.
    steps.copy_columns(b, k0, kb);
    steps.copy_rows(b, k0, kb, 0, n);
    relax_through<S>(gemm_ctx, b, steps, kb, 0, n, b.k_all, n);
  }
}

#if defined(RINGMM_APSP_CUDA)
// The steps of one round on CUDA: the kernels of apsp_cuda.cu on `stream`.
struct CudaSteps {
  void* stream;
  template <class T> void diagonal(const FwBuffers<T>& b, index_t s0, index_t sb) const {
    graph::cuda_diagonal(b.dist + s0 * b.ld_dist + s0, b.ld_dist, b.next + s0 * b.ld_next + s0, b.ld_next, sb, b.longest,
                         b.snapshot, stream);
  }
  template <class T> void relax(const FwBuffers<T>& b, index_t s0, index_t sb) const {
    graph::cuda_relax(b.dist + s0, b.ld_dist, b.next + s0, b.ld_next, b.n, sb, b.snapshot, b.longest, s0, stream);
  }
  template <class T> void copy_columns(const FwBuffers<T>& b, index_t c0, index_t width) const {
    graph::cuda_copy_columns(b, c0, width, stream);
  }
  template <class T> void copy_rows(const FwBuffers<T>& b, index_t r0, index_t rows, index_t c0, index_t cols) const {
    graph::cuda_copy_rows(b, r0, rows, c0, cols, stream);
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

template <class S> void solve_on_host(const Context& ctx, FwBuffers<element_t<S>> b) {
  using T = element_t<S>;
  host_prepare(b);
  const auto panel = std::size_t(b.n) * std::size_t(b.block);
  std::vector<T> col(panel), row(panel);
  std::vector<std::int32_t> next_col(panel), k_col(panel, -1), k_all(std::size_t(b.n) * std::size_t(b.n), -1);
  b.sub_block = std::min(b.block, graph::host_sub_block);
  std::vector<T> snapshot(std::size_t(b.sub_block * b.sub_block));
  b.col = col.data(), b.row = row.data(), b.next_col = next_col.data(), b.k_col = k_col.data(), b.k_all = k_all.data();
  b.snapshot = snapshot.data();
  Context gemm_ctx = ctx;
  gemm_ctx.backend = Backend::cpu;
  blocked_floyd_warshall<S>(gemm_ctx, b, HostSteps{threads_of(ctx)});
  std::vector<T> diagonal(std::size_t(b.n));
  for (index_t v = 0; v < b.n; ++v) diagonal[v] = b.dist[v * b.ld_dist + v];
  check_cycles(diagonal, b.longest);
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
template <class S> void solve_on_device(const Context& ctx, FwBuffers<element_t<S>> b) {
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
    cuda_detail::upload_lines(dist.ptr, n * sizeof(T), host_dist, host_ld_dist * sizeof(T), n * sizeof(T), n, stream);
    b.dist = dist.ptr, b.ld_dist = index_t(n), b.next = next.ptr, b.ld_next = index_t(n);
  }
  DeviceArray<T> col(panel), row(panel);
  DeviceArray<std::int32_t> next_col(panel), k_col(panel), k_all(n * n);
  DeviceArray<unsigned long long> bad(1);
  b.col = col.ptr, b.row = row.ptr, b.next_col = next_col.ptr, b.k_col = k_col.ptr, b.k_all = k_all.ptr;
  b.sub_block = std::min(b.block, graph::cuda_sub_block);
  DeviceArray<T> snapshot(std::size_t(b.sub_block * b.sub_block));
  b.snapshot = snapshot.ptr;
  cuda_check(cudaMemsetAsync(k_col.ptr, 0xff, panel * sizeof(std::int32_t), stream), "cudaMemsetAsync");  // −1
  cuda_check(cudaMemsetAsync(k_all.ptr, 0xff, n * n * sizeof(std::int32_t), stream), "cudaMemsetAsync");
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

  Context gemm_ctx = ctx;
  gemm_ctx.backend = Backend::cuda;
  gemm_ctx.cuda_stream = stream;
  blocked_floyd_warshall<S>(gemm_ctx, b, CudaSteps{stream});
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp)");

  std::vector<T> diagonal(n);
  cuda_check(cudaMemcpy2DAsync(diagonal.data(), sizeof(T), b.dist, (b.ld_dist + 1) * sizeof(T), sizeof(T), n,
                               cudaMemcpyDeviceToHost, stream),
             "cudaMemcpy2DAsync (apsp diagonal)");
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (apsp diagonal)");
  check_cycles(diagonal, b.longest);  // before any result reaches the caller's host buffers
  if (!on_device) {
    cuda_detail::download_lines(host_dist, host_ld_dist * sizeof(T), b.dist, n * sizeof(T), n * sizeof(T), n, stream);
    cuda_detail::download_lines(host_next, host_ld_next * sizeof(std::int32_t), b.next, n * sizeof(std::int32_t),
                                n * sizeof(std::int32_t), n, stream);
  }
}
#endif

template <class T>
void solve(const Context& ctx, MatrixView<T> dist, MatrixView<std::int32_t> next, const ApspOptions& options) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "apsp takes float or double weights");
  validate_square(dist, "dist");
  validate_square(next, "next");
  if (next.rows != dist.rows)
    throw Error(Errc::dimension_mismatch, "next", "is " + std::to_string(next.rows) + "x" + std::to_string(next.cols) +
                                                      " but dist is " + std::to_string(dist.rows) + "x" + std::to_string(dist.cols));
  if (options.block < 0) throw Error(Errc::invalid_argument, "block", "negative block size " + std::to_string(options.block));
  const Backend backend = ctx.resolved_backend();
  FwBuffers<T> b;
  b.n = dist.rows;
  b.block = std::max<index_t>(1, std::min(options.block > 0 ? options.block : apsp_default_block(backend), b.n));
  b.longest = options.longest;
  b.dist = dist.data, b.ld_dist = dist.ld, b.next = next.data, b.ld_next = next.ld;
  if (b.n == 0) return;
  auto run = [&](auto semiring) {
    using S = decltype(semiring);
    if (backend == Backend::cuda) {
#if defined(RINGMM_APSP_CUDA)
      solve_on_device<S>(ctx, b);
      return;
#else
      throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
#endif
    }
    solve_on_host<S>(ctx, b);
  };
  options.longest ? run(MaxPlus<T>{}) : run(MinPlus<T>{});
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
void host_relax(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t rows, index_t sb,
                const T* snapshot, bool longest, index_t skip, int threads) {
  // Branch-free selects over restrict pointers, with the direction fixed per loop, so that the
  // compiler vectorises the j loop.
  auto relax_row = [&](auto longest_path, T* __restrict d, std::int32_t* __restrict nx) {
    for (index_t k = 0; k < sb; ++k) {
      const T dik = d[k];
      const std::int32_t via = nx[k];
      const T* __restrict r = snapshot + k * sb;
      for (index_t j = 0; j < sb; ++j) {
        const T term = dik + r[j];
        const bool better = decltype(longest_path)::value ? term > d[j] : term < d[j];  // NaN never is
        d[j] = better ? term : d[j];
        nx[j] = better ? via : nx[j];
      }
    }
  };
#pragma omp parallel for num_threads(threads > 0 ? threads : omp_get_max_threads()) if (rows > 256)
  for (index_t i = 0; i < rows; ++i) {
    if (skip >= 0 && i >= skip && i < skip + sb) continue;
    if (longest) relax_row(std::true_type{}, dist + i * ld_dist, next + i * ld_next);
    else relax_row(std::false_type{}, dist + i * ld_dist, next + i * ld_next);
  }
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


template void host_relax<float>(float*, index_t, std::int32_t*, index_t, index_t, index_t, const float*, bool, index_t, int);
template void host_relax<double>(double*, index_t, std::int32_t*, index_t, index_t, index_t, const double*, bool, index_t, int);

}  // namespace graph

CycleError::CycleError(bool longest, std::vector<index_t> vertices)
    : Error(Errc::value_out_of_range, longest ? "positive cycle" : "negative cycle", cycle_message(longest, vertices)),
      vertices_(std::move(vertices)) {}

// CUDA: fewer rounds mean fewer whole-matrix argmax products, each with its per-call packing, sum
// and tile buffers and C and K* traffic, for a column-panel product that stays ≈ b/n of the work.
// Measured on the H100 at 16384 vertices: 1.14 s at b = 256, 0.84 s at 512, 0.69 s at 1024 (and at
// 8192 the sweep 128…1024 kept improving; lab/results/apsp-h100-2026-11-24-*.json).
index_t apsp_default_block(Backend backend) { return backend == Backend::cuda ? 1024 : 128; }

template <class T>
void apsp_in_place(const Context& ctx, MatrixView<T> dist, MatrixView<std::int32_t> next, const ApspOptions& options) {
  solve(ctx, dist, next, options);
}

template <class T> ApspResult<T> apsp(const Context& ctx, MatrixView<const T> weights, const ApspOptions& options) {
  if (weights.rows != weights.cols)
    throw Error(Errc::dimension_mismatch, "weights", "an adjacency matrix must be square, got " +
                                                         std::to_string(weights.rows) + "x" + std::to_string(weights.cols));
  if (weights.rows > 0 && weights.data == nullptr) throw Error(Errc::null_pointer, "weights", "null data");
  ApspResult<T> r;
  r.vertices = weights.rows;
  const auto count = checked_mul(weights.rows, weights.cols);
  if (!count) throw Error(Errc::invalid_argument, "weights", "size overflows");
  r.dist.resize(std::size_t(*count));
  r.next.resize(std::size_t(*count));
  for (index_t i = 0; i < r.vertices; ++i)
    for (index_t j = 0; j < r.vertices; ++j) r.dist[std::size_t(i * r.vertices + j)] = weights(i, j);
  r.backend = ctx.resolved_backend();
  r.block = std::max<index_t>(1, std::min(options.block > 0 ? options.block : apsp_default_block(r.backend), r.vertices));
  apsp_in_place<T>(ctx, row_major(r.dist.data(), r.vertices, r.vertices), row_major(r.next.data(), r.vertices, r.vertices),
                   options);
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
template void apsp_in_place<float>(const Context&, MatrixView<float>, MatrixView<std::int32_t>, const ApspOptions&);
template void apsp_in_place<double>(const Context&, MatrixView<double>, MatrixView<std::int32_t>, const ApspOptions&);

}  // namespace ringmm
