// Runtime dispatch: from (SemiringKind, DType), as the CLI and distributed layer see them, to the
// semiring struct. This table is the one place that lists the built-in pairs.
#pragma once

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ringmm/error.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm {

template <class S> struct semiring_tag { using type = S; };

namespace detail {
// The error for a semiring/type pair that is not built in; it lists the types that are.
Error unsupported_pair(SemiringKind kind, DType type);
}  // namespace detail

// Calls f(semiring_tag<S>{}) for the built-in semiring of that kind and type; every call must
// return the same type. Throws Errc::unsupported for a pair the library does not ship.
template <class F> decltype(auto) visit_semiring(SemiringKind kind, DType type, F&& f) {
  switch (kind) {
    case SemiringKind::plus_times:
      if (type == DType::f32) return f(semiring_tag<PlusTimes<float>>{});
      if (type == DType::f64) return f(semiring_tag<PlusTimes<double>>{});
      if (type == DType::i32) return f(semiring_tag<PlusTimes<std::int32_t>>{});
      break;
    case SemiringKind::max_plus:
      if (type == DType::f32) return f(semiring_tag<MaxPlus<float>>{});
      if (type == DType::f64) return f(semiring_tag<MaxPlus<double>>{});
      if (type == DType::i32) return f(semiring_tag<MaxPlus<std::int32_t>>{});
      if (type == DType::i16x2) return f(semiring_tag<MaxPlus<i16x2>>{});
      break;
    case SemiringKind::min_plus:
      if (type == DType::f32) return f(semiring_tag<MinPlus<float>>{});
      if (type == DType::f64) return f(semiring_tag<MinPlus<double>>{});
      if (type == DType::i32) return f(semiring_tag<MinPlus<std::int32_t>>{});
      if (type == DType::i16x2) return f(semiring_tag<MinPlus<i16x2>>{});
      break;
    case SemiringKind::max_min:
      if (type == DType::f32) return f(semiring_tag<MaxMin<float>>{});
      if (type == DType::i32) return f(semiring_tag<MaxMin<std::int32_t>>{});
      break;
    case SemiringKind::or_and:
      if (type == DType::u8) return f(semiring_tag<OrAnd>{});
      break;
  }
  throw detail::unsupported_pair(kind, type);
}

bool is_supported(SemiringKind kind, DType type);

// A scalar given as a number (CLI, config files) converted to the semiring's element type:
// ±inf map to the integer sentinels; anything not representable exactly is refused.
template <class S> typename S::value_type scalar_from_double(double x, const std::string& name) {
  using T = typename S::value_type;
  if constexpr (std::is_floating_point_v<T>) {
    return T(x);
  } else {
    auto to_lane = [&](auto lane_tag) {
      using L = decltype(lane_tag);
      if (std::isinf(x)) {
        if constexpr (semiring_traits<S>::checks_input_range)
          return L(x < 0 ? -tropical_int_limits<L>::inf : tropical_int_limits<L>::inf);
        else
          return x < 0 ? std::numeric_limits<L>::lowest() : std::numeric_limits<L>::max();
      }
      if (std::nearbyint(x) != x || x < double(std::numeric_limits<L>::lowest()) || x > double(std::numeric_limits<L>::max()))
        throw Error(Errc::value_out_of_range, name, "value " + std::to_string(x) + " is not an exact integer of the element type");
      return L(x);
    };
    if constexpr (std::is_same_v<T, i16x2>) {
      const std::int16_t v = to_lane(std::int16_t{});
      return i16x2{v, v};
    } else {
      return to_lane(T{});
    }
  }
}

}  // namespace ringmm
