// The CUDA backend as the rest of ringmm calls it.
//
// The backend's entry points are declared beside the API they serve (cuda_run in
// detail/problem.hpp, gemm_b1_cuda in detail/bits.hpp, the HMM and backward ones in hmm.hpp and
// backward.hpp, the device and tuning queries below) and defined in src/cuda. A build without
// CUDA defines none of them: every call site is guarded by `if constexpr (config::cuda)`, so
// nothing refers to them there, and the public queries (cuda_device_available, describe_cuda_choice,
// ...) are defined once, in src/core/backends.cpp, on top of the queries below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ringmm/config.hpp"
#include "ringmm/context.hpp"
#include "ringmm/tune.hpp"

namespace ringmm {

namespace cuda_detail {
// src/cuda/device.cu and tune.cu: what the public functions of the same meaning answer.
bool device_available(std::string* why);  // false also for a device this build has no code for
std::string built_architectures();        // CMAKE_CUDA_ARCHITECTURES, comma-separated
tune::CacheKey tune_key();
void reload_tune_cache();
CudaChoice describe_choice(const Context& ctx, SemiringKind kind, DType type, index_t m, index_t n, index_t k,
                           index_t batch, bool symmetric);

// src/cuda/strided_copy.cu: ringmm::contract's copies of tensors in device memory.
// Copies `shape`'s elements (of `element` bytes) from one strided device tensor to another, on
// `stream` (a cudaStream_t), without waiting; at most 32 axes.
void strided_copy(const void* from, const std::vector<index_t>& from_strides, void* to,
                  const std::vector<index_t>& to_strides, const std::vector<index_t>& shape, std::size_t element,
                  void* stream);
// src/cuda/narrow.cu: narrow operands (ringmm/narrow.hpp) in device memory, on `stream` (a
// cudaStream_t), without waiting. A matrix is `outer` runs of `inner` contiguous elements, `ld`
// apart (its rows when row-major, its columns when column-major); the f32 or i32 copy is dense.
enum class NarrowElement { bf16, f16, i8 };
// bf16 and f16 to f32 exactly; i8 to i32, `sentinel` becoming `zero` (the semiring's 0̄).
void widen_runs(NarrowElement type, const void* from, index_t outer, index_t inner, index_t ld, void* to,
                std::int8_t sentinel, std::int32_t zero, void* stream);
// Dense f32 runs rounded to nearest (ties to even) bf16 or f16, into runs `ld` apart.
void round_runs(NarrowElement type, const float* from, index_t outer, index_t inner, void* to, index_t ld,
                void* stream);
// i8 max-plus and min-plus as products of 16-bit lane pairs (narrow.hpp: i8_product_in_lanes;
// `max_plus` picks the pair), `batch` members at once. Member b's element (r, c) at
// from[b·stride + r·rs + c·cs] becomes a lane, `sentinel` becoming the lanes' 0̄: with `pairs` false a
// rows × cols matrix of words whose two lanes both hold the element (A); with `pairs` true rows ×
// ⌈cols/2⌉ words holding columns 2q and 2q + 1, the high lane past an odd `cols` 0̄ (B). Dense,
// row-major, the members one after another.
void i8_to_lanes(bool max_plus, const std::int8_t* from, index_t rows, index_t cols, index_t rs, index_t cs,
                 index_t batch, index_t stride, bool pairs, std::int8_t sentinel, void* to, void* stream);
// C_b(i, j) ← α ⊗ p ⊕ β ⊗ C_b(i, j) in the i32 pair, p the lane j mod 2 of word (i, ⌊j/2⌋) of member b
// of the lanes product (dense, row-major m × ⌈n/2⌉ members one after another), its 0̄ read as the i32
// 0̄; C_b(i, j) at c[b·c_stride + i·c_rs + j·c_cs].
void lanes_to_i32(bool max_plus, const void* product, index_t m, index_t n, index_t batch, std::int32_t* c, index_t c_rs,
                  index_t c_cs, index_t c_stride, std::int32_t alpha, std::int32_t beta, void* stream);
// `runs` runs of `run_bytes` bytes, `from_pitch` apart, copied into runs `to_pitch` apart, between
// host and device memory either way (the lanes' host operands); a copy into host memory waits for
// `stream`, so the host holds the values when it returns.
void copy_runs(const void* from, std::size_t from_pitch, void* to, std::size_t to_pitch, std::size_t run_bytes,
               index_t runs, void* stream);
// `bytes` of device memory from the engine's workspace (its pool, or the source the calling thread
// installed), released on `stream` with the last owner.
std::shared_ptr<void> workspace_block(std::size_t bytes, void* stream);
}  // namespace cuda_detail

namespace detail {
// Whether a call goes to the CUDA backend: asked for, or left to the library on a machine with a
// device (the CUDA entry points then look at the memory and decline host arrays). In a build
// without CUDA: false, or Context::resolved_backend's refusal of a cuda request.
inline bool wants_cuda(const Context& ctx) { return ctx.backend != Backend::cpu && ctx.resolved_backend() == Backend::cuda; }

// Errc::backend_unavailable: "this build of ringmm has no CUDA backend".
[[noreturn]] void no_cuda_backend();

// In a build without CUDA, a call that asked for the CUDA backend by name is refused; automatic
// falls back to the CPU.
inline void refuse_cuda_request(const Context& ctx) {
  if (ctx.backend == Backend::cuda) no_cuda_backend();
}

// Whether `data` is CUDA device (or managed) memory; false for every pointer in a build without CUDA.
bool on_cuda_device(const void* data);
}  // namespace detail

}  // namespace ringmm
