// Blocked multi-threaded CPU semiring kernel (BLIS-style). PLACEHOLDER until the CPU backend lands:
// forwards to the reference so the tree builds.
#pragma once

#include "ringmm/cpu/reference.hpp"

namespace ringmm::cpu {

template <class S> void blocked_gemm(const detail::Problem<typename S::value_type>& p, int /*threads*/) {
  reference_gemm<S>(p);
}

}  // namespace ringmm::cpu
