// The ladder kernels behind lab_kernels.hpp: name lookup, launch, the host-buffer entry point the
// tests use, and the timing `ringmm-lab ladder` uses.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "lab_kernels.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/gpu_timer.cuh"
#include "ladder_args.cuh"
#include "ladder_straightforward.cuh"
#include "ladder_tiled.cuh"
#include "ringmm/dispatch.hpp"

namespace ringmm::lab {

using namespace ringmm::measure;

namespace {

enum class LadderKernel { straightforward, tiled8, tiled16, tiled32 };

struct LadderEntry {
  const char* name;
  LadderKernel kernel;
};
constexpr LadderEntry kLadder[] = {{"straightforward", LadderKernel::straightforward},
                                   {"tiled8", LadderKernel::tiled8},
                                   {"tiled16", LadderKernel::tiled16},
                                   {"tiled32", LadderKernel::tiled32}};

LadderKernel find_kernel(const std::string& name) {
  for (const auto& e : kLadder)
    if (name == e.name) return e.kernel;
  std::string known;
  for (const auto& e : kLadder) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw Error(Errc::invalid_argument, "kernel", "unknown ladder kernel '" + name + "' (known: " + known + ")");
}

template <class S, int Tile> void launch_tiled(const LadderArgs<typename S::value_type>& args, index_t batch,
                                               cudaStream_t stream) {
  const dim3 grid(unsigned((args.c.cols + Tile - 1) / Tile), unsigned((args.c.rows + Tile - 1) / Tile), unsigned(batch));
  tiled_kernel<S, Tile><<<grid, dim3(Tile, Tile), 0, stream>>>(args);
}

template <class S>
void launch(LadderKernel kernel, const LadderArgs<typename S::value_type>& args, index_t batch,
            cudaStream_t stream) {
  const index_t rows_per_block = kernel == LadderKernel::straightforward ? kStraightforwardBlockY
                                 : kernel == LadderKernel::tiled8        ? 8
                                 : kernel == LadderKernel::tiled16       ? 16
                                                                         : 32;
  if ((args.c.rows + rows_per_block - 1) / rows_per_block > 65535 || batch > 65535)
    throw Error(Errc::unsupported, "m", "the ladder kernels launch one grid row per block row and one grid layer per "
                                        "batch member; at most 65535 of each");
  switch (kernel) {
    case LadderKernel::straightforward: {
      const dim3 block(kStraightforwardBlockX, kStraightforwardBlockY);
      const dim3 grid(unsigned((args.c.cols + block.x - 1) / block.x), unsigned((args.c.rows + block.y - 1) / block.y),
                      unsigned(batch));
      straightforward_kernel<S><<<grid, block, 0, stream>>>(args);
      break;
    }
    case LadderKernel::tiled8: launch_tiled<S, 8>(args, batch, stream); break;
    case LadderKernel::tiled16: launch_tiled<S, 16>(args, batch, stream); break;
    case LadderKernel::tiled32: launch_tiled<S, 32>(args, batch, stream); break;
  }
  cuda_detail::check_launch("ladder kernel");
}

// Elements from the first to one past the last that a strided operand of `batch` members addresses.
template <class T> index_t span(const detail::Strided<T>& x, index_t batch, index_t stride) {
  if (x.rows == 0 || x.cols == 0) return 0;
  return (x.rows - 1) * x.rs + (x.cols - 1) * x.cs + 1 + (batch - 1) * stride;
}

template <class S>
Timing time_ladder_typed(LadderKernel kernel, index_t m, index_t n, index_t k, int reps) {
  using T = typename S::value_type;
  const cudaStream_t stream = nullptr;
  const double set_bytes = double(m * k + k * n + m * n) * sizeof(T);
  const OperandSets<S> sets(std::size_t(m * k), std::size_t(k * n), std::size_t(m * n), k, rotation_sets(set_bytes),
                            stream);
  const double seconds = median_seconds(reps, EventClock(stream), [&](int r) {
    const int s = r % sets.sets();
    const LadderArgs<T> args{{sets.a[s].get(), m, k, k, 1}, {sets.b[s].get(), k, n, n, 1},
                             {sets.c.get(), m, n, n, 1}, S::one(), S::zero(), 0, 0, 0};
    launch<S>(kernel, args, 1, stream);
  });
  return {seconds, 0.0};
}

}  // namespace

std::vector<std::string> ladder_kernels() {
  std::vector<std::string> names;
  for (const auto& e : kLadder) names.emplace_back(e.name);
  return names;
}

template <class S> void ladder_gemm(const std::string& kernel_name, const detail::Problem<S>& p) {
  using T = typename S::value_type;
  const LadderKernel kernel = find_kernel(kernel_name);
  if (p.symmetric)
    throw Error(Errc::unsupported, "kernel", "the ladder kernels compute full products; use gemm, not syrk");
  require_device();
  if (p.m() == 0 || p.n() == 0 || p.batch == 0) return;

  const index_t a_span = span(p.a, p.batch, p.stride_a), b_span = span(p.b, p.batch, p.stride_b);
  const index_t c_span = span(p.c, p.batch, p.stride_c);
  const cudaStream_t stream = nullptr;
  const DeviceBuffer<T> a(std::size_t(a_span), stream), b(std::size_t(b_span), stream), c(std::size_t(c_span), stream);
  cuda_check(cudaMemcpy(a.get(), p.a.p, a_span * sizeof(T), cudaMemcpyHostToDevice), "upload A");
  cuda_check(cudaMemcpy(b.get(), p.b.p, b_span * sizeof(T), cudaMemcpyHostToDevice), "upload B");
  cuda_check(cudaMemcpy(c.get(), p.c.p, c_span * sizeof(T), cudaMemcpyHostToDevice), "upload C");
  LadderArgs<T> args{p.a, p.b, p.c, p.alpha, p.beta, p.stride_a, p.stride_b, p.stride_c};
  args.a.p = a.get();
  args.b.p = b.get();
  args.c.p = c.get();
  launch<S>(kernel, args, p.batch, stream);
  cuda_check(cudaDeviceSynchronize(), "ladder kernel");
  cuda_check(cudaMemcpy(p.c.p, c.get(), c_span * sizeof(T), cudaMemcpyDeviceToHost), "download C");
}

Timing time_ladder(SemiringKind kind, DType type, const std::string& kernel_name, index_t m, index_t n, index_t k,
                   int reps) {
  const LadderKernel kernel = find_kernel(kernel_name);
  if (m <= 0 || n <= 0 || k <= 0) throw Error(Errc::invalid_argument, "m", "timed shapes must be positive");
  if (reps <= 0) throw Error(Errc::invalid_argument, "reps", "at least one repetition");
  require_device();
  return visit_semiring(kind, type, [&](auto tag) {
    return time_ladder_typed<typename decltype(tag)::type>(kernel, m, n, k, reps);
  });
}

#define RINGMM_INSTANTIATE_LADDER(S) \
  template void ladder_gemm<S>(const std::string&, const detail::Problem<S>&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_INSTANTIATE_LADDER(::ringmm::S)
#include "ringmm/builtins.def"
#undef RINGMM_INSTANTIATE_LADDER

}  // namespace ringmm::lab
