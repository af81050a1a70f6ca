// hmm_viterbi and hmm_forward on the CUDA backend (ringmm/hmm.hpp), on device memory.
//
// Viterbi: per step one fused kernel (the max-plus product, its argmax written straight into that
// step's slice of the backpointers, and E_t added: viterbi_logprob.cuh for f32 models whose values
// are all ≤ 0, the check's by-product, else viterbi_step.cuh), or on request the library's
// gemm_argmax and a kernel adding E_t; at the end one warp per sequence
// finds the best final state and follows the backpointers. Forward: per step the shift trick of
// the log-plus product (ringmm/cuda/log_plus.cuh, whose shift_rows computes exp(A − column
// maxima) once and whose factor_gemm runs each step's f64 plus-times GEMM, cuBLAS where the
// context allows): rows of α shifted by their maxima and exponentiated (one fused kernel per
// step), the GEMM, then a kernel that takes logarithms, shifts back, adds E_t, and recomputes by
// the streaming log-sum-exp the entries whose shifted sum is too small to trust. The scalar math
// is ringmm/detail/log_plus_shift.hpp's. Every step is queued on ctx's stream; the host waits
// only once, for the value check before the first step.
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/log_plus.cuh"
#include "ringmm/detail/log_plus_shift.hpp"
#include "ringmm/error.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/hmm.hpp"
#include "viterbi_logprob.cuh"
#include "viterbi_step.cuh"

