// Semirings (T, ⊕, ⊗, 0̄, 1̄) as small structs, usable on host and device.
//
// A semiring struct provides:
//   value_type                     element type (what A, B and C hold)
//   kind                           its SemiringKind (builtins.def); user semirings may omit it
//   zero(), one()                  0̄ (identity of ⊕, annihilator of ⊗) and 1̄
//   add(a, b), mul(a, b)           ⊕ and ⊗
// and may provide (semiring_traits below supplies the defaults, so every backend asks the traits):
//   fma(acc, a, b)                 acc ⊕ (a ⊗ b), fused where the hardware allows
//   finalize(acc)                  the canonical form of an accumulated value (integer tropical
//                                  types map overflowed sentinels back, see the integer policy)
//   scale(s, x)                    s ⊗ x for the α/β epilogue (never overflows for integer tropical)
//   accumulator_type, scalar_type  the types of the running ⊕-sum and of α, β (default value_type)
//   exact                          false when results are rounded (float plus-times, log-plus); tests
//                                  and --check then compare within semiring_traits::within_tolerance
//                                  (default true)
//   absolute_tolerance, relative_tolerance
//                                  for a rounded semiring, the bound absolute + relative·|reference|
//                                  on a result's error (default: the forward error bound of a sum)
//   valid_input(x), input_domain() which inputs are accepted and a phrase naming them; anything
//                                  else is refused before any work (default: every value)
//   bounds_sums                    true for integer rings: a product whose sums could wrap around,
//                                  |α|·K·max|A|·max|B| + |β|·max|C| > the type's maximum, is refused
//   register_type, to_register(x), from_register(r), update(acc, a, b)
//                                  the hardware form kernels compute in, for operands and sums alike
//                                  (default: elements as operands, the accumulator as sum, and fma);
//                                  i16x2 keeps its raw 32-bit word for Hopper's two-lane add-then-max
//                                  instruction
//   selects                        true when ⊕ always returns one of its operands (max, min): then
//                                  argmax products can say which term won (gemm_argmax)
//   nan_risk(x), fma_nan_free(acc, a, b)
//                                  a value for which fma needs its NaN rules, and a cheaper fma
//                                  that is exact when no input has that risk (the CPU kernel
//                                  checks its inputs and picks); see semiring_traits::guards_nan
//
// Over 500 lines because it is the one place for every semiring's facts: the structs and the
// traits every backend reads them through.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
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

// The NaN policy (README "NaN"): max and min are IEEE 754's maxNum and minNum, as C's fmax and
// fmin and numpy's fmax and fmin: a NaN operand is ignored, so a NaN term (a NaN input, or
// ∞ + (−∞) meeting 0̄) never wins a ⊕-sum and an entry whose every term is NaN is 0̄. + and ×
// follow IEEE as usual, so plus-times propagates NaN. This is what Hopper's FMNMX does in one
// instruction; propagation (max.NaN) measured 2–12 % slower for f32 and 16–21 % for f64
// (docs/perf/nan-policy.md), above the 2 % the policy was allowed to cost.
//
// max_of / min_of: either operand may be NaN (⊕ of partial sums, the epilogue, ⊗ of max-min).
template <class T> RINGMM_HD T max_of(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fmaxf(a, b);
#endif
  if constexpr (std::is_floating_point_v<T>) return (a > b || b != b) ? a : b;
  else return a > b ? a : b;
}
template <class T> RINGMM_HD T min_of(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fminf(a, b);
#endif
  if constexpr (std::is_floating_point_v<T>) return (a < b || b != b) ? a : b;
  else return a < b ? a : b;
}

