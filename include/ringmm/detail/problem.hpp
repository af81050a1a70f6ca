// The normalised problem every backend receives: ops applied, arguments validated.
#pragma once

#include <cstdint>
#include <limits>

#include "ringmm/context.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::detail {

// The longest part of K that one int32 argmax product takes when K* is int64 (argmax_parts.hpp).
inline constexpr index_t argmax_part_max = std::numeric_limits<std::int32_t>::max();

// C_b ← α ⊗ (A_b ⊗ B_b) ⊕ β ⊗ C_b for b in [0, batch), with X_b = X + b·stride_x.
// When `symmetric` is set (Aᵀ·A), A_b ⊗ B_b is symmetric: backends compute the lower triangle
// (i ≥ j, reading only that triangle of C) and mirror it into the upper one.
template <class S> struct Problem {
  using element = element_t<S>;
  using scalar = scalar_t<S>;
  Strided<const element> a;  // M×K
  Strided<const element> b;  // K×N
  Strided<element> c;        // M×N
  scalar alpha;
  scalar beta;
  index_t batch = 1;
  index_t stride_a = 0, stride_b = 0, stride_c = 0;
  bool symmetric = false;
  // Argmax products (gemm_argmax): K*(i, j), the k of the winning term, beside C (M×N, members
  // stride_k apart), int32 (k_star) or int64 (k_star_wide); both null for plain products.
  Strided<std::int32_t> k_star{};
  Strided<std::int64_t> k_star_wide{};
  index_t stride_k = 0;
  index_t k_offset = 0;  // added to the k written into K* (a part of a longer K)
  // int64 K*: the int32 product runs over parts of K this long at most; tests shorten it.
  index_t k_part = argmax_part_max;

  // Operands known to be device memory, which the CUDA engine then does not ask the pointer query
  // about: workspace (ringmm/narrow.hpp's widened copies) that a CUDA graph's capture has not
  // mapped yet reads as host memory to it.
  bool a_on_device = false, b_on_device = false, c_on_device = false;

  bool argmax() const { return k_star.p != nullptr || k_star_wide.p != nullptr; }

  index_t m() const { return c.rows; }
  index_t n() const { return c.cols; }
  index_t k() const { return a.cols; }
  // Semiring updates (i, j, k triples) the product performs: the unit of every rate we report.
  double updates() const { return double(m()) * double(n()) * double(k()) * double(batch); }
};

// Backend entry points for the built-in semirings (explicitly instantiated in src/cpu, src/cuda).
template <class S> void cpu_run(const Context& ctx, const Problem<S>& p);
template <class S> void cuda_run(const Context& ctx, const Problem<S>& p);
template <class S> void cuda_run_argmax(const Context& ctx, const Problem<S>& p);

}  // namespace ringmm::detail