namespace ringmm::detail {

namespace {

using cuda_detail::check_launch;
using cuda_detail::cuda_check;
using cuda_detail::DeviceBuffer;

constexpr int block_threads = 256;

unsigned blocks_for(index_t n) {
  return unsigned(std::min<index_t>((n + block_threads - 1) / block_threads, 16 * index_t(cuda_detail::multiprocessor_count())));
}

// first_bad ← the smallest index of a NaN or +∞ (stays ULLONG_MAX when there is none);
// all_nonpositive ← 0 when some value is > 0 (stays ULLONG_MAX for log-probabilities; one store a
// thread at most, so that a model of positive scores does not queue on one address).
template <class T>
__global__ void scan_log_values(const T* x, index_t n, unsigned long long* first_bad, unsigned long long* all_nonpositive) {
  bool positive = false;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x) {
    if (!(x[e] < T(INFINITY))) atomicMin(first_bad, (unsigned long long)e);
    positive |= x[e] > T(0);
  }
  if (positive) *all_nonpositive = 0;
}

// Refuses the model (naming the array, the index and the value) when a scan finds NaN or +∞.
// Returns whether every value is ≤ 0 (log-probabilities: viterbi_logprob.cuh's step applies).
// The one host wait of a call.
template <class T> bool check_values_on_device(const HmmModel<T>& m, cudaStream_t stream) {
  DeviceBuffer<unsigned long long> slots(4, stream);  // first bad of each array; all ≤ 0
  cuda_check(cudaMemsetAsync(slots.get(), 0xff, 4 * sizeof(unsigned long long), stream), "cudaMemsetAsync");
  const T* arrays[3] = {m.init, m.trans, m.emit};
  const index_t counts[3] = {m.states, m.states * m.states, m.steps * m.batch * m.states};
  const char* names[3] = {"init", "trans", "emit"};
  for (int x = 0; x < 3; ++x) {
    if (counts[x] == 0) continue;
    scan_log_values<T><<<blocks_for(counts[x]), block_threads, 0, stream>>>(arrays[x], counts[x], slots.get() + x, slots.get() + 3);
    check_launch("scan_log_values");
  }
  unsigned long long found[4];
  cuda_check(cudaMemcpyAsync(found, slots.get(), sizeof found, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "HMM value check (cudaStreamSynchronize)");
  for (int x = 0; x < 3; ++x) {
    if (found[x] == ULLONG_MAX) continue;
    T value{};
    cuda_check(cudaMemcpy(&value, arrays[x] + found[x], sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    throw Error(Errc::value_out_of_range, names[x],
                "element " + std::to_string(found[x]) + " is " + (value != value ? "NaN" : "+inf") +
                    "; log-probabilities must be finite or -inf");
  }
  return found[3] == ULLONG_MAX;
}

// Device memory or not: every array of the model and every output must agree.
template <class T> bool on_device(const HmmModel<T>& m, std::initializer_list<const void*> outputs, bool required) {
  const bool first = cuda_detail::is_device_pointer(m.init);
  auto refuse = [&](const char* name) {
    throw Error(Errc::invalid_argument, name,
                first ? "is host memory but init is device memory (the CUDA backend takes device memory only)"
                      : "is device memory but init is host memory");
  };
  if (!first && !required) {  // automatic: host memory runs on the CPU unless some array is on the device
    if (cuda_detail::is_device_pointer(m.trans)) refuse("trans");
    if (m.batch > 0 && cuda_detail::is_device_pointer(m.emit)) refuse("emit");
    return false;
  }
  if (!first) throw Error(Errc::invalid_argument, "init", "is host memory; the CUDA backend takes device memory (or use Backend::cpu)");
  if (!cuda_detail::is_device_pointer(m.trans)) refuse("trans");
  if (m.batch > 0 && !cuda_detail::is_device_pointer(m.emit)) refuse("emit");
  const char* output_names[] = {"path", "score", "backpointers"};
  int x = 0;
  for (const void* p : outputs) {
    if (p && !cuda_detail::is_device_pointer(p)) refuse(output_names[x]);
    ++x;
  }
  return true;
}

template <class T> __global__ void start_kernel(T* delta, const T* init, const T* emit0, index_t batch, index_t states) {
  const index_t n = batch * states;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    delta[e] = init[e % states] + emit0[e];
}

template <class T> __global__ void add_emission(T* delta, const T* emit_t, index_t n) {
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x)
    delta[e] += emit_t[e];
}

// One warp per sequence: the best final state (the smallest s among equal maxima), its score,
// and the path back through the backpointers (lane 0; T dependent loads, so as many sequences as
// possible run at once: 32 blocks of one warp fit on an SM where 8 blocks of 256 threads do).
constexpr int finish_threads = 32;
template <class T>
__global__ void __launch_bounds__(finish_threads)
    viterbi_finish(const T* delta, const std::int32_t* backpointers, index_t batch, index_t states, index_t steps,
                   std::int32_t* path, T* score) {
  __shared__ T best_value[finish_threads];
  __shared__ index_t best_state[finish_threads];
  for (index_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* d = delta + b * states;
    T v = T(-INFINITY);
    index_t arg = -1;
    for (index_t s = threadIdx.x; s < states; s += blockDim.x)
      if (d[s] > v || arg < 0) v = d[s], arg = s;  // s rises: equal values keep the first
    best_value[threadIdx.x] = v, best_state[threadIdx.x] = arg;
    __syncthreads();
    for (int half = finish_threads / 2; half > 0; half /= 2) {
      if (int(threadIdx.x) < half) {
        const T ov = best_value[threadIdx.x + half];
        const index_t os = best_state[threadIdx.x + half];
        const index_t ms = best_state[threadIdx.x];
        if (os >= 0 && (ms < 0 || ov > best_value[threadIdx.x] || (ov == best_value[threadIdx.x] && os < ms)))
          best_value[threadIdx.x] = ov, best_state[threadIdx.x] = os;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      const T top = best_value[0];
      std::int32_t* p = path + b * steps;
      score[b] = top;
      if (top == T(-INFINITY)) {
        for (index_t t = 0; t < steps; ++t) p[t] = -1;
      } else {
        std::int32_t s = std::int32_t(best_state[0]);
        p[steps - 1] = s;
        for (index_t t = steps - 1; t > 0; --t) {
          s = backpointers[((t - 1) * batch + b) * states + s];
          p[t - 1] = s;
        }
      }
    }
    __syncthreads();
  }
}

// ---- forward ----------------------------------------------------------------------------------

// The shift trick's sums in f64, its exponentials and logarithms too; its flush gap and threshold
// are the products' own (ringmm/detail/log_plus_shift.hpp), passed to the kernels by
// hmm_forward_cuda.
using Sum = double;

// A block's maximum of v over its threads (every thread gets it).
template <class T> __device__ T block_max(T v, T* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = block_threads / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  const T top = shared[0];
  __syncthreads();
  return top;
}

// One block per sequence: row_max[b] = max_s α[b, s], factors[b·S + s] = exp(α[b, s] − row_max[b]).
template <class T>
__global__ void __launch_bounds__(block_threads)
    shift_alpha(const T* alpha, index_t batch, index_t states, Sum flush, T* row_max, Sum* factors) {
  __shared__ T shared[block_threads];
  for (index_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* a = alpha + b * states;
    T v = T(-INFINITY);
    for (index_t s = threadIdx.x; s < states; s += blockDim.x) v = fmax(v, a[s]);
    const T top = block_max(v, shared);
    if (threadIdx.x == 0) row_max[b] = top;
    for (index_t s = threadIdx.x; s < states; s += blockDim.x)
      factors[b * states + s] = shift_factor<Sum, Sum>(Sum(a[s]) - Sum(top), flush);
  }
}

// α_t[b, s'] = row_max[b] + col_max[s'] + log sum[b, s'] + E_t[b, s'], or the streaming sum over
// s where the shifted sum is below the threshold (−∞ where there is no term).
template <class T>
__global__ void forward_finish(const T* alpha, const T* trans, const T* row_max, const T* col_max, const Sum* sums,
                               Sum threshold, const T* emit_t, index_t batch, index_t states, T* next) {
  using traits = semiring_traits<LogPlus<T>>;
  const index_t n = batch * states;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < n; e += index_t(gridDim.x) * blockDim.x) {
    const index_t b = e / states, c = e % states;
    T value;
    const ShiftedEntry how = classify_shifted(row_max[b], col_max[c], sums[e], threshold);
    if (how == ShiftedEntry::zero) {
      value = T(-INFINITY);
    } else if (how == ShiftedEntry::shifted) {
      value = shifted_value<T, Sum>(row_max[b], col_max[c], sums[e]);
    } else {
      auto acc = traits::initial();
      for (index_t s = 0; s < states; ++s) acc = traits::fma(acc, alpha[b * states + s], trans[s * states + c]);
      value = traits::finalize(acc);
    }
    next[e] = value + emit_t[e];
  }
}

// One block per sequence: loglik[b] = log Σ_s exp(α[b, s]).
template <class T>
__global__ void __launch_bounds__(block_threads) forward_loglik(const T* alpha, index_t batch, index_t states, T* loglik) {
  __shared__ T shared[block_threads];
  __shared__ Sum sums[block_threads];
  for (index_t b = blockIdx.x; b < batch; b += gridDim.x) {
    const T* a = alpha + b * states;
    T v = T(-INFINITY);
    for (index_t s = threadIdx.x; s < states; s += blockDim.x) v = fmax(v, a[s]);
    const T top = block_max(v, shared);
    Sum part = 0;
    if (top != T(-INFINITY))
      for (index_t s = threadIdx.x; s < states; s += blockDim.x) part += exp(Sum(a[s]) - Sum(top));
    sums[threadIdx.x] = part;
    __syncthreads();
    for (int half = block_threads / 2; half > 0; half /= 2) {
      if (int(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) loglik[b] = top == T(-INFINITY) ? top : T(Sum(top) + log(sums[0]));
    __syncthreads();
  }
}

unsigned sequence_blocks(index_t batch) { return unsigned(std::min<index_t>(batch, 65535)); }

// Which kernel the fused step runs (hmm.hpp: FusedViterbiForm): the model's arrays and the
// backpointers must be aligned for the f32 forms, and `internal` (the step's own buffers) too.
template <class T, class... P>
FusedViterbiForm fused_form(const HmmModel<T>& m, bool log_probabilities, const std::int32_t* backpointers,
                            const P*... internal) {
  if constexpr (std::is_same_v<T, float>) {
    if (viterbi_logprob::takes_step(log_probabilities, m.states, m.trans, m.emit, backpointers, internal...))
      return FusedViterbiForm::log_probability;
    if (viterbi::takes_vector_step(true, m.states, m.trans, m.emit, backpointers, internal...)) return FusedViterbiForm::vector;
  }
  return FusedViterbiForm::scalar;
}

// The steps of a log-probability model (viterbi_logprob.cuh): δ and δᵀ both double-buffered, each
// step launched with programmatic dependent launch where the kernel was compiled for it (PTX of
// sm_90 or later: the griddepcontrol instructions are in it). Returns the buffer holding the last δ
// (current or following).
float* viterbi_logprob_steps(const HmmModel<float>& m, const float* trans_t, float* current, float* following,
                             std::int32_t* backpointers, cudaStream_t stream) {
  namespace lp = viterbi_logprob;
  const index_t b = m.batch, s = m.states, block = b * s, pitch = lp::transposed_pitch(b);
  DeviceBuffer<float> delta_t(std::size_t(s * pitch), stream), next_t(std::size_t(s * pitch), stream);
  // Zeros in the pitch's padding, which the first k-tiles read beside the last sequences.
  cuda_check(cudaMemsetAsync(delta_t.get(), 0, std::size_t(s * pitch) * sizeof(float), stream), "cudaMemsetAsync");
  cuda_check(cudaMemsetAsync(next_t.get(), 0, std::size_t(s * pitch) * sizeof(float), stream), "cudaMemsetAsync");
  viterbi::transpose<float><<<blocks_for(block), block_threads, 0, stream>>>(current, b, s, pitch, delta_t.get());
  check_launch("viterbi::transpose (δᵀ)");
  const auto kernel = lp::tile_k_for(s) == 32 ? lp::step_kernel<32> : lp::step_kernel<lp::min_tile_k>;
  cudaFuncAttributes compiled{};
  cuda_check(cudaFuncGetAttributes(&compiled, kernel), "cudaFuncGetAttributes");
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned((s + lp::tile_n - 1) / lp::tile_n), unsigned((b + lp::tile_m - 1) / lp::tile_m));
  config.blockDim = dim3(lp::threads);
  config.stream = stream;
  config.attrs = &overlap;
  config.numAttrs = compiled.ptxVersion >= 90 ? 1 : 0;
  float* current_t = delta_t.get();
  float* following_t = next_t.get();
  for (index_t t = 1; t < m.steps; ++t) {
    cuda_check(cudaLaunchKernelEx(&config, kernel, static_cast<const float*>(current),
                                  static_cast<const float*>(current_t), pitch, m.trans, trans_t, m.emit + t * block, b, s,
                                  following, following_t, backpointers + (t - 1) * block),
               "viterbi_logprob::step_kernel");
    std::swap(current, following);
    std::swap(current_t, following_t);
  }
  return current;
}

}  // namespace

template <class T>
bool hmm_viterbi_cuda(const Context& ctx, const HmmModel<T>& m, std::int32_t* path, T* score, std::int32_t* backpointers,
                      ViterbiStep step, bool required) {
  if (!on_device(m, {path, score, backpointers}, required)) return false;
  const index_t b = m.batch, s = m.states, block = b * s;
  const index_t row_tiles = (b + viterbi::tile_m - 1) / viterbi::tile_m;
  if (step == ViterbiStep::fused && row_tiles > 65535)  // the grid's y extent
    throw Error(Errc::unsupported, "batch",
                "the fused Viterbi step takes at most " + std::to_string(65535 * viterbi::tile_m) +
                    " sequences per call; split the batch or use ViterbiStep::gemm_argmax");
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const bool log_probabilities = check_values_on_device(m, stream);
  if (m.batch == 0) return true;
  const dim3 step_grid(unsigned((s + viterbi::tile_n - 1) / viterbi::tile_n), unsigned(row_tiles));
  DeviceBuffer<T> delta(std::size_t(block), stream), next(std::size_t(block), stream);
  DeviceBuffer<std::int32_t> own;
  if (!backpointers && m.steps > 1) {
    own = DeviceBuffer<std::int32_t>(std::size_t((m.steps - 1) * block), stream);
    backpointers = own.get();
  }
  Context cuda = ctx;
  cuda.backend = Backend::cuda;
  T* current = delta.get();
  T* following = next.get();
  start_kernel<T><<<blocks_for(block), block_threads, 0, stream>>>(current, m.init, m.emit, b, s);
  check_launch("start_kernel");
  const MatrixView<const T> trans = row_major<const T>(m.trans, s, s);
  DeviceBuffer<T> trans_t(step == ViterbiStep::fused && m.steps > 1 ? static_cast<std::size_t>(s * s) : 0, stream);
  if (trans_t.get()) {
    viterbi::transpose<T><<<blocks_for(s * s), block_threads, 0, stream>>>(m.trans, s, s, s, trans_t.get());
    check_launch("viterbi::transpose");
  }
  // Every step's arrays are aligned alike when the first's are (S % 16 == 0 keeps each step's
  // slice of emit and of the backpointers 64-byte aligned).
  const FusedViterbiForm form = fused_form(m, log_probabilities, backpointers, current, following, trans_t.get());
  if (step == ViterbiStep::fused && form == FusedViterbiForm::log_probability) {
    if constexpr (std::is_same_v<T, float>)  // fused_form's answer for f32 only
      current = viterbi_logprob_steps(m, trans_t.get(), current, following, backpointers, stream);
  } else {
    for (index_t t = 1; t < m.steps; ++t) {
      std::int32_t* bp_t = backpointers + (t - 1) * block;
      if (step == ViterbiStep::fused) {
        auto kernel = viterbi::step_kernel<T, false>;
        if constexpr (std::is_same_v<T, float>)
          if (form == FusedViterbiForm::vector) kernel = viterbi::step_kernel<T, true>;
        kernel<<<step_grid, viterbi::threads, 0, stream>>>(current, m.trans, trans_t.get(), m.emit + t * block, b, s,
                                                           following, bp_t);
        check_launch("viterbi::step_kernel");
      } else {
        gemm_argmax<MaxPlus<T>>(cuda, Op::N, row_major<const T>(current, b, s), Op::N, trans, row_major(following, b, s),
                                row_major(bp_t, b, s));
        add_emission<T><<<blocks_for(block), block_threads, 0, stream>>>(following, m.emit + t * block, block);
        check_launch("add_emission");
      }
      std::swap(current, following);
    }
  }
  viterbi_finish<T><<<sequence_blocks(b), finish_threads, 0, stream>>>(current, backpointers, b, s, m.steps, path, score);
  check_launch("viterbi_finish");
  return true;
}

template <class T>
FusedViterbiForm fused_viterbi_form_cuda(const Context& ctx, const HmmModel<T>& m, const std::int32_t* backpointers) {
  on_device(m, {nullptr, nullptr, backpointers}, true);
  return fused_form(m, check_values_on_device(m, static_cast<cudaStream_t>(ctx.cuda_stream)), backpointers);
}

template <class T> bool hmm_forward_cuda(const Context& ctx, const HmmModel<T>& m, T* loglik, bool required) {
  if (!on_device(m, {loglik}, required)) return false;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  check_values_on_device(m, stream);
  if (m.batch == 0) return true;
  const index_t b = m.batch, s = m.states, block = b * s;
  DeviceBuffer<T> alpha(std::size_t(block), stream), next(std::size_t(block), stream), row_max(std::size_t(b), stream),
      col_max(std::size_t(s), stream);
  DeviceBuffer<Sum> trans_factors(std::size_t(s * s), stream), alpha_factors(std::size_t(block), stream),
      sums(std::size_t(block), stream);
  Context cuda = ctx;
  cuda.backend = Backend::cuda;
  T* current = alpha.get();
  T* following = next.get();
  start_kernel<T><<<blocks_for(block), block_threads, 0, stream>>>(current, m.init, m.emit, b, s);
  check_launch("start_kernel");
  const Sum flush = shift_flush_gap<Sum>(), threshold = shift_threshold<Sum>(s);
  // The columns of A are the rows of Aᵀ: their maxima, and their factors laid out like A (S×S
  // row-major), once for every step.
  const Strided<const Sum> trans_view = cuda_detail::log_plus_gpu::transposed(
      cuda_detail::log_plus_gpu::shift_rows<T, Sum, Sum>({m.trans, s, s, 1, s}, 0, 1, col_max.get(), trans_factors.get(), stream));
  const Problem<PlusTimes<Sum>> product{{alpha_factors.get(), b, s, s, 1}, trans_view, {sums.get(), b, s, s, 1}, Sum(1), Sum(0)};
  for (index_t t = 1; t < m.steps; ++t) {
    shift_alpha<T><<<sequence_blocks(b), block_threads, 0, stream>>>(current, b, s, flush, row_max.get(), alpha_factors.get());
    check_launch("shift_alpha");
    cuda_detail::log_plus_gpu::factor_gemm<Sum>(cuda, product, stream);
    forward_finish<T><<<blocks_for(block), block_threads, 0, stream>>>(current, m.trans, row_max.get(), col_max.get(),
                                                                      sums.get(), threshold, m.emit + t * block, b, s,
                                                                      following);
    check_launch("forward_finish");
    std::swap(current, following);
  }
  forward_loglik<T><<<sequence_blocks(b), block_threads, 0, stream>>>(current, b, s, loglik);
  check_launch("forward_loglik");
  return true;
}

template bool hmm_viterbi_cuda<float>(const Context&, const HmmModel<float>&, std::int32_t*, float*, std::int32_t*, ViterbiStep, bool);
template bool hmm_viterbi_cuda<double>(const Context&, const HmmModel<double>&, std::int32_t*, double*, std::int32_t*, ViterbiStep, bool);
template FusedViterbiForm fused_viterbi_form_cuda<float>(const Context&, const HmmModel<float>&, const std::int32_t*);
template FusedViterbiForm fused_viterbi_form_cuda<double>(const Context&, const HmmModel<double>&, const std::int32_t*);
template bool hmm_forward_cuda<float>(const Context&, const HmmModel<float>&, float*, bool);
template bool hmm_forward_cuda<double>(const Context&, const HmmModel<double>&, double*, bool);

}  // namespace ringmm::detail