// max_into / min_into: acc ⊕ term inside a K loop, where acc starts at 0̄ and so is never NaN:
// one compare and select (DSETP + FSEL for f64, MAXPS on x86) gives maxNum, taking the term only
// when it is a number that wins.
template <class T> RINGMM_HD T max_into(T acc, T term) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fmaxf(acc, term);
#endif
  return term > acc ? term : acc;
}
template <class T> RINGMM_HD T min_into(T acc, T term) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return ::fminf(acc, term);
#endif
  return term < acc ? term : acc;
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
  static std::string input_domain() {
    return "finite values within ±" + std::to_string(L::finite_max) + ", or the 0̄ sentinel " + std::to_string(zero);
  }
};

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// plus-times: ordinary (+, ×). f32, f64, i32 (i32 inputs are refused when the product could
// overflow: |α|·K·max|A|·max|B| + |β|·max|C| must stay within int32).
template <class T> struct PlusTimes {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::plus_times;
  static constexpr bool exact = !std::is_floating_point_v<T>;  // float sums are rounded
  static constexpr bool bounds_sums = std::is_integral_v<T>;
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
};

// max-plus: (max, +), 0̄ = −∞, 1̄ = 0. f32, f64, i32, i16x2.
template <class T> struct MaxPlus {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::max_plus;
  RINGMM_HD static constexpr T zero() { return -std::numeric_limits<T>::infinity(); }
  RINGMM_HD static constexpr T one() { return T(0); }
  RINGMM_HD static T add(T a, T b) { return detail::max_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return a + b; }
  RINGMM_HD static T fma(T acc, T a, T b) { return detail::max_into(acc, a + b); }
  static constexpr bool selects = true;
};

// min-plus: (min, +), 0̄ = +∞, 1̄ = 0. f32, f64, i32, i16x2.
template <class T> struct MinPlus {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::min_plus;
  RINGMM_HD static constexpr T zero() { return std::numeric_limits<T>::infinity(); }
  RINGMM_HD static constexpr T one() { return T(0); }
  RINGMM_HD static T add(T a, T b) { return detail::min_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return a + b; }
  RINGMM_HD static T fma(T acc, T a, T b) { return detail::min_into(acc, a + b); }
  static constexpr bool selects = true;
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
  static std::string input_domain() { return lane::input_domain(); }
  static constexpr bool selects = true;
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
    return from_register(update(to_register(acc), to_register(a), to_register(b)));
  }
  RINGMM_HD static i16x2 finalize(i16x2 x) { return {lane::finalize(x.lo), lane::finalize(x.hi)}; }
  RINGMM_HD static i16x2 scale(i16x2 s, i16x2 x) { return {lane::scale(s.lo, x.lo), lane::scale(s.hi, x.hi)}; }
  static constexpr bool valid_input(i16x2 x) { return lane::valid_input(x.lo) && lane::valid_input(x.hi); }
  static std::string input_domain() { return "in each lane, " + lane::input_domain(); }

  // Hardware form: the raw 32-bit word (arrays of the two-field struct spill to local memory),
  // both lanes updated by one add-then-max/min instruction on Hopper.
  using register_type = unsigned;
  RINGMM_HD static unsigned to_register(i16x2 v) {
    return unsigned(std::uint16_t(v.lo)) | (unsigned(std::uint16_t(v.hi)) << 16);
  }
  RINGMM_HD static i16x2 from_register(unsigned r) {
    return {std::int16_t(std::uint16_t(r & 0xffffu)), std::int16_t(std::uint16_t(r >> 16))};
  }
  RINGMM_HD static unsigned update(unsigned acc, unsigned a, unsigned b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (Sign > 0) return __viaddmax_s16x2(a, b, acc);
    else return __viaddmin_s16x2(a, b, acc);
#else
    const i16x2 x = from_register(a), y = from_register(b), c = from_register(acc);
    return to_register(add(c, mul(x, y)));
#endif
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
  RINGMM_HD static T fma(T acc, T a, T b) { return detail::max_into(acc, mul(a, b)); }
  // Without NaN inputs ⊗ is a plain min (one MINPS instead of three instructions on x86).
  RINGMM_HD static bool nan_risk(T x) { return x != x; }
  RINGMM_HD static T fma_nan_free(T acc, T a, T b) { return detail::max_into(acc, a < b ? a : b); }  static constexpr bool selects = true;
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

  // Hardware form: booleans normalised to 0/1 once, as they enter registers, so that ⊕⊗ is one
  // bitwise instruction (acc | a & b) instead of two compares per update.
  using register_type = unsigned;
  RINGMM_HD static unsigned to_register(std::uint8_t x) { return x != 0; }
  RINGMM_HD static std::uint8_t from_register(unsigned r) { return std::uint8_t(r); }
  RINGMM_HD static unsigned update(unsigned acc, unsigned a, unsigned b) { return acc | (a & b); }
};

