// The public queries about the CUDA backend, on top of its internal ones (detail/cuda_backend.hpp);
// in a build without it they answer so.
#include "ringmm/detail/cuda_backend.hpp"

#include "ringmm/cuda/device.hpp"
#include "ringmm/error.hpp"

namespace ringmm {

namespace detail {
void no_cuda_backend() {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}

bool on_cuda_device(const void* data) {
  if constexpr (config::cuda) return data && cuda_detail::is_device_pointer(data);
  else return false;
}
}  // namespace detail

bool cuda_compiled() { return config::cuda; }

bool cuda_device_available(std::string* why) {
  if constexpr (config::cuda) {
    return cuda_detail::device_available(why);
  } else {
    if (why) *why = "this build of ringmm has no CUDA backend (nvcc was not found at configure time, or RINGMM_ENABLE_CUDA was OFF)";
    return false;
  }
}

std::string cuda_architectures() {
  if constexpr (config::cuda) return cuda_detail::built_architectures();
  else return "";
}

CudaChoice describe_cuda_choice(const Context& ctx, SemiringKind kind, DType type, index_t m, index_t n, index_t k,
                                index_t batch, bool symmetric) {
  if constexpr (config::cuda) return cuda_detail::describe_choice(ctx, kind, type, m, n, k, batch, symmetric);
  else detail::no_cuda_backend();
}

tune::CacheKey current_tune_key() {
  if constexpr (config::cuda) return cuda_detail::tune_key();
  else detail::no_cuda_backend();
}

void reload_tune_cache() {
  if constexpr (config::cuda) cuda_detail::reload_tune_cache();
}

}  // namespace ringmm
