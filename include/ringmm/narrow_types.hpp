// The narrow element types and their exact widening and rounding conversions (ringmm/narrow.hpp
// multiplies them; the .npy reader widens float16 and int8 files with them).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace ringmm {

// Storage of one bfloat16 (1 sign, 8 exponent, 7 fraction bits) and one IEEE binary16 (1, 5, 10):
// the bits only; arithmetic happens on the widened values.
struct bf16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(bf16, bf16) = default;
};
struct f16 {
  std::uint16_t bits = 0;
  friend constexpr bool operator==(f16, f16) = default;
};

// Exact widening.
inline float to_float(bf16 x) { return std::bit_cast<float>(std::uint32_t(x.bits) << 16); }
inline float to_float(f16 x) {
  const std::uint32_t sign = std::uint32_t(x.bits & 0x8000u) << 16, exponent = (x.bits >> 10) & 0x1fu,
                      fraction = x.bits & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: fraction · 2⁻²⁴, exact in f32
    const float magnitude = float(fraction) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (fraction << 13));  // ±∞, NaN
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (fraction << 13));
}

// Rounding to nearest, ties to even; values beyond the largest finite one become ±∞, NaN stays a
// (quiet) NaN.
inline bf16 to_bf16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {std::uint16_t((u >> 16) | 0x40u)};
  return {std::uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}
inline f16 to_f16(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x), a = u & 0x7fffffffu;
  const auto sign = std::uint16_t((u >> 16) & 0x8000u);
  if (a > 0x7f800000u) return {std::uint16_t(sign | 0x7e00u | ((a >> 13) & 0x3ffu))};  // NaN, kept quiet
  if (a >= 0x477ff000u) return {std::uint16_t(sign | 0x7c00u)};  // ≥ 65520 (65504 + half an ulp): ±∞
  if (a < 0x38800000u) {  // below 2⁻¹⁴: a subnormal count of 2⁻²⁴, rounded as the FPU rounds (to even)
    const float units = std::nearbyint(std::bit_cast<float>(a) * 0x1p24f);
    return {std::uint16_t(sign | std::uint16_t(units))};  // 1024 units is the smallest normal's encoding
  }
  std::uint32_t h = ((((a >> 23) - 112) << 10) | ((a >> 13) & 0x3ffu));
  const std::uint32_t rest = a & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent, as it should
  return {std::uint16_t(sign | h)};
}

// What a widened array held before: npy::Matrix::narrow, for the int8 sentinel's mapping.
enum class NarrowType { none, f16, i8 };

}  // namespace ringmm
