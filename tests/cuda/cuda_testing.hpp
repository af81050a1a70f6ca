// Helpers of the CUDA tests: a clean skip without a device, a device copy of a host buffer, and a
// pinned (page-locked) host copy.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ringmm/context.hpp"

#define RINGMM_SKIP_WITHOUT_GPU()                                  \
  do {                                                             \
    std::string why;                                               \
    if (!ringmm::cuda_device_available(&why)) GTEST_SKIP() << why; \
  } while (0)

namespace ringmm::testing {

// A device buffer holding a copy of `host`; to_host copies it back.
template <class T> struct DeviceCopy {
  T* ptr = nullptr;
  explicit DeviceCopy(const std::vector<T>& host) {
    EXPECT_EQ(cudaMalloc(&ptr, host.size() * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(ptr); }
  void to_host(std::vector<T>& host) const {
    EXPECT_EQ(cudaMemcpy(host.data(), ptr, host.size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  }
  // The same view over the device copy.
  template <class V> V on_device(const V& v) const { return {ptr, v.rows, v.cols, v.ld, v.layout}; }
};

// A page-locked host buffer (cudaMallocHost) holding a copy of `host`; to_host copies it back.
template <class T> struct PinnedCopy {
  T* ptr = nullptr;
  std::size_t count = 0;
  explicit PinnedCopy(const std::vector<T>& host) : count(host.size()) {
    EXPECT_EQ(cudaMallocHost(reinterpret_cast<void**>(&ptr), std::max<std::size_t>(1, count) * sizeof(T)), cudaSuccess);
    if (ptr && count) std::memcpy(ptr, host.data(), count * sizeof(T));
  }
  PinnedCopy(const PinnedCopy&) = delete;
  PinnedCopy& operator=(const PinnedCopy&) = delete;
  ~PinnedCopy() { cudaFreeHost(ptr); }
  void to_host(std::vector<T>& host) const {
    if (ptr && count) std::memcpy(host.data(), ptr, count * sizeof(T));
  }
  template <class V> V in_place_of(const V& v) const { return {ptr, v.rows, v.cols, v.ld, v.layout}; }
};

}  // namespace ringmm::testing
