// Spellings of the enums, shared by messages, the CLI and result files.
#include <string>

#include "ringmm/context.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/error.hpp"
#include "ringmm/types.hpp"

namespace ringmm {

namespace {
template <class E, std::size_t N>
E parse_enum(std::string_view text, std::string_view what, const std::pair<std::string_view, E> (&table)[N]) {
  std::string valid;
  for (const auto& [name, value] : table) {
    if (name == text) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(name);
  }
  throw Error(Errc::invalid_argument, std::string(what), "unknown value '" + std::string(text) + "' (valid: " + valid + ")");
}

constexpr std::pair<std::string_view, DType> dtype_names[] = {
#define RINGMM_DTYPE(id, cpp_type) {#id, DType::id},
#include "ringmm/builtins.def"
};
constexpr std::pair<std::string_view, SemiringKind> semiring_names[] = {
#define RINGMM_SEMIRING(id, spelling, use) {spelling, SemiringKind::id},
#include "ringmm/builtins.def"
};
constexpr std::pair<std::string_view, SemiringKind> semiring_uses[] = {
#define RINGMM_SEMIRING(id, spelling, use) {use, SemiringKind::id},
#include "ringmm/builtins.def"
};
constexpr std::pair<std::string_view, Backend> backend_names[] = {
    {"auto", Backend::automatic}, {"cpu", Backend::cpu}, {"cuda", Backend::cuda}};
constexpr std::pair<std::string_view, BorderPolicy> border_names[] = {
    {"auto", BorderPolicy::automatic}, {"pad", BorderPolicy::pad}, {"predicate", BorderPolicy::predicate}};
constexpr std::pair<std::string_view, BooleanMma> boolean_mma_names[] = {
    {"auto", BooleanMma::automatic}, {"int8", BooleanMma::int8}, {"bits", BooleanMma::bits}};
constexpr std::pair<std::string_view, CpuIsa> cpu_isa_names[] = {
    {"auto", CpuIsa::automatic}, {"generic", CpuIsa::generic}, {"avx2", CpuIsa::avx2}, {"avx512", CpuIsa::avx512}};

template <class E, std::size_t N> std::string_view name_of(E value, const std::pair<std::string_view, E> (&table)[N]) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}
}  // namespace

std::string_view to_string(DType t) { return name_of(t, dtype_names); }
std::string_view to_string(SemiringKind s) { return name_of(s, semiring_names); }
std::string_view use_of(SemiringKind s) { return name_of(s, semiring_uses); }
std::string_view to_string(Backend b) { return name_of(b, backend_names); }
std::string_view to_string(BorderPolicy b) { return name_of(b, border_names); }
std::string_view to_string(BooleanMma m) { return name_of(m, boolean_mma_names); }
std::string_view to_string(CpuIsa isa) { return name_of(isa, cpu_isa_names); }
std::string_view to_string(Op op) { return op == Op::N ? "N" : "T"; }
std::string_view to_string(Layout layout) { return layout == Layout::row_major ? "row-major" : "col-major"; }

DType parse_dtype(std::string_view text, std::string_view what) { return parse_enum(text, what, dtype_names); }
SemiringKind parse_semiring(std::string_view text, std::string_view what) {
  return parse_enum(text, what, semiring_names);
}
Backend parse_backend(std::string_view text, std::string_view what) { return parse_enum(text, what, backend_names); }
BorderPolicy parse_border(std::string_view text, std::string_view what) { return parse_enum(text, what, border_names); }
BooleanMma parse_boolean_mma(std::string_view text, std::string_view what) {
  return parse_enum(text, what, boolean_mma_names);
}
CpuIsa parse_cpu_isa(std::string_view text, std::string_view what) { return parse_enum(text, what, cpu_isa_names); }

std::string_view to_string(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::dimension_mismatch: return "dimension mismatch";
    case Errc::invalid_leading_dim: return "invalid leading dimension";
    case Errc::null_pointer: return "null pointer";
    case Errc::aliasing: return "aliasing";
    case Errc::value_out_of_range: return "value out of range";
    case Errc::unsupported: return "unsupported";
    case Errc::backend_unavailable: return "backend unavailable";
    case Errc::device_error: return "device error";
    case Errc::out_of_memory: return "out of memory";
    case Errc::io_error: return "I/O error";
    case Errc::format_error: return "format error";
    case Errc::distributed_mismatch: return "distributed mismatch";
  }
  return "unknown error";
}

Error detail::unsupported_pair(SemiringKind kind, DType type) {
  std::string valid;
  for (DType t : all_dtypes)
    if (is_supported(kind, t)) valid += (valid.empty() ? "" : ", ") + std::string(to_string(t));
  return Error(Errc::unsupported, "type",
               std::string(to_string(kind)) + " is not available for element type " + std::string(to_string(type)) +
                   " (supported: " + valid + ")");
}

}  // namespace ringmm
