// The backward products of ringmm._core (ringmm/backward.hpp) on arrays of any framework: the
// gradients grad_a, grad_b of c = a ⊗ b given grad_c, for ringmm.torch's autograd. a and b
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

using namespace ringmm;
using namespace ringmm_py;

namespace {

// Row-major without gaps (dimensions of size 1 take any stride): members written one after another
// never overlap.
bool contiguous(const ArrayInfo& x) {
  index_t expected = 1;
  for (std::size_t d = x.shape.size(); d-- > 0;) {
    if (x.shape[d] == 0) return true;
    if (x.shape[d] != 1 && x.strides[d] != expected) return false;
    expected *= x.shape[d];
  }
  return true;
}

ArrayInfo writable(nb::handle object, nb::ndarray<>& array, const char* name) {
  if (!nb::try_cast(object, array)) value_error(std::string(name) + " is not a writable array");
  ArrayInfo info(name, array);
  if (!contiguous(info))
    value_error(std::string(name) + " must be a contiguous array (gradients are written member after member)");
  return info;
}

// The arrays of one backward product, checked before any work: shapes, dtypes, devices, layouts.
// `forward` is c (log-plus) or, where ⊕ selects one term, the index matrix k_star.
struct Backward {
  ArrayInfo a, b, forward, grad_c, grad_a, grad_b;
  Shape batch;  // the batch of grad_c, to which a's and b's broadcast
  index_t members = 1;
  DType type;
  Operand a_op, b_op, forward_op, grad_c_op, grad_a_op, grad_b_op;

  Backward(const ArrayInfo& a_, const ArrayInfo& b_, const ArrayInfo& forward_, const ArrayInfo& grad_c_,
           const ArrayInfo& grad_a_, const ArrayInfo& grad_b_, SemiringKind kind, bool forward_is_index)
      : a(a_), b(b_), forward(forward_), grad_c(grad_c_), grad_a(grad_a_), grad_b(grad_b_) {
    for (const ArrayInfo* x : {&a, &b, &grad_c})
      if (x->shape.size() < 2)
        value_error(std::string(x->name) + " has " + std::to_string(x->shape.size()) +
                    " dimensions where at least 2 are needed");
    for (const ArrayInfo* x : {&b, &grad_c, &grad_a, &grad_b}) {
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
    auto full = [&](index_t rows, index_t cols) {
      Shape shape = batch;
      shape.push_back(rows);
      shape.push_back(cols);
      return shape;
    };
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
    for (const auto& [x, shape] : {std::pair{&grad_a, full(m, k)}, std::pair{&grad_b, full(k, n)}})
      if (x->shape != shape)
        value_error(std::string(x->name) + " has shape " + shape_text(x->shape) + " but needs " + shape_text(shape));

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

// grad_a, grad_b of c = a ⊗ b over log-plus: the softmax over k of every term, weighted by grad_c.
void log_plus_backward_arrays(nb::ndarray<nb::ro> a, nb::ndarray<nb::ro> b, nb::ndarray<nb::ro> c,
                              nb::ndarray<nb::ro> grad_c, nb::handle grad_a_object, nb::handle grad_b_object,
                              std::uintptr_t stream) {
  nb::ndarray<> grad_a, grad_b;
  const Backward w(ArrayInfo("a", a), ArrayInfo("b", b), ArrayInfo("c", c), ArrayInfo("grad_c", grad_c),
                   writable(grad_a_object, grad_a, "grad_a"), writable(grad_b_object, grad_b, "grad_b"),
                   SemiringKind::log_plus, false);
  try {
    const Context ctx = call_context(w.a.place, "auto", stream);
    auto run = [&](auto element) {  // log-plus holds f32 or f64 (element_type checked it)
      using T = decltype(element);
      w.for_each_member<T, T>(ctx, [](auto&&... views) { log_plus_backward<T>(views...); });
    };
    if (w.type == DType::f32) run(float{});
    else run(double{});
  } catch (const Error& e) {
    throw renamed(e, true);
  }
}

// grad_a, grad_b of c = a ⊗ b over a selecting semiring: every grad_c[i, j] goes to the term
// k_star[i, j] that won (none where k_star is -1).
void argmax_backward_arrays(nb::ndarray<nb::ro> a, nb::ndarray<nb::ro> b, nb::ndarray<nb::ro> k_star,
                            nb::ndarray<nb::ro> grad_c, nb::handle grad_a_object, nb::handle grad_b_object,
                            const std::string& semiring, std::uintptr_t stream) {
  const SemiringKind kind = parse_semiring_name(semiring);
  nb::ndarray<> grad_a, grad_b;
  const Backward w(ArrayInfo("a", a), ArrayInfo("b", b), ArrayInfo("k_star", k_star), ArrayInfo("grad_c", grad_c),
                   writable(grad_a_object, grad_a, "grad_a"), writable(grad_b_object, grad_b, "grad_b"), kind, true);
  require_selecting(kind, w.type, "argmax_backward");
  try {
    const Context ctx = call_context(w.a.place, "auto", stream);
    visit_semiring(kind, w.type, [&](auto tag) {
      using S = typename decltype(tag)::type;
      using T = element_t<S>;
      if constexpr (semiring_traits<S>::selects && std::is_floating_point_v<T>)
        w.for_each_member<T, std::int32_t>(ctx, [](auto&&... views) { argmax_backward<S>(views...); });
    });
  } catch (const Error& e) {
    throw renamed(e, true);
  }
}

}  // namespace

void ringmm_py::bind_autograd(nb::module_& m) {
  m.def("log_plus_backward", &log_plus_backward_arrays, nb::arg("a"), nb::arg("b"), nb::arg("c"), nb::arg("grad_c"),
        nb::arg("grad_a"), nb::arg("grad_b"), nb::arg("stream"),
        "Writes the gradients of c = a ⊗ b over log-plus into grad_a and grad_b (full batch shape, contiguous); "
        "on error they hold nothing meaningful");
  m.def("argmax_backward", &argmax_backward_arrays, nb::arg("a"), nb::arg("b"), nb::arg("k_star"), nb::arg("grad_c"),
        nb::arg("grad_a"), nb::arg("grad_b"), nb::arg("semiring"), nb::arg("stream"),
        "Writes the gradients of c = a ⊗ b over a selecting semiring, routed through k_star, into grad_a and grad_b "
        "(full batch shape, contiguous); on error they hold nothing meaningful");
  m.def(
      "matrices_in_place",
      [](nb::ndarray<nb::ro> x) {
        const ArrayInfo info("x", x);
        return info.shape.size() >= 2 && describe_matrices(info).in_place;
      },
      nb::arg("x"), "Whether a leading dimension describes x's matrices: the backward products read it as it is");
}
