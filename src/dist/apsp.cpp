// Distributed all-pairs shortest paths: the rounds of ringmm::apsp's blocked Floyd–Warshall
// (src/graph/apsp.cpp, whose top comment explains them) with the Floyd–Warshall block equal to the
// layout's block nb. Round r (vertices K = [r·nb, r·nb + kb)) involves process row r mod pr
// (which holds the rows K) and process column r mod pc (the columns K, the whole column strip):
//   1. per sub-block Ks of K (graph::host_sub_block vertices): the owner of the diagonal block
//      D[K,K] closes D[Ks,Ks] (graph::host_diagonal) and broadcasts the snapshot and D[Ks,K] down
//      its process column, whose ranks relax their rows of the strip (graph::host_relax) and
//      update it, D[:,K] ⊕= D[:,Ks]·D[Ks,K] (local argmax product, then the successor gather);
//   2. the process column broadcasts its strip and NEXT[:,K] along the process rows, the process
//      row broadcasts the row panel D[K,:] down the process columns, and every rank updates its
//      blocks, D ⊕= D[:,K]·D[K,:], then gathers successors from NEXT[:,K].
// Every entry sees the same operations in the same order as in one process (the argmax products
// are exact per entry, ties going to the smallest k and to C), so the results are equal bit for bit.
// Rounds depend on each other through the panels, so transfers are plain blocking broadcasts.
#include <algorithm>
#include <climits>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "apsp_checks.hpp"
#include "fw_host.hpp"
#include "mpi_util.hpp"
#include "ringmm/dist.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::dist {

