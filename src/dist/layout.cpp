// Distributed matrices: construction, scatter from and gather to one rank, transpose.
#include <cstring>
#include <string>
#include <vector>

#include "mpi_util.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/dist.hpp"
#include "distribute.hpp"
#include "transpose_plan.hpp"

namespace ringmm::dist {

DistLayout::DistLayout(const Grid& grid, index_t rows, index_t cols, index_t nb) : rows_(rows), cols_(cols), nb_(nb) {
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
}

template <class T>
DistMatrix<T>::DistMatrix(const Grid& grid, index_t rows, index_t cols, index_t nb)
    : DistLayout(grid, rows, cols, nb), storage_(std::size_t(std::max<index_t>(1, local_size()))) {}

namespace detail {

template <class T>
void agree_on_layout(const Grid& grid, const DistLayout& m, int root, const std::string& call,
                     std::optional<Error> local_problem) {
  // fits: the grid's shape and this rank's place in it, which size the local part.
  if (!local_problem && !m.fits(grid))
    local_problem = Error(Errc::invalid_argument, "grid",
                          "matrix was built for a " + std::to_string(m.grid_rows()) + "x" +
                              std::to_string(m.grid_cols()) + " grid at (" + std::to_string(m.grid_row()) + ", " +
                              std::to_string(m.grid_col()) + "), not this " + std::to_string(grid.rows()) + "x" +
                              std::to_string(grid.cols()) + " one at (" + std::to_string(grid.row()) + ", " +
                              std::to_string(grid.col()) + ")");
  check_agreement(grid.comm(),
                  {{"rows", m.rows()},
                   {"cols", m.cols()},
                   {"block", m.block()},
                   {"type", type_fingerprint<T>(), type_name<T>()},
                   {"root", root}},
                  call);
  if (!local_problem && (root < 0 || root >= grid.size()))
    local_problem = Error(Errc::invalid_argument, "root", "rank " + std::to_string(root) + " is not in the grid");
  throw_if_any(grid.comm(), local_problem);
}

namespace {

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
template <class F> void for_each_local(const DistLayout& m, int prow, int pcol, F&& visit) {
  const index_t lr = m.row_map().local_size(prow), lc = m.col_map().local_size(pcol);
  for (index_t li = 0; li < lr; ++li) {
    const index_t gi = m.row_map().to_global(prow, li);
    for (index_t lj = 0; lj < lc; ++lj) visit(li, lj, gi, m.col_map().to_global(pcol, lj));
  }
}

}  // namespace

template <class T>
void scatter_parts(const Grid& grid, MatrixView<const T> global, const DistLayout& out, T* mine, int root,
                   const std::string& call, std::optional<Error> problem) {
  if (!problem && grid.rank() == root) problem = check_root_view(global, out.rows(), out.cols());
  agree_on_layout<T>(grid, out, root, call, problem);
  check_count(out.row_map(), out.col_map(), call);  // a rank's part is one MPI message
  const ElementType elem(sizeof(T));
  if (grid.rank() != root) {
    const index_t count = out.local_rows() * out.local_cols();
    if (count > 0) MPI_Recv(mine, int(count), elem.get(), root, 0, grid.comm(), MPI_STATUS_IGNORE);
    return;
  }
  std::vector<std::vector<T>> outgoing(std::size_t(grid.size()));
  std::vector<MPI_Request> requests;
  for (int r = 0; r < grid.size(); ++r) {
    const int prow = r / grid.cols(), pcol = r % grid.cols();
    const index_t lc = out.col_map().local_size(pcol);
    const index_t count = out.row_map().local_size(prow) * lc;
    if (count == 0) continue;
    T* dst = mine;
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

template <class T>
void gather_parts(const Grid& grid, const DistLayout& in, const T* mine, MatrixView<T> global, int root,
                  const std::string& call, std::optional<Error> problem) {
  if (!problem && grid.rank() == root) problem = check_root_view(global, in.rows(), in.cols());
  agree_on_layout<T>(grid, in, root, call, problem);
  check_count(in.row_map(), in.col_map(), call);
  const ElementType elem(sizeof(T));
  const index_t my_count = in.local_rows() * in.local_cols();
  if (grid.rank() != root) {
    if (my_count > 0) MPI_Send(mine, int(my_count), elem.get(), root, 1, grid.comm());
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
    const T* src = r == root ? mine : incoming[std::size_t(r)].data();
    for_each_local(in, prow, pcol, [&](index_t li, index_t lj, index_t gi, index_t gj) { global(gi, gj) = src[li * lc + lj]; });
  }
}

}  // namespace detail

template <class T> void scatter(const Grid& grid, MatrixView<const T> global, DistMatrix<T>& out, int root) {
  detail::scatter_parts<T>(grid, global, out, out.local().data, root, "scatter");
}

template <class T> void gather(const Grid& grid, const DistMatrix<T>& in, MatrixView<T> global, int root) {
  detail::gather_parts<T>(grid, in, in.local().data, global, root, "gather");
}

namespace detail {

TransposePlan transpose_plan(const Grid& grid, const DistLayout& in) {
  const index_t nb = in.block(), row_blocks = in.row_map().blocks(), col_blocks = in.col_map().blocks();
  const int pr = grid.rows(), pc = grid.cols();
  auto extent = [&](index_t block, index_t n) { return std::min(nb, n - block * nb); };
  TransposePlan plan;
  plan.send_counts.assign(std::size_t(grid.size()), 0);
  plan.recv_counts.assign(std::size_t(grid.size()), 0);
  // Both sides walk bi outer, bj inner (the input's block indexes): my input blocks, and the
  // result blocks (bj, bi) I receive, so that each sender's blocks arrive in the order it packed them.
  for (index_t bi = grid.row(); bi < row_blocks; bi += pr)
    for (index_t bj = grid.col(); bj < col_blocks; bj += pc) {
      const MovedBlock b{grid.rank_of(int(bj % pr), int(bi % pc)), (bi / pr) * nb, (bj / pc) * nb,
                         extent(bi, in.rows()), extent(bj, in.cols()), 0};
      plan.send_counts[std::size_t(b.peer)] += b.rows * b.cols;
      plan.sends.push_back(b);
    }
  for (index_t bi = grid.col(); bi < row_blocks; bi += pc)
    for (index_t bj = grid.row(); bj < col_blocks; bj += pr) {
      const MovedBlock b{grid.rank_of(int(bi % pr), int(bj % pc)), (bj / pr) * nb, (bi / pc) * nb,
                         extent(bj, in.cols()), extent(bi, in.rows()), 0};
      plan.recv_counts[std::size_t(b.peer)] += b.rows * b.cols;
      plan.receives.push_back(b);
    }
  auto place = [](const std::vector<index_t>& counts, std::vector<index_t>& offsets, std::vector<MovedBlock>& blocks) {
    offsets.assign(counts.size(), 0);
    for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
    std::vector<index_t> cursor = offsets;
    for (MovedBlock& b : blocks) {
      b.offset = cursor[std::size_t(b.peer)];
      cursor[std::size_t(b.peer)] += b.rows * b.cols;
    }
    return offsets.back() + counts.back();
  };
  plan.send_total = place(plan.send_counts, plan.send_offsets, plan.sends);
  plan.recv_total = place(plan.recv_counts, plan.recv_offsets, plan.receives);
  return plan;
}

}  // namespace detail

template <class T> DistMatrix<T> transpose(const Grid& grid, const DistMatrix<T>& in, std::uint64_t* bytes_sent) {
  detail::agree_on_layout<T>(grid, in, 0, "transpose", std::nullopt);
  detail::check_count(in.row_map(), in.col_map(), "transpose");
  DistMatrix<T> out(grid, in.cols(), in.rows(), in.block());
  const detail::TransposePlan plan = detail::transpose_plan(grid, in);
  std::vector<T> send_buf(std::size_t(plan.send_total)), recv_buf(std::size_t(plan.recv_total));
  const MatrixView<const T> src = in.local();
  for (const detail::MovedBlock& b : plan.sends) {
    T* to = send_buf.data() + b.offset;
    for (index_t j = 0; j < b.cols; ++j)
      for (index_t i = 0; i < b.rows; ++i) *to++ = src(b.row0 + i, b.col0 + j);
  }
  // Per-peer counts fit an int: check_count found that a rank's whole part does.
  auto ints = [](const std::vector<index_t>& v) { return std::vector<int>(v.begin(), v.end()); };
  const std::vector<int> send_counts = ints(plan.send_counts), send_offsets = ints(plan.send_offsets);
  const std::vector<int> recv_counts = ints(plan.recv_counts), recv_offsets = ints(plan.recv_offsets);
  const detail::ElementType elem(sizeof(T));
  MPI_Alltoallv(send_buf.data(), send_counts.data(), send_offsets.data(), elem.get(), recv_buf.data(),
                recv_counts.data(), recv_offsets.data(), elem.get(), grid.comm());
  if (bytes_sent)
    for (int r = 0; r < grid.size(); ++r)
      if (r != grid.rank()) *bytes_sent += std::uint64_t(send_counts[std::size_t(r)]) * sizeof(T);

  const MatrixView<T> dst = out.local();
  for (const detail::MovedBlock& b : plan.receives) {
    const T* from = recv_buf.data() + b.offset;
    for (index_t i = 0; i < b.rows; ++i)
      for (index_t j = 0; j < b.cols; ++j) dst(b.row0 + i, b.col0 + j) = *from++;
  }
  return out;
}

#define RINGMM_DIST_LAYOUT(T)                                                                   \
  template void detail::agree_on_layout<T>(const Grid&, const DistLayout&, int, const std::string&,  \
                                           std::optional<Error>);                               \
  template void detail::scatter_parts<T>(const Grid&, MatrixView<const T>, const DistLayout&, T*, int, \
                                         const std::string&, std::optional<Error>);             \
  template void detail::gather_parts<T>(const Grid&, const DistLayout&, const T*, MatrixView<T>, int,  \
                                        const std::string&, std::optional<Error>);              \
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
