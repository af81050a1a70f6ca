// The CUDA backend's host functions compiled once into libringmm: device discovery, pointer
// classification, the workspace pool and the configuration lookup (ringmm/cuda/device.hpp) that
// every instantiation of the engine template shares.
#include <cuda_runtime.h>

#include <atomic>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/error.hpp"

namespace ringmm {

bool cuda_detail::device_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    // Without a GPU the runtime finds no driver and says "driver version is insufficient", which
    // reads like a version problem: say what it means.
    if (why) {
      if (err == cudaSuccess || err == cudaErrorNoDevice) *why = "no CUDA device";
      else if (err == cudaErrorInsufficientDriver) *why = "no CUDA device (no NVIDIA driver is loaded)";
      else *why = std::string("no CUDA device (") + cudaGetErrorString(err) + ")";
    }
    cudaGetLastError();
    return false;
  }
  return true;
}

namespace cuda_detail {

bool is_device_pointer(const void* p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();  // older runtimes report unregistered host memory as an error
    return false;
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

int multiprocessor_count() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  // Asked on every engine call (the heuristics): kept per device after the first query.
  constexpr int kDevices = 64;
  static std::atomic<int> known[kDevices] = {};
  if (device < kDevices)
    if (const int count = known[device].load(std::memory_order_relaxed); count > 0) return count;
  int count = 0;
  cuda_check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  if (device < kDevices) known[device].store(count, std::memory_order_relaxed);
  return count;
}

cudaMemPool_t workspace_pool() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  static std::mutex mutex;
  static std::vector<cudaMemPool_t> pools;
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools.size() <= std::size_t(device)) pools.resize(std::size_t(device) + 1, nullptr);
  if (!pools[std::size_t(device)]) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    cuda_check(cudaMemPoolCreate(&pool, &props), "cudaMemPoolCreate");
    std::uint64_t keep = std::uint64_t(4) << 30;
    cuda_check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
    pools[std::size_t(device)] = pool;
  }
  return pools[std::size_t(device)];
}

namespace {
thread_local WorkspaceSource* current_workspace = nullptr;
}  // namespace

WorkspaceSource* installed_workspace() { return current_workspace; }

ScopedWorkspace::ScopedWorkspace(WorkspaceSource& source) : previous_(current_workspace) { current_workspace = &source; }

ScopedWorkspace::~ScopedWorkspace() { current_workspace = previous_; }

ConfigId find_config(const std::string& name) {
  std::string known;
  for (int i = 0; i < config_count; ++i) {
    if (config_table[i].name == name) return ConfigId(i);
    known += (i ? ", " : "") + std::string(config_table[i].name);
  }
  known += ", " + std::string(small_config_names);
  throw Error(Errc::invalid_argument, "cuda_config", "unknown CUDA configuration '" + name + "'; known: " + known);
}

}  // namespace cuda_detail
}  // namespace ringmm
