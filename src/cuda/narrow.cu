// Narrow operands (ringmm/narrow.hpp) in device memory: widened into the accumulator type before
// the product and, for a narrow C, rounded back after it. Both are one pass over the matrix, a few
// hundred microseconds at 8192² against tens of milliseconds for the product.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

namespace {

__device__ float widen_bits(NarrowElement type, std::uint16_t bits) {
  if (type == NarrowElement::bf16) return __uint_as_float(std::uint32_t(bits) << 16);
  return __half2float(__ushort_as_half(bits));  // exact: every f16 value is an f32 value
}

// Run r (of `outer`) holds `inner` elements from + r·ld; the copy is dense, run r at to + r·inner.
// Threads walk the inner axis, so reads and writes are both contiguous.
template <class W>
__global__ void widen_kernel(NarrowElement type, const void* from, index_t outer, index_t inner, index_t ld, W* to,
                             std::int8_t sentinel, std::int32_t zero) {
  for (index_t r = blockIdx.y; r < outer; r += gridDim.y)
    for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < inner; i += index_t(gridDim.x) * blockDim.x) {
      if constexpr (std::is_same_v<W, std::int32_t>) {
        const std::int8_t x = static_cast<const std::int8_t*>(from)[r * ld + i];
        to[r * inner + i] = x == sentinel ? zero : std::int32_t(x);
      } else {
        to[r * inner + i] = widen_bits(type, static_cast<const std::uint16_t*>(from)[r * ld + i]);
      }
    }
}

// Rounding to nearest, ties to even, as narrow_types.hpp rounds on the host (NaN stays a NaN).
__global__ void round_kernel(NarrowElement type, const float* from, index_t outer, index_t inner, std::uint16_t* to,
                             index_t ld) {
  for (index_t r = blockIdx.y; r < outer; r += gridDim.y)
    for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < inner; i += index_t(gridDim.x) * blockDim.x) {
      const float x = from[r * inner + i];
      to[r * ld + i] = type == NarrowElement::bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(x))
                                                   : __half_as_ushort(__float2half_rn(x));
    }
}

constexpr int threads = 256;

// A grid over `outer` runs of `inner` elements: blocks across a run, up to 65535 runs at once.
dim3 runs_grid(index_t outer, index_t inner) {
  const index_t across = std::min<index_t>((inner + threads - 1) / threads, index_t(4) * multiprocessor_count());
  return dim3(unsigned(std::max<index_t>(across, 1)), unsigned(std::min<index_t>(outer, 65535)));
}

}  // namespace

void widen_runs(NarrowElement type, const void* from, index_t outer, index_t inner, index_t ld, void* to,
                std::int8_t sentinel, std::int32_t zero, void* stream) {
  if (outer <= 0 || inner <= 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  const dim3 grid = runs_grid(outer, inner);
  if (type == NarrowElement::i8)
    widen_kernel<std::int32_t><<<grid, threads, 0, s>>>(type, from, outer, inner, ld, static_cast<std::int32_t*>(to),
                                                       sentinel, zero);
  else
    widen_kernel<float><<<grid, threads, 0, s>>>(type, from, outer, inner, ld, static_cast<float*>(to), sentinel, zero);
  check_launch("widen_kernel");
}

void round_runs(NarrowElement type, const float* from, index_t outer, index_t inner, void* to, index_t ld, void* stream) {
  if (type == NarrowElement::i8)
    throw Error(Errc::unsupported, "C", "an i8 C is not written: i8 products accumulate into an i32 C");
  if (outer <= 0 || inner <= 0) return;
  round_kernel<<<runs_grid(outer, inner), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      type, from, outer, inner, static_cast<std::uint16_t*>(to), ld);
  check_launch("round_kernel");
}

}  // namespace ringmm::cuda_detail
