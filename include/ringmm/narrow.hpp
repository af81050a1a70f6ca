// Narrow element types: bf16 and f16 operands accumulated in f32, i8 operands in i32.
//
//   gemm<MaxPlus<float>>(ctx, Op::N, bf16 A, Op::N, bf16 B, f32 C)   C in f32
//   gemm<MaxPlus<float>>(ctx, Op::N, bf16 A, Op::N, bf16 B, bf16 C)  C rounded back to bf16
//   gemm<MaxPlus<std::int32_t>>(ctx, Op::N, i8 A, Op::N, i8 B, i32 C)
//   gemm_batched<...>(ctx, Op::N, A, stride_a, Op::N, B, stride_b, C, stride_c, batch)   C in f32 or i32
//
// Every narrow value widens exactly to the accumulator type (f16 and bf16 are subsets of f32), so
// a narrow product equals the f32 (i32) product of the widened operands; a bf16 or f16 C is that
// result rounded to nearest, ties to even. bf16 and f16 go with any semiring of f32 elements;
// i8 with integer max-plus and min-plus, whose sentinel it has its own value for: −128 is −∞ for
// max-plus and 127 is +∞ for min-plus. Every other i8 value is finite, so i8 operands need no
// range check. Infinities and NaN of bf16 and f16 widen to the same f32 values.
//
// Each operand is widened where it lives, into a dense copy of the accumulator type in the same
// orientation (as large as A and B in f32 or i32): host memory by the CPU, device memory by a
// kernel on the Context's stream, into the CUDA engine's workspace. The product then runs as the
// Context chooses, on those copies. A narrow C in device memory is rounded there, after the product.
// i8 operands on the CUDA backend multiply instead as 16-bit lane pairs, two outputs an
// instruction (i8_product_in_lanes), from host memory too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/detail/input_check.hpp"
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

template <class E> constexpr cuda_detail::NarrowElement narrow_element() {
  if constexpr (std::is_same_v<E, bf16>) return cuda_detail::NarrowElement::bf16;
  else if constexpr (std::is_same_v<E, f16>) return cuda_detail::NarrowElement::f16;
  else return cuda_detail::NarrowElement::i8;
}

// A view's elements as runs along its contiguous axis: rows when row-major, columns otherwise.
struct Runs {
  index_t outer, inner;
  // Whether members `stride` apart follow each other at the runs' pitch (both in elements, or both
  // in bytes), so that they can be taken as one matrix of outer × members runs.
  bool members_follow_on(std::size_t stride, std::size_t pitch) const { return stride == pitch * std::size_t(outer); }
};
template <class T> Runs runs_of(const MatrixView<T>& v) {
  return v.layout == Layout::row_major ? Runs{v.rows, v.cols} : Runs{v.cols, v.rows};
}

// A dense buffer of W with the shape and orientation of `like`, `members` matrices one after
// another, in host or device memory; `view` is the first.
template <class W> struct WideBuffer {
  std::vector<W> host;
  std::shared_ptr<void> device;  // the CUDA engine's workspace, released on the stream
  MatrixView<W> view;
  index_t stride = 0;  // between members: the matrix's size, or 0 for one matrix
};
template <class W, class T>
WideBuffer<W> wide_buffer(const Context& ctx, const MatrixView<T>& like, bool on_device, const char* name,
                          index_t members = 1) {
  const auto size = checked_mul(like.rows, like.cols);
  const auto count = size ? checked_mul(*size, members) : std::nullopt;
  if (!count) throw Error(Errc::invalid_argument, name, "the widened copy's element count overflows");
  if (on_device && ctx.resolved_backend() != Backend::cuda)
    throw Error(Errc::invalid_argument, name, "is device memory, and the call runs on the CPU backend");
  WideBuffer<W> w;
  W* data = nullptr;
  if (on_device) {
    if constexpr (config::cuda) {
      w.device = cuda_detail::workspace_block(std::size_t(std::max<index_t>(*count, 1)) * sizeof(W), ctx.cuda_stream);
      data = static_cast<W*>(w.device.get());
    }
  } else {
    w.host.resize(std::size_t(*count));
    data = w.host.data();
  }
  w.view = like.layout == Layout::row_major ? row_major(data, like.rows, like.cols) : col_major(data, like.rows, like.cols);
  w.stride = members > 1 ? *size : 0;
  return w;
}

