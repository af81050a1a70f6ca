// What every binding of ringmm._core shares: the semiring and dtype names Python uses, arrays as
// DLPack describes them mapped onto ringmm's matrix views (with the broadcast batch), the checks
// made before any work, and the error renaming from the library's A, B, C to Python's a, b, c.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ringmm/ringmm.hpp"

#if RINGMM_PY_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
namespace ringmm_py {
using namespace ringmm;

using Shape = std::vector<index_t>;

[[noreturn]] inline void value_error(const std::string& message) { throw nb::value_error(message.c_str()); }
[[noreturn]] inline void type_error(const std::string& message) { throw nb::type_error(message.c_str()); }

inline std::string shape_text(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// ---- names -----------------------------------------------------------------------------------

// Python spells a semiring as GraphBLAS does: the registry's id, except or_and (lor_land).
inline constexpr std::pair<SemiringKind, const char*> semiring_ids[] = {
#define RINGMM_SEMIRING(id, spelling, use) {SemiringKind::id, #id},
#include "ringmm/builtins.def"
};

inline std::string python_name(SemiringKind kind) {
  if (kind == SemiringKind::or_and) return "lor_land";
  for (const auto& [k, id] : semiring_ids)
    if (k == kind) return id;
  return std::string(to_string(kind));
}

// Accepts the GraphBLAS name, the registry id and the CLI's spelling, with '-' or '_'.
inline SemiringKind parse_semiring_name(const std::string& text) {
  std::string name = text;
  std::replace(name.begin(), name.end(), '-', '_');
  for (const auto& [kind, id] : semiring_ids)
    if (name == id || (kind == SemiringKind::or_and && name == "lor_land")) return kind;
  std::string valid;
  for (const auto& [kind, id] : semiring_ids) valid += (valid.empty() ? "" : ", ") + python_name(kind);
  value_error("unknown semiring '" + text + "' (valid: " + valid +
              "; the command line's spellings such as max-plus work too)");
}

// The registry's element types that arrays can hold, as DLPack dtypes. i16x2 (two int16 lanes in
// one word) has no array dtype and is not exposed.
struct ElementType {
  DType type;
  nb::dlpack::dtype dtype;
};
inline const std::vector<ElementType>& element_types() {
  static const std::vector<ElementType> types = [] {
    std::vector<ElementType> list;
#define RINGMM_DTYPE(id, cpp_type) \
  if constexpr (std::is_arithmetic_v<cpp_type>) list.push_back({DType::id, nb::dtype<cpp_type>()});
#include "ringmm/builtins.def"
    // Booleans are bytes holding 0 or 1: the u8 type of or-and reads them as they are.
    list.push_back({DType::u8, nb::dtype<bool>()});
    return list;
  }();
  return types;
}

// numpy's name of a DLPack dtype ("float32", "uint8", "bool").
inline std::string dtype_name(nb::dlpack::dtype d) {
  using code = nb::dlpack::dtype_code;
  std::string name;
  switch (code(d.code)) {
    case code::Int: name = "int"; break;
    case code::UInt: name = "uint"; break;
    case code::Float: name = "float"; break;
    case code::Bool: return "bool";
    case code::Bfloat: name = "bfloat"; break;
    case code::Complex: name = "complex"; break;
    default: name = "dtype code " + std::to_string(d.code) + " of ";
  }
  name += std::to_string(d.bits);
  return d.lanes == 1 ? name : name + "x" + std::to_string(d.lanes);
}

// The DLPack dtype of numpy's name of one ("float32", "bfloat16", "bool"), or nullopt for a name
// that is none (ringmm.jax reads JAX's dtypes by name at trace time).
inline std::optional<nb::dlpack::dtype> dtype_of_name(const std::string& name) {
  using code = nb::dlpack::dtype_code;
  if (name == "bool") return nb::dtype<bool>();
  for (const auto& [prefix, c] : {std::pair{"uint", code::UInt}, std::pair{"int", code::Int}, std::pair{"bfloat", code::Bfloat},
                                  std::pair{"float", code::Float}, std::pair{"complex", code::Complex}}) {
    const std::string p = prefix;
    if (name.compare(0, p.size(), p) != 0) continue;
    const std::string bits = name.substr(p.size());
    if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return nb::dlpack::dtype{std::uint8_t(c), std::uint8_t(std::stoi(bits)), 1};
  }
  return std::nullopt;
}

inline std::vector<std::string> dtype_names_of(SemiringKind kind) {
  std::vector<std::string> names;
  for (const ElementType& t : element_types())
    if (is_supported(kind, t.type)) names.push_back(dtype_name(t.dtype));
  return names;
}

inline DType element_type(SemiringKind kind, nb::dlpack::dtype dtype) {
  for (const ElementType& t : element_types())
    if (t.dtype == dtype && is_supported(kind, t.type)) return t.type;
  std::string valid;
  for (const std::string& name : dtype_names_of(kind)) valid += (valid.empty() ? "" : ", ") + name;
  type_error(python_name(kind) + " does not support dtype " + dtype_name(dtype) + " (supported: " + valid + ")");
}

// Whether ⊕ of the pair selects one of its terms (max, min), so that a product can say which k won.
inline bool selects(SemiringKind kind, DType type) {
  return visit_semiring(kind, type, [](auto tag) { return semiring_traits<typename decltype(tag)::type>::selects; });
}

// Refuses a pair whose ⊕ does not select: `what` (return_argmax, argmax_backward) needs the winning k.
inline void require_selecting(SemiringKind kind, DType type, const std::string& what) {
  if (selects(kind, type)) return;
  std::string valid;
  for (SemiringKind k : all_semirings)
    for (const ElementType& t : element_types())
      if (is_supported(k, t.type) && selects(k, t.type)) {
        valid += (valid.empty() ? "" : ", ") + python_name(k);
        break;
      }
  type_error(what + " needs a semiring whose ⊕ selects one term (" + valid + "), not " + python_name(kind));
}

// ---- arrays ----------------------------------------------------------------------------------

// Where an array's memory lives. Host memory (plain or CUDA-pinned) is one place; device and
// managed memory of one GPU is another.
struct Place {
  bool gpu = false;
  int id = 0;
  bool operator==(const Place&) const = default;
  std::string text() const { return gpu ? "cuda:" + std::to_string(id) : "cpu"; }
};

// An output argument as a writable array; converted by the binding rather than by nanobind, so
// that a read-only one gets a message naming it.
inline nb::ndarray<> writable_array(nb::handle object, const char* name) {
  nb::ndarray<> array;
  if (!nb::try_cast(object, array)) value_error(std::string(name) + " is not a writable array");
  return array;
}

// An array as DLPack describes it; strides in elements.
struct ArrayInfo {
  const char* name;  // the Python argument: "a", "b", "c", "out", "weights", ...
  void* data;
  nb::dlpack::dtype dtype;
  Place place;
  Shape shape, strides;

  template <class... Args>
  ArrayInfo(const char* name, const nb::ndarray<Args...>& x)
      : name(name), data(const_cast<void*>(static_cast<const void*>(x.data()))), dtype(x.dtype()) {
    const int type = x.device_type();
    if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value)
      place = {true, x.device_id()};
    else if (type != nb::device::cpu::value && type != nb::device::cuda_host::value)
      type_error(std::string(name) + " lives on DLPack device type " + std::to_string(type) +
                 ": ringmm reads host memory and CUDA device memory");
    for (std::size_t i = 0; i < x.ndim(); ++i) {
      shape.push_back(index_t(x.shape(i)));
      strides.push_back(x.stride(i));
    }
  }
  // An array described directly: one this binding allocated, with known layout.
  ArrayInfo(const char* name, void* data, nb::dlpack::dtype dtype, Place place, Shape shape, Shape strides)
      : name(name), data(data), dtype(dtype), place(place), shape(std::move(shape)), strides(std::move(strides)) {}
  std::size_t batch_dims() const { return shape.size() - 2; }
  index_t rows() const { return shape[shape.size() - 2]; }
  index_t cols() const { return shape.back(); }
};

// Whether x's elements lie in row-major order with no gaps (dimensions of size 1 step anyhow, and
// an array without elements has any strides).
inline bool c_contiguous(const ArrayInfo& x) {
  if (std::find(x.shape.begin(), x.shape.end(), 0) != x.shape.end()) return true;
  index_t expected = 1;
  for (std::size_t d = x.shape.size(); d-- > 0;) {
    if (x.shape[d] != 1 && x.strides[d] != expected) return false;
    expected *= x.shape[d];
  }
  return true;
}

// One operand as ringmm reads it: matrices of rows × cols with a leading dimension, one per batch
// member, batch_stride elements apart (0: one matrix for every member).
struct Operand {
  void* data = nullptr;
  index_t rows = 0, cols = 0, ld = 1;
  Layout layout = Layout::row_major;
  index_t batch_stride = 0;
  bool in_place = false;  // false: no view describes the array; the caller passes a copy

