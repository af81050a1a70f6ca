// Kernels of the device side of ringmm::dist (device_ops.cu): element-wise semiring helpers on
// contiguous buffers, the input check's scan, and a block transpose. Kept free of MPI so that
// nvcc never sees the MPI headers.
#pragma once

#include <cstdint>

#include "ringmm/detail/input_check.hpp"
#include "ringmm/semiring.hpp"
#include "ringmm/types.hpp"

namespace ringmm::dist::detail {

// acc ← acc ⊕ part, on `stream` (a cudaStream_t).
template <class S>
void device_accumulate(typename S::value_type* acc, const typename S::value_type* part, index_t count, void* stream);
// c ← α ⊗ acc ⊕ β ⊗ c: the library's one epilogue (C is read only when β ≠ 0̄); a null `acc`
// stands for 0̄ everywhere (a product with K = 0).
template <class S>
void device_epilogue(typename S::value_type* c, const typename S::value_type* acc, index_t count,
                     typename S::value_type alpha, typename S::value_type beta, void* stream);

// The argmax SUMMA's steps, for semirings whose ⊕ selects (others throw). take_better: where a
// later panel's term beats the running one strictly, it and its index replace them (ties keep the
// earlier, smaller k). argmax_epilogue: gemm_argmax's store (detail::argmax_store) of the running
// winners into C and K*; a null `acc` stands for 0̄ everywhere (K = 0).
template <class S>
void device_take_better(typename S::value_type* acc, std::int32_t* acc_k, const typename S::value_type* part,
                        const std::int32_t* part_k, index_t count, void* stream);
template <class S>
void device_argmax_epilogue(typename S::value_type* c, std::int32_t* k_star, const typename S::value_type* acc,
                            const std::int32_t* acc_k, index_t count, typename S::value_type alpha,
                            typename S::value_type beta, void* stream);

// The input check's scan (ringmm's scan_kernel) of a row-major rows × cols block with leading
// dimension ld, on `stream`; waits for it. Positions count row by row, as on the host.
template <class S>
ringmm::detail::ValueScan device_scan(const typename S::value_type* x, index_t rows, index_t cols, index_t ld,
                                      void* stream);

// dst ← the transpose of the rows × cols block at src (leading dimension ld): cols × rows, dense.
template <class T> void device_transpose_block(T* dst, const T* src, index_t rows, index_t cols, index_t ld, void* stream);

}  // namespace ringmm::dist::detail
