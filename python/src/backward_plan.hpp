// One backward product of c = a ⊗ b (ringmm/backward.hpp) on arrays as DLPack or XLA describes
// them: the checks made before any work and the run over the batch. autograd.cpp's entry reads
// Python's arrays into it; the XLA FFI handlers (jax_ffi.cpp) read XLA's buffers.
#pragma once

#include <string>

#include "arrays.hpp"

namespace ringmm_py {

// The arrays of one backward product, checked before any work: shapes, dtypes, devices, layouts.
// `forward` is c (log-plus) or, where ⊕ selects one term, the index matrix k_star.
struct Backward {
  ArrayInfo a, b, forward, grad_c, grad_a, grad_b;
  Shape batch;  // the broadcast batch of a, b, the forward's and grad_c (grad_c's in ringmm.torch)
  index_t members = 1;
  DType type;
  Operand a_op, b_op, forward_op, grad_c_op, grad_a_op, grad_b_op;

  // Checks the inputs; grad_a and grad_b (a and b until then) are made afterwards (set_arrays).
  Backward(const ArrayInfo& a_, const ArrayInfo& b_, const ArrayInfo& forward_, const ArrayInfo& grad_c_,
           SemiringKind kind, bool forward_is_index)
      : a(a_), b(b_), forward(forward_), grad_c(grad_c_), grad_a(a_), grad_b(b_) {
    for (const ArrayInfo* x : {&a, &b, &grad_c})
      if (x->shape.size() < 2)
        value_error(std::string(x->name) + " has " + std::to_string(x->shape.size()) +
                    " dimensions where at least 2 are needed");
    for (const ArrayInfo* x : {&b, &grad_c}) {
      check_same_dtype(*x, a);
      check_same_place(*x, a);
    }
    if (a.dtype.code != uint8_t(nb::dlpack::dtype_code::Float))
      type_error("gradients need float32 or float64 arrays, not " + dtype_name(a.dtype));
    type = element_type(kind, a.dtype);

    const index_t m = a.rows(), k = a.cols(), n = b.cols();
    if (b.rows() != k)
      value_error("inner dimensions differ: a is " + std::to_string(m) + "x" + std::to_string(k) + " but b is " +
                  std::to_string(b.rows()) + "x" + std::to_string(n));
    if (grad_c.rows() != m || grad_c.cols() != n)
      value_error("grad_c has shape " + shape_text(grad_c.shape) + " but a ⊗ b has matrices of " + std::to_string(m) +
                  "x" + std::to_string(n));
    if (forward_is_index) {
      check_index_array(forward, forward.shape, a);
    } else {
      check_same_dtype(forward, a);
      check_same_place(forward, a);
    }
    if (forward.rows() != m || forward.cols() != n)
      value_error(std::string(forward.name) + " has shape " + shape_text(forward.shape) + " but grad_c has " +
                  shape_text(grad_c.shape));
    // The batch: grad_c's in ringmm.torch, where a, b and the forward's broadcast to it. Under
    // jax.vmap any of the four may lack the vmapped dimension (size 1), so all four broadcast.
    batch.assign(grad_c.shape.begin(), grad_c.shape.end() - 2);
    for (const ArrayInfo* x : {&forward, &a, &b}) {
      const Shape own(x->shape.begin(), x->shape.end() - 2);
      if (own.size() > batch.size()) batch.insert(batch.begin(), own.size() - batch.size(), 1);
      for (std::size_t i = 1; i <= own.size(); ++i) {
        index_t& d = batch[batch.size() - i];
        const index_t e = own[own.size() - i];
        if (e != d && e != 1 && d != 1)
          value_error(std::string(x->name) + " has shape " + shape_text(x->shape) +
                      ", whose batch does not broadcast to grad_c's " +
                      shape_text(Shape(grad_c.shape.begin(), grad_c.shape.end() - 2)));
        d = std::max(d, e);
      }
    }
    for (index_t d : batch) {
      const std::optional<index_t> count = checked_mul(members, d);
      if (!count) value_error("the batch shape " + shape_text(batch) + " has too many members");
      members = *count;
    }
  }

  // The shape of a gradient: the batch, and rows x cols.
  Shape full(index_t rows, index_t cols) const {
    Shape shape = batch;
    shape.push_back(rows);
    shape.push_back(cols);
    return shape;
  }

  // The inputs as they are read (copies where the caller's could not be) and the new gradients.
  void set_arrays(const ArrayInfo* inputs[4], const ArrayInfo& grad_a_, const ArrayInfo& grad_b_) {
    a = *inputs[0];
    b = *inputs[1];
    forward = *inputs[2];
    grad_c = *inputs[3];
    grad_a = grad_a_;
    grad_b = grad_b_;
    a_op = in_place(a);
    b_op = in_place(b);
    forward_op = in_place(forward);
    grad_c_op = in_place(grad_c);
    grad_a_op = in_place(grad_a);
    grad_b_op = in_place(grad_b);
  }

  static Operand in_place(const ArrayInfo& x) {
    const Operand op = describe_matrices(x);
    require_in_place(op, x.name);
    return op;
  }

  // Calls run(member views...) for every member, on the arrays' device.
  template <class T, class F, class Run> void for_each_member(const Context& ctx, Run run) const {
    if (members == 0) return;
    const DeviceGuard device(a.place);
    for (index_t i = 0; i < members; ++i)
      run(ctx, a_op.view<const T>(member_offset(a, batch, i)), b_op.view<const T>(member_offset(b, batch, i)),
          forward_op.view<const F>(member_offset(forward, batch, i)),
          grad_c_op.view<const T>(member_offset(grad_c, batch, i)), grad_a_op.view<T>(member_offset(grad_a, batch, i)),
          grad_b_op.view<T>(member_offset(grad_b, batch, i)));
  }
};

// Runs the backward product that w describes: over log-plus (w.forward is c) or over the selecting
// semiring `kind` (w.forward is k_star). Needs no GIL; throws the library's errors as they are.
void run_backward(const Backward& w, bool log_plus, SemiringKind kind, const Context& ctx);

}  // namespace ringmm_py
