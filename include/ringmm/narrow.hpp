// Narrow element types: bf16 and f16 operands accumulated in f32, i8 operands in i32.
//
//   gemm<MaxPlus<float>>(ctx, Op::N, bf16 A, Op::N, bf16 B, f32 C)   C in f32
//   gemm<MaxPlus<float>>(ctx, Op::N, bf16 A, Op::N, bf16 B, bf16 C)  C rounded back to bf16
//   gemm<MaxPlus<std::int32_t>>(ctx, Op::N, i8 A, Op::N, i8 B, i32 C)
//
// Every narrow value widens exactly to the accumulator type (f16 and bf16 are subsets of f32), so
// a narrow product equals the f32 (i32) product of the widened operands; a bf16 or f16 C is that
// result rounded to nearest, ties to even. bf16 and f16 go with any semiring of f32 elements;
// i8 with integer max-plus and min-plus, whose sentinel it has its own value for: −128 is −∞ for
// max-plus and 127 is +∞ for min-plus. Every other i8 value is finite, so i8 operands need no
// range check. Infinities and NaN of bf16 and f16 widen to the same f32 values.
//
// Operands in host memory are widened into dense buffers of the accumulator type (as large as
// op(A) and op(B) in f32 or i32), and the product runs on the backend the Context chooses. Narrow
// operands in device memory are refused for now (Errc::unsupported): widen them there first.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "ringmm/gemm.hpp"
#include "ringmm/narrow_types.hpp"

namespace ringmm {

namespace detail {

template <class E> inline constexpr bool is_narrow_float_v = std::is_same_v<E, bf16> || std::is_same_v<E, f16>;

template <class S>
inline constexpr bool is_tropical_i32_v =
    std::is_same_v<S, MaxPlus<std::int32_t>> || std::is_same_v<S, MinPlus<std::int32_t>>;

// Whether operands of type E multiply in semiring S (whose elements are the accumulator type).
template <class S, class E>
inline constexpr bool narrow_operand_v = (is_narrow_float_v<E> && std::is_same_v<element_t<S>, float>) ||
                                         (std::is_same_v<E, std::int8_t> && is_tropical_i32_v<S>);

// The i8 value that stands for S's 0̄ (−∞ for max-plus, +∞ for min-plus).
template <class S> constexpr std::int8_t i8_sentinel() {
  return std::is_same_v<S, MaxPlus<std::int32_t>> ? std::int8_t(-128) : std::int8_t(127);
}

template <class S, class E> element_t<S> widen(E x) {
  if constexpr (is_narrow_float_v<E>) return to_float(x);
  else return x == i8_sentinel<S>() ? S::zero() : std::int32_t(x);
}

template <class E> constexpr const char* narrow_name() {
  if constexpr (std::is_same_v<E, bf16>) return "bf16";
  else if constexpr (std::is_same_v<E, f16>) return "f16";
  else return "i8";
}

// op(v) widened into `store`, dense and row-major; the view of it.
template <class S, class E>
MatrixView<const element_t<S>> widened(const MatrixView<const E>& v, Op op, std::vector<element_t<S>>& store,
                                       const char* name) {
  validate_view(v, name);
  refuse_narrow_device_memory(v.data, name, narrow_name<E>());
  const Strided<const E> x = apply_op(op, v);
  const auto count = checked_mul(x.rows, x.cols);
  if (!count) throw Error(Errc::invalid_argument, name, "the widened copy's element count overflows");
  store.resize(std::size_t(*count));
  element_t<S>* out = store.data();
#pragma omp parallel for schedule(static) if (*count >= (index_t(1) << 16))
  for (index_t i = 0; i < x.rows; ++i)
    for (index_t j = 0; j < x.cols; ++j) out[i * x.cols + j] = widen<S, E>(x(i, j));
  return row_major(static_cast<const element_t<S>*>(store.data()), x.rows, x.cols);
}

}  // namespace detail

// C ← α ⊗ (op(A) ⊗ op(B)) ⊕ β ⊗ C with A and B of a narrow type, C of the accumulator type.
template <class S, class EA, class EB>
  requires(detail::narrow_operand_v<S, std::remove_const_t<EA>> && std::is_same_v<std::remove_const_t<EA>, std::remove_const_t<EB>>)
void gemm(const Context& ctx, Op op_a, MatrixView<EA> a, Op op_b, MatrixView<EB> b, MatrixView<element_t<S>> c,
          scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero()) {
  using E = std::remove_const_t<EA>;
  std::vector<element_t<S>> wa, wb;
  const auto va = detail::widened<S, E>(MatrixView<const E>(a), op_a, wa, "A");
  const auto vb = detail::widened<S, E>(MatrixView<const E>(b), op_b, wb, "B");
  gemm<S>(ctx, Op::N, va, Op::N, vb, c, alpha, beta);
}

// The same with C of the operands' type (bf16 or f16): the f32 result rounded to nearest, even.
// With β ≠ 0̄ the old C is widened and enters the product.
template <class S, class EA, class EB>
  requires(detail::is_narrow_float_v<std::remove_const_t<EA>> && detail::narrow_operand_v<S, std::remove_const_t<EA>> &&
           std::is_same_v<std::remove_const_t<EA>, std::remove_const_t<EB>>)
void gemm(const Context& ctx, Op op_a, MatrixView<EA> a, Op op_b, MatrixView<EB> b,
          MatrixView<std::remove_const_t<EA>> c, float alpha = S::one(), float beta = S::zero()) {
  using E = std::remove_const_t<EA>;
  detail::validate_view(c, "C");
  detail::refuse_narrow_device_memory(c.data, "C", detail::narrow_name<E>());
  std::vector<float> wc;
  const bool reads_c = beta != S::zero();
  if (reads_c) detail::widened<S, E>(MatrixView<const E>(c), Op::N, wc, "C");
  else wc.assign(std::size_t(c.rows * c.cols), S::zero());
  MatrixView<float> cf = row_major(wc.data(), c.rows, c.cols);
  // The narrow C must not overlap A or B either: checked on the caller's views before any work.
  if (detail::views_overlap(c, MatrixView<const E>(a), c.extent(), a.extent())) throw Error(Errc::aliasing, "C", "C overlaps A");
  if (detail::views_overlap(c, MatrixView<const E>(b), c.extent(), b.extent())) throw Error(Errc::aliasing, "C", "C overlaps B");
  gemm<S>(ctx, op_a, a, op_b, b, cf, alpha, beta);
  for (index_t i = 0; i < c.rows; ++i)
    for (index_t j = 0; j < c.cols; ++j) {
      const float v = wc[std::size_t(i * c.cols + j)];
      if constexpr (std::is_same_v<E, bf16>) c(i, j) = to_bf16(v);
      else c(i, j) = to_f16(v);
    }
}

}  // namespace ringmm
