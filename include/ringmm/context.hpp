// The context chooses the backend and carries the CUDA stream and tuning overrides.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace ringmm {

enum class Backend { automatic, cpu, cuda };

// How the CUDA backend handles matrices whose sizes are not tile multiples:
// pad = copy into tile-multiple buffers filled with 0̄ and run the branch-free kernel;
// predicate = bounds checks inside the kernel; automatic = the heuristic picks per shape.
enum class BorderPolicy { automatic, pad, predicate };

// The tensor-core route of or-and on CUDA (ringmm/cuda/or_and_mma.cuh): 0/1 bytes on int8 MMA,
// or bits on 1-bit AND+POPC MMA; automatic takes bits, measured 2.5–3.8× faster on the H100
// (docs/performance-log.md).
enum class BooleanMma { automatic, int8, bits };

// The widest x86-64 instruction set the CPU kernels may use (the blocked kernel and the b1 kernels
// are built for each and pick one at run time; the rest are baseline x86-64). automatic: the
// RINGMM_CPU_ISA environment variable where set, else the widest this CPU runs. A level the CPU
// lacks is refused (Errc::unsupported). avx512 means F, BW, DQ and VL; b1 counts also take
// VPOPCNTDQ where the CPU has it. Other processors run the generic code at every level.
enum class CpuIsa { automatic, generic, avx2, avx512 };

struct Context {
  Backend backend = Backend::automatic;
  BorderPolicy border = BorderPolicy::automatic;
  void* cuda_stream = nullptr;  // a cudaStream_t; null means the legacy default stream
  int cpu_threads = 0;          // 0 = OpenMP's default
  CpuIsa cpu_isa = CpuIsa::automatic;  // lower it to test or compare the CPU kernels' narrower builds
  std::string cuda_config;      // a name from the CUDA configuration table; empty = heuristic
  // CUDA split-K: cut K into this many parts, each a member of one batched product, whose results
  // are ⊕-reduced; 0 = the engine's choice (no split when cuda_config or a border is named).
  // Parts > 1 need a single product (not a batch, not Aᵀ·A) and at most K parts. Any value but 0,
  // 1 included, names the kernels as cuda_config does (names_cuda_kernels): no cuBLAS, tensor-core
  // or shift-trick route, and ringmm's large kernels unless cuda_config names a small one.
  int cuda_split_k = 0;
  // Whether the CUDA engine reads `ringmm tune`'s cache (ringmm/tune.hpp) for the calls whose
  // kernels it chooses; false: the heuristics alone.
  bool tune_cache = true;
  // plus-times f32/f64 go to the vendor BLAS where it takes the operands' layout: OpenBLAS on the
  // CPU, cuBLAS on CUDA (whose DGEMM uses Hopper's FP64 tensor cores, 4× ringmm's kernel). false
  // runs ringmm's own kernels; so does a CUDA call that names cuda_config, a border policy or
  // cuda_split_k.
  bool vendor_blas = true;
  // log-plus f32 on CUDA: run the shift trick's GEMM on TF32 tensor cores (f32 factors, 10-bit
  // mantissas) instead of in f64 (README, "log-plus": the measured accuracy). Off by default.
  bool allow_tf32 = false;
  // or-and on CUDA runs on the tensor cores unless cuda_config, a border or cuda_split_k names the
  // SIMT kernels.
  BooleanMma boolean_mma = BooleanMma::automatic;
  // Skip the input check (values outside the semiring's input domain, integer sums that could
  // wrap around) for data the caller knows to be valid. The check costs a pass over the operands,
  // and for device operands a wait for the device: calls of the checked pairs (integer tropical
  // and plus-times, max-times, log-plus) are captured in a CUDA graph only with this set. Values
  // outside the domain then give unspecified results. log_plus_backward skips its value check too;
  // argmax_backward still checks K*'s indexes, which guard its memory accesses. Off by default.
  bool trust_inputs = false;
  // Receives one-line notices such as "no CUDA device; using the CPU backend". Null: stderr.
  std::function<void(std::string_view)> on_notice;

  // The backend a call made with this context runs on. `automatic` picks CUDA when it is compiled
  // in and a device is present, otherwise the CPU (and reports why through on_notice, once).
  Backend resolved_backend() const;
  // True when the caller picks the CUDA kernels (a configuration, a border policy or split-K
  // parts): the backend then runs exactly those, with no cuBLAS route and no split-K unless named.
  bool names_cuda_kernels() const {
    return !cuda_config.empty() || border != BorderPolicy::automatic || cuda_split_k != 0;
  }
  void notice(std::string_view message) const;
};

std::string_view to_string(Backend b);
std::string_view to_string(BorderPolicy b);
std::string_view to_string(BooleanMma m);
Backend parse_backend(std::string_view text, std::string_view what = "backend");
BorderPolicy parse_border(std::string_view text, std::string_view what = "border");
BooleanMma parse_boolean_mma(std::string_view text, std::string_view what = "boolean MMA");
std::string_view to_string(CpuIsa isa);
CpuIsa parse_cpu_isa(std::string_view text, std::string_view what = "cpu isa");
// The widest level this CPU runs (never automatic), and the level a call with `requested` runs:
// automatic resolves through RINGMM_CPU_ISA, then the CPU; a level above the CPU's is refused.
CpuIsa detected_cpu_isa();
CpuIsa resolved_cpu_isa(CpuIsa requested);

// What this build of ringmm contains.
bool cuda_compiled();
bool blas_compiled();
bool mpi_compiled();
// True when the CUDA backend is compiled in, a device answers and this build has code for it (a GPU
// older than Ampere, or one of an architecture the build left out, is unavailable); `why` says
// otherwise, naming the device, its compute capability and the architectures built.
bool cuda_device_available(std::string* why = nullptr);
// The CUDA architectures the kernels were compiled for, as CMAKE_CUDA_ARCHITECTURES names them
// ("80-real,86-real,89-real,90a-real,90-virtual"); empty in a build without CUDA.
std::string cuda_architectures();
std::string_view version();

}  // namespace ringmm
