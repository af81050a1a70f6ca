// Timing of hmm_viterbi and hmm_forward on the GPU (ringmm hmm --bench): random log-domain models
// generated on the device, so that the largest sizes need no host copies.
#pragma once

#include "ringmm/context.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm/types.hpp"

namespace ringmm::measure {

// The median seconds of `reps` calls after one warm-up, CUDA events around each call (value
// check, every step, traceback); the model (π, A, E, about 5 % of each −∞), the outputs and, for
// Viterbi, the (T−1)×B×S backpointers live in device memory; `step` picks Viterbi's step kernel.
// type: f32 or f64. Throws Errc::backend_unavailable without the CUDA backend or a device.
double time_hmm_cuda(const Context& ctx, bool viterbi, DType type, index_t batch, index_t states, index_t steps, int reps,
                     ViterbiStep step = ViterbiStep::fused);

}  // namespace ringmm::measure
