// The CPU backend for the built-in semirings: BLAS for plus-times f32/f64 where it is compiled in,
// the blocked semiring kernel for everything else.
#include <cstdint>
#include <type_traits>

#include "ringmm/cpu/blocked.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::detail {

template <class S> void cpu_run(const Context& ctx, const Problem<typename S::value_type>& p) {
  cpu::blocked_gemm<S>(p, ctx.cpu_threads);
}

#define RINGMM_INSTANTIATE(S) template void cpu_run<S>(const Context&, const Problem<typename S::value_type>&);
RINGMM_FOR_EACH_BUILTIN(RINGMM_INSTANTIATE)

}  // namespace ringmm::detail
