// Built when the CUDA backend is not compiled in: the GPU measurements say so.
#include "measure/apsp_timing.hpp"
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
                   Op, bool) {
  no_cuda();
}
CallCost time_calls(const Context&, SemiringKind, DType, Product, index_t, index_t, index_t, index_t, int, Op) {
  no_cuda();
}
Timing time_ringmm_narrow(const Context&, SemiringKind, DType, const std::string&, index_t, index_t, index_t, int) {
  no_cuda();
}
Timing time_cublas(DType, Product, index_t, index_t, index_t, index_t, int, HostMemory) { no_cuda(); }
std::vector<std::string> describe_devices() { return {}; }
Timing time_cublas_bf16(index_t, index_t, index_t, int) { no_cuda(); }
double time_hmm_cuda(const Context&, bool, DType, index_t, index_t, index_t, int, ViterbiStep) { no_cuda(); }
template <class T>
ApspTiming time_apsp_cuda(const Context&, const T*, index_t, const ApspOptions&, T*, std::int32_t*) {
  no_cuda();
}
template ApspTiming time_apsp_cuda<float>(const Context&, const float*, index_t, const ApspOptions&, float*,
                                          std::int32_t*);
template ApspTiming time_apsp_cuda<double>(const Context&, const double*, index_t, const ApspOptions&, double*,
                                           std::int32_t*);

}  // namespace ringmm::measure
