// Host functions the engine template calls that are compiled once, into libringmm
// (src/cuda/device.cu, src/cuda/tune.cu), for every semiring, and the engine's record of a choice.
#pragma once

#include <atomic>
#include <string>

#include "ringmm/cuda/configs.hpp"
#include "ringmm/types.hpp"

namespace ringmm::cuda_detail {

bool is_device_pointer(const void* p);  // device or managed memory
// Whether kernels compiled for `arch` (a CMAKE_CUDA_ARCHITECTURES entry: "86-real", "90a-real",
// "90-virtual", "80") run on a device of compute capability `cc` (major × 10 + minor).
bool arch_runs_on(const std::string& arch, int cc);
int current_device();                   // cudaGetDevice
int multiprocessor_count();             // of the current device
int compute_capability();               // of the current device: major × 10 + minor
// The architecture (major × 10 + minor) of the machine code the current device runs for `kernel`
// (cudaFuncAttributes::binaryVersion); callers keep it with per_device.
int kernel_arch(const void* kernel);

// A fact of the current device as a positive integer, asked once per device (the first 64) and
// then read from `known`: the engine asks on every call (the heuristics, the sign-known route).
template <class Ask> int per_device(std::atomic<int> (&known)[64], Ask&& ask) {
  const int device = current_device();
  const bool kept = device < 64;
  if (kept)
    if (const int value = known[device].load(std::memory_order_relaxed); value > 0) return value;
  const int value = ask(device);
  if (kept) known[device].store(value, std::memory_order_relaxed);
  return value;
}
// Products of at least this many updates scan A and B for the sign-known update (support_kernels.cuh:
// scan_signs): 2³² by default, where the scan's few microseconds are about 1 % of the product.
// Process-wide and not synchronised: tests lower it, before any call, from one thread.
double& sign_scan_min_updates();
ConfigId find_config(const std::string& name);  // throws invalid_argument naming cuda_config

// Where the engine's choice for a call came from: the caller's Context (a configuration, border
// or split named), `ringmm tune`'s cache, the heuristics (heuristics.hpp) where the cache says
// tuning kept them, or the heuristics of an untuned shape class.
enum class ChoiceSource { caller, tune_cache, tune_cache_heuristic, heuristic };

// The kernels that run one call (engine.cuh: choose). `id` is unread when `small` names the small
// kernel's tile edge; parts > 1 cuts K into that many parts (split-K).
struct Choice {
  ConfigId id{};
  Border border = Border::pad;
  int small = 0;
  index_t parts = 1;
  ChoiceSource source = ChoiceSource::heuristic;
};

// Which path runs a call: the tile kernels (large, small, split-K), or one of the routes taken
// before them (engine.cuh: cuda_run_impl).
enum class EngineRoute { kernels, vendor_blas, or_and_mma, log_plus_shift };

// What the engine runs for a call (engine.cuh: describe). A split's parts run `part`, and meet in
// thread block clusters where `clusters` (engine.cuh: split_in_clusters).
struct ChoiceReport {
  EngineRoute route = EngineRoute::kernels;
  Choice whole, part;
  bool clusters = false;
};

// A tune cache entry resolved against this build's configuration table (ringmm/tune.hpp).
struct TunedKernels {
  bool heuristic = false;  // `ringmm tune` measured the heuristic's own choice best: keep it
  Choice choice;           // otherwise what to run (source tune_cache)
};

// The current device's tune cache entry for a call of a built-in pair, or null: no cache, no
// entry of the call's shape class, or RINGMM_TUNE_CACHE=off. The cache is read once per device
// and process; entries stay valid for the process.
const TunedKernels* tuned_kernels(SemiringKind kind, DType type, index_t m, index_t n, index_t k, index_t batch,
                                  bool symmetric);

}  // namespace ringmm::cuda_detail
