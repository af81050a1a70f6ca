// Semirings (T, ⊕, ⊗, 0̄, 1̄) as small structs, usable on host and device.
//
// A semiring struct provides:
//   value_type                     element type
//   zero(), one()                  0̄ (identity of ⊕, annihilator of ⊗) and 1̄
//   add(a, b), mul(a, b)           ⊕ and ⊗
//   fma(acc, a, b)                 acc ⊕ (a ⊗ b): the inner-loop update (fused where hardware allows)
//   finalize(acc)                  maps an accumulated value to its canonical form (identity
//                                  except for the integer tropical types, see integer policy)
//   scale(s, x)                    s ⊗ x for the α/β epilogue; equal to mul except that it
//                                  never overflows for the integer tropical types
// User-defined semirings may omit fma, finalize and scale: see semiring_traits below.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ringmm/types.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace ringmm {

// ---------------------------------------------------------------------------------------------
// Integer tropical policy.
//
// Integers have no ∞, so max-plus and min-plus over i32 (and each i16 lane of i16x2) reserve a
// sentinel: −∞ = −(2^(b−2) − 1) for max-plus, +∞ = 2^(b−2) − 1 for min-plus, b the lane width in bits.
// Finite inputs (A, B, C, α, β) must satisfy |x| ≤ R = 2^(b−4); anything else but the sentinel is
// refused with Errc::value_out_of_range before any work starts. With that range:
//   * a finite product a⊗b = a+b lies in [−2R, 2R];
//   * a product with a sentinel lies beyond ±(2^(b−2) − 1 − R), past every finite product, and two
//     sentinels sum to ±(2^(b−1) − 2), inside the type, so no sum ever wraps around;
//   * finalize() maps every accumulated value beyond ±2R back to the sentinel;
//   * the α/β epilogue (scale) keeps sentinels absorbing, so outputs are exact and their finite
//     values lie in [−3R, 3R].
// i32: sentinel ±1073741823 (2^30 − 1), R = 2^28 = 268435456.
// i16 lane: sentinel ±16383 (2^14 − 1), R = 2^12 = 4096.
// ---------------------------------------------------------------------------------------------
template <class Lane> struct tropical_int_limits {
  static_assert(std::is_integral_v<Lane> && std::is_signed_v<Lane>);
  static constexpr int bits = 8 * sizeof(Lane);
  static constexpr Lane inf = Lane((Lane(1) << (bits - 2)) - 1);
  static constexpr Lane finite_max = Lane(Lane(1) << (bits - 4));
};

