// How every entry of ringmm._core reads its arguments and makes its arrays in the caller's
// framework (entry.hpp), the frameworks' registration from Python (_core.use_numpy, use_torch,
// use_adapter), and the products the entries share.
#include "entry.hpp"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"

namespace ringmm_py {
namespace {

// What the entries know of the frameworks, registered from Python; kept until exit (the references
// are never released).
struct Registry {
  PyObject* numpy_type = nullptr;       // numpy.ndarray
  PyObject* numpy_empty = nullptr;      // numpy.empty
  PyObject* numpy_dtype = nullptr;      // numpy.dtype
  PyObject* torch_type = nullptr;       // torch.Tensor
  PyObject* torch_module = nullptr;     // torch (its dtypes by name)
  PyObject* torch_to_dlpack = nullptr;  // torch.utils.dlpack.to_dlpack: a capsule, without __dlpack__'s stream work
  PyObject* torch_stream = nullptr;     // device index -> its current stream (cudaStream_t) as an int
  PyObject* adapt = nullptr;            // _frameworks.adapt(names, values) -> (framework, prepared values)
  PyObject* real = nullptr;             // numbers.Real
  PyObject* new_empty = PyUnicode_InternFromString("new_empty");
  PyObject* data_ptr = PyUnicode_InternFromString("data_ptr");
  PyObject* readonly = PyUnicode_InternFromString("readonly");
  PyObject* dtype_keyword = PyTuple_Pack(1, PyUnicode_InternFromString("dtype"));
  PyObject* semirings = PyDict_New();  // the spellings seen so far -> SemiringKind
  PyObject* backends = PyDict_New();   // the backend names seen so far -> Backend
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

void keep(PyObject*& slot, nb::handle object) {
  PyObject* previous = slot;
  slot = object.inc_ref().ptr();
  Py_XDECREF(previous);
}

nb::object check(PyObject* result) {
  if (!result) throw nb::python_error();
  return nb::steal(result);
}

// The full C API's macros where the extension is built with it; the stable ABI's functions where it
// is built for abi3 wheels (Py_LIMITED_API, Python >= 3.12).
void tuple_set(PyObject* tuple, Py_ssize_t i, PyObject* stolen) {
#ifdef Py_LIMITED_API
  PyTuple_SetItem(tuple, i, stolen);
#else
  PyTuple_SET_ITEM(tuple, i, stolen);
#endif
}
PyObject* call_one(PyObject* callable, PyObject* arg) {
  PyObject* args[] = {arg};
  return PyObject_Vectorcall(callable, args, 1, nullptr);
}

// type(x).__name__, as Python's messages name types.
std::string python_type_name(nb::handle x) {
  return nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(x.ptr()))).attr("__name__"));
}

// The value of a name argument through a cache of the exact strings seen so far.
template <class E, class Parse> E cached_name(PyObject* cache, nb::handle name, Parse parse) {
  if (PyObject* hit = PyDict_GetItemWithError(cache, name.ptr())) return E(PyLong_AsLong(hit));
  if (PyErr_Occurred()) throw nb::python_error();
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name.ptr(), &size);
  if (!text) throw nb::python_error();
  const E value = parse(std::string(text, std::size_t(size)));
  if (PyUnicode_CheckExact(name.ptr()) && PyDict_Size(cache) < 64) {  // the valid spellings are few
    const nb::object code = check(PyLong_FromLong(long(value)));
    if (PyDict_SetItem(cache, name.ptr(), code.ptr()) != 0) throw nb::python_error();
  }
  return value;
}

nb::object dims_of(const Shape& shape) {
  nb::object dims = check(PyTuple_New(Py_ssize_t(shape.size())));
  for (std::size_t i = 0; i < shape.size(); ++i)
    tuple_set(dims.ptr(), Py_ssize_t(i), check(PyLong_FromLongLong(shape[i])).release().ptr());
  return dims;
}

