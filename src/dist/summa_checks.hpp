// The checks every SUMMA call runs before any panel moves, shared by the host matrices' call
// (summa.cpp) and the device-resident one (summa_nccl.cpp): agreement, grids, shapes, values.
// Each ends with every rank throwing the same error or none.
#pragma once

#include <limits>
#include <optional>
#include <string>

#include "mpi_util.hpp"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

inline std::string shape_text(const DistLayout& m) { return std::to_string(m.rows()) + "x" + std::to_string(m.cols()); }

// Agreement on every parameter, each matrix against the grid (and `local_problem`, a rank's own
// complaint), then block sizes and shapes. k_star: the argmax's index matrix, or null. Returns K.
template <class S>
index_t check_product(const Grid& grid, const char* call, Op op_a, const DistLayout& a, Op op_b, const DistLayout& b,
                      const DistLayout& c, const DistLayout* k_star, scalar_t<S> alpha, scalar_t<S> beta,
                      const Options& options, std::optional<Error> local_problem = std::nullopt) {
  using T = element_t<S>;
  check_agreement(grid.comm(),
                  {{"semiring", type_fingerprint<S>(), ringmm::detail::semiring_name<S>()},
                   {"type", type_fingerprint<T>(), type_name<T>()},
                   {"grid rows", grid.rows()},
                   {"grid cols", grid.cols()},
                   {"A.rows", a.rows()},
                   {"A.cols", a.cols()},
                   {"B.rows", b.rows()},
                   {"B.cols", b.cols()},
                   {"C.rows", c.rows()},
                   {"C.cols", c.cols()},
                   {"A.block", a.block()},
                   {"B.block", b.block()},
                   {"C.block", c.block()},
                   {"variant", std::int64_t(options.variant), std::string(to_string(options.variant))},
                   {"transa", std::int64_t(op_a), std::string(to_string(op_a))},
                   {"transb", std::int64_t(op_b), std::string(to_string(op_b))},
                   {"alpha", scalar_bits(alpha), ringmm::detail::value_text(alpha)},
                   {"beta", scalar_bits(beta), ringmm::detail::value_text(beta)},
                   {"backend", std::int64_t(options.context.backend), std::string(to_string(options.context.backend))},
                   {"K*.rows", k_star ? k_star->rows() : -1},
                   {"K*.cols", k_star ? k_star->cols() : -1},
                   {"K*.block", k_star ? k_star->block() : -1}},
                  call);
  std::optional<Error> problem;
  for (const DistLayout* m : {&a, &b, &c, k_star})
    if (m && !m->fits(grid)) {
      problem = Error(Errc::invalid_argument, m == &a ? "A" : m == &b ? "B" : m == &c ? "C" : "K*",
                      "matrix was built for another process grid");
      break;
    }
  if (!problem) problem = std::move(local_problem);
  throw_if_any(grid.comm(), problem);

  // Agreed above, so every rank reaches the same verdict.
  const index_t m = c.rows(), n = c.cols();
  const index_t a_rows = op_a == Op::N ? a.rows() : a.cols(), k = op_a == Op::N ? a.cols() : a.rows();
  const index_t b_rows = op_b == Op::N ? b.rows() : b.cols(), b_cols = op_b == Op::N ? b.cols() : b.rows();
  if (a.block() != c.block() || b.block() != c.block())
    throw Error(Errc::invalid_argument, "block",
                "A, B and C must share one block size (got " + std::to_string(a.block()) + ", " +
                    std::to_string(b.block()) + ", " + std::to_string(c.block()) + ")");
  if (a_rows != m)
    throw Error(Errc::dimension_mismatch, "A", "op(A) has " + std::to_string(a_rows) + " rows but C is " + shape_text(c));
  if (b_cols != n)
    throw Error(Errc::dimension_mismatch, "B", "op(B) has " + std::to_string(b_cols) + " columns but C is " + shape_text(c));
  if (b_rows != k)
    throw Error(Errc::dimension_mismatch, "B",
                "op(A) has " + std::to_string(k) + " columns but op(B) has " + std::to_string(b_rows) +
                    " rows (inner dimensions differ)");
  if (k_star) {
    if (k_star->rows() != m || k_star->cols() != n)
      throw Error(Errc::dimension_mismatch, "K*", "the index matrix is " + shape_text(*k_star) + " but C is " + shape_text(c));
    if (k_star->block() != c.block())
      throw Error(Errc::invalid_argument, "block", "K* must share C's block size (got " + std::to_string(k_star->block()) +
                                                       ", " + std::to_string(c.block()) + ")");
    if (k > std::numeric_limits<std::int32_t>::max())
      throw Error(Errc::unsupported, "K*", "K = " + std::to_string(k) + " does not fit the int32 index matrix");
  }
  return k;
}

// The input check (ringmm/detail/input_check.hpp) over the local blocks, agreed across ranks, so
// that no rank's local multiply can refuse its panels later, when the others would wait for it.
// `scan` fills an operand's scan wherever its local block lives; `read` fetches a refused value.
template <class S, class Scan, class Read>
void check_values(const Grid& grid, MatrixView<const element_t<S>> a, MatrixView<const element_t<S>> b,
                  MatrixView<const element_t<S>> c, scalar_t<S> alpha, scalar_t<S> beta, index_t k, Scan&& scan,
                  Read&& read) {
  if constexpr (ringmm::detail::scans_inputs<S>) {
    std::optional<Error> problem;
    try {
      ringmm::detail::check_scalars<S>(alpha, beta);
      const bool reads_c = !(beta == scalar_t<S>(S::zero()));
      auto operand = [](const char* name, MatrixView<const element_t<S>> v) {
        return ringmm::detail::CheckedOperand<S>{name, " of this rank's local block", {v.data, v.rows, v.cols, v.ld, 1}};
      };
      ringmm::detail::CheckedOperand<S> ops[3] = {operand("A", a), operand("B", b), operand("C", c)};
      const std::size_t count = reads_c ? 3 : 2;
      for (std::size_t o = 0; o < count; ++o)
        if (ops[o].view.rows * ops[o].view.cols > 0) scan(ops[o]);
      // Sums are bounded by the largest magnitudes anywhere, so those are agreed first.
      unsigned long long mags[3] = {ops[0].scan.max_magnitude, ops[1].scan.max_magnitude, ops[2].scan.max_magnitude};
      MPI_Allreduce(MPI_IN_PLACE, mags, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, grid.comm());
      for (std::size_t o = 0; o < 3; ++o) ops[o].scan.max_magnitude = mags[o];
      ringmm::detail::check_scans(ops, count, alpha, beta, k, read);
    } catch (const Error& e) {
      problem = e;
    }
    throw_if_any(grid.comm(), problem);
  }
}

}  // namespace ringmm::dist::detail
