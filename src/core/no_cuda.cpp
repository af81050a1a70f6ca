// Built when the CUDA backend is not compiled in: the CUDA entry points say so.
#include <string>

#include "ringmm/context.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"
#include "ringmm/backward.hpp"
#include "ringmm/detail/bits.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm/tune.hpp"

namespace ringmm {

bool cuda_compiled() { return false; }

bool cuda_device_available(std::string* why) {
  if (why) *why = "this build of ringmm has no CUDA backend (nvcc was not found at configure time)";
  return false;
}

CudaChoice describe_cuda_choice(const Context&, SemiringKind, DType, index_t, index_t, index_t, index_t, bool) {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
tune::CacheKey current_tune_key() {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
void reload_tune_cache() {}

namespace detail {
template <class S> void cuda_run(const Context&, const Problem<S>&) {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
template <class S> void cuda_run_argmax(const Context& ctx, const Problem<S>& p) { cuda_run<S>(ctx, p); }
#define RINGMM_INSTANTIATE(S)                                          \
  template void cuda_run<S>(const Context&, const Problem<S>&); \
  template void cuda_run_argmax<S>(const Context&, const Problem<S>&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_INSTANTIATE(::ringmm::S)
#include "ringmm/builtins.def"

bool gemm_b1_cuda(const Context& ctx, BitMatrixView<const bit_word>, BitMatrixView<const bit_word>,
                  const MatrixView<std::uint8_t>*, const BitMatrixView<bit_word>*, bool, bool) {
  if (ctx.backend == Backend::cuda) throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
  return false;
}

template <class T>
bool hmm_viterbi_cuda(const Context&, const HmmModel<T>&, std::int32_t*, T*, std::int32_t*, ViterbiStep, bool required) {
  if (required) throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
  return false;
}
template <class T> bool hmm_forward_cuda(const Context&, const HmmModel<T>&, T*, bool required) {
  if (required) throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
  return false;
}
template <class T> FusedViterbiForm fused_viterbi_form_cuda(const Context&, const HmmModel<T>&, const std::int32_t*) {
  throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
}
template FusedViterbiForm fused_viterbi_form_cuda<float>(const Context&, const HmmModel<float>&, const std::int32_t*);
template FusedViterbiForm fused_viterbi_form_cuda<double>(const Context&, const HmmModel<double>&, const std::int32_t*);
template bool hmm_viterbi_cuda<float>(const Context&, const HmmModel<float>&, std::int32_t*, float*, std::int32_t*, ViterbiStep, bool);
template bool hmm_viterbi_cuda<double>(const Context&, const HmmModel<double>&, std::int32_t*, double*, std::int32_t*, ViterbiStep, bool);
template bool hmm_forward_cuda<float>(const Context&, const HmmModel<float>&, float*, bool);
template bool hmm_forward_cuda<double>(const Context&, const HmmModel<double>&, double*, bool);

template <class T>
bool log_plus_backward_cuda(const Context&, MatrixView<const T>, MatrixView<const T>, MatrixView<const T>, MatrixView<const T>,
                            MatrixView<T>, MatrixView<T>, bool required) {
  if (required) throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
  return false;
}
template <class S>
bool argmax_backward_cuda(const Context&, MatrixView<const element_t<S>>, MatrixView<const element_t<S>>,
                          MatrixView<const std::int32_t>, MatrixView<const element_t<S>>, MatrixView<element_t<S>>,
                          MatrixView<element_t<S>>, bool required) {
  if (required) throw Error(Errc::backend_unavailable, "backend", "this build of ringmm has no CUDA backend");
  return false;
}
template bool log_plus_backward_cuda<float>(const Context&, MatrixView<const float>, MatrixView<const float>,
                                            MatrixView<const float>, MatrixView<const float>, MatrixView<float>,
                                            MatrixView<float>, bool);
template bool log_plus_backward_cuda<double>(const Context&, MatrixView<const double>, MatrixView<const double>,
                                             MatrixView<const double>, MatrixView<const double>, MatrixView<double>,
                                             MatrixView<double>, bool);
template auto instantiate_argmax_backward_cuda(builtin_semirings);
}  // namespace detail

}  // namespace ringmm
