// What the device side of ringmm::dist shares (summa_nccl.cpp, device_matrix.cpp): error checks,
// owned device, pinned and event handles, and the grid's device state. NCCL builds only.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "nccl_loader.hpp"
#include "ringmm/dist.hpp"

namespace ringmm::dist {

// The grid's device, streams and NCCL communicators, made once per grid (detail::device_state).
struct Grid::DeviceState {
  int device = 0;
  cudaStream_t comm_stream = nullptr, compute_stream = nullptr;
  ncclComm_t row = nullptr, col = nullptr;  // the process row's and the process column's ranks
  ncclComm_t all = nullptr;                 // every rank of the grid (transposes)
  // The same rows and columns for SUMMA's panels, whose moves overlap the local products: NCCL
  // kernels limited to panel_ctas blocks (detail::panel_ctas), so that they take few SMs from the
  // product beside them. APSP's broadcasts stand on the critical path and keep row and col.
  ncclComm_t row_panels = nullptr, col_panels = nullptr;

  ~DeviceState();
};

namespace detail {

void check_cuda(cudaError_t status, const char* what);
void check_nccl(ncclResult_t status, const char* what);

// Collective on first use for a grid: picks this rank's device (one rank per GPU: the rank's index
// among its node's ranks, unless it sees one device), makes it current, and creates the streams and
// communicators. A rank without a device, or sharing one, stops every rank with the same error.
Grid::DeviceState& device_state(const Grid& grid);

// The most thread blocks an NCCL kernel that moves SUMMA's panels may take. A panel's move hides
// behind a local product many times longer, so its speed matters less than the SMs it takes from
// that product; with the communication stream first, 4, 8 and 16 gave the same rate on four H200s
// and 1 or 2 made the panels late (docs/performance-log.md, "SUMMA's panels first").
inline constexpr int panel_ctas = 8;

// A device allocation released on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, const char* call = "dist::gemm") {
    if (bytes > 0 && cudaMalloc(&ptr_, bytes) != cudaSuccess) {
      cudaGetLastError();  // a failed allocation must not fail the next launch
      throw Error(Errc::out_of_memory, call, "cudaMalloc of " + std::to_string(bytes) + " bytes failed");
    }
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// A page-locked host buffer: copies to and from the device run at full speed without the
// driver's own pageable staging.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes, const char* call) {
    if (bytes > 0 && cudaHostAlloc(&ptr_, bytes, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::out_of_memory, call, "cudaHostAlloc of " + std::to_string(bytes) + " pinned bytes failed");
    }
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// A CUDA event for ordering streams (no timing).
class Event {
 public:
  Event() { check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace detail
}  // namespace ringmm::dist