// max-times: (max, ×), 0̄ = 0, 1̄ = 1 (Viterbi over probabilities). f32, f64. The domain is the
// finite nonnegative numbers (0̄ annihilates only there: 0 × ∞ is NaN); negative or infinite
// inputs are refused. Exact: every term is one correctly rounded product, and ⊕ selects one.
template <class T> struct MaxTimes {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::max_times;
  RINGMM_HD static constexpr T zero() { return T(0); }
  RINGMM_HD static constexpr T one() { return T(1); }
  RINGMM_HD static T add(T a, T b) { return detail::max_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return a * b; }
  RINGMM_HD static T fma(T acc, T a, T b) { return detail::max_into(acc, a * b); }
  static constexpr bool selects = true;
  static constexpr bool valid_input(T x) { return !(x < T(0)) && x != std::numeric_limits<T>::infinity(); }
  static std::string input_domain() { return "finite nonnegative values"; }
};

// min-max: (min, max), 0̄ = +∞, 1̄ = −∞ (minimax paths, the dual of max-min). f32, i32 (i32 uses
// INT32_MAX / INT32_MIN as 0̄ / 1̄).
template <class T> struct MinMax {
  using value_type = T;
  static constexpr SemiringKind kind = SemiringKind::min_max;
  RINGMM_HD static constexpr T zero() { return MaxMin<T>::one(); }
  RINGMM_HD static constexpr T one() { return MaxMin<T>::zero(); }
  RINGMM_HD static T add(T a, T b) { return detail::min_of(a, b); }
  RINGMM_HD static T mul(T a, T b) { return detail::max_of(a, b); }
  RINGMM_HD static T fma(T acc, T a, T b) { return detail::min_into(acc, mul(a, b)); }
  // Without NaN inputs ⊗ is a plain max (one MAXPS instead of three instructions on x86).
  RINGMM_HD static bool nan_risk(T x) { return x != x; }
  RINGMM_HD static T fma_nan_free(T acc, T a, T b) { return detail::min_into(acc, a > b ? a : b); }  static constexpr bool selects = true;
};

// The running ⊕-sum of log-plus: the value max + log(sum + comp). Keeping the largest term apart
// makes every exponential exp(term − max) ≤ 1, so a K-term sum neither overflows nor underflows,
// and sum stays in [1, K] once a finite term has arrived. comp holds the rounding errors of sum
// (compensated summation): without it, terms just over one unit in the last place of sum each
// lose up to half of it, and a K-term f32 sum can lose K·ε/2 (3·10⁻⁴ at K = 8192, measured).
// An element x converts to the one-term sum {x, 1, 0} (0̄ to {−∞, 1, 0}), which lets every path
// that holds finalised values (the epilogue, split-K's parts, SUMMA's panels) pass them on as sums.
template <class T> struct LogSumExp {
  T max;
  T sum;
  T comp;
  LogSumExp() = default;
  RINGMM_HD constexpr LogSumExp(T x) : max(x), sum(T(1)), comp(T(0)) {}
  RINGMM_HD constexpr LogSumExp(T max_term, T scaled_sum, T error = T(0)) : max(max_term), sum(scaled_sum), comp(error) {}
};

