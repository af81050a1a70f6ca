// The device path of SUMMA: local multiplies on this rank's GPU, panels moved by NCCL.
// Compiled only when RINGMM_HAVE_NCCL (src/dist/summa_nccl.cpp).
#pragma once

#include "device_ops.hpp"
#include "ringmm/dist.hpp"
#include "summa_plan.hpp"

namespace ringmm::dist::detail {

// `a` is M×K and `b` K×N in the plan's layout (transposes already applied). Fills the timing
// and traffic fields of `stats`.
template <class S>
void summa_device(const Grid& grid, const Plan& plan, const DistMatrix<typename S::value_type>& a,
                  const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                  typename S::value_type alpha, typename S::value_type beta, const Options& options, Stats& stats);

}  // namespace ringmm::dist::detail
