// ringmm._core: the extension module behind the Python package. Each file binds its own part
// (bindings.hpp); every public call goes through one entry that reads the caller's arrays, checks
// them, allocates and copies in the caller's framework, and runs the library (entry.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <string>

#include "arrays.hpp"
#include "bindings.hpp"

using namespace ringmm;
using namespace ringmm_py;

namespace {

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
  bind_entry(m);
  bind_products(m);
  bind_autograd(m);
  bind_applications(m);
  bind_cuda_arrays(m);
#if RINGMM_PY_HAVE_XLA_FFI
  bind_jax_ffi(m);
#endif
}
