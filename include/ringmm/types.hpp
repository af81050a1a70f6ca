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

enum class DType { f32, f64, i32, i16x2, u8 };
enum class SemiringKind { plus_times, max_plus, min_plus, max_min, or_and };

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<std::int32_t> { static constexpr DType value = DType::i32; };
template <> struct dtype_of<i16x2> { static constexpr DType value = DType::i16x2; };
template <> struct dtype_of<std::uint8_t> { static constexpr DType value = DType::u8; };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
    case DType::i16x2: return 4;
    case DType::u8: return 1;
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