  template <class T>
  MatrixView<T> view(index_t offset = 0) const {
    return {static_cast<T*>(data) + offset, rows, cols, ld, layout};
  }
  // The matrix of batch member `member`.
  template <class T>
  MatrixView<T> member_view(index_t member) const {
    return {static_cast<T*>(data) + member * batch_stride, rows, cols, ld, layout};
  }
};

// A leading dimension describes the last two dimensions when one of their strides is 1 and the
// other steps over whole rows or columns. Strides of dimensions of size 1 never matter.
inline bool describe_matrix(index_t rs, index_t cs, Operand& x) {
  if ((x.cols == 1 || cs == 1) && (x.rows == 1 || rs >= x.cols)) {
    x.layout = Layout::row_major;
    x.ld = x.rows == 1 ? x.cols : rs;
  } else if ((x.rows == 1 || rs == 1) && (x.cols == 1 || cs >= x.rows)) {
    x.layout = Layout::col_major;
    x.ld = x.cols == 1 ? x.rows : cs;
  } else {
    return false;
  }
  return true;
}

// The one stride that steps through x's members in the order of the broadcast batch shape: it
// exists when x's batch dimensions collapse into one (missing dimensions and dimensions of size 1
// step by 0, so a single matrix broadcast to every member is read in place).
inline std::optional<index_t> batch_stride(const ArrayInfo& x, const Shape& batch) {
  const std::size_t offset = batch.size() - x.batch_dims();
  std::optional<index_t> stride;
  index_t next = 0;  // the stride the next outer dimension must have
  for (std::size_t d = batch.size(); d-- > 0;) {
    if (batch[d] == 1) continue;
    const index_t s = d >= offset && x.shape[d - offset] != 1 ? x.strides[d - offset] : 0;
    if (s < 0 || (stride && s != next)) return std::nullopt;
    if (!stride) stride = s;
    const std::optional<index_t> span = checked_mul(s, batch[d]);
    if (!span) return std::nullopt;
    next = *span;
  }
  return stride.value_or(0);
}

// x's matrices (its last two dimensions) as one view; in_place says whether a leading dimension
// describes them. Callers that loop over the members move the view by member_offset.
inline Operand describe_matrices(const ArrayInfo& x) {
  Operand op{x.data, x.rows(), x.cols()};
  // An array without elements is never read or written (and frameworks give it any strides).
  if (std::find(x.shape.begin(), x.shape.end(), 0) != x.shape.end()) {
    op.ld = std::max<index_t>(1, op.cols);
    op.in_place = true;
    return op;
  }
  const std::size_t n = x.shape.size();
  op.in_place = describe_matrix(x.strides[n - 2], x.strides[n - 1], op);
  return op;
}

// x as a batched product reads it: its matrices, and one stride through the broadcast batch.
inline Operand describe(const ArrayInfo& x, const Shape& batch) {
  Operand op = describe_matrices(x);
  if (std::find(x.shape.begin(), x.shape.end(), 0) != x.shape.end()) return op;
  const std::optional<index_t> stride = batch_stride(x, batch);
  op.in_place = op.in_place && stride.has_value();
  op.batch_stride = stride.value_or(0);
  return op;
}

// The element offset of member `index` (numbered row-major over `batch`) of x broadcast to `batch`:
// any batch strides, for callers that loop over the members.
inline index_t member_offset(const ArrayInfo& x, const Shape& batch, index_t index) {
  const std::size_t missing = batch.size() - x.batch_dims();
  index_t offset = 0;
  for (std::size_t d = batch.size(); d-- > 0;) {
    const index_t i = index % batch[d];
    index /= batch[d];
    if (d >= missing && x.shape[d - missing] != 1) offset += i * x.strides[d - missing];
  }
  return offset;
}

// An operand that no view describes must have been copied before the call (the entries copy them).
inline void require_in_place(const Operand& x, const char* name) {
  if (!x.in_place)
    value_error(std::string(name) + " has strides that no leading dimension describes: pass a contiguous copy");
}

// Everything about one call that the arrays decide: checked before any work.
struct Plan {
  DType type;
  nb::dlpack::dtype dtype;
  Shape batch, shape;  // the broadcast batch shape, and the result's (batch + (M, N))
  index_t members = 1;
  Operand a, b, out;
};

// x's shape broadcast against `to`, aligned at the right, as numpy broadcasts.
inline bool broadcasts_to(const Shape& x, const Shape& to) {
  if (x.size() > to.size()) return false;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const index_t d = x[x.size() - 1 - i];
    if (d != 1 && d != to[to.size() - 1 - i]) return false;
  }
  return true;
}

