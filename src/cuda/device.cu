// CUDA backend: device discovery. (The kernels land with the CUDA engine.)
#include <cuda_runtime.h>

#include <string>

#include "ringmm/context.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm {

bool cuda_compiled() { return true; }

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    if (why) *why = err != cudaSuccess ? std::string("no CUDA device (") + cudaGetErrorString(err) + ")" : "no CUDA device";
    cudaGetLastError();
    return false;
  }
  return true;
}

namespace detail {
template <class S> void cuda_run(const Context&, const Problem<typename S::value_type>&) {
  throw Error(Errc::unsupported, "backend", "the CUDA kernels are not built yet");
}
#define RINGMM_INSTANTIATE(S) template void cuda_run<S>(const Context&, const Problem<typename S::value_type>&);
RINGMM_FOR_EACH_BUILTIN(RINGMM_INSTANTIATE)
}  // namespace detail

}  // namespace ringmm
