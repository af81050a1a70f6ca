// The CUDA side of `ringmm tune`'s cache (ringmm/tune.hpp): reading the current device's cache once
// per process, the engine's lookup (ringmm/cuda/device.hpp: tuned_kernels), and
// describe_cuda_choice over the engine's own describe<S> (engine.cuh).
#include <cuda_runtime.h>

#include <atomic>
#include <iostream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm.cuh"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/tune.hpp"

namespace ringmm {

namespace cuda_detail {

namespace {

// One device's cache, resolved against the configuration table, keyed by ShapeClass::packed.
struct LoadedCache {
  std::unordered_map<std::uint64_t, TunedKernels> entries;
};

TunedKernels resolve(const tune::Entry& e) {
  TunedKernels t;
  t.heuristic = e.keeps_heuristic();
  if (t.heuristic) return t;
  t.choice.small = small_config_tile(e.config);
  if (!t.choice.small) t.choice.id = find_config(e.config);
  t.choice.border = e.border == BorderPolicy::predicate ? Border::predicate : Border::pad;
  t.choice.parts = e.split_k;
  t.choice.source = ChoiceSource::tune_cache;
  return t;
}

tune::CacheKey key_of(int device) {
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  return {prop.name, prop.multiProcessorCount, std::string(version())};
}

// A corrupt or mismatched file (or a device that cannot be asked its name) is ignored with one
// warning per process: calls go on with the heuristics.
LoadedCache* load(int device) {
  auto* loaded = new LoadedCache;
  std::string path = "of this device";
  try {
    const tune::CacheKey key = key_of(device);
    path = tune::cache_path(key);
    if (!path.empty())
      if (const auto cache = tune::read_file(path, key))
        for (const tune::Entry& e : cache->entries) loaded->entries.emplace(e.shape.packed(), resolve(e));
  } catch (const Error& e) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      std::cerr << "ringmm: warning: ignoring the tune cache " << path << " (the heuristics choose): " << e.what()
                << std::endl;
    loaded->entries.clear();
  }
  return loaded;
}

// Per device ordinal; a cache once read is never freed, so the entries handed out stay valid.
constexpr int max_devices = 64;
std::atomic<LoadedCache*> caches[max_devices] = {};
std::mutex load_mutex;

}  // namespace

const TunedKernels* tuned_kernels(SemiringKind kind, DType type, index_t m, index_t n, index_t k, index_t batch,
                                  bool symmetric) {
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  if (device < 0 || device >= max_devices) return nullptr;
  LoadedCache* cache = caches[device].load(std::memory_order_acquire);
  if (!cache) {
    const std::lock_guard<std::mutex> lock(load_mutex);
    cache = caches[device].load(std::memory_order_acquire);
    if (!cache) caches[device].store(cache = load(device), std::memory_order_release);
  }
  if (cache->entries.empty()) return nullptr;
  const auto it = cache->entries.find(tune::class_of(kind, type, m, n, k, batch, symmetric).packed());
  return it == cache->entries.end() ? nullptr : &it->second;
}

}  // namespace cuda_detail

tune::CacheKey cuda_detail::tune_key() {
  std::string why;
  if (!cuda_device_available(&why)) throw Error(Errc::backend_unavailable, "cuda", why);
  int device = 0;
  cuda_detail::cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  return cuda_detail::key_of(device);
}

void cuda_detail::reload_tune_cache() {
  const std::lock_guard<std::mutex> lock(cuda_detail::load_mutex);
  for (auto& slot : cuda_detail::caches) slot.store(nullptr, std::memory_order_release);
}

CudaChoice cuda_detail::describe_choice(const Context& ctx, SemiringKind kind, DType type, index_t m, index_t n,
                                        index_t k, index_t batch, bool symmetric) {
  std::string why;
  if (!cuda_device_available(&why)) throw Error(Errc::backend_unavailable, "cuda", why);
  if (m < 0 || n < 0 || k < 0 || batch < 1)
    throw Error(Errc::invalid_argument, "shape", "M, N, K must be >= 0 and the batch >= 1");
  using namespace cuda_detail;
  return visit_semiring(kind, type, [&](auto tag) {
    using S = typename decltype(tag)::type;
    detail::Problem<S> p{};
    p.a.rows = m, p.a.cols = k, p.b.rows = k, p.b.cols = n, p.c.rows = m, p.c.cols = n;
    p.batch = batch, p.symmetric = symmetric;
    const ChoiceReport r = describe<S>(ctx, p);
    CudaChoice c;
    switch (r.route) {
      case EngineRoute::kernels: c.route = "kernels"; break;
      case EngineRoute::vendor_blas: c.route = "cublas"; break;
      case EngineRoute::or_and_mma: c.route = "tensor cores"; break;
      case EngineRoute::log_plus_shift: c.route = "shift trick"; break;
    }
    c.config = r.part.small ? "small" + std::to_string(r.part.small) : std::string(config_info(r.part.id).name);
    c.border = r.part.small ? "" : r.part.border == Border::pad ? "pad" : "predicate";
    c.split_k = r.whole.parts;
    c.split_in_clusters = r.clusters;
    switch (r.whole.source) {
      case ChoiceSource::caller: c.source = "caller"; break;
      case ChoiceSource::tune_cache: c.source = "tune cache"; break;
      case ChoiceSource::tune_cache_heuristic: c.source = "tune cache (heuristic kept)"; break;
      case ChoiceSource::heuristic: c.source = "heuristic"; break;
    }
    return c;
  });
}

}  // namespace ringmm
