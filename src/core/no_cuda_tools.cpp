// Built when the CUDA backend is not compiled in: the GPU measurement tools say so.
#include "ringmm/cuda_tools.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda {

namespace {
[[noreturn]] void no_cuda() {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
}  // namespace

std::vector<Ceiling> microbench(SemiringKind, DType) { no_cuda(); }
Timing time_ringmm(const Context&, SemiringKind, DType, Product, index_t, index_t, index_t, index_t, int) { no_cuda(); }
Timing time_cublas(DType, Product, index_t, index_t, index_t, index_t, int) { no_cuda(); }
std::vector<std::string> describe_devices() { return {}; }

}  // namespace ringmm::cuda
