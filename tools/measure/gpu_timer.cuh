// The GPU side of the timer (timer.hpp): CUDA events around a region of a stream, a wall clock that
// drains the device first and last (for calls on host buffers), and input sets that successive
// repetitions rotate through when one set fits in L2, filled on the device with random_data.hpp's
// values. Errors go through the library's cuda_check (ringmm/cuda/check.hpp).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ringmm/cuda/check.hpp"
#include "measure/random_data.hpp"
#include "measure/timer.hpp"
#include "ringmm/error.hpp"

namespace ringmm::measure {

using cuda::cuda_check;
using cuda::DeviceBuffer;

// Every GPU measurement needs a device; say so with the error they all document.
inline void require_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw Error(Errc::backend_unavailable, "device",
                err != cudaSuccess ? std::string("no CUDA device (") + cudaGetErrorString(err) + ")" : "no CUDA device");
  }
}

// Two events around the region on `stream`; waits for the second.
class EventClock {
 public:
  explicit EventClock(cudaStream_t stream) : stream_(stream) {
    cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  EventClock(const EventClock&) = delete;
  EventClock& operator=(const EventClock&) = delete;
  ~EventClock() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  template <class F> double operator()(F&& f) {
    cuda_check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    f();
    cuda_check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_{}, stop_{};
};

// The host clock around calls on host buffers, with the device drained before and after.
struct DeviceWallClock {
  template <class F> double operator()(F&& f) const {
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    return HostClock{}([&] {
      f();
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    });
  }
};

// How many input sets to rotate through so that consecutive repetitions do not find their inputs
// in L2: one when a set overflows L2, else enough sets to span three L2s (at least 2, at most 8).
inline int rotation_sets(double bytes_per_set) {
  int device = 0, l2 = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  if (bytes_per_set > l2) return 1;
  return int(std::clamp(std::ceil(3.0 * l2 / std::max(bytes_per_set, 1.0)), 2.0, 8.0));
}

template <class S>
__global__ void fill_random_kernel(typename S::value_type* p, std::size_t count, std::uint64_t seed, index_t k) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    SplitMix64 rng{SplitMix64{seed}() ^ (i * 0xd1b54a32d192ed03ull)};  // one stream per element
    p[i] = random_value<S>(rng, k);
  }
}

template <class S>
void fill_random(typename S::value_type* p, std::size_t count, std::uint64_t seed, index_t k, cudaStream_t s) {
  if (count == 0) return;
  const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 4096));
  fill_random_kernel<S><<<blocks, 256, 0, s>>>(p, count, seed, k);
  cuda::check_launch("fill_random_kernel");
}

// `sets` input sets A, B of random data for a product of inner dimension k, and the one C that
// every set writes.
template <class S> struct OperandSets {
  using T = typename S::value_type;
  std::vector<DeviceBuffer<T>> a, b;
  DeviceBuffer<T> c;
  OperandSets(std::size_t a_count, std::size_t b_count, std::size_t c_count, index_t k, int sets, cudaStream_t s)
      : c(c_count, s) {
    for (int i = 0; i < sets; ++i) {
      a.emplace_back(a_count, s);
      b.emplace_back(b_count, s);
      fill_random<S>(a.back().get(), a_count, 2 * i + 1, k, s);
      fill_random<S>(b.back().get(), b_count, 2 * i + 2, k, s);
    }
    fill_random<S>(c.get(), c_count, 99, k, s);
    cuda_check(cudaStreamSynchronize(s), "fill_random");
  }
  int sets() const { return int(a.size()); }
};

}  // namespace ringmm::measure
