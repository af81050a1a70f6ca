// Runtime dispatch: from (SemiringKind, DType), as the CLI and distributed layer see them, to the
// semiring struct, and the lists of built-in pairs, semirings and types, all derived from the
// registry (builtins.def).
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

// Calls f(semiring_tag<S>{}) for the built-in semiring of that kind and type (builtins.def); every
// call must return the same type. Throws Errc::unsupported for a pair the library does not ship.
template <class F> decltype(auto) visit_semiring(SemiringKind kind, DType type, F&& f) {
#define RINGMM_BUILTIN(semiring, dtype, S) \
  if (kind == SemiringKind::semiring && type == DType::dtype) return f(semiring_tag<::ringmm::S>{});
#include "ringmm/builtins.def"
  throw detail::unsupported_pair(kind, type);
}

// One built-in pair, and all of them in the registry's order.
struct SemiringPair {
  SemiringKind kind;
  DType type;
  friend constexpr bool operator==(SemiringPair, SemiringPair) = default;
};
inline constexpr SemiringPair builtin_pairs[] = {
#define RINGMM_BUILTIN(semiring, dtype, S) {SemiringKind::semiring, DType::dtype},
#include "ringmm/builtins.def"
};
inline constexpr SemiringKind all_semirings[] = {
#define RINGMM_SEMIRING(id, spelling, use) SemiringKind::id,
#include "ringmm/builtins.def"
};
inline constexpr DType all_dtypes[] = {
#define RINGMM_DTYPE(id, cpp_type) DType::id,
#include "ringmm/builtins.def"
};

constexpr bool is_supported(SemiringKind kind, DType type) {
  for (const SemiringPair& p : builtin_pairs)
    if (p == SemiringPair{kind, type}) return true;
  return false;
}

// What the semiring is used for ("shortest paths"), as builtins.def says.
std::string_view use_of(SemiringKind kind);

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
        if constexpr (semiring_traits<S>::checks_inputs)
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