namespace {

// Blocking broadcast of `count` elements over `comm`, counted by detail::count_broadcast.
void broadcast(void* buffer, index_t count, MPI_Datatype type, std::size_t bytes, int root, MPI_Comm comm, Stats& stats) {
  int size = 1, me = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  if (size == 1 || count == 0) return;  // count is the same on every rank of comm
  MPI_Bcast(buffer, int(count), type, root, comm);
  detail::count_broadcast(stats, std::uint64_t(count) * bytes, size, me == root);
}

// The backend of the local products, alike on every rank: automatic is the CPU (the local
// matrices live on the host, and a device would see them copied in and out every round).
Backend agree_on_backend(const Grid& grid, Backend requested) {
  if (requested != Backend::cuda) return Backend::cpu;
  int has_device = int(cuda_device_available());
  MPI_Allreduce(MPI_IN_PLACE, &has_device, 1, MPI_INT, MPI_MIN, grid.comm());
  if (!has_device)
    throw Error(Errc::backend_unavailable, "backend", "cuda requested but at least one rank has no CUDA device");
  return Backend::cuda;
}

// NaN and −∞ weights: the first in row-major order, found on every rank, is thrown everywhere.
template <class T> void refuse_bad_weights(const Grid& grid, const DistMatrix<T>& dist) {
  const MatrixView<const T> local = dist.local();
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  for (index_t li = 0; li < local.rows; ++li)
    for (index_t lj = 0; lj < local.cols; ++lj)
      if (graph::refused_weight(local(li, lj))) {
        const index_t i = dist.row_map().to_global(dist.grid_row(), li), j = dist.col_map().to_global(dist.grid_col(), lj);
        first = std::min<std::int64_t>(first, i * dist.cols() + j);
        break;  // later entries of this local row lie further along the same global row
      }
  detail::refuse_first_weight<T>(grid, dist, first, [&](index_t i, index_t j) {
    return dist.local()(dist.row_map().to_local(i), dist.col_map().to_local(j));
  });
}

// The vertices whose diagonal left 0 (they lie on a cycle of the wrong sign), from every rank.
template <class T> void check_cycles(const Grid& grid, const DistMatrix<T>& dist, bool longest) {
  std::vector<std::int64_t> mine;
  const MatrixView<const T> local = dist.local();
  for (index_t li = 0; li < local.rows; ++li) {
    const index_t v = dist.row_map().to_global(dist.grid_row(), li);
    if (dist.col_map().owner(v) == dist.grid_col() && !(local(li, dist.col_map().to_local(v)) == T(0))) mine.push_back(v);
  }
  detail::report_cycles(grid, mine, longest);
}

template <class S> class DistFloydWarshall {
  using T = element_t<S>;

 public:
  DistFloydWarshall(const Grid& grid, DistMatrix<T>& dist, DistMatrix<std::int32_t>& next, const Context& ctx, bool longest)
      : grid_(grid), dist_(dist), next_(next), ctx_(ctx), longest_(longest), elem_(sizeof(T)) {
    // A round's panels are at most min(block, n) wide: a block past n (a layout of one block)
    // must not size them.
    const index_t nb = std::min(dist.block(), dist.rows()), rows = dist.local_rows(), cols = dist.local_cols();
    const index_t sub = std::min(nb, graph::host_sub_block);
    snapshot_.resize(std::size_t(std::max<index_t>(1, sub * sub)));
    sub_row_.resize(std::size_t(std::max<index_t>(1, sub * nb)));
    col_.resize(std::size_t(std::max<index_t>(1, rows * nb)));
    next_col_.resize(col_.size());
    k_col_.assign(col_.size(), -1);
    row_.resize(std::size_t(std::max<index_t>(1, nb * cols)));
    k_all_.assign(std::size_t(std::max<index_t>(1, rows * cols)), -1);
  }

  void round(index_t r, Stats& stats) {
    const index_t n = dist_.rows();
    const auto [k0, kb, row_owner, col_owner, in_row, in_col, row0, col0] = detail::round_place(grid_, dist_, r);
    const index_t rows = dist_.local_rows(), cols = dist_.local_cols();
    const MatrixView<T> d = dist_.local();
    const MatrixView<std::int32_t> nx = next_.local();

    // 1. the column strip, on its process column, sub-block by sub-block.
    if (in_col)
      for (index_t s0 = 0; s0 < kb; s0 += graph::host_sub_block) {
        const index_t sb = std::min(graph::host_sub_block, kb - s0);
        if (in_row) {
          graph::host_diagonal(&d(row0 + s0, col0 + s0), d.ld, &nx(row0 + s0, col0 + s0), nx.ld, sb, longest_, snapshot_.data());
          for (index_t q = 0; q < sb; ++q)
            std::memcpy(&sub_row_[std::size_t(q * kb)], &d(row0 + s0 + q, col0), std::size_t(kb) * sizeof(T));
        }
        broadcast(snapshot_.data(), sb * sb, elem_.get(), sizeof(T), row_owner, grid_.col_comm(), stats);
        if (rows > 0)
          graph::host_relax(&d(0, col0 + s0), d.ld, &nx(0, col0 + s0), nx.ld, rows, sb, snapshot_.data(), longest_,
                            in_row ? row0 + s0 : -1, ctx_.cpu_threads);
        if (sb == kb) continue;
        broadcast(sub_row_.data(), sb * kb, elem_.get(), sizeof(T), row_owner, grid_.col_comm(), stats);
        if (rows == 0) continue;
        copy_column_panel(col0 + s0, sb);
        gemm_argmax<S>(ctx_, Op::N, MatrixView<const T>{col_.data(), rows, sb, sb, Layout::row_major}, Op::N,
                       MatrixView<const T>{sub_row_.data(), sb, kb, kb, Layout::row_major},
                       MatrixView<T>{&d(0, col0), rows, kb, d.ld, Layout::row_major},
                       MatrixView<std::int32_t>{k_col_.data(), rows, kb, kb, Layout::row_major}, S::one(), S::one());
        graph::host_gather(&nx(0, col0), nx.ld, k_col_.data(), kb, rows, kb, next_col_.data(), sb, ctx_.cpu_threads);
      }
    if (kb == n) return;  // one block: the strip was the whole matrix
    if (in_col) copy_column_panel(col0, kb);  // as step 1 left it: the panels of step 2

    // 2. the panels along the grid, then every rank's blocks: D ⊕= D[:,K]·D[K,:].
    broadcast(col_.data(), rows * kb, elem_.get(), sizeof(T), col_owner, grid_.row_comm(), stats);
    broadcast(next_col_.data(), rows * kb, MPI_INT32_T, sizeof(std::int32_t), col_owner, grid_.row_comm(), stats);
    if (in_row && cols > 0) std::memcpy(row_.data(), &d(row0, 0), std::size_t(kb * cols) * sizeof(T));  // ld = cols
    broadcast(row_.data(), kb * cols, elem_.get(), sizeof(T), row_owner, grid_.col_comm(), stats);
    if (rows > 0 && cols > 0) {
      gemm_argmax<S>(ctx_, Op::N, MatrixView<const T>{col_.data(), rows, kb, kb, Layout::row_major}, Op::N,
                     MatrixView<const T>{row_.data(), kb, cols, cols, Layout::row_major}, d,
                     MatrixView<std::int32_t>{k_all_.data(), rows, cols, cols, Layout::row_major}, S::one(), S::one());
      graph::host_gather(nx.data, nx.ld, k_all_.data(), cols, rows, cols, next_col_.data(), kb, ctx_.cpu_threads);
    }
  }

 private:
  // This rank's rows of D[:,c0 … c0+kb) and NEXT[:,c0 … c0+kb) into the panel buffers (row stride kb).
  void copy_column_panel(index_t col0, index_t kb) {
    const MatrixView<const T> d = dist_.local();
    const MatrixView<const std::int32_t> nx = next_.local();
    for (index_t i = 0; i < d.rows; ++i) {
      std::memcpy(&col_[std::size_t(i * kb)], &d(i, col0), std::size_t(kb) * sizeof(T));
      std::memcpy(&next_col_[std::size_t(i * kb)], &nx(i, col0), std::size_t(kb) * sizeof(std::int32_t));
    }
  }

  const Grid& grid_;
  DistMatrix<T>& dist_;
  DistMatrix<std::int32_t>& next_;
  const Context& ctx_;
  const bool longest_;
  detail::ElementType elem_;
  // The snapshot of a sub-block (sb × sb), D[Ks,K] (sb × kb), the column panel (rows × kb), the row
  // panel (kb × cols).
  std::vector<T> snapshot_, sub_row_, col_, row_;
  std::vector<std::int32_t> next_col_, k_col_, k_all_;  // NEXT[:,K] and the argmax winners (−1 between uses)
};

}  // namespace

