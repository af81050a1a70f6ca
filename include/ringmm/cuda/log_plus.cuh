// log-plus products on CUDA by the shift trick (ringmm/detail/log_plus_shift.hpp), with streaming
// for the entries where it fails:
//   factors  per member, the row maxima r of op(A) and column maxima c of op(B), and the factors
//            exp(a − r), exp(b − c) in the precision Sum, laid out like their operands;
//   GEMM     S = A'·B' by cuBLAS (Context::vendor_blas), else ringmm's plus-times kernel;
//   finish   C = α ⊗ (r + c + log S) ⊕ β ⊗ C per entry, 0̄ for a row or column of −∞; an entry
//            whose S fell below the threshold is marked in S and counted instead;
//   repair   when the count is not 0, one warp per marked entry streams its K terms with the
//            online log-sum-exp (in f64) and writes it.
// Sum is f64 for f32 inputs too: the f32 GEMM's sums lose up to ε/2 per term where thousands of
// terms sit near one unit in the last place of the sum (ringmm/cpu/log_plus.hpp measured 4·10⁻⁴ at
// K = 8192 through ringmm's own f32 kernel, against the bound of 2·10⁻⁵), and on Hopper cuBLAS's
// DGEMM (FP64 tensor cores, 47–58 TFLOP/s) is as fast as pedantic SGEMM (51). Context::allow_tf32
// trades that accuracy for TF32 tensor cores (f32 factors).
// Symmetric products (syrk) and calls that name a configuration or border run the kernels.
//
// The pieces are shared: shift_rows (maxima and factors) and factor_gemm also serve the HMM
// forward (src/cuda/hmm.cu: A's factors once, then per step its own fused shift of α and a finish
// that adds the emissions) and the log-plus backward (src/cuda/backward.cu); the scalar math is
// ringmm/detail/log_plus_shift.hpp's on both backends.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ringmm/context.hpp"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/staging.cuh"
#include "ringmm/cuda/vendor_blas.hpp"
#include "ringmm/detail/log_plus_shift.hpp"
#include "ringmm/detail/problem.hpp"

namespace ringmm::detail {
template <class S> void cuda_run(const Context& ctx, const Problem<S>& p);
}