// v's members (`batch` of them, `stride` elements apart; stride 0: one matrix for all) widened
// into a dense copy of S's element type where v lives, the members one after another.
template <class S, class E>
WideBuffer<element_t<S>> widened(const Context& ctx, const MatrixView<const E>& v, const char* name, index_t stride = 0,
                                 index_t batch = 1) {
  validate_view(v, name);
  const bool on_device = on_cuda_device(v.data);
  const index_t members = stride == 0 ? 1 : batch;
  auto w = wide_buffer<element_t<S>>(ctx, v, on_device, name, members);
  Runs runs = runs_of(v);
  const bool even = members > 1 && runs.members_follow_on(std::size_t(stride), std::size_t(v.ld));
  if (even) runs.outer *= members;
  for (index_t member = 0; member < (even ? 1 : members); ++member) {
    const E* from = v.data + member * stride;
    element_t<S>* out = w.view.data + member * w.stride;
    if (on_device) {
      if constexpr (config::cuda && is_narrow_float_v<E>)
        cuda_detail::widen_runs(narrow_element<E>(), from, runs.outer, runs.inner, v.ld, out, 0, 0, ctx.cuda_stream);
      else if constexpr (config::cuda)
        cuda_detail::widen_runs(narrow_element<E>(), from, runs.outer, runs.inner, v.ld, out, i8_sentinel<S>(), S::zero(),
                                ctx.cuda_stream);
      continue;
    }
#pragma omp parallel for schedule(static) if (runs.outer * runs.inner >= (index_t(1) << 16))
    for (index_t r = 0; r < runs.outer; ++r)
      for (index_t i = 0; i < runs.inner; ++i) out[r * runs.inner + i] = widen<S, E>(from[r * v.ld + i]);
  }
  return w;
}

// Copies `members` matrices of `runs` between host memory (runs `host_pitch` bytes apart, members
// `host_stride` bytes apart) and a dense device copy (members one after another), either way.
inline void copy_members(const void* from, void* to, bool to_device, std::size_t host_pitch, std::size_t host_stride,
                         Runs runs, std::size_t element_bytes, index_t members, void* stream) {
  const std::size_t run_bytes = std::size_t(runs.inner) * element_bytes, matrix_bytes = run_bytes * std::size_t(runs.outer);
  const bool even = members == 1 || runs.members_follow_on(host_stride, host_pitch);
  const index_t copies = even ? 1 : members, runs_each = even ? members * runs.outer : runs.outer;
  for (index_t i = 0; i < copies; ++i) {
    const std::size_t host_at = std::size_t(i) * host_stride, device_at = std::size_t(i) * matrix_bytes;
    if (to_device)
      cuda_detail::copy_runs(static_cast<const char*>(from) + host_at, host_pitch, static_cast<char*>(to) + device_at,
                             run_bytes, run_bytes, runs_each, stream);
    else
      cuda_detail::copy_runs(static_cast<const char*>(from) + device_at, run_bytes, static_cast<char*>(to) + host_at,
                             host_pitch, run_bytes, runs_each, stream);
  }
}

// A batch operand (`batch` members `stride` elements apart; stride 0: one matrix for all) in device
// memory: v itself, or, where v is host memory, a dense device copy in v's orientation, members one
// after another (held by `keep`), holding v's values when `copy_values`. Returns member 0's view and
// the members' stride.
template <class T> struct DeviceSide {
  MatrixView<T> view;
  index_t stride;
};
template <class T>
DeviceSide<T> device_side(const Context& ctx, const MatrixView<T>& v, index_t stride, index_t batch,
                          std::shared_ptr<void>& keep, bool copy_values) {
  if (on_cuda_device(v.data)) return {v, stride};
  const Runs runs = runs_of(v);
  const index_t members = stride == 0 ? 1 : batch, size = runs.outer * runs.inner;
  keep = cuda_detail::workspace_block(std::size_t(members * size) * sizeof(T), ctx.cuda_stream);
  if (copy_values)
    copy_members(v.data, keep.get(), true, std::size_t(v.ld) * sizeof(T), std::size_t(stride) * sizeof(T), runs, sizeof(T),
                 members, ctx.cuda_stream);
  return {{static_cast<T*>(keep.get()), v.rows, v.cols, runs.inner, v.layout}, stride == 0 ? 0 : size};
}

