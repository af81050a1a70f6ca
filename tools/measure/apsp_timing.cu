// time_apsp_cuda: ringmm::apsp_in_place on device buffers (apsp_timing.hpp).
#include "measure/apsp_timing.hpp"
#include "ringmm/cuda/host_staging.hpp"
#include "measure/gpu_timer.cuh"
#include "measure/timer.hpp"

namespace ringmm::measure {

template <class T>
ApspTiming time_apsp_cuda(const Context& ctx, const T* weights, index_t n, const ApspOptions& options, T* dist,
                          std::int32_t* next) {
  require_device();
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const std::size_t count = std::size_t(n) * std::size_t(n);
  ApspTiming t;
  t.total_seconds = HostClock{}([&] {
    DeviceBuffer<T> d(count, stream);
    DeviceBuffer<std::int32_t> nx(count, stream);
    cuda::upload_lines(d.get(), 0, weights, 0, count * sizeof(T), 1, stream);
    Context cuda = ctx;
    cuda.backend = Backend::cuda;
    t.solve_seconds = HostClock{}([&] {
      apsp_in_place<T>(cuda, row_major(d.get(), n, n), row_major(nx.get(), n, n), options);
      cuda_check(cudaStreamSynchronize(stream), "apsp");
    });
    cuda::download_lines(dist, 0, d.get(), 0, count * sizeof(T), 1, stream);
    cuda::download_lines(next, 0, nx.get(), 0, count * sizeof(std::int32_t), 1, stream);
  });
  return t;
}

template ApspTiming time_apsp_cuda<float>(const Context&, const float*, index_t, const ApspOptions&, float*,
                                          std::int32_t*);
template ApspTiming time_apsp_cuda<double>(const Context&, const double*, index_t, const ApspOptions&, double*,
                                           std::int32_t*);

}  // namespace ringmm::measure
