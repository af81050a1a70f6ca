// Narrow operands for the tests of every backend (tests/cpu/narrow_test.cpp, tests/cuda/narrow_test.cpp):
// rounding a float to bf16 or f16 by the element type, and random narrow matrices.
#pragma once

#include <cstddef>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "ringmm/narrow_types.hpp"

namespace ringmm::testing {

template <class E> E narrow(float x) {
  if constexpr (std::is_same_v<E, bf16>) return to_bf16(x);
  else return to_f16(x);
}

// Values in [-4, 4) with about one in 41 −∞, and as many +∞ where the semiring accepts it.
template <class E> std::vector<E> random_narrow(std::size_t count, std::mt19937_64& rng, bool plus_infinity) {
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 40);
  std::vector<E> x(count);
  for (auto& v : x) {
    const int p = pick(rng);
    v = narrow<E>(p == 0                   ? -std::numeric_limits<float>::infinity()
                  : p == 1 && plus_infinity ? std::numeric_limits<float>::infinity()
                                            : d(rng));
  }
  return x;
}

}  // namespace ringmm::testing
