// The device path of SUMMA (summa_nccl.cpp), compiled only when RINGMM_HAVE_NCCL: the host
// matrices' dist::gemm and dist::gemm_argmax with a cuda backend come here.
#pragma once

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// The checked call (summa.cpp checked agreement, shapes and values; K > 0): A, B, C and, for
// gemm_argmax (k_star not null), K* to the devices, the device-resident SUMMA, C and K* back (all
// counted in Stats::staged_bytes).
template <class S>
void summa_via_devices(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
                       const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                       DistMatrix<std::int32_t>* k_star, typename S::value_type alpha, typename S::value_type beta,
                       const Options& options, Stats& stats);

}  // namespace ringmm::dist::detail