// i8 max-plus and min-plus on the GPU as products of 16-bit lane pairs (MaxPlus<i16x2>,
// MinPlus<i16x2>), where one instruction updates two outputs and the i32 product's one: B's columns
// 2q and 2q + 1 go in the two lanes of a word, A's element in both, and the lanes of the product's
// word (i, q) are C(i, 2q) and C(i, 2q + 1). Every i8 value and every sum of two fits a lane (|x| ≤
// 127 against the lanes' finite range of ±4096, doubled by a sum), so the lanes hold the i32 sums
// exactly and their 0̄ stands for the sentinel's: C is the widened i32 product's, bit for bit.
// A batch (members `stride_x` elements apart, as gemm_batched takes them) is packed, multiplied and
// written in one pass each. Host operands go up as their bytes (a quarter of their i32 copies), and
// a host C comes back once the product is done. Taken on the CUDA backend where K > 0 and C's old
// values are not read unchecked (β ≠ 0̄ without trust_inputs takes the i32 route, whose scan checks
// C); an empty C is done at once. Returns false, having done nothing, where not taken.
template <class S>
bool i8_product_in_lanes(const Context& ctx, Op op_a, const MatrixView<const std::int8_t>& a, index_t stride_a, Op op_b,
                         const MatrixView<const std::int8_t>& b, index_t stride_b, const MatrixView<std::int32_t>& c,
                         index_t stride_c, index_t batch, std::int32_t alpha, std::int32_t beta) {
  if constexpr (!config::cuda) {
    return false;
  } else {
    if (!wants_cuda(ctx) || (beta != S::zero() && !ctx.trust_inputs)) return false;
    validate_view(a, "A");
    validate_view(b, "B");
    validate_view(c, "C");
    check_batch(batch, stride_a, stride_b, c, stride_c);
    check_product_shapes(op_a, apply_op(op_a, a), op_b, apply_op(op_b, b), c.rows, c.cols);
    const index_t m = c.rows, n = c.cols, k = op_a == Op::N ? a.cols : a.rows, words = (n + 1) / 2;
    if (m == 0 || n == 0 || batch == 0) return true;  // nothing to write, wherever the operands live
    if (k == 0) return false;
    // batch_span refuses a batch whose extent overflows.
    (void)batch_span(a, batch, stride_a);
    (void)batch_span(b, batch, stride_b);
    (void)batch_span(c, batch, stride_c);
    if (!ctx.trust_inputs) check_scalars<S>(alpha, beta);
    std::shared_ptr<void> a_copy, b_copy, c_copy;
    const auto da = device_side(ctx, a, stride_a, batch, a_copy, true);
    const auto db = device_side(ctx, b, stride_b, batch, b_copy, true);
    const auto dc = device_side(ctx, c, stride_c, batch, c_copy, beta != S::zero());
    const Strided<const std::int8_t> sa = apply_op(op_a, da.view), sb = apply_op(op_b, db.view);
    using Lanes = std::conditional_t<std::is_same_v<S, MaxPlus<std::int32_t>>, MaxPlus<i16x2>, MinPlus<i16x2>>;
    constexpr bool max_plus = std::is_same_v<S, MaxPlus<std::int32_t>>;
    // A broadcast operand (stride 0) is packed once and read by every member.
    const index_t a_members = stride_a == 0 ? 1 : batch, b_members = stride_b == 0 ? 1 : batch;
    const auto block = [&](index_t count) { return cuda_detail::workspace_block(std::size_t(count) * sizeof(i16x2), ctx.cuda_stream); };
    const auto wa = block(a_members * m * k), wb = block(b_members * k * words), wp = block(batch * m * words);
    cuda_detail::i8_to_lanes(max_plus, sa.p, m, k, sa.rs, sa.cs, a_members, da.stride, false, i8_sentinel<S>(), wa.get(),
                             ctx.cuda_stream);
    cuda_detail::i8_to_lanes(max_plus, sb.p, k, n, sb.rs, sb.cs, b_members, db.stride, true, i8_sentinel<S>(), wb.get(),
                             ctx.cuda_stream);
    Context lanes_ctx = ctx;
    lanes_ctx.trust_inputs = true;  // in the lanes' domain by construction
    auto p = make_problem<Lanes>(Op::N, row_major<const i16x2>(static_cast<const i16x2*>(wa.get()), m, k), Op::N,
                                 row_major<const i16x2>(static_cast<const i16x2*>(wb.get()), k, words),
                                 row_major(static_cast<i16x2*>(wp.get()), m, words), Lanes::one(), Lanes::zero());
    p.batch = batch;
    p.stride_a = stride_a == 0 ? 0 : m * k;
    p.stride_b = stride_b == 0 ? 0 : k * words;
    p.stride_c = m * words;
    p.a_on_device = p.b_on_device = p.c_on_device = true;
    run<Lanes>(lanes_ctx, p);
    const Strided<std::int32_t> sc = apply_op(Op::N, dc.view);
    cuda_detail::lanes_to_i32(max_plus, wp.get(), m, n, batch, sc.p, sc.rs, sc.cs, dc.stride, alpha, beta, ctx.cuda_stream);
    if (c_copy)
      copy_members(dc.view.data, c.data, false, std::size_t(c.ld) * sizeof(std::int32_t),
                   std::size_t(stride_c) * sizeof(std::int32_t), runs_of(c), sizeof(std::int32_t), batch, ctx.cuda_stream);
    return true;
  }
}