namespace detail {

// max / min of two values. On the device, float uses fmaxf/fminf (one FMNMX instruction) rather
// than a compare and select (two): results agree for every non-NaN input. double keeps the compare
// and select (DSETP + two FSEL): sm_90 has no f64 max, and fmax's NaN rules cost more instructions
// (measured on the H100: 1.2 × 10¹² f64 max-plus updates/s with fmax, 5.4 with the select).
template <class T> RINGMM_HD T max_of(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fmaxf(a, b);
#endif
  return a > b ? a : b;
}
template <class T> RINGMM_HD T min_of(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fminf(a, b);
#endif
  return a < b ? a : b;
}

// max-plus over a signed integer lane with the sentinel policy above; Sign = +1 for max-plus,
// −1 for min-plus (so the "infinity" is Sign·(−inf)).
template <class Lane, int Sign> struct tropical_int_lane {
  using L = tropical_int_limits<Lane>;
  static constexpr Lane zero = Lane(-Sign * L::inf);
  RINGMM_HD static Lane add(Lane a, Lane b) {
    if constexpr (Sign > 0) return a > b ? a : b;
    else return a < b ? a : b;
  }
  RINGMM_HD static Lane mul(Lane a, Lane b) { return Lane(a + b); }
  RINGMM_HD static Lane finalize(Lane x) {
    if constexpr (Sign > 0) return x < -2 * L::finite_max ? zero : x;
    else return x > 2 * L::finite_max ? zero : x;
  }
  RINGMM_HD static Lane scale(Lane s, Lane x) { return (s == zero || x == zero) ? zero : Lane(s + x); }
  // An input value is accepted when it is the sentinel 0̄ or finite within ±R.
  static constexpr bool valid_input(Lane x) {
    return x == zero || (x >= -L::finite_max && x <= L::finite_max);
  }
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// plus-times: ordinary (+, ×). f32, f64, i32 (i32 inputs are refused when the product could
// overflow: |α|·K·max|A|·max|B| + |β|·max|C| must stay within int32).
template <class T> struct PlusTimes {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::plus_times;
  RINGMM_HD static constexpr T zero() { return T(0); }
  RINGMM_HD static constexpr T one() { return T(1); }
  RINGMM_HD static T add(T a, T b) { return a + b; }
  RINGMM_HD static T mul(T a, T b) { return a * b; }
  RINGMM_HD static T fma(T acc, T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
#if defined(__CUDA_ARCH__)
      return ::fma(a, b, acc);
#else
      return std::fma(a, b, acc);
#endif
    } else {
      return acc + a * b;
    }
  }
  RINGMM_HD static T finalize(T x) { return x; }
  RINGMM_HD static T scale(T s, T x) { return s * x; }
};

// max-plus: (max, +), 0̄ = −∞, 1̄ = 0. f32, f64, i32, i16x2.
template <class T> struct MaxPlus {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::max_plus;
  RINGMM_HD static constexpr T zero() { return -std::numeric_limits<T>::infinity(); }
  RINGMM_HD static constexpr T one() { return T(0); }
  RINGMM_HD static T add(T a, T b) { return detail::max_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return a + b; }
  RINGMM_HD static T fma(T acc, T a, T b) { return add(acc, a + b); }
  RINGMM_HD static T finalize(T x) { return x; }
  RINGMM_HD static T scale(T s, T x) { return s + x; }
};

// min-plus: (min, +), 0̄ = +∞, 1̄ = 0. f32, f64, i32, i16x2.
template <class T> struct MinPlus {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::min_plus;
  RINGMM_HD static constexpr T zero() { return std::numeric_limits<T>::infinity(); }
  RINGMM_HD static constexpr T one() { return T(0); }
  RINGMM_HD static T add(T a, T b) { return detail::min_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return a + b; }
  RINGMM_HD static T fma(T acc, T a, T b) { return add(acc, a + b); }
  RINGMM_HD static T finalize(T x) { return x; }
  RINGMM_HD static T scale(T s, T x) { return s + x; }
};

// Integer max-plus / min-plus follow the sentinel policy at the top of this file.
template <int Sign> struct TropicalI32 {
  using value_type = std::int32_t;
  using lane = detail::tropical_int_lane<std::int32_t, Sign>;
  static constexpr SemiringKind kind = Sign > 0 ? SemiringKind::max_plus : SemiringKind::min_plus;
  RINGMM_HD static constexpr std::int32_t zero() { return lane::zero; }
  RINGMM_HD static constexpr std::int32_t one() { return 0; }
  RINGMM_HD static std::int32_t add(std::int32_t a, std::int32_t b) { return lane::add(a, b); }
  RINGMM_HD static std::int32_t mul(std::int32_t a, std::int32_t b) { return a + b; }
  RINGMM_HD static std::int32_t fma(std::int32_t acc, std::int32_t a, std::int32_t b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (Sign > 0) return __viaddmax_s32(a, b, acc);  // Hopper: one VIADDMNMX
    else return __viaddmin_s32(a, b, acc);
#else
    return lane::add(acc, a + b);
#endif
  }
  RINGMM_HD static std::int32_t finalize(std::int32_t x) { return lane::finalize(x); }
  RINGMM_HD static std::int32_t scale(std::int32_t s, std::int32_t x) { return lane::scale(s, x); }
  static constexpr bool valid_input(std::int32_t x) { return lane::valid_input(x); }
};
template <> struct MaxPlus<std::int32_t> : TropicalI32<+1> {};
template <> struct MinPlus<std::int32_t> : TropicalI32<-1> {};

template <int Sign> struct TropicalI16x2 {
  using value_type = i16x2;
  using lane = detail::tropical_int_lane<std::int16_t, Sign>;
  static constexpr SemiringKind kind = Sign > 0 ? SemiringKind::max_plus : SemiringKind::min_plus;
  RINGMM_HD static constexpr i16x2 zero() { return {lane::zero, lane::zero}; }
  RINGMM_HD static constexpr i16x2 one() { return {0, 0}; }
  RINGMM_HD static i16x2 add(i16x2 a, i16x2 b) { return {lane::add(a.lo, b.lo), lane::add(a.hi, b.hi)}; }
  RINGMM_HD static i16x2 mul(i16x2 a, i16x2 b) { return {lane::mul(a.lo, b.lo), lane::mul(a.hi, b.hi)}; }
  RINGMM_HD static i16x2 fma(i16x2 acc, i16x2 a, i16x2 b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned r;
    if constexpr (Sign > 0) r = __viaddmax_s16x2(bits(a), bits(b), bits(acc));  // two lanes, one instruction
    else r = __viaddmin_s16x2(bits(a), bits(b), bits(acc));
    return from_bits(r);
#else
    return add(acc, mul(a, b));
#endif
  }
  RINGMM_HD static i16x2 finalize(i16x2 x) { return {lane::finalize(x.lo), lane::finalize(x.hi)}; }
  RINGMM_HD static i16x2 scale(i16x2 s, i16x2 x) { return {lane::scale(s.lo, x.lo), lane::scale(s.hi, x.hi)}; }
  static constexpr bool valid_input(i16x2 x) { return lane::valid_input(x.lo) && lane::valid_input(x.hi); }

  RINGMM_HD static unsigned bits(i16x2 v) {
    return unsigned(std::uint16_t(v.lo)) | (unsigned(std::uint16_t(v.hi)) << 16);
  }
  RINGMM_HD static i16x2 from_bits(unsigned r) {
    return {std::int16_t(std::uint16_t(r & 0xffffu)), std::int16_t(std::uint16_t(r >> 16))};
  }
};
template <> struct MaxPlus<i16x2> : TropicalI16x2<+1> {};
template <> struct MinPlus<i16x2> : TropicalI16x2<-1> {};

// max-min: (max, min), 0̄ = −∞, 1̄ = +∞ (bottleneck paths). f32, i32 (i32 uses INT32_MIN/MAX).
template <class T> struct MaxMin {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::max_min;
  RINGMM_HD static constexpr T zero() {
    if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  RINGMM_HD static constexpr T one() {
    if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  RINGMM_HD static T add(T a, T b) { return detail::max_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return detail::min_of(a, b); }
  RINGMM_HD static T fma(T acc, T a, T b) { return add(acc, mul(a, b)); }
  RINGMM_HD static T finalize(T x) { return x; }
  RINGMM_HD static T scale(T s, T x) { return mul(s, x); }
};

// or-and: (∨, ∧) over u8 booleans; any nonzero input is true, outputs are 0 or 1.
struct OrAnd {
  using value_type = std::uint8_t;
  static constexpr SemiringKind kind = SemiringKind::or_and;
  RINGMM_HD static constexpr std::uint8_t zero() { return 0; }
  RINGMM_HD static constexpr std::uint8_t one() { return 1; }
  RINGMM_HD static std::uint8_t add(std::uint8_t a, std::uint8_t b) { return (a | b) != 0; }
  RINGMM_HD static std::uint8_t mul(std::uint8_t a, std::uint8_t b) { return a != 0 && b != 0; }
  RINGMM_HD static std::uint8_t fma(std::uint8_t acc, std::uint8_t a, std::uint8_t b) { return add(acc, mul(a, b)); }
  RINGMM_HD static std::uint8_t finalize(std::uint8_t x) { return x != 0; }
  RINGMM_HD static std::uint8_t scale(std::uint8_t s, std::uint8_t x) { return mul(s, x); }
};

// ---------------------------------------------------------------------------------------------
// semiring_traits: fills in the optional members for user-defined semirings, so every kernel
// calls traits::fma / finalize / scale and a user struct needs only value_type, zero, one, add, mul.
namespace detail {
template <class S, class = void> struct has_fma : std::false_type {};
template <class S>
struct has_fma<S, std::void_t<decltype(S::fma(S::zero(), S::zero(), S::zero()))>> : std::true_type {};
template <class S, class = void> struct has_finalize : std::false_type {};
template <class S>
struct has_finalize<S, std::void_t<decltype(S::finalize(S::zero()))>> : std::true_type {};
template <class S, class = void> struct has_scale : std::false_type {};
template <class S>
struct has_scale<S, std::void_t<decltype(S::scale(S::zero(), S::zero()))>> : std::true_type {};
template <class S, class = void> struct has_valid_input : std::false_type {};
template <class S>
struct has_valid_input<S, std::void_t<decltype(S::valid_input(S::zero()))>> : std::true_type {};
}  // namespace detail

template <class S> struct semiring_traits {
  using T = typename S::value_type;
  RINGMM_HD static T fma(T acc, T a, T b) {
    if constexpr (detail::has_fma<S>::value) return S::fma(acc, a, b);
    else return S::add(acc, S::mul(a, b));
  }
  RINGMM_HD static T finalize(T x) {
    if constexpr (detail::has_finalize<S>::value) return S::finalize(x);
    else return x;
  }
  RINGMM_HD static T scale(T s, T x) {
    if constexpr (detail::has_scale<S>::value) return S::scale(s, x);
    else return S::mul(s, x);
  }
  // The one epilogue every backend applies: c ← α ⊗ acc ⊕ β ⊗ c, where C is read only when
  // β ≠ 0̄ (so with α = 1̄, β = 0̄ the old C is never read, as in BLAS).
  RINGMM_HD static T epilogue(T alpha, T acc, T beta, const T* c_old) {
    T result = scale(alpha, finalize(acc));
    if (!(beta == S::zero())) result = S::add(result, scale(beta, *c_old));
    return result;
  }
  static constexpr bool checks_input_range = detail::has_valid_input<S>::value;
};

// The semiring/type pairs the library ships (the RINGMM_BUILTIN lines of builtins.def), as an
// X-macro over their structs: explicit instantiations and is_builtin are generated from it.
#define RINGMM_FOR_EACH_BUILTIN(X) RINGMM_FOR_EACH_BUILTIN_I(X)

template <class S> struct is_builtin : std::false_type {};
#define RINGMM_DECLARE_BUILTIN(S) \
  template <> struct is_builtin<S> : std::true_type {};
RINGMM_FOR_EACH_BUILTIN(RINGMM_DECLARE_BUILTIN)
#undef RINGMM_DECLARE_BUILTIN
template <class S> inline constexpr bool is_builtin_v = is_builtin<S>::value;

}  // namespace ringmm
