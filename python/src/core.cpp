// ringmm._core: the extension module behind the Python package. It sees arrays of any framework
// through DLPack (numpy, torch, cupy, jax), maps them onto ringmm's matrix views, checks them, and
// runs the product with the GIL released. The Python layer (python/ringmm) allocates results and
// copies the operands that no view describes, each in the caller's own framework.
#include "arrays.hpp"
#include "bindings.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>

using namespace ringmm;
using namespace ringmm_py;

void bind_autograd(nb::module_& m);  // autograd.cpp

namespace {

// Writes the product into out and, when k_star is an array (return_argmax), the winning k of every
// entry into k_star; with accumulate, k_star is read too, and an entry where beta ⊗ c wins keeps it.
void multiply(nb::ndarray<nb::ro> a_array, nb::ndarray<nb::ro> b_array, nb::handle out_object, nb::handle k_star_object,
              const std::string& semiring, bool trans_a, bool trans_b, std::optional<double> alpha,
              std::optional<double> beta, bool accumulate, const std::string& backend, std::uintptr_t stream) {
  nb::ndarray<> out_array, k_star_array;  // converted here, so that a read-only one gets its own message
  if (!nb::try_cast(out_object, out_array)) throw nb::value_error("out is not a writable array");
  const bool argmax = !k_star_object.is_none();
  if (argmax && !nb::try_cast(k_star_object, k_star_array)) throw nb::value_error("k_star is not a writable array");
  const ArrayInfo a("a", a_array), b("b", b_array), out("out", out_array);
  const SemiringKind kind = parse_semiring_name(semiring);
  const Plan p = make_plan(a, b, nullptr, &out, kind, trans_a, trans_b);
  Operand k_star;
  if (argmax) {
    require_selecting(kind, p.type, "return_argmax");
    const ArrayInfo k_star_info("k_star", k_star_array);
    check_index_array(k_star_info, p.shape, a);
    k_star = describe(k_star_info, p.batch);
    require_in_place(k_star, "k_star");
  }
  require_in_place(p.a, "a");
  require_in_place(p.b, "b");
  require_in_place(p.out, "out");
  if (beta && !accumulate) throw nb::value_error("beta scales c: pass c as well");

  const Context ctx = call_context(a.place, backend, stream);
  if (p.members == 0) return;  // checked, and nothing to compute
  try {
#if RINGMM_PY_HAVE_CUDA
    const DeviceGuard device(a.place);
#endif
    visit_semiring(kind, p.type, [&](auto tag) {
      using S = typename decltype(tag)::type;
      using T = element_t<S>;
      const scalar_t<S> al = alpha ? scalar_t<S>(scalar_from_double<S>(*alpha, "alpha")) : S::one();
      const scalar_t<S> be = !accumulate ? S::zero()
                             : beta      ? scalar_t<S>(scalar_from_double<S>(*beta, "beta"))
                                         : S::one();
      const Op op_a = trans_a ? Op::T : Op::N, op_b = trans_b ? Op::T : Op::N;
      const nb::gil_scoped_release release;
      if constexpr (semiring_traits<S>::selects) {
        if (argmax) {
          gemm_argmax_batched<S>(ctx, op_a, p.a.view<const T>(), p.a.batch_stride, op_b, p.b.view<const T>(),
                                 p.b.batch_stride, p.out.view<T>(), p.out.batch_stride, k_star.view<std::int32_t>(),
                                 k_star.batch_stride, p.members, al, be);
          return;
        }
      }
      gemm_batched<S>(ctx, op_a, p.a.view<const T>(), p.a.batch_stride, op_b, p.b.view<const T>(), p.b.batch_stride,
                      p.out.view<T>(), p.out.batch_stride, p.members, al, be);
    });
  } catch (const Error& e) {
    throw renamed(e, accumulate);
  }
}

// What the Python layer needs before the product: the result's shape and dtype, and which
// operands it must copy (a, b: broadcast and made contiguous; out: computed elsewhere, then copied in).
nb::tuple plan(nb::ndarray<nb::ro> a_array, nb::ndarray<nb::ro> b_array, std::optional<nb::ndarray<nb::ro>> c_array,
               std::optional<nb::ndarray<nb::ro>> out_array, const std::string& semiring, bool trans_a, bool trans_b) {
  const ArrayInfo a("a", a_array), b("b", b_array);
  const std::optional<ArrayInfo> c = c_array ? std::optional<ArrayInfo>(std::in_place, "c", *c_array) : std::nullopt;
  const std::optional<ArrayInfo> out =
      out_array ? std::optional<ArrayInfo>(std::in_place, "out", *out_array) : std::nullopt;
  const Plan p =
      make_plan(a, b, c ? &*c : nullptr, out ? &*out : nullptr, parse_semiring_name(semiring), trans_a, trans_b);
  nb::list copies;
  if (!p.a.in_place) copies.append("a");
  if (!p.b.in_place) copies.append("b");
  if (out && !p.out.in_place) copies.append("out");
  nb::list shape;
  for (index_t d : p.shape) shape.append(d);
  return nb::make_tuple(nb::tuple(shape), dtype_name(p.dtype), copies);
}

// ---- the registry and the build ----------------------------------------------------------------

nb::list semirings() {
  nb::list list;
  for (SemiringKind kind : all_semirings) {
    nb::dict entry;
    entry["name"] = python_name(kind);
    entry["spelling"] = std::string(to_string(kind));
    entry["use"] = std::string(use_of(kind));
    entry["dtypes"] = dtype_names_of(kind);
    list.append(entry);
  }
  return list;
}

nb::dict info() {
  nb::dict d;
  d["version"] = std::string(version());
  d["cuda_compiled"] = cuda_compiled();
  d["blas"] = blas_compiled();
  std::string why;
  const bool have_device = cuda_device_available(&why);
  nb::list devices;
#if RINGMM_PY_HAVE_CUDA
  int count = 0;
  if (have_device && cudaGetDeviceCount(&count) == cudaSuccess)
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp prop{};
      if (cudaGetDeviceProperties(&prop, i) == cudaSuccess)
        devices.append(std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                       ", " + std::to_string(prop.multiProcessorCount) + " SMs, " +
                       std::to_string(prop.totalGlobalMem >> 20) + " MiB)");
    }
#endif
  d["cuda_devices"] = devices;
  d["cuda_status"] = have_device ? std::string("available") : why;
  d["default_backend"] = have_device ? "cuda" : "cpu";
  return d;
}

PyObject* python_exception(Errc code) {
  switch (code) {
    case Errc::unsupported: return PyExc_TypeError;
    case Errc::out_of_memory: return PyExc_MemoryError;
    case Errc::device_error: return PyExc_RuntimeError;
    default: return PyExc_ValueError;
  }
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "ringmm's extension module; use the functions of the ringmm package instead";
  m.attr("__version__") = std::string(version());
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(python_exception(e.code()), e.what());
    }
  });
  m.def("plan", &plan, nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("out").none(), nb::arg("semiring"),
        nb::arg("trans_a"), nb::arg("trans_b"));
  m.def("multiply", &multiply, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("k_star").none(),
        nb::arg("semiring"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("alpha").none(), nb::arg("beta").none(),
        nb::arg("accumulate"), nb::arg("backend"), nb::arg("stream"));
  m.def("semirings", &semirings);
  m.def("canonical_name", [](const std::string& s) { return python_name(parse_semiring_name(s)); });
  m.def("info", &info);
  bind_autograd(m);
  bind_applications(m);
  bind_cuda_arrays(m);
}