// log-plus: (log-sum-exp, +), 0̄ = −∞, 1̄ = 0: probabilities kept as logarithms (the forward
// algorithm). f32, f64. Inputs are finite or −∞: +∞ and NaN are refused (unlike max and min, whose
// NaN policy ignores NaN, a log-sum-exp has no sensible answer for them). Rounded, so results are
// compared within an absolute-plus-relative bound in the log domain (see semiring_traits).
// The CPU backend computes large products by the shift trick over a plus-times GEMM
// (ringmm/cpu/log_plus.hpp); every other path streams the accumulator below.
template <class T> struct LogPlus {
  static_assert(std::is_floating_point_v<T>, "log-plus is defined over floating-point types");
  using value_type = T;
  using accumulator_type = LogSumExp<T>;
  static constexpr SemiringKind kind = SemiringKind::log_plus;
  static constexpr bool exact = false;
  // The accuracy the issue asks of every path, against a reference in higher precision.
  static constexpr double absolute_tolerance = std::is_same_v<T, float> ? 2e-5 : 1e-12;
  static constexpr double relative_tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-14;

  RINGMM_HD static constexpr T zero() { return -std::numeric_limits<T>::infinity(); }
  RINGMM_HD static constexpr T one() { return T(0); }
  // log(eᵃ + eᵇ) = max + log1p(e^(min − max)), with −∞ as the identity.
  RINGMM_HD static T add(T a, T b) {
    const T hi = a > b ? a : b, lo = a > b ? b : a;
    if (lo == zero()) return hi;
    return hi + std::log1p(std::exp(lo - hi));
  }
  RINGMM_HD static T mul(T a, T b) { return a + b; }
  // One step of the online log-sum-exp. d is NaN only for a −∞ term meeting a −∞ maximum
  // (nothing to add), which both comparisons skip.
  RINGMM_HD static LogSumExp<T> fma(LogSumExp<T> acc, T a, T b) {
    const T term = a + b, d = term - acc.max;
    const T e = std::exp(-std::fabs(d));
    if (d > T(0)) {  // a new maximum: the sum so far is scaled by e, the new term counts 1
      const T scaled = acc.sum * e, product_error = std::fma(acc.sum, e, -scaled);  // exact
      const T sum = scaled + T(1), v = sum - scaled;
      const T add_error = (scaled - (sum - v)) + (T(1) - v);  // exact (TwoSum)
      return {term, sum, acc.comp * e + (product_error + add_error)};
    }
    if (d <= T(0)) {  // e ≤ 1 ≤ sum, so the rounding error of sum + e is exact (Fast2Sum)
      const T sum = acc.sum + e;
      return {acc.max, sum, acc.comp + (e - (sum - acc.sum))};
    }
    return acc;
  }
  // −∞ for the empty sum, never NaN (sum + comp is positive and finite).
  RINGMM_HD static T finalize(LogSumExp<T> acc) { return acc.max + std::log(acc.sum + acc.comp); }
  RINGMM_HD static constexpr bool valid_input(T x) { return x < std::numeric_limits<T>::infinity(); }
  static std::string input_domain() { return "finite values or −∞"; }
};

// ---------------------------------------------------------------------------------------------
// semiring_traits: every backend, test and tool asks the traits, which fill in what a struct omits.
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
template <class S, class = void> struct has_nan_free_form : std::false_type {};
template <class S>
struct has_nan_free_form<S, std::void_t<decltype(S::fma_nan_free(S::zero(), S::zero(), S::zero())),
                                        decltype(S::nan_risk(S::zero()))>> : std::true_type {};
template <class S, class = void> struct has_kind : std::false_type {};
template <class S> struct has_kind<S, std::void_t<decltype(S::kind)>> : std::true_type {};
template <class S, class = void> struct has_selects : std::false_type {};
template <class S> struct has_selects<S, std::void_t<decltype(S::selects)>> : std::true_type {};
template <class S, class = void> struct has_exact : std::false_type {};
template <class S> struct has_exact<S, std::void_t<decltype(S::exact)>> : std::true_type {};
template <class S, class = void> struct has_bounds_sums : std::false_type {};
template <class S> struct has_bounds_sums<S, std::void_t<decltype(S::bounds_sums)>> : std::true_type {};

template <class S, class = void> struct accumulator_of { using type = typename S::value_type; };
template <class S> struct accumulator_of<S, std::void_t<typename S::accumulator_type>> {
  using type = typename S::accumulator_type;
};
template <class S, class = void> struct scalar_of { using type = typename S::value_type; };
template <class S> struct scalar_of<S, std::void_t<typename S::scalar_type>> { using type = typename S::scalar_type; };
template <class S, class = void> struct has_register_form : std::false_type {};
template <class S> struct has_register_form<S, std::void_t<typename S::register_type>> : std::true_type {};
template <class S, class = void> struct register_of { using type = typename accumulator_of<S>::type; };
template <class S> struct register_of<S, std::void_t<typename S::register_type>> {
  using type = typename S::register_type;
};
template <class S, class = void> struct has_value_tolerance : std::false_type {};
template <class S>
struct has_value_tolerance<S, std::void_t<decltype(S::absolute_tolerance), decltype(S::relative_tolerance)>>
    : std::true_type {};
}  // namespace detail

