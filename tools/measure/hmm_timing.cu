// time_hmm_cuda (hmm_timing.hpp).
#include "measure/gpu_timer.cuh"
#include "measure/hmm_timing.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::measure {

namespace {

template <class T>
double time_typed(const Context& ctx, bool viterbi, index_t batch, index_t states, index_t steps, int reps, ViterbiStep step) {
  require_device();
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const std::size_t block = std::size_t(batch * states);
  DeviceBuffer<T> init(std::size_t(states), stream), trans(std::size_t(states * states), stream),
      emit(block * std::size_t(steps), stream), score(std::size_t(batch), stream);
  DeviceBuffer<std::int32_t> path(std::size_t(batch * steps), stream);
  DeviceBuffer<std::int32_t> backpointers(viterbi ? block * std::size_t(steps - 1) : 0, stream);
  fill_random<LogPlus<T>>(init.get(), std::size_t(states), 1, states, stream);
  fill_random<LogPlus<T>>(trans.get(), std::size_t(states * states), 2, states, stream);
  fill_random<LogPlus<T>>(emit.get(), block * std::size_t(steps), 3, states, stream);
  cuda_check(cudaStreamSynchronize(stream), "fill_random");
  Context cuda = ctx;
  cuda.backend = Backend::cuda;
  const HmmModel<T> model{batch, states, steps, init.get(), trans.get(), emit.get()};
  return median_seconds(reps, EventClock(stream), [&](int) {
    if (viterbi) hmm_viterbi<T>(cuda, model, path.get(), score.get(), backpointers.get(), step);
    else hmm_forward<T>(cuda, model, score.get());
  });
}

}  // namespace

double time_hmm_cuda(const Context& ctx, bool viterbi, DType type, index_t batch, index_t states, index_t steps, int reps,
                     ViterbiStep step) {
  if (type == DType::f32) return time_typed<float>(ctx, viterbi, batch, states, steps, reps, step);
  if (type == DType::f64) return time_typed<double>(ctx, viterbi, batch, states, steps, reps, step);
  throw Error(Errc::unsupported, "--type", "HMMs take f32 or f64");
}

}  // namespace ringmm::measure