// The framework's dtype object of a DLPack dtype: numpy.dtype(name) or getattr(torch, name), made once
// and kept (a handful of dtypes, looked up by their packed code, bits and lanes).
PyObject* framework_dtype(Framework fw, nb::dlpack::dtype dtype) {
  static std::vector<std::pair<std::uint32_t, PyObject*>> known[2];
  auto& cache = known[fw == Framework::numpy ? 0 : 1];
  const std::uint32_t key = std::uint32_t(dtype.code) << 24 | std::uint32_t(dtype.bits) << 16 | dtype.lanes;
  for (const auto& [k, object] : cache)
    if (k == key) return object;
  const Registry& r = registry();
  const nb::object name = check(PyUnicode_FromString(dtype_name(dtype).c_str()));
  nb::object made = fw == Framework::numpy ? check(call_one(r.numpy_dtype, name.ptr()))
                                           : check(PyObject_GetAttr(r.torch_module, name.ptr()));
  cache.emplace_back(key, made.release().ptr());  // kept until exit
  return cache.back().second;
}

// x read through DLPack as its framework exports it (torch: a capsule made directly, since
// tensor.__dlpack__ costs ~4 µs a call in stream bookkeeping that ringmm does not need).
template <class Array> bool import_native(Framework fw, nb::handle x, Array& array) {
  if (fw == Framework::numpy) return nb::try_cast(x, array, false);
  PyObject* capsule = call_one(registry().torch_to_dlpack, x.ptr());
  if (!capsule) {
    PyErr_Clear();
    return false;
  }
  return nb::try_cast(nb::steal(capsule), array, false);
}

// An output argument's two views: writable where it can be written, read-only always.
template <class Import> bool import_output(Argument& arg, Import import) {
  if (import(arg.writable_array)) {
    arg.array = nb::ndarray<nb::ro>(arg.writable_array);
    return true;
  }
  arg.writable_array = nb::ndarray<>();
  return import(arg.array);
}

void use_numpy(nb::handle ndarray_type, nb::handle empty, nb::handle dtype) {
  Registry& r = registry();
  if (!PyType_Check(ndarray_type.ptr())) throw nb::type_error("use_numpy: ndarray_type must be a type");
  keep(r.numpy_empty, empty);
  keep(r.numpy_dtype, dtype);
  keep(r.numpy_type, ndarray_type);
}

void use_torch(nb::handle tensor_type, nb::handle torch, nb::handle to_dlpack, nb::handle current_stream) {
  Registry& r = registry();
  if (!PyType_Check(tensor_type.ptr())) throw nb::type_error("use_torch: tensor_type must be a type");
  keep(r.torch_module, torch);
  keep(r.torch_to_dlpack, to_dlpack);
  keep(r.torch_stream, current_stream);
  keep(r.torch_type, tensor_type);
}

void use_adapter(nb::handle adapt, nb::handle real) {
  Registry& r = registry();
  keep(r.adapt, adapt);
  keep(r.real, real);
}

}  // namespace

// ---- arguments that are not arrays --------------------------------------------------------------

void check_semiring_type(nb::handle semiring) {
  if (!PyUnicode_Check(semiring.ptr()))
    type_error("semiring must be a name such as 'max_plus', not " + python_type_name(semiring));
}

SemiringKind semiring_of(nb::handle semiring) {
  check_semiring_type(semiring);
  return cached_name<SemiringKind>(registry().semirings, semiring, parse_semiring_name);
}

void check_backend_type(nb::handle backend) {
  if (!PyUnicode_Check(backend.ptr()))
    type_error("backend must be 'auto', 'cpu' or 'cuda', not " + python_type_name(backend));
}

Backend backend_of(nb::handle backend) {
  check_backend_type(backend);
  return cached_name<Backend>(registry().backends, backend, [](const std::string& s) { return parse_backend(s); });
}

