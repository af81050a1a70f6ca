// ringmm._core: the extension module behind the Python package. It sees arrays of any framework
// through DLPack (numpy, torch, cupy, jax), maps them onto ringmm's matrix views, checks them, and
// runs the product with the GIL released. The Python layer (python/ringmm) allocates results and
// copies the operands that no view describes, each in the caller's own framework; for numpy arrays
// and torch tensors read in place, one_call_matmul does all of it here, in one call.
// Over 500 lines because the one-call path (framework detection, allocation in the caller's
// framework, broadcasting) and the module definition belong together.
#include "arrays.hpp"
#include "bindings.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

using namespace ringmm;
using namespace ringmm_py;

namespace {

// Runs the planned product: into p.out and, with k_star (return_argmax; int64 where k_star_int64),
// the winning k of every entry into it; with accumulate, k_star is read too, and an entry where
// beta ⊗ c wins keeps it. The GIL is released during the product; the library's errors name
// Python's arguments.
void run_product(const Plan& p, const Operand* k_star, bool k_star_int64, SemiringKind kind, bool trans_a, bool trans_b,
                 std::optional<double> alpha, std::optional<double> beta, bool accumulate, const Context& ctx,
                 const Place& place) {
  if (p.members == 0) return;  // checked, and nothing to compute
  try {
#if RINGMM_PY_HAVE_CUDA
    const DeviceGuard device(place);
#else
    (void)place;
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
        if (k_star) {
          auto argmax = [&](auto k_view) {
            gemm_argmax_batched<S>(ctx, op_a, p.a.view<const T>(), p.a.batch_stride, op_b, p.b.view<const T>(),
                                   p.b.batch_stride, p.out.view<T>(), p.out.batch_stride, k_view, k_star->batch_stride,
                                   p.members, al, be);
          };
          if (k_star_int64) argmax(k_star->view<std::int64_t>());
          else argmax(k_star->view<std::int32_t>());
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
  bool k_star_int64 = false;
  if (argmax) {
    require_selecting(kind, p.type, "return_argmax");
    const ArrayInfo k_star_info("k_star", k_star_array);
    check_index_array(k_star_info, p.shape, a, true);
    k_star_int64 = k_star_info.dtype == nb::dtype<std::int64_t>();
    k_star = describe(k_star_info, p.batch);
    require_in_place(k_star, "k_star");
  }
  require_in_place(p.a, "a");
  require_in_place(p.b, "b");
  require_in_place(p.out, "out");
  if (beta && !accumulate) throw nb::value_error("beta scales c: pass c as well");

  const Context ctx = call_context(a.place, backend, stream);
  run_product(p, argmax ? &k_star : nullptr, k_star_int64, kind, trans_a, trans_b, alpha, beta, accumulate, ctx, a.place);
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

// ---- ringmm.matmul in one call ---------------------------------------------------------------
// ringmm.matmul's common cases (numpy arrays and torch tensors that ringmm reads in place, with or
// without out, c only as out itself) checked, allocated and multiplied in this one call: the general
// path of python/ringmm/_matmul.py made several trips into C++ and many Python-level steps, which
// cost more than a small product. Anything else answers NotImplemented before any work, and the
// general path takes the call: copies of operands, c to copy into a new result, other frameworks,
// arguments of other types, and every refusal, which the general path raises with its own message.

enum class Framework { numpy, torch };

// What the one-call path knows of the frameworks, registered from Python (_core.use_numpy,
// _core.use_torch); kept until exit (the references are never released).
struct Frameworks {
  PyObject* numpy_type = nullptr;      // numpy.ndarray
  PyObject* numpy_empty = nullptr;     // numpy.empty
  PyObject* numpy_int32 = nullptr;     // numpy.dtype("int32")
  PyObject* torch_type = nullptr;      // torch.Tensor
  PyObject* torch_to_dlpack = nullptr; // torch.utils.dlpack.to_dlpack: a capsule, without __dlpack__'s stream work
  PyObject* torch_int32 = nullptr;     // torch.int32
  PyObject* torch_stream = nullptr;    // device index -> its current stream (cudaStream_t) as an int
  PyObject* dtype = PyUnicode_InternFromString("dtype");
  PyObject* new_empty = PyUnicode_InternFromString("new_empty");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject* dtype_keyword = PyTuple_Pack(1, dtype);
  PyObject* semirings = PyDict_New();  // the spellings seen so far -> SemiringKind
  PyObject* backends = PyDict_New();   // the backend names seen so far -> Backend
};
Frameworks& frameworks() {
  static Frameworks* f = new Frameworks;
  return *f;
}

void keep(PyObject*& slot, nb::handle object) {
  PyObject* previous = slot;
  slot = object.inc_ref().ptr();
  Py_XDECREF(previous);
}

void use_numpy(nb::handle ndarray_type, nb::handle empty, nb::handle int32) {
  Frameworks& f = frameworks();
  if (!PyType_Check(ndarray_type.ptr())) throw nb::type_error("use_numpy: ndarray_type must be a type");
  keep(f.numpy_type, ndarray_type);
  keep(f.numpy_empty, empty);
  keep(f.numpy_int32, int32);
}

void use_torch(nb::handle tensor_type, nb::handle to_dlpack, nb::handle int32, nb::handle current_stream) {
  Frameworks& f = frameworks();
  if (!PyType_Check(tensor_type.ptr())) throw nb::type_error("use_torch: tensor_type must be a type");
  keep(f.torch_to_dlpack, to_dlpack);
  keep(f.torch_int32, int32);
  keep(f.torch_stream, current_stream);
  keep(f.torch_type, tensor_type);
}

// The value of a name argument (semiring, backend) through a cache of the exact strings seen so far;
// false when it is not a str (the general path refuses it). An unknown name throws.
template <class E, class Parse> bool cached_name(PyObject* cache, nb::handle name, E& value, Parse parse) {
  if (!PyUnicode_CheckExact(name.ptr())) return false;
  if (PyObject* hit = PyDict_GetItemWithError(cache, name.ptr())) {
    value = E(PyLong_AsLong(hit));
    return true;
  }
  if (PyErr_Occurred()) throw nb::python_error();
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
  if (!text) throw nb::python_error();
  value = parse(std::string(text, std::size_t(size)));
  if (PyDict_Size(cache) < 64) {  // the valid spellings are few; anything past them is not kept
    const nb::object code = nb::steal(PyLong_FromLong(long(value)));
    if (!code.is_valid() || PyDict_SetItem(cache, name.ptr(), code.ptr()) != 0) throw nb::python_error();
  }
  return true;
}

// A flag the one-call path takes: True or False (the general path reads other values).
bool flag(nb::handle x, bool& value) {
  if (x.ptr() != Py_True && x.ptr() != Py_False) return false;
  value = x.ptr() == Py_True;
  return true;
}

// alpha or beta: None, a float or an int, as _core.multiply converts them; false for anything else.
bool scalar(nb::handle x, std::optional<double>& value) {
  if (x.is_none()) return true;
  if (PyFloat_Check(x.ptr())) {
    value = PyFloat_AS_DOUBLE(x.ptr());
    return true;
  }
  if (!PyLong_Check(x.ptr())) return false;
  const double v = PyLong_AsDouble(x.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  value = v;
  return true;
}

// x read through DLPack, as its framework exports it; false when it cannot be (the general path
// says why).
template <class Array> bool import_array(Framework fw, nb::handle x, Array& array) {
  if (fw == Framework::numpy) return nb::try_cast(x, array, false);
  const nb::object capsule = nb::steal(PyObject_CallOneArg(frameworks().torch_to_dlpack, x.ptr()));
  if (!capsule.is_valid()) {
    PyErr_Clear();
    return false;
  }
  return nb::try_cast(capsule, array, false);
}

// A new array of `shape` beside a (its framework, device and dtype; int32 for index), described
// in `info`: row-major and contiguous, as numpy.empty and Tensor.new_empty make it, read through its
// data pointer alone (a DLPack export would cost more than the allocation).
nb::object allocate(Framework fw, nb::handle a, const ArrayInfo& like, const Shape& shape, bool index,
                    const char* name, std::optional<ArrayInfo>& info) {
  Frameworks& f = frameworks();
  const nb::object dims = nb::steal(PyTuple_New(Py_ssize_t(shape.size())));
  if (!dims.is_valid()) throw nb::python_error();
  for (std::size_t i = 0; i < shape.size(); ++i) {
    PyObject* d = PyLong_FromLongLong(shape[i]);
    if (!d) throw nb::python_error();
    PyTuple_SET_ITEM(dims.ptr(), Py_ssize_t(i), d);
  }
  nb::object result;
  void* data = nullptr;
  if (fw == Framework::numpy) {
    nb::object dtype;
    if (index) {
      dtype = nb::borrow(f.numpy_int32);
    } else {
      dtype = nb::steal(PyObject_GetAttr(a.ptr(), f.dtype));
      if (!dtype.is_valid()) throw nb::python_error();
    }
    PyObject* args[] = {dims.ptr(), dtype.ptr()};
    result = nb::steal(PyObject_Vectorcall(f.numpy_empty, args, 2, nullptr));
    if (!result.is_valid()) throw nb::python_error();
    Py_buffer view;
    if (PyObject_GetBuffer(result.ptr(), &view, PyBUF_WRITABLE) != 0) throw nb::python_error();
    data = view.buf;
    PyBuffer_Release(&view);  // result keeps the memory
  } else {
    if (index) {  // a.new_empty(shape, dtype=torch.int32)
      PyObject* args[] = {a.ptr(), dims.ptr(), f.torch_int32};
      result = nb::steal(PyObject_VectorcallMethod(f.new_empty, args, 2, f.dtype_keyword));
    } else {  // a.new_empty(shape)
      PyObject* args[] = {a.ptr(), dims.ptr()};
      result = nb::steal(PyObject_VectorcallMethod(f.new_empty, args, 2, nullptr));
    }
    if (!result.is_valid()) throw nb::python_error();
    PyObject* args[] = {result.ptr()};
    const nb::object pointer = nb::steal(PyObject_VectorcallMethod(f.data_ptr, args, 1, nullptr));
    if (!pointer.is_valid()) throw nb::python_error();
    data = PyLong_AsVoidPtr(pointer.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
  }
  Shape strides(shape.size());
  index_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<index_t>(shape[d], 1);
  }
  info.emplace(name, data, index ? nb::dtype<std::int32_t>() : like.dtype, like.place, shape, std::move(strides));
  return result;
}

// A dimension of size 1 at `at`: how Python's views of vector operands (x[None, :], x[:, None])
// and of the result (_restore in _matmul.py) see them. Its stride never matters.
void insert_unit(ArrayInfo& x, std::size_t at) {
  x.shape.insert(x.shape.begin() + std::ptrdiff_t(at), 1);
  x.strides.insert(x.strides.begin() + std::ptrdiff_t(at), 0);
}

// x shaped as the result of the matrices, with the dimensions that vector operands drop put back.
void restore(ArrayInfo& x, bool row, bool col) {
  if (row && col) {
    insert_unit(x, x.shape.size());
    insert_unit(x, x.shape.size());
  } else if (!x.shape.empty()) {
    if (row) insert_unit(x, x.shape.size() - 1);
    if (col) insert_unit(x, x.shape.size());
  }
}

// The result's shape: the product's, without the dimensions that vector operands added.
Shape result_shape(Shape shape, bool row, bool col) {
  if (row) shape.erase(shape.end() - 2);
  if (col) shape.erase(shape.end() - 1);
  return shape;
}

// The framework of x when the one-call path reads it.
bool framework_of(nb::handle x, Framework& fw) {
  const Frameworks& f = frameworks();
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(x.ptr()));
  if (type == f.numpy_type) fw = Framework::numpy;
  else if (type == f.torch_type) fw = Framework::torch;
  else return false;
  return true;
}

// The stream a call on arrays at `place` runs on: torch's current stream of their GPU, or none.
std::uintptr_t current_stream(const Place& place) {
  if (!place.gpu) return 0;
  const nb::object device = nb::steal(PyLong_FromLong(place.id));
  if (!device.is_valid()) throw nb::python_error();
  const nb::object stream = nb::steal(PyObject_CallOneArg(frameworks().torch_stream, device.ptr()));
  if (!stream.is_valid()) throw nb::python_error();
  const auto value = std::uintptr_t(PyLong_AsUnsignedLongLong(stream.ptr()));
  if (PyErr_Occurred()) throw nb::python_error();
  return value;
}

nb::object one_call_matmul(nb::handle a_object, nb::handle b_object, nb::handle semiring_object, nb::handle c_object,
                           nb::handle alpha_object, nb::handle beta_object, nb::handle trans_a_object,
                           nb::handle trans_b_object, nb::handle out_object, nb::handle argmax_object,
                           nb::handle backend_object) {
  const nb::object general = nb::borrow(Py_NotImplemented);
  const Frameworks& f = frameworks();
  PyTypeObject* type = Py_TYPE(a_object.ptr());
  Framework fw;
  if (!framework_of(a_object, fw)) return general;
  const bool has_out = !out_object.is_none(), accumulate = !c_object.is_none();
  bool trans_a, trans_b, argmax;
  std::optional<double> alpha, beta;
  if (Py_TYPE(b_object.ptr()) != type || (has_out && Py_TYPE(out_object.ptr()) != type) ||
      (accumulate && !c_object.is(out_object)) || !flag(trans_a_object, trans_a) || !flag(trans_b_object, trans_b) ||
      !flag(argmax_object, argmax) || (argmax && accumulate) || !scalar(alpha_object, alpha) ||
      !scalar(beta_object, beta) || (beta && !accumulate))
    return general;

  nb::ndarray<nb::ro> a_array, b_array;
  nb::ndarray<> out_array;
  if (!import_array(fw, a_object, a_array) || !import_array(fw, b_object, b_array) ||
      (has_out && !import_array(fw, out_object, out_array)))
    return general;

  // Everything the general path checks, checked here too: a refusal hands it the call, and it
  // raises its own message. Nothing is allocated or written before this block ends.
  std::optional<ArrayInfo> a, b, out, c;
  Plan p;
  SemiringKind kind = SemiringKind::max_plus;
  Context ctx;
  bool row = false, col = false;
  try {
    a.emplace("a", a_array);
    b.emplace("b", b_array);
    if (a->shape.empty() || b->shape.empty()) return general;
    row = a->shape.size() == 1;
    col = b->shape.size() == 1;
    if ((row && trans_a) || (col && trans_b)) return general;
    if (row) insert_unit(*a, 0);
    if (col) insert_unit(*b, 1);
    if (has_out) {
      out.emplace("out", out_array);
      restore(*out, row, col);
      if (accumulate) {  // c is out
        c = out;
        c->name = "c";
      }
    }
    Backend backend;
    if (!cached_name(f.semirings, semiring_object, kind, parse_semiring_name) ||
        !cached_name(f.backends, backend_object, backend, [](const std::string& s) { return parse_backend(s); }))
      return general;
    p = make_plan(*a, *b, c ? &*c : nullptr, out ? &*out : nullptr, kind, trans_a, trans_b);
    if (!p.a.in_place || !p.b.in_place || (out && !p.out.in_place)) return general;
    if (argmax && !selects(kind, p.type)) return general;
    // k_star is allocated int32 here; a K past its range takes the general path's int64.
    if (argmax && (trans_a ? p.a.rows : p.a.cols) > std::numeric_limits<std::int32_t>::max()) return general;
    ctx = call_context(a->place, backend, current_stream(a->place));
  } catch (const std::exception&) {
    return general;
  }

  // The result (and k_star) as the general path shapes it: vectors' dimensions dropped.
  nb::object result = nb::borrow(out_object), k_star_object;
  std::optional<ArrayInfo> result_info, k_star_info;
  Operand k_star;
  const Shape shape = result_shape(p.shape, row, col);
  if (!has_out) {
    result = allocate(fw, a_object, *a, shape, false, "out", result_info);
    restore(*result_info, row, col);
    p.out = describe(*result_info, p.batch);
  }
  if (argmax) {
    k_star_object = allocate(fw, a_object, *a, shape, true, "k_star", k_star_info);
    restore(*k_star_info, row, col);
    k_star = describe(*k_star_info, p.batch);
  }
  run_product(p, argmax ? &k_star : nullptr, false, kind, trans_a, trans_b, alpha, beta, accumulate, ctx, a->place);
  if (argmax) return nb::make_tuple(result, k_star_object);
  return result;
}

// ringmm.syrk's common cases in one call, as one_call_matmul does ringmm.matmul's: a numpy array or
// torch tensor read in place, with no out or a 2-D out written in place; NotImplemented otherwise.
nb::object one_call_syrk(nb::handle a_object, nb::handle semiring_object, nb::handle trans_object,
                         nb::handle out_object, nb::handle backend_object) {
  const nb::object general = nb::borrow(Py_NotImplemented);
  const Frameworks& f = frameworks();
  Framework fw;
  bool trans;
  const bool has_out = !out_object.is_none();
  if (!framework_of(a_object, fw) || (has_out && Py_TYPE(out_object.ptr()) != Py_TYPE(a_object.ptr())) ||
      !flag(trans_object, trans))
    return general;
  nb::ndarray<nb::ro> a_array;
  nb::ndarray<> out_array;
  if (!import_array(fw, a_object, a_array) || (has_out && !import_array(fw, out_object, out_array))) return general;

  std::optional<ArrayInfo> a, out;
  Plan p;
  SemiringKind kind = SemiringKind::plus_times;
  Context ctx;
  try {
    a.emplace("a", a_array);
    if (has_out) out.emplace("out", out_array);
    Backend backend;
    if (!cached_name(f.semirings, semiring_object, kind, parse_semiring_name) ||
        !cached_name(f.backends, backend_object, backend, [](const std::string& s) { return parse_backend(s); }))
      return general;
    // op(a)ᵀ·op(a) is the product of op(a)ᵀ and op(a): that product's plan describes a and out.
    p = make_plan(*a, *a, nullptr, out ? &*out : nullptr, kind, !trans, trans);
    // A batch into out goes through a new array first (the general path), so that a refused member
    // leaves out untouched.
    if (!p.a.in_place || (out && (!p.out.in_place || p.shape.size() != 2))) return general;
    ctx = call_context(a->place, backend, current_stream(a->place));
  } catch (const std::exception&) {
    return general;
  }
  nb::object result = nb::borrow(out_object);
  if (!has_out) {
    std::optional<ArrayInfo> result_info;
    result = allocate(fw, a_object, *a, p.shape, false, "out", result_info);
    p.out = describe(*result_info, p.batch);
  }
  run_syrk(p, kind, trans, ctx, a->place);
  return result;
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
  m.def("one_call_syrk", &one_call_syrk, nb::arg("a"), nb::arg("semiring").none(), nb::arg("trans").none(),
        nb::arg("out").none(), nb::arg("backend").none(),
        "ringmm.syrk's common cases in one call; NotImplemented hands the call to the Python layer");
  m.def("one_call_matmul", &one_call_matmul, nb::arg("a"), nb::arg("b"), nb::arg("semiring").none(), nb::arg("c").none(),
        nb::arg("alpha").none(), nb::arg("beta").none(), nb::arg("trans_a").none(), nb::arg("trans_b").none(),
        nb::arg("out").none(), nb::arg("return_argmax").none(), nb::arg("backend").none(),
        "ringmm.matmul's common cases in one call; NotImplemented hands the call to the Python layer");
  m.def("use_numpy", &use_numpy, nb::arg("ndarray_type"), nb::arg("empty"), nb::arg("int32"));
  m.def("use_torch", &use_torch, nb::arg("tensor_type"), nb::arg("to_dlpack"), nb::arg("int32"),
        nb::arg("current_stream"));
  m.def("semirings", &semirings);
  m.def("canonical_name", [](const std::string& s) { return python_name(parse_semiring_name(s)); });
  m.def("info", &info);
  bind_autograd(m);
  bind_applications(m);
  bind_cuda_arrays(m);
}