// The product of the widened operands into an accumulator-type C, `batch` members `stride_x`
// elements apart (`c_on_device`: C is workspace the engine is told is device memory, which a
// capture's pointer query would not know). Every member is widened before any is multiplied, so the
// i32 route's check refuses a batch before it writes C.
template <class S, class E>
void narrow_product(const Context& ctx, Op op_a, const MatrixView<const E>& a, index_t stride_a, Op op_b,
                    const MatrixView<const E>& b, index_t stride_b, const MatrixView<element_t<S>>& c, index_t stride_c,
                    index_t batch, scalar_t<S> alpha, scalar_t<S> beta, bool c_on_device) {
  if constexpr (std::is_same_v<E, std::int8_t>)
    if (i8_product_in_lanes<S>(ctx, op_a, a, stride_a, op_b, b, stride_b, c, stride_c, batch, alpha, beta)) return;
  check_batch(batch, stride_a, stride_b, c, stride_c);
  if (batch == 0) return;
  const auto wa = widened<S, E>(ctx, a, "A", stride_a, batch);
  const auto wb = widened<S, E>(ctx, b, "B", stride_b, batch);
  auto p = batched_problem<S>(op_a, MatrixView<const element_t<S>>(wa.view), wa.stride, op_b,
                              MatrixView<const element_t<S>>(wb.view), wb.stride, c, stride_c, batch, alpha, beta);
  p.a_on_device = wa.device != nullptr;
  p.b_on_device = wb.device != nullptr;
  p.c_on_device = c_on_device;
  run<S>(ctx, p);
}

}  // namespace detail

// C ← α ⊗ (op(A) ⊗ op(B)) ⊕ β ⊗ C with A and B of a narrow type, C of the accumulator type.
template <class S, class EA, class EB>
  requires(detail::narrow_operand_v<S, std::remove_const_t<EA>> && std::is_same_v<std::remove_const_t<EA>, std::remove_const_t<EB>>)
void gemm(const Context& ctx, Op op_a, MatrixView<EA> a, Op op_b, MatrixView<EB> b, MatrixView<element_t<S>> c,
          scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero()) {
  using E = std::remove_const_t<EA>;
  detail::narrow_product<S, E>(ctx, op_a, MatrixView<const E>(a), 0, op_b, MatrixView<const E>(b), 0, c, 0, 1, alpha, beta,
                               false);
}

// A batch of them, members `stride_x` elements apart (stride 0: one matrix for every member), as
// gemm_batched takes them. i8 on the CUDA backend packs, multiplies and writes every member in one
// pass each; otherwise every member is widened, then multiplied as one batch.
template <class S, class EA, class EB>
  requires(detail::narrow_operand_v<S, std::remove_const_t<EA>> && std::is_same_v<std::remove_const_t<EA>, std::remove_const_t<EB>>)
void gemm_batched(const Context& ctx, Op op_a, MatrixView<EA> a, index_t stride_a, Op op_b, MatrixView<EB> b,
                  index_t stride_b, MatrixView<element_t<S>> c, index_t stride_c, index_t batch,
                  scalar_t<S> alpha = S::one(), scalar_t<S> beta = S::zero()) {
  using E = std::remove_const_t<EA>;
  detail::narrow_product<S, E>(ctx, op_a, MatrixView<const E>(a), stride_a, op_b, MatrixView<const E>(b), stride_b, c,
                               stride_c, batch, alpha, beta, false);
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
  // The narrow C must not overlap A or B either: checked on the caller's views before any work.
  if (detail::views_overlap(c, MatrixView<const E>(a), c.extent(), a.extent())) throw Error(Errc::aliasing, "C", "C overlaps A");
  if (detail::views_overlap(c, MatrixView<const E>(b), c.extent(), b.extent())) throw Error(Errc::aliasing, "C", "C overlaps B");
  const bool on_device = detail::on_cuda_device(c.data);
  // With β = 0̄ the product never reads the old C, so its f32 copy needs no values.
  auto wc = beta != S::zero() ? detail::widened<S, E>(ctx, MatrixView<const E>(c), "C")
                              : detail::wide_buffer<float>(ctx, c, on_device, "C");
  detail::narrow_product<S, E>(ctx, op_a, MatrixView<const E>(a), 0, op_b, MatrixView<const E>(b), 0, wc.view, 0, 1, alpha,
                               beta, wc.device != nullptr);
  const detail::Runs runs = detail::runs_of(c);
  if (on_device) {
    if constexpr (config::cuda)
      cuda_detail::round_runs(detail::narrow_element<E>(), wc.view.data, runs.outer, runs.inner, c.data, c.ld,
                              ctx.cuda_stream);
    return;
  }
  for (index_t r = 0; r < runs.outer; ++r)
    for (index_t i = 0; i < runs.inner; ++i) {
      const float v = wc.view.data[r * runs.inner + i];
      if constexpr (std::is_same_v<E, bf16>) c.data[r * c.ld + i] = to_bf16(v);
      else c.data[r * c.ld + i] = to_f16(v);
    }
}

}  // namespace ringmm
