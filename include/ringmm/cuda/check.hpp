// CUDA error handling for the engine: every runtime call goes through cuda_check, which turns a
// failure into ringmm::Error (out_of_memory for allocation failures, device_error otherwise).
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

inline void cuda_check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls start clean
  const std::string message = std::string(what) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) throw Error(Errc::out_of_memory, "device memory", message);
  throw Error(Errc::device_error, "cuda", message);
}

// After a kernel launch: reports bad launch configurations at once (execution errors surface at
// the next synchronising call, which is checked too).
inline void check_launch(const char* kernel) { cuda_check(cudaGetLastError(), kernel); }

// The engine's own stream-ordered memory pool on the current device. It keeps freed memory (up to
// a few GiB) for the next call, so the padding and staging buffers of repeated calls cost no
// new mappings; the caller's default pool is left as it is.
cudaMemPool_t workspace_pool();

// Device memory that a caller owns and lends to the engine's calls. A framework that allots the
// memory of the work it schedules (XLA hands its custom calls a scratch allocator, whose memory
// may be part of a CUDA graph) installs one with ScopedWorkspace around the calls it makes; their
// DeviceBuffers then come from it. Its memory must stay valid until the work queued on the call's
// stream is done; DeviceBuffer gives nothing back to it.
class WorkspaceSource {
 public:
  // `bytes` (> 0), aligned for any element type; throws ringmm::Error (out_of_memory) when it cannot.
  virtual void* allocate(std::size_t bytes) = 0;

 protected:
  ~WorkspaceSource() = default;
};

// The source the calling thread installed, or null for workspace_pool().
WorkspaceSource* installed_workspace();

// Installs `source` for the calling thread until it goes out of scope (then the previous one again).
class ScopedWorkspace {
 public:
  explicit ScopedWorkspace(WorkspaceSource& source);
  ~ScopedWorkspace();
  ScopedWorkspace(const ScopedWorkspace&) = delete;
  ScopedWorkspace& operator=(const ScopedWorkspace&) = delete;

 private:
  WorkspaceSource* previous_;
};

// A stream-ordered device allocation from workspace_pool(), freed on the same stream when it goes
// out of scope; or, where the calling thread installed a WorkspaceSource, memory of that source.
template <class T> class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t count, cudaStream_t stream) : stream_(stream) {
    if (count == 0) return;
    if (WorkspaceSource* source = installed_workspace()) {
      data_ = static_cast<T*>(source->allocate(count * sizeof(T)));
      pooled_ = false;
      return;
    }
    void* p = nullptr;
    cuda_check(cudaMallocFromPoolAsync(&p, count * sizeof(T), workspace_pool(), stream), "cudaMallocFromPoolAsync");
    data_ = static_cast<T*>(p);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(o.data_), stream_(o.stream_), pooled_(o.pooled_) { o.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = o.data_;
      stream_ = o.stream_;
      pooled_ = o.pooled_;
      o.data_ = nullptr;
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }
  T* get() const { return data_; }

 private:
  void release() {
    if (data_ && pooled_) cudaFreeAsync(data_, stream_);  // errors here would only repeat an earlier one
    data_ = nullptr;
  }
  T* data_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool pooled_ = true;  // from workspace_pool(), not from an installed WorkspaceSource
};

}  // namespace ringmm::cuda_detail

// The engine's error checks and device buffers, as API for code beside it (ringmm's tools, a
// user's kernels next to ringmm calls).
namespace ringmm::cuda {
using cuda_detail::check_launch;
using cuda_detail::cuda_check;
using cuda_detail::DeviceBuffer;
using cuda_detail::installed_workspace;
using cuda_detail::ScopedWorkspace;
using cuda_detail::WorkspaceSource;
}  // namespace ringmm::cuda

