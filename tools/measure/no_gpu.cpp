// Built when the CUDA backend is not compiled in: the GPU measurements say so.
#include "measure/gpu_measure.hpp"
#include "measure/hmm_timing.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::measure {

namespace {
[[noreturn]] void no_cuda() {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
}  // namespace

std::vector<Ceiling> microbench(SemiringKind, DType) { no_cuda(); }
Timing time_ringmm(const Context&, SemiringKind, DType, Product, index_t, index_t, index_t, index_t, int, HostMemory,
                   Op) {
  no_cuda();
}
Timing time_cublas(DType, Product, index_t, index_t, index_t, index_t, int, HostMemory) { no_cuda(); }
std::vector<std::string> describe_devices() { return {}; }
std::vector<std::string> ladder_kernels() { return {"straightforward", "tiled8", "tiled16", "tiled32"}; }
Timing time_ladder(SemiringKind, DType, const std::string&, index_t, index_t, index_t, int) { no_cuda(); }
Timing time_cublas_bf16(index_t, index_t, index_t, int) { no_cuda(); }
std::vector<std::string> seed003_kernels() { return {"seed003-naive", "seed003-optimised"}; }
void seed003_syrk(const std::string&, const double*, index_t, index_t, double*) { no_cuda(); }
Timing time_seed003(const std::string&, index_t, index_t, int) { no_cuda(); }
double time_hmm_cuda(const Context&, bool, DType, index_t, index_t, index_t, int, ViterbiStep) { no_cuda(); }
template <class S> void ladder_gemm(const std::string&, const detail::Problem<S>&) { no_cuda(); }

#define RINGMM_INSTANTIATE_LADDER(S) \
  template void ladder_gemm<S>(const std::string&, const detail::Problem<S>&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_INSTANTIATE_LADDER(::ringmm::S)
#include "ringmm/builtins.def"
#undef RINGMM_INSTANTIATE_LADDER

}  // namespace ringmm::measure
