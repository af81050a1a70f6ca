// The one way into ringmm._core from Python: every public call (matmul, syrk, apsp, route, the HMMs,
// the backward products) reads its arrays through a Call, which knows the caller's framework. numpy
// arrays and torch tensors of exactly those types are read, allocated and copied here without
// Python-level steps; any other argument goes once through the adapter that python/ringmm/_frameworks.py
// registers (_core.use_adapter), which converts lists, names the framework, refuses mixtures and
// prepares its arrays (detached tensors, CudaArray views). Allocations, copies and the result's final
// form in that framework are the adapter's small callables (empty, full, assign, result, stream);
// what to allocate, copy and write, and when, is decided by the entries themselves (core.cpp,
// applications.cpp, autograd.cpp), in C++. Also here: the argument checks the entries share (names,
// numbers, flags, integers) and the products they run (run_product, run_syrk).
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"

namespace ringmm_py {

// ---- arguments that are not arrays --------------------------------------------------------------

// A semiring name ("max_plus", "max-plus", ...): TypeError when it is not a str, ValueError when unknown.
// Exact strings seen before are looked up in a cache.
void check_semiring_type(nb::handle semiring);
SemiringKind semiring_of(nb::handle semiring);
// "auto", "cpu" or "cuda", with the same two refusals.
void check_backend_type(nb::handle backend);
Backend backend_of(nb::handle backend);
// alpha, beta: None or a real number (numbers.Real); TypeError naming `name` otherwise.
std::optional<double> number_of(nb::handle x, const char* name);
// A flag (trans_a, return_argmax, ...) as Python's truth value.
bool flag_of(nb::handle x);
// An integer (operator.index) within int64, named in the errors.
std::int64_t integer_of(nb::handle x, const char* name);

// ---- one call's arrays --------------------------------------------------------------------------

enum class Framework { numpy, torch, adapter };

// One array argument of a call.
struct Argument {
  const char* name;              // the Python argument ("a", "out", "weights", ...)
  nb::handle given;              // what the caller passed (None: absent)
  bool required = true;          // read even when None (which the adapter then refuses)
  bool output = false;           // written into: imported writable where it can be
  nb::object object;             // the array as the framework holds it (after the adapter's prepare)
  nb::ndarray<nb::ro> array;     // its DLPack view
  nb::ndarray<> writable_array;  // outputs: the writable view, when the array can be written
  bool present() const { return object.is_valid(); }
};

class Call {
 public:
  // Reads the arguments (optional ones only where given): directly when they are all numpy arrays or
  // all torch tensors of exactly those types, else through the adapter. Refusals (not an array, mixed
  // frameworks, an unreadable array) raise TypeError or ValueError naming the argument.
  explicit Call(std::vector<Argument> arguments);

  Argument& operator[](std::size_t i) { return args_[i]; }
  Framework framework() const { return framework_; }
  // The argument's array as ArrayInfo (refuses memory that is neither host nor CUDA).
  ArrayInfo info(std::size_t i) const { return ArrayInfo(args_[i].name, args_[i].array); }
  // ValueError "out is not a writable array" unless output argument i can be written.
  void require_writable(std::size_t i) const;
  // The stream the call's work runs on: the framework's current one for arrays at `place` (0 on the host).
  std::uintptr_t stream(const Place& place);

  // A new row-major array of `shape` in the caller's framework, beside the arguments (on `place`),
  // of `dtype`, described in `info` under `name`. The call keeps it alive until it ends.
  nb::object empty(const Shape& shape, nb::dlpack::dtype dtype, const Place& place, const char* name,
                   std::optional<ArrayInfo>& info);
  // The same, every element `value` (index arrays).
  nb::object full(const Shape& shape, nb::dlpack::dtype dtype, std::int64_t value, const Place& place,
                  const char* name, std::optional<ArrayInfo>& info);
  // dst[...] = src, src broadcast to dst's shape, by the framework.
  void assign(nb::handle dst, nb::handle src);
  // A contiguous copy of argument i in its own shape, described in `info`.
  nb::object contiguous_copy(std::size_t i, std::optional<ArrayInfo>& info);
  // What the caller gets back for an array this call made (jax's own arrays, a CudaArray naming its stream).
  nb::object result(nb::handle x);

 private:
  void adapt();  // reads the arguments through the adapter (once)
  nb::object describe_new(nb::object x, const char* name, std::optional<ArrayInfo>& info);

  std::vector<Argument> args_;
  Framework framework_ = Framework::adapter;
  nb::object adapter_;               // the framework adapter (made on first need for numpy and torch)
  std::vector<nb::object> made_;     // the arrays this call made, alive until it returns
  std::vector<nb::ndarray<>> keep_;  // their DLPack views
};

// ---- matmul's shapes ----------------------------------------------------------------------------

// A dimension of size 1 at `at`: how vector operands are read (a row vector a as (1, K), a column
// vector b as (K, 1)). Its stride never matters.
void insert_unit(ArrayInfo& x, std::size_t at);
// x shaped as the result of the matrices, with the dimensions that vector operands drop put back.
void restore(ArrayInfo& x, bool row, bool col);
// The result's shape: the product's, without the dimensions that vector operands added.
Shape result_shape(Shape shape, bool row, bool col);

struct MatmulPlan {
  Plan plan;
  bool row = false, col = false;  // a is a row vector, b a column vector (each read as a matrix)
  bool k_int64 = false;           // K exceeds int32: the winning k's are int64
};
// ringmm.matmul's checks once its arrays are read, in its order and with its messages: dimensions,
// vectors made matrices (a, b, c and out are changed so), the plan, return_argmax's semiring, beta
// without c. ringmm.jax makes the same checks at trace time (jax_ffi.cpp).
MatmulPlan plan_matmul(ArrayInfo& a, ArrayInfo& b, std::optional<ArrayInfo>& c, std::optional<ArrayInfo>& out,
                       SemiringKind kind, bool trans_a, bool trans_b, bool argmax, bool has_beta);

// ---- the products -------------------------------------------------------------------------------

// Runs the planned product: into p.out and, with k_star (return_argmax; int64 where k_star_int64),
// the winning k of every entry into it; with accumulate, k_star is read too, and an entry where
// beta ⊗ c wins keeps it. The GIL is released during the product; the library's errors name
// Python's arguments.
void run_product(const Plan& p, const Operand* k_star, bool k_star_int64, SemiringKind kind, bool trans_a, bool trans_b,
                 std::optional<double> alpha, std::optional<double> beta, bool accumulate, const Context& ctx,
                 const Place& place);

// run_product's work, for callers that do not hold the GIL (the XLA FFI handlers): the same
// product, checks and error names.
void multiply(const Plan& p, const Operand* k_star, bool k_star_int64, SemiringKind kind, bool trans_a, bool trans_b,
              std::optional<double> alpha, std::optional<double> beta, bool accumulate, const Context& ctx,
              const Place& place);

// The planned syrk (op(a)ᵀ·op(a), one per batch member: p describes a as the product of op(a)ᵀ and
// op(a), and out) with the GIL released; the library's errors name Python's arguments.
void run_syrk(const Plan& p, SemiringKind kind, bool trans, const Context& ctx, const Place& place);

}  // namespace ringmm_py