template <class S> struct semiring_traits {
  using element = typename S::value_type;                      // what A, B and C hold
  using accumulator = typename detail::accumulator_of<S>::type;  // the running ⊕-sum
  using scalar = typename detail::scalar_of<S>::type;            // α and β
  using reg = typename detail::register_of<S>::type;             // the hardware form's accumulators
  // ... and its operands: the same registers where S has a hardware form, else plain elements
  // (an accumulator wider than an element, like log-plus's LogSumExp, is not an operand).
  static constexpr bool register_form = detail::has_register_form<S>::value;
  using operand = std::conditional_t<register_form, reg, element>;

  RINGMM_HD static accumulator initial() { return accumulator(S::zero()); }
  RINGMM_HD static accumulator fma(accumulator acc, element a, element b) {
    if constexpr (detail::has_fma<S>::value) return S::fma(acc, a, b);
    else return S::add(acc, S::mul(a, b));
  }
  RINGMM_HD static element finalize(accumulator x) {
    if constexpr (detail::has_finalize<S>::value) return S::finalize(x);
    else return element(x);
  }
  RINGMM_HD static element scale(scalar s, element x) {
    if constexpr (detail::has_scale<S>::value) return S::scale(s, x);
    else return S::mul(s, x);
  }
  // The one epilogue every backend applies: c ← α ⊗ acc ⊕ β ⊗ c, where C is read only when
  // β ≠ 0̄ (so with α = 1̄, β = 0̄ the old C is never read, as in BLAS).
  RINGMM_HD static element epilogue(scalar alpha, accumulator acc, scalar beta, const element* c_old) {
    element result = scale(alpha, finalize(acc));
    if (!(beta == scalar(S::zero()))) result = S::add(result, scale(beta, *c_old));
    return result;
  }

  // The hardware form: kernels hold operands as `operand`, sums as `reg`, and call update.
  RINGMM_HD static operand to_register(element x) {
    if constexpr (register_form) return S::to_register(x);
    else return x;
  }
  RINGMM_HD static reg initial_register() {
    if constexpr (register_form) return S::to_register(S::zero());
    else return initial();
  }
  RINGMM_HD static accumulator from_register(reg r) {
    if constexpr (register_form) return S::from_register(r);
    else return r;
  }
  RINGMM_HD static reg update(reg acc, operand a, operand b) {
    if constexpr (register_form) return S::update(acc, a, b);
    else return fma(acc, a, b);
  }

  // The NaN policy (max_of above) costs max-min and min-max a symmetric minNum/maxNum in ⊗, three
  // x86 instructions instead of one. Where a semiring offers a NaN-free form, the CPU kernel scans
  // A and B for inputs with nan_risk and runs the cheaper fma_nan_free when there are none, which
  // is then exact. (The GPU's FMNMX is maxNum already.)
  static constexpr bool guards_nan =
      std::is_floating_point_v<element> && std::is_same_v<reg, accumulator> && detail::has_nan_free_form<S>::value;
  RINGMM_HD static bool nan_risk(element x) {
    if constexpr (guards_nan) return S::nan_risk(x);
    else return false;
  }
  RINGMM_HD static accumulator fma_nan_free(accumulator acc, element a, element b) {
    if constexpr (guards_nan) return S::fma_nan_free(acc, a, b);
    else return fma(acc, a, b);
  }

  // Argmax (gemm_argmax): for a semiring whose ⊕ selects, `better(x, y)` says x would replace y
  // in a ⊕-sum, i.e. x ⊕ y differs from y. Ties keep y, so scanning k upwards keeps the smallest
  // winning k, and NaN never wins (the NaN policy).
  static constexpr bool selects = [] {
    if constexpr (detail::has_selects<S>::value) return bool(S::selects);
    else return false;
  }();
  RINGMM_HD static bool better(element x, element y) {
    if constexpr (detail::has_kind<S>::value) {  // the built-ins: one compare (NaN compares false)
      if constexpr (S::kind == SemiringKind::max_plus || S::kind == SemiringKind::max_min ||
                    S::kind == SemiringKind::max_times)
        return x > y;
      else if constexpr (S::kind == SemiringKind::min_plus || S::kind == SemiringKind::min_max)
        return x < y;
    }
    return !(S::add(y, x) == y);
  }
  // The argmax epilogue's rule for β ⊗ C (`incoming`) against the product's α-scaled result: the
  // entry keeps its incoming index where β ⊗ C wins or ties, unless β ⊗ C is NaN, which the NaN
  // policy counts as 0̄ (the result then came from the product's terms, whose index it takes).
  RINGMM_HD static bool keeps_incoming(element result, element incoming) {
    return incoming == incoming && !better(result, incoming);
  }

  // Exactness: every result equals the reference's, or (rounded semirings) lies within a bound of
  // it. S's absolute_tolerance and relative_tolerance (log-plus, whose error is absolute in the log
  // domain) bound |result − reference| by absolute + relative·|reference|; otherwise (float
  // plus-times) the bound is tolerance(K)·magnitude, magnitude = |α|·Σₖ|aᵢₖ||bₖⱼ| + |β|·|cᵢⱼ|, the
  // forward error bound of a K-term sum, which the caller computes when bounded_by_magnitude.
  static constexpr bool exact = [] {
    if constexpr (detail::has_exact<S>::value) return bool(S::exact);
    else return true;
  }();
  static constexpr bool bounded_by_magnitude = !exact && !detail::has_value_tolerance<S>::value;
  static double tolerance(std::int64_t k) {
    return 2.0 * double((k > 1 ? k : 1) + 1) * double(std::numeric_limits<accumulator>::epsilon());
  }
  static bool within_tolerance(double reference, double result, std::int64_t k, double magnitude) {
    if (reference == result) return true;  // infinities included
    double bound;
    if constexpr (detail::has_value_tolerance<S>::value)
      bound = S::absolute_tolerance + S::relative_tolerance * std::fabs(reference);
    else
      bound = tolerance(k) * magnitude;
    return std::fabs(reference - result) <= bound;
  }

  // The input policy (one host check, one device scan: ringmm/detail/input_check.hpp).
  static constexpr bool checks_inputs = detail::has_valid_input<S>::value;
  static constexpr bool bounds_sums = [] {
    if constexpr (detail::has_bounds_sums<S>::value) return bool(S::bounds_sums);
    else return false;
  }();
  RINGMM_HD static constexpr bool valid_input(element x) {
    if constexpr (checks_inputs) return S::valid_input(x);
    else return true;
  }
  static std::string input_domain() {
    if constexpr (checks_inputs) return S::input_domain();
    else return "any value";
  }
};

template <class S> using element_t = typename semiring_traits<S>::element;
template <class S> using scalar_t = typename semiring_traits<S>::scalar;
template <class S> using accumulator_t = typename semiring_traits<S>::accumulator;

// The semiring/type pairs the library ships: the RINGMM_BUILTIN lines of builtins.def.
template <class S> struct is_builtin : std::false_type {};
#define RINGMM_BUILTIN(semiring, dtype, S) \
  template <> struct is_builtin<S> : std::true_type {};
#include "ringmm/builtins.def"
template <class S> inline constexpr bool is_builtin_v = is_builtin<S>::value;

// The same pairs as a type list, in the registry's order (typed tests, benchmark lists).
template <class... S> struct type_list {};
namespace detail {
template <class L> struct drop_first;
template <class First, class... Rest> struct drop_first<type_list<First, Rest...>> {
  using type = type_list<Rest...>;
};
}  // namespace detail
using builtin_semirings = detail::drop_first<type_list<void
#define RINGMM_BUILTIN(semiring, dtype, S) , ::ringmm::S
#include "ringmm/builtins.def"
                                                       >>::type;

}  // namespace ringmm
