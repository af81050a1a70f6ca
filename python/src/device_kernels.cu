// The Python extension's CUDA kernels (device_kernels.hpp): grid-stride loops, one element per
// iteration; neither is on a hot path (the products they feed cost far more).
#include <cmath>
#include <cstdint>

#include "device_kernels.hpp"

namespace ringmm_py::device {

namespace {

constexpr int block_threads = 256;

unsigned blocks_for(std::int64_t count) {
  const std::int64_t blocks = (count + block_threads - 1) / block_threads;
  return unsigned(blocks < 65535 ? blocks : 65535);
}

// An element of `Bytes` bytes, copied as one value.
template <int Bytes> struct alignas(Bytes) Word {
  unsigned char bytes[Bytes];
};

template <class W> __global__ void strided_copy_kernel(W* dst, const W* src, StridedCopy layout, std::int64_t count) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    std::int64_t rest = e, d_off = 0, s_off = 0;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      const std::int64_t i = rest % layout.shape[d];
      rest /= layout.shape[d];
      d_off += i * layout.dst_stride[d];
      s_off += i * layout.src_stride[d];
    }
    dst[d_off] = src[s_off];
  }
}

template <class T> __device__ bool refused_log_score(T x) { return !(x < T(HUGE_VAL)); }  // NaN or +inf

template <class T, class Symbol>
__global__ void emission_kernel(T* emit, std::int64_t batch, std::int64_t states, std::int64_t count, EmissionSource src,
                                unsigned long long* first_bad) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < count;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t s = e % states, b = (e / states) % batch, t = e / (states * batch);
    T value;
    if (src.table) {
      const Symbol v =
          static_cast<const Symbol*>(src.observations)[b * src.observation_stride[0] + t * src.observation_stride[1]];
      if (v < 0 || std::int64_t(v) >= src.symbols) {
        atomicMin(first_bad, static_cast<unsigned long long>(e));
        continue;
      }
      value = static_cast<const T*>(src.table)[s * src.table_stride[0] + std::int64_t(v) * src.table_stride[1]];
    } else {
      value = static_cast<const T*>(src.scores)[b * src.score_stride[0] + t * src.score_stride[1] + s * src.score_stride[2]];
    }
    if (refused_log_score(value)) atomicMin(first_bad, static_cast<unsigned long long>(e));
    emit[e] = value;
  }
}

template <class T>
void launch_emissions(void* emit, std::int64_t batch, std::int64_t states, std::int64_t count, const EmissionSource& source,
                      unsigned long long* first_bad, cudaStream_t stream) {
  const unsigned blocks = blocks_for(count);
  if (source.observation_bytes == 8)
    emission_kernel<T, std::int64_t><<<blocks, block_threads, 0, stream>>>(static_cast<T*>(emit), batch, states, count,
                                                                            source, first_bad);
  else
    emission_kernel<T, std::int32_t><<<blocks, block_threads, 0, stream>>>(static_cast<T*>(emit), batch, states, count,
                                                                            source, first_bad);
}

}  // namespace

cudaError_t strided_copy(void* dst, const void* src, int element_bytes, const StridedCopy& layout, cudaStream_t stream) {
  std::int64_t count = 1;
  for (int d = 0; d < layout.ndim; ++d) count *= layout.shape[d];
  if (count == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(count);
  switch (element_bytes) {
    case 1: strided_copy_kernel<<<blocks, block_threads, 0, stream>>>(static_cast<Word<1>*>(dst), static_cast<const Word<1>*>(src), layout, count); break;
    case 2: strided_copy_kernel<<<blocks, block_threads, 0, stream>>>(static_cast<Word<2>*>(dst), static_cast<const Word<2>*>(src), layout, count); break;
    case 4: strided_copy_kernel<<<blocks, block_threads, 0, stream>>>(static_cast<Word<4>*>(dst), static_cast<const Word<4>*>(src), layout, count); break;
    case 8: strided_copy_kernel<<<blocks, block_threads, 0, stream>>>(static_cast<Word<8>*>(dst), static_cast<const Word<8>*>(src), layout, count); break;
    case 16: strided_copy_kernel<<<blocks, block_threads, 0, stream>>>(static_cast<Word<16>*>(dst), static_cast<const Word<16>*>(src), layout, count); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t fill_emissions(void* emit, bool f64, std::int64_t batch, std::int64_t steps, std::int64_t states,
                           const EmissionSource& source, unsigned long long* first_bad, cudaStream_t stream) {
  const std::int64_t count = steps * batch * states;
  if (count == 0) return cudaSuccess;
  if (f64) launch_emissions<double>(emit, batch, states, count, source, first_bad, stream);
  else launch_emissions<float>(emit, batch, states, count, source, first_bad, stream);
  return cudaGetLastError();
}

}  // namespace ringmm_py::device
