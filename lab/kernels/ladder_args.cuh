// What every ladder kernel receives: the normalised problem with device pointers (see
// detail::Problem), in a form that device code can read.
#pragma once

#include "ringmm/matrix.hpp"

namespace ringmm::lab {

template <class T> struct LadderArgs {
  detail::Strided<const T> a;  // M×K
  detail::Strided<const T> b;  // K×N
  detail::Strided<T> c;        // M×N
  T alpha, beta;
  index_t stride_a, stride_b, stride_c;  // batch member z starts at X.p + z·stride_x (grid z)
};

}  // namespace ringmm::lab