inline void check_same_dtype(const ArrayInfo& x, const ArrayInfo& a) {
  if (x.dtype != a.dtype)
    type_error(std::string(x.name) + " has dtype " + dtype_name(x.dtype) + " but " + a.name + " has " +
               dtype_name(a.dtype) + " (ringmm does not convert types: convert one of them)");
}

inline void check_same_place(const ArrayInfo& x, const ArrayInfo& a) {
  if (!(x.place == a.place))
    value_error(std::string(x.name) + " is on " + x.place.text() + " but " + a.name + " is on " + a.place.text() +
                ": all arrays of a call must be on one device");
}

// An index matrix (K*: the winning k of every entry, int32) of `shape`, beside a: the argmax product
// writes it, the backward product reads it.
// An index matrix K* beside the result: int32, or also int64 where the call takes one (int64_too).
inline void check_index_array(const ArrayInfo& k_star, const Shape& shape, const ArrayInfo& a, bool int64_too = false) {
  if (k_star.dtype != nb::dtype<std::int32_t>() && !(int64_too && k_star.dtype == nb::dtype<std::int64_t>()))
    type_error(std::string(k_star.name) + " has dtype " + dtype_name(k_star.dtype) + " where the winning k's are " +
               (int64_too ? "int32 or int64" : "int32"));
  check_same_place(k_star, a);
  if (k_star.shape != shape)
    value_error(std::string(k_star.name) + " has shape " + shape_text(k_star.shape) + " but the result has shape " +
                shape_text(shape));
}

