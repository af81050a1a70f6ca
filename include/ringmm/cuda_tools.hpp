// GPU measurements used by `ringmm bench` and `ringmm microbench`: the hardware ceilings
// (seed 004, chapter 2), cuBLAS baselines, and timings of ringmm's own kernels on device buffers.
// Every function throws Errc::backend_unavailable when the CUDA backend or a device is missing.
#pragma once

#include <string>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/types.hpp"

namespace ringmm::cuda {

// One ceiling of the microbenchmark: `level` is "reg-reg", "smem-one" or "smem-both".
struct Ceiling {
  std::string level;
  double updates_per_second = 0;
};
std::vector<Ceiling> microbench(SemiringKind kind, DType type);

// What a GPU timing covers, median of `reps` runs after warm-up, in seconds.
struct Timing {
  double kernel_seconds = 0;        // device buffers in place, CUDA events around the call
  double with_transfers_seconds = 0;  // host buffers: upload, multiply, download (seed 002)
};

enum class Product { gemm, batched, syrk };

// ringmm's own kernels for kind/type on random data: an m×n×k product (times `batch` for
// Product::batched; for Product::syrk, C = Aᵀ·A with A k×n, so m = n).
Timing time_ringmm(const Context& ctx, SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                   index_t batch, int reps);

// cuBLAS in pedantic FP32 (no tensor cores) or FP64: gemm, strided batched gemm, or syrk.
Timing time_cublas(DType type, Product product, index_t m, index_t n, index_t k, index_t batch, int reps);

// A one-line description of each visible device (name, SMs, memory, L2, compute capability).
std::vector<std::string> describe_devices();

}  // namespace ringmm::cuda