namespace ringmm::cuda_detail {

namespace log_plus_gpu {

constexpr int threads = 256;
inline int grid_for(index_t work) {
  return int(std::clamp<index_t>((work + threads - 1) / threads, 1, 32 * index_t(multiprocessor_count())));
}

// The maximum of each row of x (R×C, `members` of them `stride` apart) into shift[member·R + r].
// Rows whose elements are adjacent (cs = 1) are read by a warp each; otherwise consecutive
// threads take consecutive rows (adjacent when rs = 1) and 32 threads split each row's columns,
// so that the loads of a warp fall on one stretch of memory either way.
template <class T>
__global__ void __launch_bounds__(threads) row_max_kernel(detail::Strided<const T> x, index_t stride, index_t members,
                                                          bool warp_per_row, T* shift) {
  const index_t lines = members * x.rows;
  if (warp_per_row) {
    const int lane = int(threadIdx.x % 32);
    const index_t warps = index_t(gridDim.x) * (threads / 32);
    for (index_t line = (index_t(blockIdx.x) * threads + threadIdx.x) / 32; line < lines; line += warps) {
      const T* src = x.p + (line / x.rows) * stride + (line % x.rows) * x.rs;
      T m = LogPlus<T>::zero();
#pragma unroll 8  // loads in flight, not one at a time
      for (index_t c = lane; c < x.cols; c += 32) m = fmax(m, src[c * x.cs]);
      for (int o = 16; o > 0; o /= 2) m = fmax(m, __shfl_xor_sync(0xffffffffu, m, o));
      if (lane == 0) shift[line] = m;
    }
    return;
  }
  // 8 rows × 32 column strands per block.
  __shared__ T partial[32][threads / 32 + 1];
  const int strand = int(threadIdx.x / (threads / 32)), row_in_block = int(threadIdx.x % (threads / 32));
  for (index_t line0 = index_t(blockIdx.x) * (threads / 32); line0 < lines; line0 += index_t(gridDim.x) * (threads / 32)) {
    const index_t line = line0 + row_in_block;
    T m = LogPlus<T>::zero();
    if (line < lines) {
      const T* src = x.p + (line / x.rows) * stride + (line % x.rows) * x.rs;
#pragma unroll 8
      for (index_t c = strand; c < x.cols; c += 32) m = fmax(m, src[c * x.cs]);
    }
    partial[strand][row_in_block] = m;
    __syncthreads();
    if (strand == 0 && line < lines) {
      for (int s = 1; s < 32; ++s) m = fmax(m, partial[s][row_in_block]);
      shift[line] = m;
    }
    __syncthreads();
  }
}

// A launch over the elements of `members` R×C matrices stored compactly: x along the lines
// (adjacent in memory), y over the lines and z over the members (each looping past 65535); no
// divisions per element.
struct Sweep {
  index_t lines, len;  // lines of len adjacent elements per member
  __device__ index_t line0() const { return blockIdx.y; }
  __device__ index_t line_step() const { return gridDim.y; }
  __device__ index_t member0() const { return blockIdx.z; }
  __device__ index_t member_step() const { return gridDim.z; }
  __device__ index_t at() const { return index_t(blockIdx.x) * threads + threadIdx.x; }
};
inline dim3 sweep_grid(index_t lines, index_t len, index_t members) {
  return dim3(unsigned((len + threads - 1) / threads), unsigned(std::clamp<index_t>(lines, 1, 65535)),
              unsigned(std::clamp<index_t>(members, 1, 65535)));
}

// out = exp(x − shift of its row), 0 below exp(−flush) and for rows of −∞, compact per member:
// row-major when row_major_out, else column-major (the orientation of x, so reads run along memory).
// The exponentials in the precision E (detail::shift_exp): the product takes E = T, as they need
// only the inputs' accuracy (f32 functions halved its FP64-bound passes for f32 inputs, ncu at
// 4096³: 114 µs per factor pass, 170 µs to finish); the HMM forward and the backward take E = Sum.
template <class T, class Sum, class E>
__global__ void __launch_bounds__(threads) factors_kernel(detail::Strided<const T> x, index_t stride, index_t members,
                                                          const T* shift, bool row_major_out, Sum flush, Sum* out) {
  const Sweep w{row_major_out ? x.rows : x.cols, row_major_out ? x.cols : x.rows};
  const index_t at = w.at();
  if (at >= w.len) return;
  for (index_t member = w.member0(); member < members; member += w.member_step())
    for (index_t line = w.line0(); line < w.lines; line += w.line_step()) {
      const index_t r = row_major_out ? line : at, c = row_major_out ? at : line;
      const Sum d = Sum(x.p[member * stride + r * x.rs + c * x.cs]) - Sum(shift[member * x.rows + r]);
      out[(member * w.lines + line) * w.len + at] = detail::shift_factor<E, Sum>(d, flush);  // NaN for a row of −∞: 0
    }
}

// The shift trick's operands and results for one chunk of members.
template <class T, class Sum> struct Chunk {
  detail::Strided<const T> a, b;  // op(A), op(B) of the first member
  detail::Strided<T> c;
  index_t stride_a, stride_b, stride_c, members;
  const T *row_shift, *col_shift;  // member·M + i, member·N + j (0 stride for a broadcast operand)
  index_t row_shift_stride, col_shift_stride;
  Sum* sum;  // members × M × N, C's orientation
  bool sum_row_major;
  T alpha, beta;
};

struct EntryIndex {
  index_t member, i, j;
};
template <class T, class Sum> __device__ EntryIndex entry_of(const Chunk<T, Sum>& ch, index_t e) {
  const index_t m = ch.c.rows, n = ch.c.cols, per = m * n, member = e / per, w = e % per;
  return {member, ch.sum_row_major ? w / n : w % m, ch.sum_row_major ? w % n : w / m};
}

// Finishes every entry the trick holds; marks (sum = −1) and counts the others.
template <class T, class Sum>
__global__ void __launch_bounds__(threads) finish_kernel(Chunk<T, Sum> ch, Sum threshold, unsigned long long* marked) {
  using S = LogPlus<T>;
  const index_t m = ch.c.rows, n = ch.c.cols;
  const Sweep w{ch.sum_row_major ? m : n, ch.sum_row_major ? n : m};
  const index_t at = w.at();
  unsigned long long count = 0;
  if (at < w.len)
    for (index_t member = w.member0(); member < ch.members; member += w.member_step())
      for (index_t line = w.line0(); line < w.lines; line += w.line_step()) {
        const index_t i = ch.sum_row_major ? line : at, j = ch.sum_row_major ? at : line;
        const T r = ch.row_shift[member * ch.row_shift_stride + i], c = ch.col_shift[member * ch.col_shift_stride + j];
        Sum* sum = ch.sum + (member * w.lines + line) * w.len + at;
        LogSumExp<T> acc = semiring_traits<S>::initial();
        switch (detail::classify_shifted(r, c, *sum, threshold)) {
          case detail::ShiftedEntry::shifted: acc = LogSumExp<T>(detail::shifted_value<T, T>(r, c, *sum)); break;
          case detail::ShiftedEntry::zero: break;
          case detail::ShiftedEntry::recompute:
            *sum = Sum(-1);
            ++count;
            continue;
        }
        T* cij = ch.c.p + member * ch.stride_c + i * ch.c.rs + j * ch.c.cs;
        *cij = semiring_traits<S>::epilogue(ch.alpha, acc, ch.beta, cij);
      }
  if (count) atomicAdd(marked, count);
}

// One warp per marked entry: each lane streams every 32nd k in f64, then the lanes' sums merge.
template <class T, class Sum>
__global__ void __launch_bounds__(threads) repair_kernel(Chunk<T, Sum> ch, const unsigned long long* marked) {
  using S = LogPlus<T>;
  if (*marked == 0) return;
  const index_t total = ch.members * ch.c.rows * ch.c.cols, k = ch.a.cols;
  const int lane = int(threadIdx.x % 32);
  const index_t warps = index_t(gridDim.x) * (threads / 32);
  // Each warp scans 32 entries at a time for marks, then recomputes the marked ones together.
  for (index_t base = ((index_t(blockIdx.x) * threads + threadIdx.x) / 32) * 32; base < total; base += warps * 32) {
    const index_t mine = base + lane;
    unsigned todo = __ballot_sync(0xffffffffu, mine < total && ch.sum[mine] < Sum(0));
    while (todo) {
      const int which = __ffs(todo) - 1;
      todo &= todo - 1;
      const EntryIndex x = entry_of(ch, base + which);
      const T* a = ch.a.p + x.member * ch.stride_a + x.i * ch.a.rs;
      const T* b = ch.b.p + x.member * ch.stride_b + x.j * ch.b.cs;
      LogSumExp<double> acc(LogPlus<double>::zero());
      for (index_t kk = lane; kk < k; kk += 32) acc = LogPlus<double>::fma(acc, double(a[kk * ch.a.cs]), double(b[kk * ch.b.rs]));
      double top = acc.max;
      for (int o = 16; o > 0; o /= 2) top = fmax(top, __shfl_xor_sync(0xffffffffu, top, o));
      double s = acc.max == LogPlus<double>::zero() ? 0.0 : (acc.sum + acc.comp) * exp(acc.max - top);
      for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (lane == 0) {
        const LogSumExp<T> sum = top == LogPlus<double>::zero() ? semiring_traits<S>::initial() : LogSumExp<T>(T(top + log(s)));
        T* cij = ch.c.p + x.member * ch.stride_c + x.i * ch.c.rs + x.j * ch.c.cs;
        *cij = semiring_traits<S>::epilogue(ch.alpha, sum, ch.beta, cij);
      }
    }
  }
}

// Row maxima and factors of x (R×C) for `members` members: rows of A, or columns of B as the rows
// of Bᵀ. Returns the factors' view (R×C, in x's orientation) into `out`. E: factors_kernel.
template <class T, class Sum, class E = T>
detail::Strided<const Sum> shift_rows(const detail::Strided<const T>& x, index_t stride, index_t members, T* shift,
                                      Sum* out, cudaStream_t stream) {
  const bool rows_adjacent = x.cs <= x.rs;
  const index_t lines = members * x.rows;
  row_max_kernel<T><<<grid_for(lines * 32), threads, 0, stream>>>(x, stride, members, rows_adjacent, shift);
  check_launch("log-plus row_max_kernel");
  const dim3 grid = rows_adjacent ? sweep_grid(x.rows, x.cols, members) : sweep_grid(x.cols, x.rows, members);
  factors_kernel<T, Sum, E><<<grid, threads, 0, stream>>>(x, stride, members, shift, rows_adjacent,
                                                       detail::shift_flush_gap<Sum>(), out);
  check_launch("log-plus factors_kernel");
  if (rows_adjacent) return {out, x.rows, x.cols, x.cols, 1};
  return {out, x.rows, x.cols, 1, x.rows};
}

template <class T> detail::Strided<T> transposed(const detail::Strided<T>& x) { return {x.p, x.cols, x.rows, x.cs, x.rs}; }

// The GEMM S = A'·B' (device views): cuBLAS where Context allows, as the engine routes plus-times
// (vendor_blas on, no kernel configuration named), and always when Sum is f32 (TF32, the
// allow_tf32 opt-in); else ringmm's kernel.
template <class Sum> void factor_gemm(const Context& ctx, const detail::Problem<PlusTimes<Sum>>& product, cudaStream_t stream) {
  const bool tf32 = std::is_same_v<Sum, float>;
  if (((ctx.vendor_blas && !ctx.names_cuda_kernels()) || tf32) && vendor_gemm<Sum>(product, stream, tf32)) return;
  Context own = ctx;
  own.vendor_blas = false;
  detail::cuda_run<PlusTimes<Sum>>(own, product);
}

// Bytes of factors and sums a chunk of members may take (one member is always taken).
constexpr std::size_t chunk_bytes = std::size_t(1) << 30;

template <class T, class Sum> void shift_gemm(const Context& ctx, const detail::Problem<LogPlus<T>>& d, cudaStream_t stream) {
  const index_t m = d.m(), n = d.n(), k = d.k();
  const bool a_shared = d.stride_a == 0, b_shared = d.stride_b == 0;  // broadcast operands
  const std::size_t per_member =
      std::size_t((a_shared ? 0 : m * k) + (b_shared ? 0 : k * n) + m * n) * sizeof(Sum) + std::size_t(m + n) * sizeof(T);
  const index_t chunk = std::clamp<index_t>(index_t(chunk_bytes / std::max<std::size_t>(per_member, 1)), 1, d.batch);
  const index_t a_count = a_shared ? 1 : chunk, b_count = b_shared ? 1 : chunk;
  DeviceBuffer<Sum> ea(std::size_t(a_count * m * k), stream), eb(std::size_t(b_count * k * n), stream);
  DeviceBuffer<Sum> sum(std::size_t(chunk * m * n), stream);
  DeviceBuffer<T> row_shift(std::size_t(a_count * m), stream), col_shift(std::size_t(b_count * n), stream);
  DeviceBuffer<unsigned long long> marked(1, stream);
  const bool sum_row_major = d.c.cs <= d.c.rs;
  const Sum threshold = detail::shift_threshold<Sum>(k);
  const int repair_blocks = 8 * multiprocessor_count();

  for (index_t b0 = 0; b0 < d.batch; b0 += chunk) {
    const index_t members = std::min(chunk, d.batch - b0);
    const index_t a_members = a_shared ? 1 : members, b_members = b_shared ? 1 : members;
    const detail::Strided<const T> a{d.a.p + b0 * d.stride_a, m, k, d.a.rs, d.a.cs};
    const detail::Strided<const T> b{d.b.p + b0 * d.stride_b, k, n, d.b.rs, d.b.cs};
    // A broadcast operand's factors are computed once.
    if (b0 == 0 || !a_shared) shift_rows<T, Sum>(a, d.stride_a, a_members, row_shift.get(), ea.get(), stream);
    if (b0 == 0 || !b_shared) shift_rows<T, Sum>(transposed(b), d.stride_b, b_members, col_shift.get(), eb.get(), stream);
    const bool a_rows_adjacent = a.cs <= a.rs, bt_rows_adjacent = b.rs <= b.cs;
    const detail::Strided<const Sum> fa = a_rows_adjacent ? detail::Strided<const Sum>{ea.get(), m, k, k, 1}
                                                          : detail::Strided<const Sum>{ea.get(), m, k, 1, m};
    // B's factors were laid out as Bᵀ (N×K); as B they are the transposed view.
    const detail::Strided<const Sum> fb = bt_rows_adjacent ? detail::Strided<const Sum>{eb.get(), k, n, 1, k}
                                                           : detail::Strided<const Sum>{eb.get(), k, n, n, 1};
    const detail::Strided<Sum> fc = sum_row_major ? detail::Strided<Sum>{sum.get(), m, n, n, 1}
                                                  : detail::Strided<Sum>{sum.get(), m, n, 1, m};
    detail::Problem<PlusTimes<Sum>> product{fa, fb, fc, Sum(1), Sum(0), members,
                                            a_shared ? 0 : m * k, b_shared ? 0 : k * n, m * n, false};
    factor_gemm<Sum>(ctx, product, stream);

    Chunk<T, Sum> ch{a, b, {d.c.p + b0 * d.stride_c, m, n, d.c.rs, d.c.cs}, d.stride_a, d.stride_b, d.stride_c, members,
                     row_shift.get(), col_shift.get(), a_shared ? 0 : m, b_shared ? 0 : n, sum.get(), sum_row_major,
                     d.alpha, d.beta};
    cuda_check(cudaMemsetAsync(marked.get(), 0, sizeof(unsigned long long), stream), "cudaMemsetAsync");
    const dim3 grid = sum_row_major ? sweep_grid(m, n, members) : sweep_grid(n, m, members);
    finish_kernel<T, Sum><<<grid, threads, 0, stream>>>(ch, threshold, marked.get());
    check_launch("log-plus finish_kernel");
    repair_kernel<T, Sum><<<repair_blocks, threads, 0, stream>>>(ch, marked.get());
    check_launch("log-plus repair_kernel");
  }
}

}  // namespace log_plus_gpu

// Whether the shift trick runs p: not where the kernels should run it (products too small for the
// trick to pay, Aᵀ·A, and calls that name a configuration, border policy or split).
template <class S> bool takes_log_plus_shift(const Context& ctx, const detail::Problem<S>& d) {
  if constexpr (detail::is_log_plus<S>) {
    return !(ctx.names_cuda_kernels() || d.symmetric || d.batch == 0 || d.m() == 0 || d.n() == 0 || d.k() == 0 ||
             !detail::log_plus_shift_pays(d));
  } else {
    return false;
  }
}

// Runs p (its operands staged on the device as d) by the shift trick and returns true where it
// takes it, else returns false, having done nothing.
template <class S> bool run_log_plus_shift(const Context& ctx, const detail::Problem<S>& d, cudaStream_t stream) {
  if constexpr (detail::is_log_plus<S>) {
    using T = element_t<S>;
    if (!takes_log_plus_shift<S>(ctx, d)) return false;
    if (std::is_same_v<T, float> && ctx.allow_tf32) log_plus_gpu::shift_gemm<T, float>(ctx, d, stream);
    else log_plus_gpu::shift_gemm<T, double>(ctx, d, stream);
    return true;
  } else {
    return false;
  }
}

}  // namespace ringmm::cuda_detail
