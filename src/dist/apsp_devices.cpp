// Distributed all-pairs shortest paths on device-resident matrices: the rounds of apsp.cpp (whose
// top comment explains them) with every step on the ranks' GPUs and the panels moved by NCCL.
// The column strip's steps are the single-GPU solver's kernels (src/graph/apsp_cuda.cu: the
// diagonal sub-block in shared memory, the relax, the gather), with its 128-vertex sub-blocks, and
// the products are gemm_argmax calls on device pointers, exact per entry however they are split;
// so the results equal ringmm::apsp on one GPU with the same block, bit for bit.
//
// Everything of one round runs in order on the grid's compute stream, NCCL broadcasts included
// (a round needs the previous one's panels, so there is nothing to overlap); the host waits only
// for the weight check before the first round and for the cycle check after the last.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "apsp_checks.hpp"
#include "device_ops.hpp"
#include "device_support.hpp"
#include "fw_buffers.hpp"
#include "ringmm/dist_device.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::dist {

namespace {

using detail::check_cuda;
using detail::check_nccl;
using detail::DeviceBuffer;
using detail::LocalAxis;

LocalAxis axis(const BlockCyclic& map, int me) { return {map.nb, map.procs, me}; }

template <class S> class DeviceFloydWarshall {
  using T = element_t<S>;

 public:
  DeviceFloydWarshall(const Grid& grid, Grid::DeviceState& dev, DeviceDistMatrix<T>& dist,
                      DeviceDistMatrix<std::int32_t>& next, const Context& ctx, bool longest)
      : grid_(grid), dev_(dev), dist_(dist), next_(next), longest_(longest), stream_(dev.compute_stream) {
    // A round's panels are at most min(block, n) wide.
    const index_t nb = std::min(dist.block(), dist.rows()), rows = dist.local_rows(), cols = dist.local_cols();
    const index_t sub = std::min(nb, graph::cuda_sub_block);
    std::optional<Error> problem;
    try {
      snapshot_.emplace(std::size_t(sub * sub) * sizeof(T), "dist::apsp");
      sub_row_.emplace(std::size_t(sub * nb) * sizeof(T), "dist::apsp");
      col_.emplace(std::size_t(rows * nb) * sizeof(T), "dist::apsp");
      next_col_.emplace(std::size_t(rows * nb) * sizeof(std::int32_t), "dist::apsp");
      k_col_.emplace(std::size_t(rows * nb) * sizeof(std::int32_t), "dist::apsp");
      row_.emplace(std::size_t(nb * cols) * sizeof(T), "dist::apsp");
      k_all_.emplace(std::size_t(rows * cols) * sizeof(std::int32_t), "dist::apsp");
    } catch (const Error& e) {
      problem = e;
    }
    throw_if_any(grid.comm(), problem);
    // The winners start at −1, and each gather leaves them so.
    check_cuda(cudaMemsetAsync(k_col_->as<std::int32_t>(), 0xff, std::size_t(rows * nb) * sizeof(std::int32_t), stream_),
               "cudaMemsetAsync");
    check_cuda(cudaMemsetAsync(k_all_->as<std::int32_t>(), 0xff, std::size_t(rows * cols) * sizeof(std::int32_t), stream_),
               "cudaMemsetAsync");
    ctx_ = ctx;
    ctx_.backend = Backend::cuda;
    ctx_.cuda_stream = stream_;
  }

  void round(index_t r, Stats& stats) {
    const index_t n = dist_.rows();
    const auto [k0, kb, row_owner, col_owner, in_row, in_col, row0, col0] = detail::round_place(grid_, dist_, r);
    const index_t rows = dist_.local_rows(), cols = dist_.local_cols();
    const MatrixView<T> d = dist_.local();
    const MatrixView<std::int32_t> nx = next_.local();
    T* const snapshot = snapshot_->as<T>();
    T* const sub_row = sub_row_->as<T>();

    // 1. the column strip, on its process column, sub-block by sub-block.
    if (in_col)
      for (index_t s0 = 0; s0 < kb; s0 += graph::cuda_sub_block) {
        const index_t sb = std::min(graph::cuda_sub_block, kb - s0);
        if (in_row) {
          graph::cuda_diagonal(&d(row0 + s0, col0 + s0), d.ld, &nx(row0 + s0, col0 + s0), nx.ld, sb, longest_, snapshot,
                               stream_);
          copy_block(sub_row, kb, &d(row0 + s0, col0), d.ld, sb, kb);  // D[Ks, K]
        }
        broadcast(snapshot, std::size_t(sb * sb) * sizeof(T), row_owner, dev_.col, grid_.rows(), grid_.row(), stats);
        if (rows > 0)
          graph::cuda_relax(&d(0, col0 + s0), d.ld, &nx(0, col0 + s0), nx.ld, rows, sb, snapshot, longest_,
                            in_row ? row0 + s0 : -1, stream_);
        if (sb == kb) continue;
        broadcast(sub_row, std::size_t(sb * kb) * sizeof(T), row_owner, dev_.col, grid_.rows(), grid_.row(), stats);
        if (rows == 0) continue;
        copy_column_panel(col0 + s0, sb);
        gemm_argmax<S>(ctx_, Op::N, MatrixView<const T>{col_->as<T>(), rows, sb, sb, Layout::row_major}, Op::N,
                       MatrixView<const T>{sub_row, sb, kb, kb, Layout::row_major},
                       MatrixView<T>{&d(0, col0), rows, kb, d.ld, Layout::row_major},
                       MatrixView<std::int32_t>{k_col_->as<std::int32_t>(), rows, kb, kb, Layout::row_major}, S::one(),
                       S::one());
        graph::cuda_gather(&nx(0, col0), nx.ld, k_col_->as<std::int32_t>(), kb, rows, kb,
                           next_col_->as<std::int32_t>(), sb, stream_);
      }
    if (kb == n) return;  // one block: the strip was the whole matrix
    if (in_col) copy_column_panel(col0, kb);  // as step 1 left it: the panels of step 2
    if (in_row) copy_block(row_->as<T>(), cols, &d(row0, 0), d.ld, kb, cols);

    // 2. the panels along the grid (grouped: the row and the column broadcasts cannot wait on
    // each other), then every rank's blocks: D ⊕= D[:,K]·D[K,:].
    check_nccl(detail::nccl().group_start(), "ncclGroupStart");
    broadcast(col_->as<T>(), std::size_t(rows * kb) * sizeof(T), col_owner, dev_.row, grid_.cols(), grid_.col(), stats);
    broadcast(next_col_->as<std::int32_t>(), std::size_t(rows * kb) * sizeof(std::int32_t), col_owner, dev_.row,
              grid_.cols(), grid_.col(), stats);
    broadcast(row_->as<T>(), std::size_t(kb * cols) * sizeof(T), row_owner, dev_.col, grid_.rows(), grid_.row(), stats);
    check_nccl(detail::nccl().group_end(), "ncclGroupEnd");
    if (rows > 0 && cols > 0) {
      gemm_argmax<S>(ctx_, Op::N, MatrixView<const T>{col_->as<T>(), rows, kb, kb, Layout::row_major}, Op::N,
                     MatrixView<const T>{row_->as<T>(), kb, cols, cols, Layout::row_major}, d,
                     MatrixView<std::int32_t>{k_all_->as<std::int32_t>(), rows, cols, cols, Layout::row_major}, S::one(),
                     S::one());
      graph::cuda_gather(nx.data, nx.ld, k_all_->as<std::int32_t>(), cols, rows, cols, next_col_->as<std::int32_t>(), kb,
                         stream_);
    }
  }

 private:
  // A broadcast of `bytes` over a group of `size` ranks (none when alone), counted as the host
  // solver counts its own.
  void broadcast(void* buffer, std::size_t bytes, int root, ncclComm_t comm, int size, int me, Stats& stats) {
    if (size == 1 || bytes == 0) return;  // bytes is the same on every rank of the group
    check_nccl(detail::nccl().broadcast(buffer, buffer, bytes, ncclUint8, root, comm, stream_), "ncclBroadcast");
    detail::count_broadcast(stats, bytes, size, me == root);
  }

  // rows × cols elements from `src` (row stride ld_src) to `dst` (row stride ld_dst).
  template <class E> void copy_block(E* dst, index_t ld_dst, const E* src, index_t ld_src, index_t rows, index_t cols) {
    if (rows == 0 || cols == 0) return;
    check_cuda(cudaMemcpy2DAsync(dst, std::size_t(ld_dst) * sizeof(E), src, std::size_t(ld_src) * sizeof(E),
                                 std::size_t(cols) * sizeof(E), std::size_t(rows), cudaMemcpyDeviceToDevice, stream_),
               "dist::apsp panel copy");
  }

  // This rank's rows of D[:, c0 … c0+width) and NEXT[:, c0 … c0+width) into the panel buffers
  // (row stride width).
  void copy_column_panel(index_t c0, index_t width) {
    const MatrixView<T> d = dist_.local();
    const MatrixView<std::int32_t> nx = next_.local();
    copy_block(col_->as<T>(), width, d.data + c0, d.ld, d.rows, width);
    copy_block(next_col_->as<std::int32_t>(), width, nx.data + c0, nx.ld, nx.rows, width);
  }

  const Grid& grid_;
  Grid::DeviceState& dev_;
  DeviceDistMatrix<T>& dist_;
  DeviceDistMatrix<std::int32_t>& next_;
  const bool longest_;
  cudaStream_t stream_;
  Context ctx_;
  // The snapshot of a sub-block (sb × sb), D[Ks,K] (sb × kb), the column panel and its successors
  // (rows × kb), the row panel (kb × cols), and the argmax winners of the strip's and of the full
  // products (−1 between uses).
  std::optional<DeviceBuffer> snapshot_, sub_row_, col_, next_col_, k_col_, row_, k_all_;
};

}  // namespace

