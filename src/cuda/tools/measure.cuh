// Private helpers of the GPU measurement tools: error checks, device buffers, random device data,
// event timing and input-set rotation.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda::tools {

inline void check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so that later calls start clean
  const Errc code = err == cudaErrorMemoryAllocation ? Errc::out_of_memory : Errc::device_error;
  throw Error(code, "cuda", std::string(what) + " failed: " + cudaGetErrorString(err));
}

// The tools need a device; say so with the error every GPU tool documents.
inline void require_device() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw Error(Errc::backend_unavailable, "device",
                err != cudaSuccess ? std::string("no CUDA device (") + cudaGetErrorString(err) + ")" : "no CUDA device");
  }
}

template <class T> class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) check(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)), "cudaMalloc");
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(o.data_), count_(o.count_) { o.data_ = nullptr; o.count_ = 0; }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }
  T* get() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Two events around a region of a stream; seconds() waits for the second.
class EventTimer {
 public:
  EventTimer() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start(cudaStream_t s) { check(cudaEventRecord(start_, s), "cudaEventRecord"); }
  void stop(cudaStream_t s) { check(cudaEventRecord(stop_, s), "cudaEventRecord"); }
  double seconds() {
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

inline int l2_bytes() {
  int device = 0, bytes = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  return bytes;
}

// How many input sets to rotate through so that consecutive repetitions do not find their inputs
// in L2: one when a set overflows L2, else enough sets to span three L2s (at least 2, at most 8).
inline int rotation_sets(double bytes_per_set) {
  const double l2 = l2_bytes();
  if (bytes_per_set > l2) return 1;
  return int(std::clamp(std::ceil(3.0 * l2 / std::max(bytes_per_set, 1.0)), 2.0, 8.0));
}

// ---- random device data ------------------------------------------------------------------------
__device__ __forceinline__ std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A valid random element of S from 64 random bits: finite values inside every input policy
// (integer tropical lanes within ±R, plus-times i32 small enough never to overflow).
template <class S> __device__ typename S::value_type random_element(std::uint64_t h) {
  using T = typename S::value_type;
  const double u = double(h >> 11) * 0x1.0p-53;  // [0, 1)
  if constexpr (std::is_same_v<T, std::uint8_t>) {
    return T(h >> 63);
  } else if constexpr (std::is_same_v<T, i16x2>) {
    constexpr int r = tropical_int_limits<std::int16_t>::finite_max;
    return {std::int16_t(int(h % (2 * r + 1)) - r), std::int16_t(int((h >> 32) % (2 * r + 1)) - r)};
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (S::kind == SemiringKind::plus_times) return T(2.0 * u - 1.0);
    else return T(std::round((2.0 * u - 1.0) * 4000.0) / 8.0);
  } else if constexpr (S::kind == SemiringKind::plus_times) {
    return T(int(h % 17) - 8);
  } else if constexpr (S::kind == SemiringKind::max_min) {
    return T(std::int64_t(h % 2000001) - 1000000);
  } else {
    constexpr std::int64_t r = tropical_int_limits<std::int32_t>::finite_max;
    return T(std::int64_t(h % std::uint64_t(2 * r + 1)) - r);
  }
}

template <class S>
__global__ void fill_random_kernel(typename S::value_type* p, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = random_element<S>(mix64(seed ^ mix64(i)));
}

template <class S> void fill_random(typename S::value_type* p, std::size_t count, std::uint64_t seed, cudaStream_t s) {
  if (count == 0) return;
  const unsigned blocks = unsigned(std::min<std::size_t>((count + 255) / 256, 4096));
  fill_random_kernel<S><<<blocks, 256, 0, s>>>(p, count, seed);
  check(cudaGetLastError(), "fill_random launch");
}

// Input sets A, B (and the one C every set writes) on the device, filled with random data.
template <class S> struct OperandSets {
  using T = typename S::value_type;
  std::vector<DeviceBuffer<T>> a, b;
  DeviceBuffer<T> c;
  OperandSets(std::size_t a_count, std::size_t b_count, std::size_t c_count, int sets, cudaStream_t s) : c(c_count) {
    for (int i = 0; i < sets; ++i) {
      a.emplace_back(a_count);
      b.emplace_back(b_count);
      fill_random<S>(a.back().get(), a_count, 2 * i + 1, s);
      fill_random<S>(b.back().get(), b_count, 2 * i + 2, s);
    }
    fill_random<S>(c.get(), c_count, 99, s);
    check(cudaStreamSynchronize(s), "fill_random");
  }
  int sets() const { return int(a.size()); }
};

}  // namespace ringmm::cuda::tools