// The product's M, N and K from the matrices of a and b (their last two dimensions); ValueError
// where op(a)'s columns are not op(b)'s rows.
struct ProductDims {
  index_t m, n, k;
};
inline ProductDims product_dims(const ArrayInfo& a, const ArrayInfo& b, bool trans_a, bool trans_b) {
  const index_t m = trans_a ? a.cols() : a.rows(), k = trans_a ? a.rows() : a.cols();
  const index_t kb = trans_b ? b.cols() : b.rows(), n = trans_b ? b.rows() : b.cols();
  if (k != kb)
    value_error("inner dimensions differ: op(a) is " + std::to_string(m) + "x" + std::to_string(k) +
                (trans_a ? " (a transposed)" : "") + " but op(b) is " + std::to_string(kb) + "x" + std::to_string(n) +
                (trans_b ? " (b transposed)" : ""));
  return {m, n, k};
}

// The batch shape that the leading dimensions of a and b broadcast to (numpy.matmul's rule) and its
// member count; ValueError where they do not broadcast.
struct Batch {
  Shape shape;
  index_t members = 1;
};
inline Batch broadcast_batch(const ArrayInfo& a, const ArrayInfo& b) {
  const Shape batch_a(a.shape.begin(), a.shape.end() - 2), batch_b(b.shape.begin(), b.shape.end() - 2);
  Batch batch{batch_a.size() >= batch_b.size() ? batch_a : batch_b};
  for (std::size_t i = 1; i <= std::min(batch_a.size(), batch_b.size()); ++i) {
    index_t& d = batch.shape[batch.shape.size() - i];
    const index_t da = batch_a[batch_a.size() - i], db = batch_b[batch_b.size() - i];
    if (da != db && da != 1 && db != 1)
      value_error("batch dimensions " + shape_text(batch_a) + " of a and " + shape_text(batch_b) +
                  " of b do not broadcast");
    d = std::max(da, db);
  }
  for (index_t d : batch.shape) {
    const std::optional<index_t> members = checked_mul(batch.members, d);
    if (!members) value_error("the batch shape " + shape_text(batch.shape) + " has too many members");
    batch.members = *members;
  }
  return batch;
}