template <class T>
Stats apsp(const Grid& grid, DeviceDistMatrix<T>& dist, DeviceDistMatrix<std::int32_t>& next, const ApspOptions& apsp,
           const Options& options) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "apsp takes float or double weights");
  Grid::DeviceState& dev = detail::device_state(grid);
  std::optional<Error> problem;
  if (options.context.backend == Backend::cpu)
    problem = Error(Errc::invalid_argument, "backend",
                    "device-resident matrices are solved on their devices (backend automatic or cuda), not on the cpu");
  else if (dist.device() != dev.device)
    problem = Error(Errc::invalid_argument, "dist", "matrix lives on device " + std::to_string(dist.device()) +
                                                        ", but this rank of the grid runs on device " +
                                                        std::to_string(dev.device));
  else if (next.device() != dev.device)
    problem = Error(Errc::invalid_argument, "next", "matrix lives on device " + std::to_string(next.device()) +
                                                        ", but this rank of the grid runs on device " +
                                                        std::to_string(dev.device));
  detail::check_apsp<T>(grid, "dist::apsp", dist, next, apsp, options, problem);
  const index_t n = dist.rows(), nb = dist.block();

  Stats stats;
  stats.backend = Backend::cuda;
  stats.updates = double(n) * double(n) * double(n);
  const LocalAxis rows = axis(dist.row_map(), grid.row()), cols = axis(dist.col_map(), grid.col());
  const MatrixView<T> d = dist.local();
  const MatrixView<std::int32_t> nx = next.local();
  const std::int64_t first = detail::device_first_refused_weight<T>(d.data, d.ld, d.rows, d.cols, rows, cols, n,
                                                                    dev.compute_stream);
  detail::refuse_first_weight<T>(grid, dist, first < 0 ? std::numeric_limits<std::int64_t>::max() : first,
                                 [&](index_t i, index_t j) {
                                   T w{};
                                   check_cuda(cudaMemcpy(&w, d.data + dist.local_offset(i, j), sizeof(T),
                                                         cudaMemcpyDeviceToHost),
                                              "cudaMemcpy");
                                   return w;
                                 });
  detail::device_initial_entries<T>(d.data, d.ld, nx.data, nx.ld, d.rows, d.cols, rows, cols, apsp.longest,
                                    dev.compute_stream);
  // Nothing of another stream may be in flight while NCCL kernels of two communicators run.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto solve = [&](auto semiring) {
    DeviceFloydWarshall<decltype(semiring)> solver(grid, dev, dist, next, options.context, apsp.longest);
    for (index_t r = 0; r * nb < n; ++r) solver.round(r, stats);
  };
  apsp.longest ? solve(MaxPlus<T>{}) : solve(MinPlus<T>{});
  stats.steps = (n + nb - 1) / nb;
  detail::report_cycles(grid, detail::device_cycle_vertices<T>(d.data, d.ld, d.rows, rows, cols, dev.compute_stream),
                        apsp.longest);
  return stats;
}

template Stats apsp<float>(const Grid&, DeviceDistMatrix<float>&, DeviceDistMatrix<std::int32_t>&, const ApspOptions&,
                           const Options&);
template Stats apsp<double>(const Grid&, DeviceDistMatrix<double>&, DeviceDistMatrix<std::int32_t>&, const ApspOptions&,
                            const Options&);

}  // namespace ringmm::dist
