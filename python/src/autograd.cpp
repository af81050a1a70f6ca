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
#include "backward_plan.hpp"
#include "bindings.hpp"
#include "entry.hpp"

using namespace ringmm;
using namespace ringmm_py;

void ringmm_py::run_backward(const Backward& w, bool log_plus, SemiringKind kind, const Context& ctx) {
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
}

namespace {

// The entry of both backward products: (grad_a, grad_b) of c = a ⊗ b given grad_c, over log-plus
// (forward is c) or over a selecting semiring (forward is k_star: every grad_c[i, j] goes to the term
// k_star[i, j] that won, none where it is -1).
nb::object backward(bool log_plus, nb::handle a_object, nb::handle b_object, nb::handle forward_object,
                    nb::handle grad_c_object, nb::handle semiring, bool trust_inputs = false) {
  const SemiringKind kind = log_plus ? SemiringKind::log_plus : semiring_of(semiring);
  enum { A, B, FORWARD, GRAD_C };
  Call call({{"a", a_object}, {"b", b_object}, {log_plus ? "c" : "k_star", forward_object}, {"grad_c", grad_c_object}});
  std::optional<ArrayInfo> inputs[4] = {call.info(A), call.info(B), call.info(FORWARD), call.info(GRAD_C)};
  Backward w(*inputs[A], *inputs[B], *inputs[FORWARD], *inputs[GRAD_C], kind, !log_plus);
  if (!log_plus) require_selecting(kind, w.type, "argmax_backward");
  Context ctx = call_context(w.a.place, "auto", call.stream(w.a.place));
  ctx.trust_inputs = trust_inputs;
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
    const nb::gil_scoped_release release;
    run_backward(w, log_plus, kind, ctx);
  } catch (const Error& e) {
    throw renamed(e, true);
  }
  return nb::make_tuple(call.result(grad_a_object), call.result(grad_b_object));
}

}  // namespace

void ringmm_py::bind_autograd(nb::module_& m) {
  m.def(
      "log_plus_backward",
      [](nb::handle a, nb::handle b, nb::handle c, nb::handle grad_c, nb::handle trust_inputs) {
        return backward(true, a, b, c, grad_c, nb::none(), flag_of(trust_inputs));
      },
      nb::arg("a").none(), nb::arg("b").none(), nb::arg("c").none(), nb::arg("grad_c").none(),
      nb::arg("trust_inputs").none() = nb::none(),
      "(grad_a, grad_b) of c = a ⊗ b over log-plus, of the full batch shape; trust_inputs skips the value check");
  m.def(
      "argmax_backward",
      [](nb::handle a, nb::handle b, nb::handle k_star, nb::handle grad_c, nb::handle semiring) {
        return backward(false, a, b, k_star, grad_c, semiring);
      },
      nb::arg("a").none(), nb::arg("b").none(), nb::arg("k_star").none(), nb::arg("grad_c").none(),
      nb::arg("semiring").none(),
      "(grad_a, grad_b) of c = a ⊗ b over a selecting semiring, routed through k_star, of the full batch shape");
}
