// The device path of SUMMA (summa_nccl.cpp), compiled only when RINGMM_HAVE_NCCL: the host
// matrices' dist::gemm with a cuda backend comes here.
#pragma once

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// The checked call (summa.cpp checked agreement, shapes and values; K > 0): A, B and C to the
// devices, the device-resident SUMMA, C back (all counted in Stats::staged_bytes).
template <class S>
void summa_via_devices(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
                       const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                       typename S::value_type alpha, typename S::value_type beta, const Options& options, Stats& stats);

}  // namespace ringmm::dist::detail
