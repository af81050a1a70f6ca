// Timing of ringmm::apsp for `ringmm apsp`: the solve alone and the call with its copies.
#pragma once

#include <cstdint>

#include "ringmm/apsp.hpp"
#include "ringmm/context.hpp"

namespace ringmm::measure {

struct ApspTiming {
  double solve_seconds = 0;  // apsp_in_place on buffers where the backend runs (device memory on CUDA)
  double total_seconds = 0;  // weights in, solve, distances and successors out (host to host)
};

// One ringmm::apsp_in_place of an n×n row-major weight matrix (host memory) on ctx's resolved
// backend, timed: on CUDA the weights are uploaded to device buffers, the solve is timed alone
// (the device synchronised before and after) and the results come back into `dist` and `next`
// (host, n×n each); on the CPU the weights are copied into `dist` and solved there in place.
// T is float or double. Errors are ringmm::apsp's.
template <class T>
ApspTiming time_apsp(const Context& ctx, const T* weights, index_t n, const ApspOptions& options, T* dist,
                     std::int32_t* next);

}  // namespace ringmm::measure
