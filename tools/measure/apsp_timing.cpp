// time_apsp (apsp_timing.hpp) on the CPU; the CUDA form is in apsp_timing.cu.
#include "measure/apsp_timing.hpp"

#include <algorithm>

#include "measure/timer.hpp"

namespace ringmm::measure {

// Defined in apsp_timing.cu when the CUDA backend is built (no_gpu.cpp otherwise).
template <class T>
ApspTiming time_apsp_cuda(const Context& ctx, const T* weights, index_t n, const ApspOptions& options, T* dist,
                          std::int32_t* next);

template <class T>
ApspTiming time_apsp(const Context& ctx, const T* weights, index_t n, const ApspOptions& options, T* dist,
                     std::int32_t* next) {
  if (ctx.resolved_backend() == Backend::cuda) return time_apsp_cuda<T>(ctx, weights, n, options, dist, next);
  ApspTiming t;
  const auto copy = [&] { std::copy(weights, weights + n * n, dist); };
  const auto solve = [&] { apsp_in_place<T>(ctx, row_major(dist, n, n), row_major(next, n, n), options); };
  t.total_seconds = HostClock{}([&] {
    copy();
    t.solve_seconds = HostClock{}(solve);
  });
  return t;
}

template ApspTiming time_apsp<float>(const Context&, const float*, index_t, const ApspOptions&, float*, std::int32_t*);
template ApspTiming time_apsp<double>(const Context&, const double*, index_t, const ApspOptions&, double*, std::int32_t*);

}  // namespace ringmm::measure