template <class T>
Stats apsp(const Grid& grid, DistMatrix<T>& dist, DistMatrix<std::int32_t>& next, const ApspOptions& apsp,
           const Options& options) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "apsp takes float or double weights");
  detail::check_apsp<T>(grid, "dist::apsp", dist, next, apsp, options);
  detail::check_count(dist.row_map(), dist.col_map(), "dist");  // a panel or part is one MPI message
  const index_t n = dist.rows(), nb = dist.block();

  Stats stats;
  stats.backend = agree_on_backend(grid, options.context.backend);
  stats.updates = double(n) * double(n) * double(n);
  refuse_bad_weights(grid, dist);

  const MatrixView<T> d = dist.local();
  const MatrixView<std::int32_t> nx = next.local();
  for (index_t li = 0; li < d.rows; ++li)
    for (index_t lj = 0; lj < d.cols; ++lj)
      graph::initial_entry(dist.row_map().to_global(grid.row(), li), dist.col_map().to_global(grid.col(), lj),
                           apsp.longest, d(li, lj), nx(li, lj));
  Context ctx = options.context;
  ctx.backend = stats.backend;
  auto solve = [&](auto semiring) {
    DistFloydWarshall<decltype(semiring)> solver(grid, dist, next, ctx, apsp.longest);
    for (index_t r = 0; r * nb < n; ++r) solver.round(r, stats);
  };
  apsp.longest ? solve(MaxPlus<T>{}) : solve(MinPlus<T>{});
  stats.steps = (n + nb - 1) / nb;
  check_cycles(grid, dist, apsp.longest);
  return stats;
}

template Stats apsp<float>(const Grid&, DistMatrix<float>&, DistMatrix<std::int32_t>&, const ApspOptions&, const Options&);
template Stats apsp<double>(const Grid&, DistMatrix<double>&, DistMatrix<std::int32_t>&, const ApspOptions&, const Options&);

}  // namespace ringmm::dist
