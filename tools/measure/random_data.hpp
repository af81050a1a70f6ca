// Random valid inputs of a semiring, for benchmarks and tests alike: about 5 % of tropical entries
// are 0̄ (±∞ or the integer sentinel) so that products exercise it; integers stay inside the
// accepted policy range; or-and density falls with k so that products are not all true; float
// tropical values are multiples of 1/8, so their sums are exact, and keep to the semiring's
// input domain (max-times: their magnitudes); log-plus values are log-probabilities, log u for u
// uniform in (0, 1], the data its products are for (the adversarial cases are the tests' own).
//
// random_value draws from any 64-bit generator: std::mt19937_64 on the host, SplitMix64 (one per
// element) in device code.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

#include "ringmm/semiring.hpp"

namespace ringmm::measure {

// Sebastiano Vigna's splitmix64: a generator small enough to seed per element on the device.
struct SplitMix64 {
  std::uint64_t state;
  RINGMM_HD std::uint64_t operator()() {
    std::uint64_t x = state += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  }
};

// What the tests add to the benchmarks' data: 1̄ among the tropical specials (i32 and floats), and
// or-and true entries other than 1 (every nonzero byte is true).
struct Variety {
  bool one_among_specials = false;
  bool any_nonzero_true = false;
};

template <class S, class Rng>
RINGMM_HD typename S::value_type random_value(Rng& rng, index_t k = 64, Variety variety = {}) {
  using T = typename S::value_type;
  auto unit = [&] { return double(rng() >> 11) * 0x1.0p-53; };  // [0, 1)
  if constexpr (S::kind == SemiringKind::or_and) {
    const double density = std::min(0.5, std::sqrt(0.7 / double(k > 1 ? k : 1)));
    if (unit() >= density) return T(0);
    return variety.any_nonzero_true ? T(1 + rng() % 3) : T(1);
  } else if constexpr (S::kind == SemiringKind::log_plus) {
    if (unit() < 0.05) return variety.one_among_specials && (rng() & 1) ? S::one() : S::zero();
    return T(std::log(1.0 - unit()));
  } else if constexpr (S::kind == SemiringKind::plus_times) {
    if constexpr (std::is_floating_point_v<T>) return T(2.0 * unit() - 1.0);
    else return T(std::int64_t(rng() % 17) - 8);  // |α|·K·64 stays far below 2^31 for K < 2^24
  } else {
    const bool special = unit() < 0.05;
    auto special_value = [&] { return variety.one_among_specials && (rng() & 1) ? S::one() : S::zero(); };
    if constexpr (std::is_same_v<T, i16x2>) {
      constexpr std::int64_t r = tropical_int_limits<std::int16_t>::finite_max;
      auto lane = [&](std::int16_t zero) {
        return special && (rng() & 1) ? zero : std::int16_t(std::int64_t(rng() % std::uint64_t(2 * r + 1)) - r);
      };
      return {lane(S::zero().lo), lane(S::zero().hi)};
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
      if (special) return special_value();
      // The integer tropical policy range, or small values where every integer is accepted.
      const std::int64_t r = semiring_traits<S>::checks_inputs ? tropical_int_limits<std::int32_t>::finite_max : 1000;
      return T(std::int64_t(rng() % std::uint64_t(2 * r + 1)) - r);
    } else {
      if (special) return special_value();
      const T x = T(std::round((2.0 * unit() - 1.0) * 1000.0) / 8.0);
      return semiring_traits<S>::valid_input(x) ? x : T(std::fabs(x));  // max-times: nonnegative
    }
  }
}

// A random i32 value of max-plus or min-plus as an i8 operand (ringmm/narrow.hpp): 0̄ becomes the
// i8 sentinel, other values are taken modulo 127 (never the sentinel, −128 or 127).
RINGMM_HD std::int8_t int8_operand(std::int32_t x, std::int32_t zero, std::int8_t sentinel) {
  return x == zero ? sentinel : std::int8_t(x % 127);
}

template <class S>
std::vector<typename S::value_type> random_vector(std::size_t count, std::uint64_t seed, index_t k, Variety variety = {}) {
  std::mt19937_64 rng(seed);
  std::vector<typename S::value_type> v(count);
  for (auto& x : v) x = random_value<S>(rng, k, variety);
  return v;
}

}  // namespace ringmm::measure
