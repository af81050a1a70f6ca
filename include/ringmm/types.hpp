// Element types, layouts and the runtime tags the CLI dispatches on.
#pragma once

#include <cstdint>
#include <string_view>

#if defined(__CUDACC__)
#define RINGMM_HD __host__ __device__ __forceinline__
#else
#define RINGMM_HD inline
#endif

namespace ringmm {

using index_t = std::int64_t;

enum class Op { N, T };
enum class Layout { row_major, col_major };

// Two independent int16 lanes in one 32-bit word; each lane is its own product.
// Hopper multiplies both lanes with one add-then-max instruction.
struct alignas(4) i16x2 {
  std::int16_t lo;
  std::int16_t hi;
  friend RINGMM_HD bool operator==(i16x2 a, i16x2 b) { return a.lo == b.lo && a.hi == b.hi; }
  friend RINGMM_HD bool operator!=(i16x2 a, i16x2 b) { return !(a == b); }
};

// The element types and semirings of the registry (builtins.def).
enum class DType {
#define RINGMM_DTYPE(id, cpp_type) id,
#include "ringmm/builtins.def"
};
enum class SemiringKind {
#define RINGMM_SEMIRING(id, spelling, use) id,
#include "ringmm/builtins.def"
};

template <class T> struct dtype_of;
#define RINGMM_DTYPE(id, cpp_type) \
  template <> struct dtype_of<cpp_type> { static constexpr DType value = DType::id; };
#include "ringmm/builtins.def"

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
#define RINGMM_DTYPE(id, cpp_type) \
  case DType::id: return sizeof(cpp_type);
#include "ringmm/builtins.def"
  }
  return 0;
}

std::string_view to_string(DType t);
std::string_view to_string(SemiringKind s);
std::string_view to_string(Op op);
std::string_view to_string(Layout layout);

// Parse the CLI spellings ("f32", "max-plus", ...); throw ringmm::Error naming `what` on failure.
DType parse_dtype(std::string_view text, std::string_view what = "type");
SemiringKind parse_semiring(std::string_view text, std::string_view what = "semiring");

}  // namespace ringmm
