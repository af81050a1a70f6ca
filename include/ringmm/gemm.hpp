// gemm, strided-batched gemm and syrk (op(A)ᵀ·op(A)) over any semiring.
//
//   C ← α ⊗ (op(A) ⊗ op(B)) ⊕ β ⊗ C
//
// Every argument is checked before any work starts; a refused call throws ringmm::Error and
// leaves C untouched. With β = 0̄ the old C is never read. Pointers may be host memory (any
// backend) or, for the CUDA backend, device memory.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "ringmm/context.hpp"
#include "ringmm/cpu/argmax.hpp"
#include "ringmm/cpu/blocked.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/error.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/semiring.hpp"

// Under nvcc the CUDA engine template is visible, so that gemm<S> runs any semiring on the GPU.
#if defined(__CUDACC__)
#include "ringmm/cuda/gemm.cuh"
#endif

namespace ringmm {

namespace detail {

template <class S> void run(const Context& ctx, const Problem<S>& p) {
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;
  const Backend backend = ctx.resolved_backend();
  if (backend == Backend::cuda) {
#if defined(__CUDACC__)
    cuda_run<S>(ctx, p);  // built-in pairs: the library's instances; any other S: instantiated here
    return;
#else
    if constexpr (!config::cuda) {
      detail::no_cuda_backend();  // not reached: resolved_backend refuses cuda in such a build
    } else if constexpr (is_builtin_v<S>) {
      cuda_run<S>(ctx, p);
      return;
    } else {
      throw Error(Errc::unsupported, "semiring",
                  "a user-defined semiring runs on the CUDA backend only from code compiled by nvcc "
                  "(a .cu file calling ringmm::gemm; see ringmm/cuda/gemm.cuh); this call was compiled "
                  "without it: use Backend::cpu, or move the call into a CUDA source file");
    }
#endif
  }
  if (!ctx.trust_inputs) check_host_inputs<S>(p);
  if constexpr (is_builtin_v<S>) cpu_run<S>(ctx, p);
  else cpu::blocked_gemm<S>(p, ctx.cpu_threads, ctx.cpu_isa);
}

// That op(A) (`a`), op(B) (`b`) and a c_rows × c_cols C make a product, or the error naming the
// dimensions that differ.
template <class TA, class TB>
void check_product_shapes(Op op_a, const Strided<TA>& a, Op op_b, const Strided<TB>& b, index_t c_rows, index_t c_cols) {
  if (a.rows != c_rows)
    throw Error(Errc::dimension_mismatch, "A", "op(A) has " + std::to_string(a.rows) + " rows but C has " +
                                                   std::to_string(c_rows));
  if (b.cols != c_cols)
    throw Error(Errc::dimension_mismatch, "B", "op(B) has " + std::to_string(b.cols) + " columns but C has " +
                                                   std::to_string(c_cols));
  // Both shapes can read alike (a 37x29 op(A) against a 37x29 op(B)): say which numbers differ.
  if (a.cols != b.rows)
    throw Error(Errc::dimension_mismatch, "B",
                "op(A) is " + std::to_string(a.rows) + "x" + std::to_string(a.cols) +
                    (op_a == Op::T ? " (A transposed)" : "") + " but op(B) is " + std::to_string(b.rows) + "x" +
                    std::to_string(b.cols) + (op_b == Op::T ? " (B transposed)" : "") + ": inner dimensions " +
                    std::to_string(a.cols) + " and " + std::to_string(b.rows) + " differ");
}

template <class S>
Problem<S> make_problem(Op op_a, const MatrixView<const element_t<S>>& a, Op op_b, const MatrixView<const element_t<S>>& b,
                        const MatrixView<element_t<S>>& c, scalar_t<S> alpha, scalar_t<S> beta) {
  validate_view(a, "A");
  validate_view(b, "B");
  validate_view(c, "C");
  Problem<S> p{apply_op(op_a, a), apply_op(op_b, b), apply_op(Op::N, c), alpha, beta};
  check_product_shapes(op_a, p.a, op_b, p.b, c.rows, c.cols);
  return p;
}

}  // namespace detail

// One product as the engine templates, the reference product (cpu/reference.hpp) and a user
// semiring's own code see it: op(A), op(B) and C as strided views, α, β and the batch.
// make_problem checks the views and their shapes as gemm does.
template <class S> using Problem = detail::Problem<S>;
using detail::make_problem;

template <class S>
void gemm(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, Op op_b,
          MatrixView<const element_t<S>> b, MatrixView<element_t<S>> c,
          scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero()) {
  auto p = detail::make_problem<S>(op_a, a, op_b, b, c, alpha, beta);
  if (detail::views_overlap(c, a, c.extent(), a.extent())) throw Error(Errc::aliasing, "C", "C overlaps A");
  if (detail::views_overlap(c, b, c.extent(), b.extent())) throw Error(Errc::aliasing, "C", "C overlaps B");
  detail::run<S>(ctx, p);
}

namespace detail {
// A batch's own checks: a count and strides that are not negative, and members of C apart.
template <class T>
void check_batch(index_t batch, index_t stride_a, index_t stride_b, const MatrixView<T>& c, index_t stride_c) {
  if (batch < 0) throw Error(Errc::invalid_argument, "batch", "batch count " + std::to_string(batch) + " is negative");
  if (stride_a < 0) throw Error(Errc::invalid_argument, "stride_a", "negative batch stride");
  if (stride_b < 0) throw Error(Errc::invalid_argument, "stride_b", "negative batch stride");
  if (stride_c < 0) throw Error(Errc::invalid_argument, "stride_c", "negative batch stride");
  if (batch > 1 && !c.empty() && stride_c < c.extent())
    throw Error(Errc::aliasing, "stride_c", "stride " + std::to_string(stride_c) +
                                                " makes members of C overlap (each spans " + std::to_string(c.extent()) +
                                                " elements)");
}

// The batched product's problem, checked: batch and strides, and members of C that would overlap
// each other, A or B.
template <class S>
Problem<S> batched_problem(Op op_a, MatrixView<const element_t<S>> a, index_t stride_a, Op op_b,
                           MatrixView<const element_t<S>> b, index_t stride_b, MatrixView<element_t<S>> c,
                           index_t stride_c, index_t batch, scalar_t<S> alpha, scalar_t<S> beta) {
  check_batch(batch, stride_a, stride_b, c, stride_c);
  auto p = make_problem<S>(op_a, a, op_b, b, c, alpha, beta);
  p.batch = batch;
  p.stride_a = stride_a;
  p.stride_b = stride_b;
  p.stride_c = stride_c;
  if (batch == 0) return p;
  const index_t c_span = batch_span(c, batch, stride_c);
  if (views_overlap(c, a, c_span, batch_span(a, batch, stride_a))) throw Error(Errc::aliasing, "C", "C overlaps A");
  if (views_overlap(c, b, c_span, batch_span(b, batch, stride_b))) throw Error(Errc::aliasing, "C", "C overlaps B");
  return p;
}

// Argmax products: the CUDA argmax kernel (ringmm/cuda/argmax.cuh) or the CPU one.
template <class S> void run_argmax(const Context& ctx, const Problem<S>& p) {
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;
  if (ctx.resolved_backend() == Backend::cuda) {
#if defined(__CUDACC__)
    cuda_run_argmax<S>(ctx, p);
    return;
#else
    if constexpr (!config::cuda) {
      detail::no_cuda_backend();  // not reached: resolved_backend refuses cuda in such a build
    } else if constexpr (is_builtin_v<S>) {
      cuda_run_argmax<S>(ctx, p);
      return;
    } else {
      throw Error(Errc::unsupported, "semiring",
                  "a user-defined semiring runs on the CUDA backend only from code compiled by nvcc");
    }
#endif
  }
  if (!ctx.trust_inputs) check_host_inputs<S>(p);
  if (p.k_star_wide.p) cpu::argmax_gemm_wide<S>(p, ctx.cpu_threads, ctx.cpu_isa);
  else cpu::argmax_gemm<S>(p, ctx.cpu_threads, ctx.cpu_isa);
}
}  // namespace detail

// batch products; member b of X starts at X.data + b·stride_x (strides in elements, ≥ 0; a
// stride of 0 reuses one A or B for every member; C's members must not overlap).
template <class S>
void gemm_batched(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, index_t stride_a, Op op_b,
                  MatrixView<const element_t<S>> b, index_t stride_b, MatrixView<element_t<S>> c,
                  index_t stride_c, index_t batch, scalar_t<S> alpha = S::one(),
                  scalar_t<S> beta = S::zero()) {
  const auto p = detail::batched_problem<S>(op_a, a, stride_a, op_b, b, stride_b, c, stride_c, batch, alpha, beta);
  if (batch > 0) detail::run<S>(ctx, p);
}

namespace detail {
// The argmax product's problem, checked: the batched product's, and K* (int32 or int64, I) of
// C's shape, its members apart, overlapping nothing, with room for k_offset + K.
template <class S, class I>
Problem<S> argmax_problem(Op op_a, MatrixView<const element_t<S>> a, index_t stride_a, Op op_b,
                          MatrixView<const element_t<S>> b, index_t stride_b, MatrixView<element_t<S>> c,
                          index_t stride_c, MatrixView<I> k_star, index_t stride_k, index_t batch, scalar_t<S> alpha,
                          scalar_t<S> beta, index_t k_offset) {
  static_assert(semiring_traits<S>::selects,
                "gemm_argmax needs a semiring whose ⊕ selects one term (max-plus, min-plus, max-min, max-times, "
                "min-max)");
  static_assert(std::is_same_v<I, std::int32_t> || std::is_same_v<I, std::int64_t>, "K* is int32 or int64");
  constexpr bool wide = std::is_same_v<I, std::int64_t>;
  auto p = batched_problem<S>(op_a, a, stride_a, op_b, b, stride_b, c, stride_c, batch, alpha, beta);
  validate_view(k_star, "K*");
  if (k_star.rows != c.rows || k_star.cols != c.cols)
    throw Error(Errc::dimension_mismatch, "K*", "the index matrix is " + std::to_string(k_star.rows) + "x" +
                                                    std::to_string(k_star.cols) + " but C is " +
                                                    std::to_string(c.rows) + "x" + std::to_string(c.cols));
  if (k_offset < 0) throw Error(Errc::invalid_argument, "k_offset", "negative k offset " + std::to_string(k_offset));
  if (p.k() > std::numeric_limits<I>::max() - k_offset)
    throw Error(Errc::unsupported, "K*", "k offset " + std::to_string(k_offset) + " + K = " + std::to_string(p.k()) +
                                             (wide ? " does not fit the int64 index matrix"
                                                   : " does not fit the int32 index matrix (an int64 one takes it)"));
  if (stride_k < 0) throw Error(Errc::invalid_argument, "stride_k", "negative batch stride");
  if (batch > 1 && !k_star.empty() && stride_k < k_star.extent())
    throw Error(Errc::aliasing, "stride_k", "stride " + std::to_string(stride_k) +
                                                " makes members of K* overlap (each spans " +
                                                std::to_string(k_star.extent()) + " elements)");
  if (batch == 0) return p;
  const index_t k_span = batch_span(k_star, batch, stride_k);
  if (views_overlap(k_star, c, k_span, batch_span(c, batch, stride_c))) throw Error(Errc::aliasing, "K*", "K* overlaps C");
  if (views_overlap(k_star, a, k_span, batch_span(a, batch, stride_a))) throw Error(Errc::aliasing, "K*", "K* overlaps A");
  if (views_overlap(k_star, b, k_span, batch_span(b, batch, stride_b))) throw Error(Errc::aliasing, "K*", "K* overlaps B");
  if constexpr (wide) p.k_star_wide = apply_op(Op::N, k_star);
  else p.k_star = apply_op(Op::N, k_star);
  p.stride_k = stride_k;
  p.k_offset = k_offset;
  return p;
}

// gemm_argmax_batched with an int64 K*, its int32 products over parts of K of at most k_part
// terms (argmax_by_parts): the public call takes the longest parts; tests shorten them to reach
// several parts with a small K.
template <class S>
void gemm_argmax_batched_in_parts(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, index_t stride_a,
                                  Op op_b, MatrixView<const element_t<S>> b, index_t stride_b,
                                  MatrixView<element_t<S>> c, index_t stride_c, MatrixView<std::int64_t> k_star,
                                  index_t stride_k, index_t batch, scalar_t<S> alpha, scalar_t<S> beta,
                                  index_t k_offset, index_t k_part) {
  if (k_part < 1 || k_part > argmax_part_max)
    throw Error(Errc::invalid_argument, "k_part", "a part of K must hold 1 to 2^31 − 1 terms, not " +
                                                      std::to_string(k_part));
  auto p = argmax_problem<S>(op_a, a, stride_a, op_b, b, stride_b, c, stride_c, k_star, stride_k, batch, alpha, beta,
                             k_offset);
  p.k_part = k_part;
  run_argmax<S>(ctx, p);
}
}  // namespace detail

// Argmax products, for semirings whose ⊕ selects one term (max-plus, min-plus, max-min,
// max-times, min-max; semiring_traits::selects): besides C, K*(i, j) receives the k of the term
// that won, the smallest k among equal ones, or −1 where the result is 0̄. With β ≠ 0̄, K* is
// read too: where β ⊗ C wins (ties included) the entry keeps its incoming index, so a caller
// that splits K into consecutive parts (as SUMMA does) carries the argmax across them: each part
// after the first runs with β = 1̄ and k_offset = its first k, which is added to the indexes it
// writes. K* is M×N like C, with its own layout, int32 or int64: k_offset + K must fit its type.
// An int64 K* takes any K (and incoming indexes past 2³¹ − 1); the product then runs as int32
// products over parts of K of up to 2³¹ − 1 terms, with M×N×batch scratch values and indexes
// (int32 and int64) in the backend's memory.
template <class S>
void gemm_argmax_batched(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, index_t stride_a, Op op_b,
                         MatrixView<const element_t<S>> b, index_t stride_b, MatrixView<element_t<S>> c,
                         index_t stride_c, MatrixView<std::int32_t> k_star, index_t stride_k, index_t batch,
                         scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero(), index_t k_offset = 0) {
  detail::run_argmax<S>(ctx, detail::argmax_problem<S>(op_a, a, stride_a, op_b, b, stride_b, c, stride_c, k_star,
                                                       stride_k, batch, alpha, beta, k_offset));
}

template <class S>
void gemm_argmax_batched(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, index_t stride_a, Op op_b,
                         MatrixView<const element_t<S>> b, index_t stride_b, MatrixView<element_t<S>> c,
                         index_t stride_c, MatrixView<std::int64_t> k_star, index_t stride_k, index_t batch,
                         scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero(), index_t k_offset = 0) {
  detail::gemm_argmax_batched_in_parts<S>(ctx, op_a, a, stride_a, op_b, b, stride_b, c, stride_c, k_star, stride_k,
                                          batch, alpha, beta, k_offset, detail::argmax_part_max);
}

template <class S>
void gemm_argmax(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, Op op_b,
                 MatrixView<const element_t<S>> b, MatrixView<element_t<S>> c, MatrixView<std::int32_t> k_star,
                 scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero(), index_t k_offset = 0) {
  gemm_argmax_batched<S>(ctx, op_a, a, 0, op_b, b, 0, c, 0, k_star, 0, 1, alpha, beta, k_offset);
}

template <class S>
void gemm_argmax(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, Op op_b,
                 MatrixView<const element_t<S>> b, MatrixView<element_t<S>> c, MatrixView<std::int64_t> k_star,
                 scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero(), index_t k_offset = 0) {
  gemm_argmax_batched<S>(ctx, op_a, a, 0, op_b, b, 0, c, 0, k_star, 0, 1, alpha, beta, k_offset);
}

// C ← α ⊗ (op(A)ᵀ ⊗ op(A)) ⊕ β ⊗ C: op = N gives Aᵀ·A, op = T gives A·Aᵀ. The product
// is symmetric for every commutative ⊗ (all built-in semirings); one triangle is computed and
// mirrored, and with β ≠ 0̄ only C's lower triangle is read.
template <class S>
void syrk(const Context& ctx, Op op_a, MatrixView<const element_t<S>> a, MatrixView<element_t<S>> c,
          scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero()) {
  const Op op_t = op_a == Op::N ? Op::T : Op::N;
  if (c.rows != c.cols)
    throw Error(Errc::dimension_mismatch, "C", "syrk needs a square C, got " + std::to_string(c.rows) + "x" +
                                                   std::to_string(c.cols));
  auto p = detail::make_problem<S>(op_t, a, op_a, a, c, alpha, beta);
  if (detail::views_overlap(c, a, c.extent(), a.extent())) throw Error(Errc::aliasing, "C", "C overlaps A");
  p.symmetric = true;
  detail::run<S>(ctx, p);
}

}  // namespace ringmm