inline Plan make_plan(const ArrayInfo& a, const ArrayInfo& b, const ArrayInfo* c, const ArrayInfo* out, SemiringKind kind,
               bool trans_a, bool trans_b) {
  for (const ArrayInfo* x : {&a, &b})
    if (x->shape.size() < 2)
      value_error(std::string(x->name) + " has " + std::to_string(x->shape.size()) +
                  " dimensions where at least 2 are needed");
  Plan p;
  for (const ArrayInfo* x : {&b, c, out})
    if (x) {
      check_same_dtype(*x, a);
      check_same_place(*x, a);
    }
  p.dtype = a.dtype;
  p.type = element_type(kind, a.dtype);

  const auto [m, n, k] = product_dims(a, b, trans_a, trans_b);

  const Batch batch = broadcast_batch(a, b);
  p.batch = batch.shape;
  p.members = batch.members;
  p.shape = p.batch;
  p.shape.push_back(m);
  p.shape.push_back(n);

  if (c && !broadcasts_to(c->shape, p.shape))
    value_error("c has shape " + shape_text(c->shape) + ", which does not broadcast to the result's " +
                shape_text(p.shape));
  if (out && out->shape != p.shape)
    value_error("out has shape " + shape_text(out->shape) + " but the result has shape " + shape_text(p.shape));

  p.a = describe(a, p.batch);
  p.b = describe(b, p.batch);
  if (out) p.out = describe(*out, p.batch);
  return p;
}

// f(float{}) or f(double{}) for x's dtype; any other dtype is refused, saying `why`.
template <class F> void visit_real(const ArrayInfo& x, const std::string& why, F&& f) {
  if (x.dtype == nb::dtype<float>()) return f(float{});
  if (x.dtype == nb::dtype<double>()) return f(double{});
  type_error(std::string(x.name) + " has dtype " + dtype_name(x.dtype) + ": " + why);
}

// Viterbi with the fused CUDA step, or with one gemm_argmax per step where the fused step refuses
// the batch (it caps the grid's y extent, before any work).
template <class T>
void viterbi_fused_or_by_products(const Context& ctx, const HmmModel<T>& model, std::int32_t* path, T* score) {
  try {
    hmm_viterbi<T>(ctx, model, path, score, nullptr, ViterbiStep::fused);
  } catch (const Error& e) {
    if (e.code() != Errc::unsupported || e.subject() != "batch") throw;
    hmm_viterbi<T>(ctx, model, path, score, nullptr, ViterbiStep::gemm_argmax);
  }
}

// ---- errors and devices ----------------------------------------------------------------------

// e about `subject` instead (the Python argument that the library's name stands for).
inline Error with_subject(const Error& e, const std::string& subject) {
  const std::string& s = e.subject();
  const std::string what = e.what();
  return Error(e.code(), subject, s.empty() ? what : what.substr(s.size() + 2));
}

// ringmm names the operands A, B, C, K* and the gradients dA, dB, dC; Python callers know them as
// a, b, out (or c), k_star, grad_a, grad_b and grad_c.
inline Error renamed(const Error& e, bool accumulate) {
  const std::string& s = e.subject();
  return with_subject(e, s == "A"    ? "a"
                         : s == "B"  ? "b"
                         : s == "C"  ? (accumulate ? "c" : "out")
                         : s == "K*" ? "k_star"
                         : s == "dA" ? "grad_a"
                         : s == "dB" ? "grad_b"
                         : s == "dC" ? "grad_c"
                         : s == "stride_c" ? "out"
                         : s == "stride_k" ? "k_star"
                                     : s);
}

// The context of a call on arrays at `place`: the backend the caller named (the automatic choice
// stays quiet: ringmm.info() reports it), forced to CUDA on the caller's stream for arrays on a GPU.
inline Context call_context(const Place& place, Backend backend, std::uintptr_t stream) {
  Context ctx;
  ctx.on_notice = [](std::string_view) {};
  ctx.backend = backend;
  if (place.gpu) {
    if (ctx.backend == Backend::cpu) value_error("backend 'cpu' cannot read arrays on " + place.text());
    ctx.backend = Backend::cuda;
    ctx.cuda_stream = reinterpret_cast<void*>(stream);
  }
  return ctx;
}
inline Context call_context(const Place& place, const std::string& backend, std::uintptr_t stream) {
  return call_context(place, parse_backend(backend), stream);
}

#if RINGMM_PY_HAVE_CUDA
inline void cuda_check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw Error(Errc::device_error, "device", what + ": " + cudaGetErrorString(status));
}

// Makes the arrays' GPU current for the call (the library runs on the current device).
class DeviceGuard {
 public:
  explicit DeviceGuard(const Place& place) {
    if (!place.gpu) return;
    if (cudaGetDevice(&previous_) != cudaSuccess || cudaSetDevice(place.id) != cudaSuccess)
      throw Error(Errc::device_error, "device", "cannot make " + place.text() + " the current device");
    active_ = true;
  }
  ~DeviceGuard() {
    if (active_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool active_ = false;
};
#else
// Without CUDA every array is in host memory: nothing to select.
struct DeviceGuard {
  explicit DeviceGuard(const Place&) {}
};
#endif

}  // namespace ringmm_py