std::optional<double> number_of(nb::handle x, const char* name) {
  if (x.is_none()) return std::nullopt;
  if (PyFloat_CheckExact(x.ptr())) return PyFloat_AsDouble(x.ptr());
  if (!PyLong_Check(x.ptr())) {
    const int real = registry().real ? PyObject_IsInstance(x.ptr(), registry().real) : 0;
    if (real < 0) throw nb::python_error();
    if (!real) type_error(std::string(name) + " must be a number, not " + python_type_name(x));
  }
  const double value = PyFloat_AsDouble(x.ptr());
  if (value == -1.0 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

bool flag_of(nb::handle x) {
  if (x.ptr() == Py_True) return true;
  if (x.ptr() == Py_False) return false;
  const int truth = PyObject_IsTrue(x.ptr());
  if (truth < 0) throw nb::python_error();
  return truth != 0;
}

std::int64_t integer_of(nb::handle x, const char* name) {
  const nb::object index = nb::steal(PyNumber_Index(x.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    type_error(std::string(name) + " must be an integer, not " + python_type_name(x));
  }
  int overflow = 0;
  const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow) {
    const nb::object text = check(PyObject_Str(index.ptr()));
    value_error(std::string(name) + " = " + PyUnicode_AsUTF8AndSize(text.ptr(), nullptr) + " is out of range (a 64-bit integer)");
  }
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  return value;
}

// ---- one call's arrays --------------------------------------------------------------------------

Call::Call(std::vector<Argument> arguments) : args_(std::move(arguments)) {
  const Registry& r = registry();
  // Exact numpy arrays, or exact torch tensors: read here, without Python-level steps.
  PyObject* type = nullptr;
  bool native = true;
  for (const Argument& arg : args_) {
    if (arg.given.is_none() && !arg.required) continue;
    PyObject* t = reinterpret_cast<PyObject*>(Py_TYPE(arg.given.ptr()));
    if (!type) type = t;
    if (t != type) native = false;
  }
  if (native && type && (type == r.numpy_type || type == r.torch_type)) {
    framework_ = type == r.numpy_type ? Framework::numpy : Framework::torch;
    for (Argument& arg : args_) {
      if (arg.given.is_none()) continue;
      auto import = [&](auto& array) { return import_native(framework_, arg.given, array); };
      if (!(arg.output ? import_output(arg, import) : import(arg.array))) {
        native = false;  // the adapter says why, or reads it its own way
        break;
      }
      arg.object = nb::borrow(arg.given);
    }
    if (native) return;
    for (Argument& arg : args_) arg = Argument{arg.name, arg.given, arg.required, arg.output};
  }
  framework_ = Framework::adapter;
  adapt();
  for (Argument& arg : args_) {
    if (!arg.present()) continue;
    auto import = [&](auto& array) { return nb::try_cast(arg.object, array, false); };
    if (!(arg.output ? import_output(arg, import) : import(arg.array)))
      type_error(std::string(arg.name) + " cannot be read through DLPack (" + python_type_name(arg.object) + ")");
    // A read-only CudaArray reaches DLPack as an unversioned capsule, which cannot say so.
    if (arg.output && PyObject_HasAttr(arg.object.ptr(), r.readonly)) {
      const nb::object readonly = check(PyObject_GetAttr(arg.object.ptr(), r.readonly));
      if (flag_of(readonly)) arg.writable_array = nb::ndarray<>();
    }
  }
}

void Call::adapt() {
  if (adapter_.is_valid()) return;
  const Registry& r = registry();
  if (!r.adapt) throw nb::type_error("ringmm._core: no framework adapter registered (import ringmm)");
  std::vector<Argument*> present;
  for (Argument& arg : args_)
    if (!arg.given.is_none() || arg.required) present.push_back(&arg);
  nb::object names = check(PyTuple_New(Py_ssize_t(present.size())));
  nb::object values = check(PyTuple_New(Py_ssize_t(present.size())));
  for (std::size_t i = 0; i < present.size(); ++i) {
    tuple_set(names.ptr(), Py_ssize_t(i), check(PyUnicode_FromString(present[i]->name)).release().ptr());
    tuple_set(values.ptr(), Py_ssize_t(i), present[i]->given.inc_ref().ptr());
  }
  PyObject* args[] = {names.ptr(), values.ptr()};
  const nb::object adapted = check(PyObject_Vectorcall(r.adapt, args, 2, nullptr));
  adapter_ = adapted[0];
  const nb::object prepared = adapted[1];
  for (std::size_t i = 0; i < present.size(); ++i) present[i]->object = prepared[i];
}

void Call::require_writable(std::size_t i) const {
  if (!args_[i].writable_array.is_valid()) value_error(std::string(args_[i].name) + " is not a writable array");
}

std::uintptr_t Call::stream(const Place& place) {
  if (framework_ == Framework::numpy) return 0;
  nb::object stream;
  if (framework_ == Framework::torch) {
    if (!place.gpu) return 0;
    const nb::object device = check(PyLong_FromLong(place.id));
    stream = check(call_one(registry().torch_stream, device.ptr()));
  } else {
    stream = adapter_.attr("stream")();
  }
  const auto value = std::uintptr_t(PyLong_AsUnsignedLongLong(stream.ptr()));
  if (PyErr_Occurred()) throw nb::python_error();
  return value;
}

nb::object Call::describe_new(nb::object x, const char* name, std::optional<ArrayInfo>& info) {
  nb::ndarray<> array;
  if (!nb::try_cast(x, array, false)) type_error(std::string(name) + ": the framework made an array DLPack cannot read");
  keep_.push_back(array);
  made_.push_back(x);
  info.emplace(name, array);
  return x;
}

nb::object Call::empty(const Shape& shape, nb::dlpack::dtype dtype, const Place& place, const char* name,
                       std::optional<ArrayInfo>& info) {
  const Registry& r = registry();
  const nb::object dims = dims_of(shape);
  if (framework_ == Framework::adapter)
    return describe_new(adapter_.attr("empty")(dims, dtype_name(dtype)), name, info);
  // Row-major and contiguous, as numpy.empty and Tensor.new_empty make it, read through its data
  // pointer alone (a DLPack export would cost more than the allocation).
  nb::object result;
  void* data = nullptr;
  if (framework_ == Framework::numpy) {
    PyObject* args[] = {dims.ptr(), framework_dtype(framework_, dtype)};
    result = check(PyObject_Vectorcall(r.numpy_empty, args, 2, nullptr));
    Py_buffer view;
    if (PyObject_GetBuffer(result.ptr(), &view, PyBUF_WRITABLE) != 0) throw nb::python_error();
    data = view.buf;
    PyBuffer_Release(&view);  // result keeps the memory
  } else {  // like.new_empty(shape, dtype=...), beside the first tensor of the call
    PyObject* args[] = {args_[0].object.ptr(), dims.ptr(), framework_dtype(framework_, dtype)};
    result = check(PyObject_VectorcallMethod(r.new_empty, args, 2, r.dtype_keyword));
    PyObject* self[] = {result.ptr()};
    const nb::object pointer = check(PyObject_VectorcallMethod(r.data_ptr, self, 1, nullptr));
    data = PyLong_AsVoidPtr(pointer.ptr());
    if (PyErr_Occurred()) throw nb::python_error();
  }
  Shape strides(shape.size());
  index_t step = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = step;
    step *= std::max<index_t>(shape[d], 1);
  }
  info.emplace(name, data, dtype, place, shape, std::move(strides));
  made_.push_back(result);
  return result;
}

nb::object Call::full(const Shape& shape, nb::dlpack::dtype dtype, std::int64_t value, const Place&, const char* name,
                      std::optional<ArrayInfo>& info) {
  adapt();
  return describe_new(adapter_.attr("full")(dims_of(shape), dtype_name(dtype), value), name, info);
}

void Call::assign(nb::handle dst, nb::handle src) {
  adapt();
  adapter_.attr("assign")(dst, src);
}

nb::object Call::contiguous_copy(std::size_t i, std::optional<ArrayInfo>& info) {
  adapt();  // the copy reads the prepared array (a detached tensor, a CudaArray view)
  const ArrayInfo x = this->info(i);
  nb::object copy = empty(x.shape, x.dtype, x.place, args_[i].name, info);
  assign(copy, args_[i].object);
  return copy;
}

nb::object Call::result(nb::handle x) {
  if (framework_ != Framework::adapter) return nb::borrow(x);
  return adapter_.attr("result")(x);
}

// ---- matmul's shapes -----------------------------------------------------------------------------

// A dimension of size 1 at `at`: how vector operands are read (a row vector a as (1, K), a column
// vector b as (K, 1)). Its stride never matters.
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

MatmulPlan plan_matmul(ArrayInfo& a, ArrayInfo& b, std::optional<ArrayInfo>& c, std::optional<ArrayInfo>& out,
                       SemiringKind kind, bool trans_a, bool trans_b, bool argmax, bool has_beta) {
  for (const auto& [x, trans] : {std::pair{&a, trans_a}, std::pair{&b, trans_b}}) {
    const std::string name = x->name;
    if (x->shape.empty()) value_error(name + " is a scalar: matmul needs at least one dimension");
    if (x->shape.size() == 1 && trans) value_error("trans_" + name + " needs a matrix: " + name + " is a vector");
  }
  // Vectors become matrices of one row (a) or one column (b), as in numpy.matmul; c and out are
  // read with those dimensions put back.
  MatmulPlan m;
  m.row = a.shape.size() == 1;
  m.col = b.shape.size() == 1;
  if (m.row) insert_unit(a, 0);
  if (m.col) insert_unit(b, 1);
  if (c) restore(*c, m.row, m.col);
  if (out) restore(*out, m.row, m.col);
  m.plan = make_plan(a, b, c ? &*c : nullptr, out ? &*out : nullptr, kind, trans_a, trans_b);
  if (argmax) require_selecting(kind, m.plan.type, "return_argmax");
  if (has_beta && !c) value_error("beta scales c: pass c as well");
  // int32 holds every k below 2**31 - 1; a longer K takes int64.
  m.k_int64 = argmax && (trans_a ? m.plan.a.rows : m.plan.a.cols) > std::numeric_limits<std::int32_t>::max();
  return m;
}

// ---- the products -------------------------------------------------------------------------------

void run_product(const Plan& p, const Operand* k_star, bool k_star_int64, SemiringKind kind, bool trans_a, bool trans_b,
                 std::optional<double> alpha, std::optional<double> beta, bool accumulate, const Context& ctx,
                 const Place& place) {
  const nb::gil_scoped_release release;
  multiply(p, k_star, k_star_int64, kind, trans_a, trans_b, alpha, beta, accumulate, ctx, place);
}

void multiply(const Plan& p, const Operand* k_star, bool k_star_int64, SemiringKind kind, bool trans_a, bool trans_b,
              std::optional<double> alpha, std::optional<double> beta, bool accumulate, const Context& ctx,
              const Place& place) {
  if (p.members == 0) return;  // checked, and nothing to compute
  try {
    const DeviceGuard device(place);
    visit_semiring(kind, p.type, [&](auto tag) {
      using S = typename decltype(tag)::type;
      using T = element_t<S>;
      const scalar_t<S> al = alpha ? scalar_t<S>(scalar_from_double<S>(*alpha, "alpha")) : S::one();
      const scalar_t<S> be = !accumulate ? S::zero()
                             : beta      ? scalar_t<S>(scalar_from_double<S>(*beta, "beta"))
                                         : S::one();
      const Op op_a = trans_a ? Op::T : Op::N, op_b = trans_b ? Op::T : Op::N;
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

void run_syrk(const Plan& p, SemiringKind kind, bool trans, const Context& ctx, const Place& place) {
  try {
    const DeviceGuard device(place);
    visit_semiring(kind, p.type, [&](auto tag) {
      using S = typename decltype(tag)::type;
      using T = element_t<S>;
      const nb::gil_scoped_release release;
      for (index_t member = 0; member < p.members; ++member)
        ringmm::syrk<S>(ctx, trans ? Op::T : Op::N, p.a.member_view<const T>(member), p.out.member_view<T>(member));
    });
  } catch (const Error& e) {
    throw renamed(e, false);
  }
}

void bind_entry(nb::module_& m) {
  m.def("use_numpy", &use_numpy, nb::arg("ndarray_type"), nb::arg("empty"), nb::arg("dtype"),
        "Registers numpy: its arrays are then read and allocated without Python-level steps");
  m.def("use_torch", &use_torch, nb::arg("tensor_type"), nb::arg("torch"), nb::arg("to_dlpack"),
        nb::arg("current_stream"), "Registers torch: its tensors are then read and allocated without Python-level steps");
  m.def("use_adapter", &use_adapter, nb::arg("adapt"), nb::arg("real"),
        "Registers adapt(names, values) -> (framework, prepared values), through which every other argument is read");
}

}  // namespace ringmm_py
