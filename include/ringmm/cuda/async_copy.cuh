// cp.async: copies from global to shared memory that bypass the registers (sm_80 and later), for
// kernels that stage tiles without spending registers on them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ringmm::cuda_detail {

__device__ inline std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes, through L2 only (.cg): both addresses 16-byte aligned.
__device__ inline void copy16_async(std::uint32_t smem, const void* global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(global));
}

// kBytes (4, 8 or 16) when `in`, else kBytes of zeros: `global` is not read then, but must still
// be a valid address.
template <int kBytes> __device__ inline void copy_async_or_zero(std::uint32_t smem, const void* global, bool in) {
  static_assert(kBytes == 4 || kBytes == 8 || kBytes == 16, "cp.async moves 4, 8 or 16 bytes");
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(global), "n"(kBytes),
               "r"(in ? kBytes : 0));
}

__device__ inline void commit_group() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N> __device__ inline void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

}  // namespace ringmm::cuda_detail
