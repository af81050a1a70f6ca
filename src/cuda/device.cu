// The CUDA backend's host functions compiled once into libringmm: device discovery, pointer
// classification, the workspace pool and the configuration lookup (ringmm/cuda/device.hpp) that
// every instantiation of the engine template shares.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cctype>
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

namespace {

// Why the current device cannot run this build's kernels, or "" where it can (asked once a device).
std::string unsupported_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return "";
  constexpr int kDevices = 64;
  static std::string answer[kDevices];
  static std::once_flag asked[kDevices];
  if (device >= kDevices) return "";
  std::call_once(asked[device], [device] {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) return void(cudaGetLastError());
    const int cc = prop.major * 10 + prop.minor;
    const std::string name = std::string(prop.name) + " (compute capability " + std::to_string(prop.major) + "." +
                             std::to_string(prop.minor) + ")";
    if (cc < 80) {
      answer[device] = name + " is older than Ampere: ringmm's CUDA kernels need compute capability 8.0 or later";
      return;
    }
    const std::string built = cuda_detail::built_architectures();
    std::size_t start = 0;
    for (std::size_t comma; start <= built.size(); start = comma + 1) {
      comma = std::min(built.find(',', start), built.size());
      if (cuda_detail::arch_runs_on(built.substr(start, comma - start), cc)) return;
    }
    answer[device] = name + " has no code in this build of ringmm, which was compiled for " + built +
                     " (CMAKE_CUDA_ARCHITECTURES): rebuild with -DRINGMM_CUDA_ARCHS=portable, or with "
                     "-DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc);
  });
  return answer[device];
}

}  // namespace

std::string cuda_detail::built_architectures() { return RINGMM_CUDA_ARCHITECTURES; }

// Whether kernels built for `arch`, as CMAKE_CUDA_ARCHITECTURES names it ("86-real", "90a-real",
// "90-virtual", "80"), run on a device of compute capability `cc` (major × 10 + minor): machine
// code runs on its own major version at the same or a later minor one (arch-specific "a" code on
// its own capability only); PTX is JIT-compiled by the driver for its capability and any later.
bool cuda_detail::arch_runs_on(const std::string& arch, int cc) {
  std::size_t digits = 0;
  while (digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[digits]))) ++digits;
  if (digits == 0) return false;
  const int built = std::stoi(arch.substr(0, digits));
  const std::string rest = arch.substr(digits);
  const bool specific = !rest.empty() && rest[0] == 'a';
  const bool ptx = rest.find("-real") == std::string::npos;  // "80" is both machine code and PTX
  const bool machine_code = rest.find("-virtual") == std::string::npos;
  if (specific) return machine_code && cc == built;
  return (machine_code && cc / 10 == built / 10 && cc >= built) || (ptx && cc >= built);
}

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
  if (const std::string problem = unsupported_device(); !problem.empty()) {
    if (why) *why = problem;
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

int current_device() {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

int attribute(cudaDeviceAttr what, int device) {
  int value = 0;
  cuda_check(cudaDeviceGetAttribute(&value, what, device), "cudaDeviceGetAttribute");
  return value;
}

int multiprocessor_count() {
  static std::atomic<int> known[64] = {};
  return per_device(known, [](int device) { return attribute(cudaDevAttrMultiProcessorCount, device); });
}

int compute_capability() {
  static std::atomic<int> known[64] = {};
  return per_device(known, [](int device) {
    return 10 * attribute(cudaDevAttrComputeCapabilityMajor, device) + attribute(cudaDevAttrComputeCapabilityMinor, device);
  });
}

int kernel_arch(const void* kernel) {
  cudaFuncAttributes attributes{};
  cuda_check(cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes");
  return attributes.binaryVersion;
}

double& sign_scan_min_updates() {
  static double updates = 4294967296.0;
  return updates;
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
