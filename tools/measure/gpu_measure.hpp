// GPU measurements used by `ringmm bench`, `ringmm tune` and the lab: the hardware ceilings
// (docs/perf/ladder.md), cuBLAS baselines and timings of ringmm's own kernels on device buffers.
// Every function but describe_devices throws Errc::backend_unavailable when the CUDA backend (no_gpu.cpp) or a device is missing;
// arguments are checked first (Errc::invalid_argument / unsupported).
//
// Conventions: one *update* is one (i, j, k) triple, acc ← acc ⊕ a ⊗ b; for the packed i16x2 type
// each 16-bit lane is its own update (one two-lane instruction = 2 updates). Times follow timer.hpp
// (median of `reps` repetitions after one warm-up call), measured with CUDA events on random data
// (random_data.hpp); when one input set fits in L2, successive repetitions rotate through 2–8 sets
// so that they read DRAM.
#pragma once

#include <string>
#include <vector>

#include "measure/product.hpp"
#include "ringmm/context.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/types.hpp"

namespace ringmm::measure {

// One ceiling of the microbenchmark: `level` is "reg-reg" (both operands in registers),
// "smem-one" (a from shared memory) or "smem-both" (both from shared memory); 8×8 register tile
// per thread, one full wave of 256-thread blocks.
struct Ceiling {
  std::string level;
  double updates_per_second = 0;
};
std::vector<Ceiling> microbench(SemiringKind kind, DType type);

// Where the host operands of the with-transfers timing live: pageable memory, as a
// std::vector holds them, or pinned memory (cudaMallocHost), which the copy engines read directly;
// none: time_ringmm times device buffers only (`ringmm tune`), with_transfers_seconds stays 0.
enum class HostMemory { pageable, pinned, none };

// What a GPU timing covers, median of `reps` runs after warm-up, in seconds.
struct Timing {
  double kernel_seconds = 0;          // device buffers in place, CUDA events around the call
  double with_transfers_seconds = 0;  // host buffers: upload, multiply, download; 0 = not measured
};

// ringmm's own kernels for kind/type on random data, through the public API with ctx (its backend
// forced to cuda): an m×n×k product (times `batch` for Product::batched; for Product::syrk,
// C = Aᵀ·A with A k×n, so m = n). with_transfers_seconds passes host buffers (in `host` memory) to
// the same call. op_a = Op::T reads A as the transpose of a k×m row-major matrix (not for syrk).
// sign_known: the random operands folded into the semiring's sign-known domain (max-plus f32:
// −|x|, min-plus f32: |x|; gemm_kernel.cuh: sign_known), which other pairs refuse.
Timing time_ringmm(const Context& ctx, SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                   index_t batch, int reps, HostMemory host = HostMemory::pageable, Op op_a = Op::N,
                   bool sign_known = false);

// ringmm's products of narrow operands (ringmm/narrow.hpp) on device buffers, C in the accumulator
// type: `element` "bf16" or "f16" with a semiring of f32 elements, "i8" with max-plus or min-plus
// i32 (`type` is the accumulator's). The operands are the semiring's random sets narrowed on the
// device (i8: the i32 values modulo 127, 0̄ as the i8 sentinel). An m×n×k gemm.
Timing time_ringmm_narrow(const Context& ctx, SemiringKind kind, DType type, const std::string& element, index_t m,
                          index_t n, index_t k, int reps);

// What a call costs when calls come back to back, as in blocked APSP, HMM steps or a training loop:
// `calls` calls of the product on device buffers, on a stream of their own, per call.
struct CallCost {
  double host_seconds = 0;    // host time from entry to return (the launches enqueued, not run)
  double stream_seconds = 0;  // device time per call, CUDA events around rounds of calls
  double graph_seconds = 0;   // the same calls captured in a CUDA graph and replayed; 0 = refused
  std::string graph_refusal;  // why the capture was refused, where it was
};
CallCost time_calls(const Context& ctx, SemiringKind kind, DType type, Product product, index_t m, index_t n, index_t k,
                    index_t batch, int calls, Op op_a = Op::N);

// cuBLAS in pedantic FP32 (no tensor cores) or FP64: gemm, strided batched gemm, or syrk.
// Other types throw Errc::unsupported. with_transfers_seconds: upload A and B from `host` memory,
// multiply, download C.
Timing time_cublas(DType type, Product product, index_t m, index_t n, index_t k, index_t batch, int reps,
                   HostMemory host = HostMemory::pageable);

// cuBLAS's bf16 GEMM (bf16 A, B and C, f32 accumulation, tensor cores) on 0/1 data: the
// tensor-core reference beside or-and (an m×n×k product; row-major, compact, device buffers).
Timing time_cublas_bf16(index_t m, index_t n, index_t k, int reps);

// A one-line description of each visible device (name, SMs, memory, L2, compute capability);
// empty when there is none.
std::vector<std::string> describe_devices();

}  // namespace ringmm::measure
