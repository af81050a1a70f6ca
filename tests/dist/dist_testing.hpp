// Helpers shared by the MPI tests: the world, every grid shape it admits, same-on-every-rank checks.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ringmm/cpu/reference.hpp"
#include "ringmm/dist.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// Every pr × pc with pr · pc = p (for 6: 1×6, 2×3, 3×2, 6×1).
inline std::vector<std::pair<int, int>> grid_shapes(int p) {
  std::vector<std::pair<int, int>> shapes;
  for (int r = 1; r <= p; ++r)
    if (p % r == 0) shapes.emplace_back(r, p / r);
  return shapes;
}

inline std::string grid_name(const dist::Grid& g) { return std::to_string(g.rows()) + "x" + std::to_string(g.cols()); }

// True on every rank when `text` is the same on every rank (compared by length and FNV hash).
inline bool same_on_every_rank(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  std::int64_t local[2] = {std::int64_t(h >> 1), std::int64_t(text.size())};
  std::int64_t lo[2], hi[2];
  MPI_Allreduce(local, lo, 2, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(local, hi, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lo[0] == hi[0] && lo[1] == hi[1];
}

// Runs `call`, which must throw ringmm::Error with `code` and `subject` on this rank, and checks
// that every rank saw the very same message.
// Returns the message, which every rank must have seen alike.
template <class F> std::string expect_same_error_everywhere(F&& call, Errc code, const std::string& subject) {
  std::string message = "(no exception)";
  try {
    call();
  } catch (const Error& e) {
    message = e.what();
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.subject(), subject) << e.what();
  }
  EXPECT_NE(message, "(no exception)");
  EXPECT_TRUE(same_on_every_rank(message)) << "rank " << world_rank() << " saw: " << message;
  return message;
}


// Rank 0's check of a distributed product: `result` (gathered C) against the CPU reference of
// α ⊗ (op_a(A) ⊗ op_b(B)) ⊕ β ⊗ C, with C as it was before the product.
template <class S, class T>
void expect_reference_product(Op op_a, const HostMatrix<T>& a, Op op_b, const HostMatrix<T>& b, HostMatrix<T> c,
                              scalar_t<S> alpha, scalar_t<S> beta, HostMatrix<T> result) {
  const HostMatrix<T> c_before = c;
  auto p = ringmm::detail::make_problem<S>(op_a, a.cview(), op_b, b.cview(), c.view, alpha, beta);
  cpu::reference_gemm<S>(p);
  const ringmm::detail::Strided<const T> before = ringmm::detail::apply_op(Op::N, c_before.cview());
  EXPECT_TRUE(matrices_match<S>(p, ringmm::detail::apply_op(Op::N, c.view), ringmm::detail::apply_op(Op::N, result.view),
                                &before));
}

}  // namespace ringmm::testing
