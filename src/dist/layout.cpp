// Distributed matrices: construction, scatter from and gather to one rank, transpose.
#include <cstring>
#include <string>
#include <vector>

#include "mpi_util.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/dist.hpp"

namespace ringmm::dist {

template <class T>
DistMatrix<T>::DistMatrix(const Grid& grid, index_t rows, index_t cols, index_t nb)
    : rows_(rows), cols_(cols), nb_(nb) {
  if (rows < 0 || cols < 0)
    throw Error(Errc::invalid_argument, "shape",
                "negative size " + std::to_string(rows) + "x" + std::to_string(cols));
  if (nb < 1) throw Error(Errc::invalid_argument, "block", "block size " + std::to_string(nb) + " must be >= 1");
  row_map_ = {rows, nb, grid.rows()};
  col_map_ = {cols, nb, grid.cols()};
  my_row_ = grid.row();
  my_col_ = grid.col();
  local_rows_ = row_map_.local_size(my_row_);
  local_cols_ = col_map_.local_size(my_col_);
  storage_.resize(std::size_t(std::max<index_t>(1, local_rows_ * ld())));
}

namespace {

// The parameters a layout collective must agree on, plus a local check of `m` against the grid.
template <class T>
void agree_on_layout(const Grid& grid, const DistMatrix<T>& m, int root, const std::string& call,
                     std::optional<Error> local_problem) {
  if (!local_problem && (m.grid_rows() != grid.rows() || m.grid_cols() != grid.cols()))
    local_problem = Error(Errc::invalid_argument, "grid",
                          "matrix was built for a " + std::to_string(m.grid_rows()) + "x" +
                              std::to_string(m.grid_cols()) + " grid, not this " + std::to_string(grid.rows()) +
                              "x" + std::to_string(grid.cols()) + " one");
  check_agreement(grid.comm(),
                  {{"rows", m.rows()},
                   {"cols", m.cols()},
                   {"block", m.block()},
                   {"type", detail::type_fingerprint<T>(), detail::type_name<T>()},
                   {"root", root}},
                  call);
  if (!local_problem && (root < 0 || root >= grid.size()))
    local_problem = Error(Errc::invalid_argument, "root", "rank " + std::to_string(root) + " is not in the grid");
  throw_if_any(grid.comm(), local_problem);
  detail::check_count(m.row_map(), m.col_map(), call);
}

template <class T> std::optional<Error> check_root_view(const MatrixView<T>& v, index_t rows, index_t cols) {
  try {
    ringmm::detail::validate_view(v, "global");
    if (v.rows != rows || v.cols != cols)
      throw Error(Errc::dimension_mismatch, "global",
                  "root's matrix is " + std::to_string(v.rows) + "x" + std::to_string(v.cols) +
                      " but the distributed one is " + std::to_string(rows) + "x" + std::to_string(cols));
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

// Visits the local (li, lj) ↔ global (gi, gj) pairs of process (prow, pcol)'s part, row-major.
template <class T, class F> void for_each_local(const DistMatrix<T>& m, int prow, int pcol, F&& visit) {
  const index_t lr = m.row_map().local_size(prow), lc = m.col_map().local_size(pcol);
  for (index_t li = 0; li < lr; ++li) {
    const index_t gi = m.row_map().to_global(prow, li);
    for (index_t lj = 0; lj < lc; ++lj) visit(li, lj, gi, m.col_map().to_global(pcol, lj));
  }
}

}  // namespace

template <class T> void scatter(const Grid& grid, MatrixView<const T> global, DistMatrix<T>& out, int root) {
  std::optional<Error> problem;
  if (grid.rank() == root) problem = check_root_view(global, out.rows(), out.cols());
  agree_on_layout(grid, out, root, "scatter", problem);
  const detail::ElementType elem(sizeof(T));
  if (grid.rank() != root) {
    const index_t count = out.local_rows() * out.local_cols();
    if (count > 0) MPI_Recv(out.local().data, int(count), elem.get(), root, 0, grid.comm(), MPI_STATUS_IGNORE);
    return;
  }
  std::vector<std::vector<T>> outgoing(std::size_t(grid.size()));
  std::vector<MPI_Request> requests;
  for (int r = 0; r < grid.size(); ++r) {
    const int prow = r / grid.cols(), pcol = r % grid.cols();
    const index_t lc = out.col_map().local_size(pcol);
    const index_t count = out.row_map().local_size(prow) * lc;
    if (count == 0) continue;
    T* dst = out.local().data;
    if (r != root) {
      outgoing[std::size_t(r)].resize(std::size_t(count));
      dst = outgoing[std::size_t(r)].data();
    }
    for_each_local(out, prow, pcol, [&](index_t li, index_t lj, index_t gi, index_t gj) { dst[li * lc + lj] = global(gi, gj); });
    if (r != root) {
      requests.emplace_back();
      MPI_Isend(dst, int(count), elem.get(), r, 0, grid.comm(), &requests.back());
    }
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

template <class T> void gather(const Grid& grid, const DistMatrix<T>& in, MatrixView<T> global, int root) {
  std::optional<Error> problem;
  if (grid.rank() == root) problem = check_root_view(global, in.rows(), in.cols());
  agree_on_layout(grid, in, root, "gather", problem);
  const detail::ElementType elem(sizeof(T));
  const index_t my_count = in.local_rows() * in.local_cols();
  if (grid.rank() != root) {
    if (my_count > 0) MPI_Send(in.local().data, int(my_count), elem.get(), root, 1, grid.comm());
    return;
  }
  std::vector<std::vector<T>> incoming(std::size_t(grid.size()));
  std::vector<MPI_Request> requests;
  for (int r = 0; r < grid.size(); ++r) {
    const index_t count = in.row_map().local_size(r / grid.cols()) * in.col_map().local_size(r % grid.cols());
    if (r == root || count == 0) continue;
    incoming[std::size_t(r)].resize(std::size_t(count));
    requests.emplace_back();
    MPI_Irecv(incoming[std::size_t(r)].data(), int(count), elem.get(), r, 1, grid.comm(), &requests.back());
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (int r = 0; r < grid.size(); ++r) {
    const int prow = r / grid.cols(), pcol = r % grid.cols();
    const index_t lc = in.col_map().local_size(pcol);
    const T* src = r == root ? in.local().data : incoming[std::size_t(r)].data();
    for_each_local(in, prow, pcol, [&](index_t li, index_t lj, index_t gi, index_t gj) { global(gi, gj) = src[li * lc + lj]; });
  }
}

template <class T> DistMatrix<T> transpose(const Grid& grid, const DistMatrix<T>& in, std::uint64_t* bytes_sent) {
  agree_on_layout(grid, in, 0, "transpose", std::nullopt);
  DistMatrix<T> out(grid, in.cols(), in.rows(), in.block());
  const index_t nb = in.block();
  const index_t row_blocks = in.row_map().blocks(), col_blocks = in.col_map().blocks();
  const int pr = grid.rows(), pc = grid.cols();
  auto extent = [&](index_t block, index_t n) { return std::min(nb, n - block * nb); };

  // Block (bi, bj) of `in`, owned by (bi mod pr, bj mod pc), becomes block (bj, bi) of `out`,
  // owned by (bj mod pr, bi mod pc). Sender and receiver walk the blocks in the same order
  // (bi outer, bj inner), and the sender writes each block already transposed.
  std::vector<int> send_counts(std::size_t(grid.size()), 0), recv_counts(std::size_t(grid.size()), 0);
  for (index_t bi = grid.row(); bi < row_blocks; bi += pr)
    for (index_t bj = grid.col(); bj < col_blocks; bj += pc)
      send_counts[std::size_t(grid.rank_of(int(bj % pr), int(bi % pc)))] +=
          int(extent(bi, in.rows()) * extent(bj, in.cols()));
  for (index_t bj = grid.row(); bj < col_blocks; bj += pr)
    for (index_t bi = grid.col(); bi < row_blocks; bi += pc)
      recv_counts[std::size_t(grid.rank_of(int(bi % pr), int(bj % pc)))] +=
          int(extent(bi, in.rows()) * extent(bj, in.cols()));
  std::vector<int> send_offsets(send_counts.size(), 0), recv_offsets(recv_counts.size(), 0);
  for (std::size_t r = 1; r < send_counts.size(); ++r) {
    send_offsets[r] = send_offsets[r - 1] + send_counts[r - 1];
    recv_offsets[r] = recv_offsets[r - 1] + recv_counts[r - 1];
  }
  std::vector<T> send_buf(std::size_t(send_offsets.back() + send_counts.back()));
  std::vector<T> recv_buf(std::size_t(recv_offsets.back() + recv_counts.back()));

  std::vector<int> cursor = send_offsets;
  const MatrixView<const T> src = in.local();
  for (index_t bi = grid.row(); bi < row_blocks; bi += pr) {
    for (index_t bj = grid.col(); bj < col_blocks; bj += pc) {
      int& at = cursor[std::size_t(grid.rank_of(int(bj % pr), int(bi % pc)))];
      const index_t h = extent(bi, in.rows()), w = extent(bj, in.cols());
      const index_t li0 = (bi / pr) * nb, lj0 = (bj / pc) * nb;
      for (index_t jj = 0; jj < w; ++jj)
        for (index_t ii = 0; ii < h; ++ii) send_buf[std::size_t(at++)] = src(li0 + ii, lj0 + jj);
    }
  }
  const detail::ElementType elem(sizeof(T));
  MPI_Alltoallv(send_buf.data(), send_counts.data(), send_offsets.data(), elem.get(), recv_buf.data(),
                recv_counts.data(), recv_offsets.data(), elem.get(), grid.comm());
  if (bytes_sent)
    for (int r = 0; r < grid.size(); ++r)
      if (r != grid.rank()) *bytes_sent += std::uint64_t(send_counts[std::size_t(r)]) * sizeof(T);

  cursor = recv_offsets;
  const MatrixView<T> dst = out.local();
  for (index_t bi = grid.col(); bi < row_blocks; bi += pc) {
    for (index_t bj = grid.row(); bj < col_blocks; bj += pr) {
      int& at = cursor[std::size_t(grid.rank_of(int(bi % pr), int(bj % pc)))];
      const index_t h = extent(bi, in.rows()), w = extent(bj, in.cols());
      const index_t li0 = (bj / pr) * nb, lj0 = (bi / pc) * nb;  // out block (bj, bi) is w × h
      for (index_t jj = 0; jj < w; ++jj)
        for (index_t ii = 0; ii < h; ++ii) dst(li0 + jj, lj0 + ii) = recv_buf[std::size_t(at++)];
    }
  }
  return out;
}

#define RINGMM_DIST_LAYOUT(T)                                                                   \
  template class DistMatrix<T>;                                                                 \
  template void scatter<T>(const Grid&, MatrixView<const T>, DistMatrix<T>&, int);              \
  template void gather<T>(const Grid&, const DistMatrix<T>&, MatrixView<T>, int);               \
  template DistMatrix<T> transpose<T>(const Grid&, const DistMatrix<T>&, std::uint64_t*);
RINGMM_DIST_LAYOUT(float)
RINGMM_DIST_LAYOUT(double)
RINGMM_DIST_LAYOUT(std::int32_t)
RINGMM_DIST_LAYOUT(i16x2)
RINGMM_DIST_LAYOUT(std::uint8_t)

}  // namespace ringmm::dist
