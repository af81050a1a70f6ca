// The backward products of ringmm._core (ringmm/backward.hpp) on arrays of any framework: the
// gradients grad_a, grad_b of c = a ⊗ b given grad_c, for ringmm.torch's autograd. Each is one entry
// (entry.hpp) that checks the arrays, copies those whose matrices no leading dimension describes (an
// expanded grad_c), allocates grad_a and grad_b in the caller's framework and returns them. a and b
// broadcast over the batch of grad_c as in the forward product; grad_a and grad_b get the full
// batch shape (the caller sums them over the dimensions a and b were broadcast along). The members
// are run one after another in C++, with the GIL released; arrays on a GPU run on the caller's stream.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "arrays.hpp"
#include "bindings.hpp"
#include "entry.hpp"

using namespace ringmm;
using namespace ringmm_py;

namespace {

// The arrays of one backward product, checked before any work: shapes, dtypes, devices, layouts.
// `forward` is c (log-plus) or, where ⊕ selects one term, the index matrix k_star.
struct Backward {
  ArrayInfo a, b, forward, grad_c, grad_a, grad_b;
  Shape batch;  // the batch of grad_c, to which a's and b's broadcast
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
    batch.assign(grad_c.shape.begin(), grad_c.shape.end() - 2);
    for (index_t d : batch) members *= d;  // grad_c exists, so the count fits
    if (grad_c.shape != full(m, n))
      value_error("grad_c has shape " + shape_text(grad_c.shape) + " but a ⊗ b has matrices of " + std::to_string(m) +
                  "x" + std::to_string(n));
    for (const ArrayInfo* x : {&a, &b})
      if (!broadcasts_to(x->shape, full(x->rows(), x->cols())))
        value_error(std::string(x->name) + " has shape " + shape_text(x->shape) +
                    ", whose batch does not broadcast to grad_c's " + shape_text(batch));
    if (forward_is_index) {
      check_index_array(forward, grad_c.shape, a);
    } else {
      check_same_dtype(forward, a);
      check_same_place(forward, a);
      if (forward.shape != grad_c.shape)
        value_error(std::string(forward.name) + " has shape " + shape_text(forward.shape) + " but grad_c has " +
                    shape_text(grad_c.shape));
    }
  }

  // The shape of a gradient: grad_c's batch, and rows x cols.
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

  // Calls run(member views...) for every member, on the arrays' device, without the GIL.
  template <class T, class F, class Run> void for_each_member(const Context& ctx, Run run) const {
    if (members == 0) return;
#if RINGMM_PY_HAVE_CUDA
    const DeviceGuard device(a.place);
#endif
    const nb::gil_scoped_release release;
    for (index_t i = 0; i < members; ++i)
      run(ctx, a_op.view<const T>(member_offset(a, batch, i)), b_op.view<const T>(member_offset(b, batch, i)),
          forward_op.view<const F>(member_offset(forward, batch, i)),
          grad_c_op.view<const T>(member_offset(grad_c, batch, i)), grad_a_op.view<T>(member_offset(grad_a, batch, i)),
          grad_b_op.view<T>(member_offset(grad_b, batch, i)));
  }
};

// The entry of both backward products: (grad_a, grad_b) of c = a ⊗ b given grad_c, over log-plus
// (forward is c) or over a selecting semiring (forward is k_star: every grad_c[i, j] goes to the term
// k_star[i, j] that won, none where it is -1).
nb::object backward(bool log_plus, nb::handle a_object, nb::handle b_object, nb::handle forward_object,
                    nb::handle grad_c_object, nb::handle semiring) {
  const SemiringKind kind = log_plus ? SemiringKind::log_plus : semiring_of(semiring);
  enum { A, B, FORWARD, GRAD_C };
  Call call({{"a", a_object}, {"b", b_object}, {log_plus ? "c" : "k_star", forward_object}, {"grad_c", grad_c_object}});
  std::optional<ArrayInfo> inputs[4] = {call.info(A), call.info(B), call.info(FORWARD), call.info(GRAD_C)};
  Backward w(*inputs[A], *inputs[B], *inputs[FORWARD], *inputs[GRAD_C], kind, !log_plus);
  if (!log_plus) require_selecting(kind, w.type, "argmax_backward");
  const Context ctx = call_context(w.a.place, "auto", call.stream(w.a.place));
  for (std::size_t i = A; i <= GRAD_C; ++i)
    if (!describe_matrices(*inputs[i]).in_place) call.contiguous_copy(i, inputs[i]);
  std::optional<ArrayInfo> grad_a, grad_b;
  const nb::object grad_a_object =
      call.empty(w.full(w.a.rows(), w.a.cols()), w.a.dtype, w.a.place, "grad_a", grad_a);
  const nb::object grad_b_object =
      call.empty(w.full(w.b.rows(), w.b.cols()), w.a.dtype, w.a.place, "grad_b", grad_b);
  const ArrayInfo* read[4] = {&*inputs[A], &*inputs[B], &*inputs[FORWARD], &*inputs[GRAD_C]};
  w.set_arrays(read, *grad_a, *grad_b);
  try {
    if (log_plus) {
      auto run = [&](auto element) {  // log-plus holds f32 or f64 (element_type checked it)
        using T = decltype(element);
        w.for_each_member<T, T>(ctx, [](auto&&... views) { log_plus_backward<T>(views...); });
      };
      if (w.type == DType::f32) run(float{});
      else run(double{});
    } else {
      visit_semiring(kind, w.type, [&](auto tag) {
        using S = typename decltype(tag)::type;
        using T = element_t<S>;
        if constexpr (semiring_traits<S>::selects && std::is_floating_point_v<T>)
          w.for_each_member<T, std::int32_t>(ctx, [](auto&&... views) { argmax_backward<S>(views...); });
      });
    }
  } catch (const Error& e) {
    throw renamed(e, true);
  }
  return nb::make_tuple(call.result(grad_a_object), call.result(grad_b_object));
}

}  // namespace

void ringmm_py::bind_autograd(nb::module_& m) {
  m.def(
      "log_plus_backward",
      [](nb::handle a, nb::handle b, nb::handle c, nb::handle grad_c) {
        return backward(true, a, b, c, grad_c, nb::none());
      },
      nb::arg("a").none(), nb::arg("b").none(), nb::arg("c").none(), nb::arg("grad_c").none(),
      "(grad_a, grad_b) of c = a ⊗ b over log-plus, of the full batch shape");
  m.def(
      "argmax_backward",
      [](nb::handle a, nb::handle b, nb::handle k_star, nb::handle grad_c, nb::handle semiring) {
        return backward(false, a, b, k_star, grad_c, semiring);
      },
      nb::arg("a").none(), nb::arg("b").none(), nb::arg("k_star").none(), nb::arg("grad_c").none(),
      nb::arg("semiring").none(),
      "(grad_a, grad_b) of c = a ⊗ b over a selecting semiring, routed through k_star, of the full batch shape");
}
