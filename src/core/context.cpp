// Backend resolution: `automatic` prefers CUDA and says so when it falls back to the CPU.
#include <atomic>
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
