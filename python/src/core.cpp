// ringmm.matmul and ringmm.syrk, each one C++ entry that checks every argument (naming the one at
// fault), decides what to copy, allocates the result in the caller's framework, copies what ringmm
// cannot read in place, runs the product with the GIL released and returns the result (entry.hpp
// says how arrays of each framework are read and made). Also the registry: semirings() and info().
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "arrays.hpp"
#include "bindings.hpp"
#include "entry.hpp"

using namespace ringmm;
using namespace ringmm_py;

namespace {

// ---- ringmm.matmul ---------------------------------------------------------------------------
// The checks come in the order of the arguments' reading: names and numbers, the arrays (framework,
// dimensions), their plan (dtypes, devices, shapes), then what the plan needs (a writable out, a
// selecting semiring for return_argmax, c for beta, the backend). Nothing is allocated or written
// before they all pass; out is written directly only when it can hold the product as it is made
// (c absent or c itself), else the product goes to a new array that is copied into out at the end.

enum { A, B, C, OUT };

nb::object matmul_entry(nb::handle a_object, nb::handle b_object, nb::handle semiring, nb::handle c_object,
                  nb::handle alpha_object, nb::handle beta_object, nb::handle trans_a_object, nb::handle trans_b_object,
                  nb::handle out_object, nb::handle argmax_object, nb::handle backend_object, nb::handle trust_object) {
  check_semiring_type(semiring);
  check_backend_type(backend_object);
  const std::optional<double> alpha = number_of(alpha_object, "alpha"), beta = number_of(beta_object, "beta");
  const bool trans_a = flag_of(trans_a_object), trans_b = flag_of(trans_b_object), argmax = flag_of(argmax_object);
  const bool has_c = !c_object.is_none(), has_out = !out_object.is_none();
  const bool c_is_out = has_c && c_object.is(out_object);

  Call call({{"a", a_object}, {"b", b_object}, {"c", c_object, false}, {"out", out_object, false, true}});
  ArrayInfo a = call.info(A), b = call.info(B);
  std::optional<ArrayInfo> c, out;
  if (has_c) c.emplace(call.info(C));
  if (has_out) out.emplace(call.info(OUT));
  const SemiringKind kind = semiring_of(semiring);
  MatmulPlan m = plan_matmul(a, b, c, out, kind, trans_a, trans_b, argmax, beta.has_value());
  Plan& p = m.plan;
  const bool row = m.row, col = m.col;
  if (has_out) call.require_writable(OUT);
  Context ctx = call_context(a.place, backend_of(backend_object), call.stream(a.place));
  ctx.trust_inputs = flag_of(trust_object);

  // Operands that no view describes: a copy with the full batch, or in its own shape for a vector.
  for (const auto& [i, x, op] : {std::tuple{A, &a, &p.a}, std::tuple{B, &b, &p.b}}) {
    if (op->in_place) continue;
    const bool vector = (i == A && row) || (i == B && col);
    Shape shape = vector ? Shape{x->shape[i == A ? 1 : 0]} : p.batch;
    if (!vector) shape.insert(shape.end(), x->shape.end() - 2, x->shape.end());
    std::optional<ArrayInfo> copy;
    call.assign(call.empty(shape, x->dtype, x->place, call[i].name, copy), call[i].object);
    if (vector) insert_unit(*copy, i == A ? 0 : 1);
    *op = describe(*copy, p.batch);
  }

  // The result (and k_star) in the caller's shape: the dimensions vector operands added dropped.
  const Shape shape = result_shape(p.shape, row, col);
  const bool in_out = has_out && p.out.in_place && (!has_c || c_is_out);
  nb::object target = in_out ? nb::borrow(call[OUT].object) : nb::object();
  std::optional<ArrayInfo> target_info, k_star_info;
  if (!in_out) {
    target = call.empty(shape, p.dtype, a.place, "out", target_info);
    restore(*target_info, row, col);
    p.out = describe(*target_info, p.batch);
  }
  nb::object k_star_object;
  Operand k_star;
  const bool int64 = m.k_int64;
  if (argmax) {
    const nb::dlpack::dtype index = int64 ? nb::dtype<std::int64_t>() : nb::dtype<std::int32_t>();
    // With c the library reads k_star as well and keeps it where beta ⊗ c wins: -1 says so.
    k_star_object = has_c ? call.full(shape, index, -1, a.place, "k_star", k_star_info)
                          : call.empty(shape, index, a.place, "k_star", k_star_info);
    restore(*k_star_info, row, col);
    k_star = describe(*k_star_info, p.batch);
  }
  if (has_c && !in_out) call.assign(target, call[C].object);
  run_product(p, argmax ? &k_star : nullptr, int64, kind, trans_a, trans_b, alpha, beta, has_c, ctx, a.place);

  nb::object result;
  if (has_out) {
    if (!in_out) call.assign(call[OUT].object, target);
    result = nb::borrow(out_object);
  } else {
    result = call.result(target);
  }
  if (argmax) return nb::make_tuple(result, call.result(k_star_object));
  return result;
}

// ---- ringmm.matmul of int8 operands --------------------------------------------------------------
// The C++ library's i8 gemm (ringmm/narrow.hpp) reads int8 operands as they are: on the CUDA backend
// they multiply as 16-bit lane pairs, twice the int32 product's rate at large sizes, every member of
// a batch at once, and host arrays go up as bytes. ringmm.matmul takes this entry for int8
// matrices and batches of them without c, out or return_argmax (python/ringmm/_narrow.py:
// takes_int8_entry); every other int8 call is widened by its framework.

nb::object matmul_int8_entry(nb::handle a_object, nb::handle b_object, nb::handle semiring, nb::handle alpha_object,
                             nb::handle trans_a_object, nb::handle trans_b_object, nb::handle backend_object,
                             nb::handle trust_object) {
  check_semiring_type(semiring);
  check_backend_type(backend_object);
  const std::optional<double> alpha = number_of(alpha_object, "alpha");
  const bool trans_a = flag_of(trans_a_object), trans_b = flag_of(trans_b_object);
  Call call({{"a", a_object}, {"b", b_object}});
  const ArrayInfo infos[2] = {call.info(A), call.info(B)};
  const ArrayInfo &a = infos[A], &b = infos[B];
  const SemiringKind kind = semiring_of(semiring);
  if (kind != SemiringKind::max_plus && kind != SemiringKind::min_plus)
    type_error("int8 operands multiply in max_plus and min_plus only (with -128 as −∞ and 127 as +∞), not in '" +
               python_name(kind) + "'; convert them to int32 for other semirings");
  for (const ArrayInfo& x : infos) {
    if (x.dtype != nb::dtype<std::int8_t>())
      type_error(std::string(x.name) + " has dtype " + dtype_name(x.dtype) + " where int8 is read");
    if (x.shape.size() < 2)
      value_error(std::string(x.name) + " has " + std::to_string(x.shape.size()) + " dimensions where at least 2 are read");
  }
  check_same_place(b, a);
  const auto [m, n, k] = product_dims(a, b, trans_a, trans_b);
  const Batch batch = broadcast_batch(a, b);
  // Operands that no view describes are read from copies with the full batch (the framework broadcasts).
  Operand ops[2];
  for (std::size_t i : {A, B}) {
    ops[i] = describe(infos[i], batch.shape);
    if (ops[i].in_place) continue;
    Shape shape = batch.shape;
    shape.insert(shape.end(), infos[i].shape.end() - 2, infos[i].shape.end());
    std::optional<ArrayInfo> copy;
    call.assign(call.empty(shape, infos[i].dtype, a.place, call[i].name, copy), call[i].object);
    ops[i] = describe(*copy, batch.shape);
  }
  Shape shape = batch.shape;
  shape.insert(shape.end(), {m, n});
  std::optional<ArrayInfo> out_info;
  nb::object target = call.empty(shape, nb::dtype<std::int32_t>(), a.place, "out", out_info);
  const Operand out = describe(*out_info, batch.shape);
  Context ctx = call_context(a.place, backend_of(backend_object), call.stream(a.place));
  ctx.trust_inputs = flag_of(trust_object);
  if (batch.members == 0) return call.result(target);  // checked, and nothing to compute
  try {
    const DeviceGuard device(a.place);
    const nb::gil_scoped_release release;
    const auto multiply = [&](auto tag) {
      using S = typename decltype(tag)::type;
      const std::int32_t al = alpha ? scalar_from_double<S>(*alpha, "alpha") : S::one();
      gemm_batched<S>(ctx, trans_a ? Op::T : Op::N, ops[A].view<const std::int8_t>(), ops[A].batch_stride,
                      trans_b ? Op::T : Op::N, ops[B].view<const std::int8_t>(), ops[B].batch_stride,
                      out.view<std::int32_t>(), out.batch_stride, batch.members, al);
    };
    if (kind == SemiringKind::max_plus) multiply(std::type_identity<MaxPlus<std::int32_t>>{});
    else multiply(std::type_identity<MinPlus<std::int32_t>>{});
  } catch (const Error& e) {
    throw renamed(e, false);
  }
  return call.result(target);
}

// ---- ringmm.syrk -----------------------------------------------------------------------------
// op(a)ᵀ·op(a) is the product of op(a)ᵀ and op(a): that product's plan checks and describes a and
// out. A batch is one syrk per member, each checking its own values: a refusal could come after
// earlier members were written, so a batch goes to a new array first and into out at the end.

nb::object syrk_entry(nb::handle a_object, nb::handle semiring, nb::handle trans_object, nb::handle out_object,
                nb::handle backend_object, nb::handle trust_object) {
  check_semiring_type(semiring);
  check_backend_type(backend_object);
  const bool trans = flag_of(trans_object), has_out = !out_object.is_none();
  Call call({{"a", a_object}, {"out", out_object, false, true}});
  const ArrayInfo a = call.info(0);
  std::optional<ArrayInfo> out;
  if (has_out) out.emplace(call.info(1));
  const SemiringKind kind = semiring_of(semiring);
  Plan p = make_plan(a, a, nullptr, out ? &*out : nullptr, kind, !trans, trans);
  if (has_out) call.require_writable(1);
  Context ctx = call_context(a.place, backend_of(backend_object), call.stream(a.place));
  ctx.trust_inputs = flag_of(trust_object);
  if (!p.a.in_place) {
    std::optional<ArrayInfo> copy;
    call.contiguous_copy(0, copy);
    p.a = describe(*copy, p.batch);
  }
  const bool direct = has_out && p.out.in_place && p.shape.size() == 2;
  nb::object target = direct ? nb::borrow(call[1].object) : nb::object();
  if (!direct) {
    std::optional<ArrayInfo> target_info;
    target = call.empty(p.shape, p.dtype, a.place, "out", target_info);
    p.out = describe(*target_info, p.batch);
  }
  run_syrk(p, kind, trans, ctx, a.place);
  if (!has_out) return call.result(target);
  if (!direct) call.assign(call[1].object, target);
  return nb::borrow(out_object);
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

// 1̄ of the pair `semiring` × `dtype` (a numpy dtype name), as a Python number: ringmm.einsum
// ⊕-reduces an index as a product with a vector of 1̄.
nb::object unit(nb::handle semiring, const std::string& dtype) {
  check_semiring_type(semiring);
  const SemiringKind kind = semiring_of(semiring);
  const std::optional<nb::dlpack::dtype> d = dtype_of_name(dtype);
  if (!d) type_error("dtype " + dtype + " is not one that ringmm multiplies");
  return visit_semiring(kind, element_type(kind, *d), [&](auto tag) -> nb::object {
    using T = element_t<typename decltype(tag)::type>;
    const T one = decltype(tag)::type::one();
    if constexpr (std::is_floating_point_v<T>) return nb::float_(double(one));
    else if constexpr (std::is_integral_v<T>) return nb::int_(std::int64_t(one));
    else type_error("dtype " + dtype + " has no scalar 1̄");  // packed lanes (i16x2), which arrays never hold
  });
}

nb::dict build_info() {
  nb::dict d;
  d["version"] = std::string(version());
  d["cuda_compiled"] = cuda_compiled();
  d["cuda_architectures"] = cuda_architectures();  // as CMAKE_CUDA_ARCHITECTURES names them; "" without CUDA
  d["blas"] = blas_compiled();
  d["cpu_isa"] = std::string(to_string(resolved_cpu_isa(CpuIsa::automatic)));  // RINGMM_CPU_ISA lowers it
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

}  // namespace

void ringmm_py::bind_products(nb::module_& m) {
  m.def("matmul", &matmul_entry, nb::arg("a").none(), nb::arg("b").none(), nb::arg("semiring").none(), nb::arg("c").none(),
        nb::arg("alpha").none(), nb::arg("beta").none(), nb::arg("trans_a").none(), nb::arg("trans_b").none(),
        nb::arg("out").none(), nb::arg("return_argmax").none(), nb::arg("backend").none(),
        nb::arg("trust_inputs").none() = nb::none(), "ringmm.matmul's one entry");
  m.def("matmul_int8", &matmul_int8_entry, nb::arg("a").none(), nb::arg("b").none(), nb::arg("semiring").none(),
        nb::arg("alpha").none(), nb::arg("trans_a").none(), nb::arg("trans_b").none(), nb::arg("backend").none(),
        nb::arg("trust_inputs").none() = nb::none(), "ringmm.matmul's entry for int8 operands");
  m.def("syrk", &syrk_entry, nb::arg("a").none(), nb::arg("semiring").none(), nb::arg("trans").none(), nb::arg("out").none(),
        nb::arg("backend").none(), nb::arg("trust_inputs").none() = nb::none(), "ringmm.syrk's one entry");
  m.def("semirings", &semirings);
  m.def("canonical_name", [](const std::string& s) { return python_name(parse_semiring_name(s)); });
  m.def("info", &build_info);
  m.def("unit", &unit, nb::arg("semiring").none(), nb::arg("dtype"), "1̄ of a semiring and dtype");
}
