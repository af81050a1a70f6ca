// Element-wise semiring helpers on contiguous device buffers for the device path of SUMMA
// (device_ops.cu). Kept free of MPI so that nvcc never sees the MPI headers.
#pragma once

#include "ringmm/semiring.hpp"
#include "ringmm/types.hpp"

namespace ringmm::dist::detail {

// acc ← acc ⊕ part, on `stream` (a cudaStream_t).
template <class S>
void device_accumulate(typename S::value_type* acc, const typename S::value_type* part, index_t count, void* stream);
// c ← α ⊗ acc ⊕ β ⊗ c: the library's one epilogue (C is read only when β ≠ 0̄).
template <class S>
void device_epilogue(typename S::value_type* c, const typename S::value_type* acc, index_t count,
                     typename S::value_type alpha, typename S::value_type beta, void* stream);

}  // namespace ringmm::dist::detail
