// Backend resolution: `automatic` prefers CUDA and says so when it falls back to the CPU; and the
// CPU kernels' instruction set.
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <string>

#include "ringmm/context.hpp"
#include "ringmm/error.hpp"

namespace ringmm {

void Context::notice(std::string_view message) const {
  if (on_notice) on_notice(message);
  else std::cerr << "ringmm: " << message << "\n";
}

Backend Context::resolved_backend() const {
  if (backend == Backend::cpu) return Backend::cpu;
  std::string why;
  const bool have_cuda = cuda_device_available(&why);
  if (backend == Backend::cuda) {
    if (!have_cuda) throw Error(Errc::backend_unavailable, "backend", "cuda requested but " + why);
    return Backend::cuda;
  }
  if (have_cuda) return Backend::cuda;
  static std::atomic<bool> reported{false};
  if (!reported.exchange(true)) notice("using the CPU backend: " + why);
  return Backend::cpu;
}

CpuIsa detected_cpu_isa() {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
  static const CpuIsa isa = [] {
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                      __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt");
    if (avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
      return CpuIsa::avx512;
    return avx2 ? CpuIsa::avx2 : CpuIsa::generic;
  }();
  return isa;
#else
  return CpuIsa::generic;
#endif
}

CpuIsa resolved_cpu_isa(CpuIsa requested) {
  const CpuIsa widest = detected_cpu_isa();
  if (requested == CpuIsa::automatic) {
    static const CpuIsa from_environment = [] {
      const char* text = std::getenv("RINGMM_CPU_ISA");
      return text && *text ? parse_cpu_isa(text, "RINGMM_CPU_ISA") : CpuIsa::automatic;
    }();
    if (from_environment == CpuIsa::automatic) return widest;
    requested = from_environment;
  }
  if (int(requested) > int(widest))
    throw Error(Errc::unsupported, "cpu isa",
                "this CPU does not run " + std::string(to_string(requested)) + " (its widest is " +
                    std::string(to_string(widest)) + ")");
  return requested;
}

std::string_view version() { return RINGMM_VERSION; }

bool blas_compiled() {
#if RINGMM_HAVE_BLAS
  return true;
#else
  return false;
#endif
}

bool mpi_compiled() {
#if RINGMM_HAVE_MPI
  return true;
#else
  return false;
#endif
}

}  // namespace ringmm
