// Small kernels around the GEMM: padding copies, copying a padded result out, split-K's
// reduction, the device-side scan that refuses out-of-domain inputs before anything is written,
// and the sign scan that lets sign-known tropical products take the three-input minimum.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda_detail {

constexpr int pack_tile = 32;

// dst[c·ld + r] = src(r, c) for r < rows, c < cols, and `fill` elsewhere in rows_p × cols_p:
// a tile-multiple buffer whose rows are contiguous, whatever the source strides (a transpose
// through shared memory keeps both the reads and the writes coalesced). Grid z walks the batch.
template <class T>
__global__ void __launch_bounds__(pack_tile * 8) pack_kernel(T* dst, index_t ld, index_t rows_p, index_t cols_p,
                                                             index_t dst_stride, const T* src, index_t rows,
                                                             index_t cols, index_t rs, index_t cs, index_t src_stride,
                                                             T fill) {
  __shared__ T tile[pack_tile][pack_tile + 1];
  const index_t r0 = index_t(blockIdx.x) * pack_tile, c0 = index_t(blockIdx.y) * pack_tile;
  src += index_t(blockIdx.z) * src_stride;
  dst += index_t(blockIdx.z) * dst_stride;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y);
  const bool along_cols = cs == 1 && rs != 1;  // source contiguous along c: read with c fastest
#pragma unroll
  for (int s = 0; s < pack_tile; s += 8) {
    const int rr = along_cols ? ty + s : tx, cc = along_cols ? tx : ty + s;
    const index_t r = r0 + rr, c = c0 + cc;
    tile[rr][cc] = (r < rows && c < cols) ? src[r * rs + c * cs] : fill;
  }
  __syncthreads();
#pragma unroll
  for (int s = 0; s < pack_tile; s += 8) {
    const index_t r = r0 + tx, c = c0 + ty + s;
    if (r < rows_p && c < cols_p) dst[c * ld + r] = tile[tx][ty + s];
  }
}

// C(i, j) = src[i·ld + j] for the M×N corner of a padded row-major result.
template <class T>
__global__ void unpack_kernel(T* c, index_t rows, index_t cols, index_t rs, index_t cs, index_t c_stride,
                              const T* src, index_t ld, index_t src_stride) {
  c += index_t(blockIdx.z) * c_stride;
  src += index_t(blockIdx.z) * src_stride;
  const index_t total = rows * cols;
  const bool col_major = rs == 1 && cs != 1;  // write along C's contiguous direction
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += index_t(gridDim.x) * blockDim.x) {
    const index_t i = col_major ? e % rows : e / cols, j = col_major ? e / rows : e % cols;
    c[i * rs + j * cs] = src[i * ld + j];
  }
}

// Split-K's last step: C ← α ⊗ (⊕ of the `parts` row-major m×n slabs of w, `part_stride` apart)
// ⊕ β ⊗ C. The slabs hold finalised partial products (α = 1̄, β = 0̄); ⊕ and finalize commute
// because finalize is monotone and idempotent, so the result equals one pass over all of K.
// A block of reduce_lanes × reduce_groups threads takes reduce_lanes adjacent elements, each
// thread row a share of the parts, then sums the rows: a small C cut into hundreds of parts
// (64×64×65536: 373) kept one thread walking every part of an element, hundreds of loads in a row.
inline constexpr int reduce_lanes = 32, reduce_groups = 8;
template <class S>
__global__ void reduce_parts_kernel(element_t<S>* c, index_t rows, index_t cols, index_t rs, index_t cs,
                                    const element_t<S>* w, index_t parts, index_t part_stride, scalar_t<S> alpha,
                                    scalar_t<S> beta) {
  using T = element_t<S>;
  __shared__ T partial[reduce_groups][reduce_lanes];
  const index_t total = rows * cols;
  const int lane = int(threadIdx.x), group = int(threadIdx.y);
  for (index_t base = index_t(blockIdx.x) * reduce_lanes; base < total; base += index_t(gridDim.x) * reduce_lanes) {
    const index_t e = base + lane;
    T acc = S::zero();
    if (e < total)
      for (index_t s = group; s < parts; s += reduce_groups) acc = S::add(acc, w[s * part_stride + e]);
    partial[group][lane] = acc;
    __syncthreads();
    if (group == 0 && e < total) {
      for (int g = 1; g < reduce_groups; ++g) acc = S::add(acc, partial[g][lane]);
      T* out = c + (e / cols) * rs + (e % cols) * cs;
      *out = semiring_traits<S>::epilogue(alpha, acc, beta, out);
    }
    __syncthreads();  // partial is refilled next
  }
}

// Clears *known where an element of x lies outside the semiring's sign-known domain
// (gemm_kernel.cuh: sign_known); the caller sets it first. Compact operands are one flat run.
template <class S>
__global__ void sign_scan_kernel(unsigned* known, const element_t<S>* x, index_t rows, index_t cols, index_t rs,
                                 index_t cs, index_t stride, index_t members) {
  const index_t size = rows * cols, total = size * members;
  const bool flat = ((cs == 1 && rs == cols) || (rs == 1 && cs == rows)) && (members == 1 || stride == size);
  bool inside = true;
  for (index_t e = index_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += index_t(gridDim.x) * blockDim.x) {
    index_t at = e;
    if (!flat) {
      const index_t bt = e / size, r = e % size;
      at = bt * stride + (r / cols) * rs + (r % cols) * cs;
    }
    inside = inside && sign_known<S>::in_domain(x[at]);
  }
  if (!__all_sync(0xffffffffu, inside) && threadIdx.x % 32 == 0) *known = 0;
}

// Where the product `d` (its operands in device memory) has a sign-known update
// (gemm_kernel.cuh: sign_known) on a GPU with the three-input minimum and enough updates to pay for
// the scan: a device word that sign_scan_kernel clears unless every value of A and B lies in the
// domain, so that the kernels choose without the host waiting. Null otherwise.
template <class S>
const unsigned* scan_signs(const detail::Problem<S>& d, DeviceBuffer<unsigned>& known, cudaStream_t stream) {
  if constexpr (!sign_known<S>::available) {
    return nullptr;
  } else {
    if (double(d.m()) * double(d.n()) * double(d.k()) * double(d.batch) < sign_scan_min_updates() ||
        compute_capability() < 90)
      return nullptr;
    known = DeviceBuffer<unsigned>(1, stream);
    cuda_check(cudaMemsetAsync(known.get(), 0xff, sizeof(unsigned), stream), "cudaMemsetAsync");
    const int blocks = 8 * multiprocessor_count();
    auto scan = [&](const detail::Strided<const element_t<S>>& x, index_t stride) {
      sign_scan_kernel<S><<<blocks, 256, 0, stream>>>(known.get(), x.p, x.rows, x.cols, x.rs, x.cs, stride,
                                                      stride == 0 ? 1 : d.batch);
      check_launch("sign_scan_kernel");
    };
    scan(d.a, d.stride_a);
    scan(d.b, d.stride_b);
    return known.get();
  }
}

// One operand of the device input check: element (i, j) of member z at p[z·stride + i·rs + j·cs];
// lower_only: only i ≥ j is read (the C of Aᵀ·A).
template <class T> struct ScannedView {
  const T* p = nullptr;
  index_t rows = 0, cols = 0, rs = 0, cs = 0, stride = 0, members = 1;
  bool lower_only = false;
};
// The operands (A, B and C at most) one launch of scan_kernel reads, one a row of blocks.
constexpr int max_scanned_views = 3;
template <class T> struct ScannedViews {
  ScannedView<T> view[max_scanned_views];
};

// A scan as the device keeps it: a zeroed slot is a fresh scan, so one memset prepares every
// operand's. The first refused position is kept complemented, under an atomic maximum.
struct DeviceScan {
  unsigned long long not_first_bad = 0;  // ~position
  unsigned long long max_magnitude = 0;
  detail::ValueScan value() const { return {~not_first_bad, max_magnitude}; }
};

// The device side of the input check: scan_value over every element of view blockIdx.y
// (lower_only: i ≥ j) into out[blockIdx.y], the first refused position and the largest magnitude
// kept by atomic maxima (DeviceScan).
template <class S>
__global__ void scan_kernel(DeviceScan* out, const ScannedViews<element_t<S>> views) {
  const ScannedView<element_t<S>> v = views.view[blockIdx.y];
  const element_t<S>* const x = v.p;
  const index_t rows = v.rows, cols = v.cols, rs = v.rs, cs = v.cs, stride = v.stride, batch = v.members;
  const bool lower_only = v.lower_only;
  out += blockIdx.y;
  // A block walks whole lines (rows, or columns of a column-major operand): its threads read
  // consecutive elements, and no element costs a 64-bit division. Compact operands are one run.
  const bool col_major = rs == 1 && cs != 1;
  const index_t lines = col_major ? cols : rows, len = col_major ? rows : cols;
  const index_t line_step = col_major ? cs : rs, step = col_major ? rs : cs;
  detail::ValueScan local;
  const bool flat = !lower_only && step == 1 && line_step == len && (batch == 1 || stride == lines * len);
  if (flat) {
    // Compact members back to back: one flat run, every thread busy whatever the line length (a
    // batch of 4096 × 64² i32 spent 0.5 ms a line at a time with 64 of 256 threads). Positions
    // count row by row: the flat index, or for column-major members worked out for a refused value.
    using T = element_t<S>;
    const index_t total = lines * len * batch, size = rows * cols;
    const index_t first = index_t(blockIdx.x) * blockDim.x + threadIdx.x, step = index_t(gridDim.x) * blockDim.x;
    auto scan_at = [&](T v, index_t e) {
      unsigned long long position = (unsigned long long)e;
      if (col_major && !semiring_traits<S>::valid_input(v)) {
        const index_t bt = e / size, r = e % size;
        position = (unsigned long long)(bt * size + (r % rows) * cols + r / rows);
      }
      detail::scan_value<S>(local, v, position);
    };
    // 16 bytes a load where the run starts aligned: one element a load keeps too few bytes in
    // flight to come near the memory's bandwidth.
    constexpr int per = sizeof(T) < 16 && 16 % sizeof(T) == 0 ? vec16<T> : 1;
    index_t vectors = 0;
    if constexpr (per > 1)
      if (reinterpret_cast<std::uintptr_t>(x) % 16 == 0) vectors = total / per;
    for (index_t w = first; w < vectors; w += step) {
      const Vec<T, per> q = reinterpret_cast<const Vec<T, per>*>(x)[w];
#pragma unroll
      for (int e = 0; e < per; ++e) scan_at(q.v[e], w * per + e);
    }
    for (index_t e = vectors * per + first; e < total; e += step) scan_at(x[e], e);
  } else {
    for (index_t l = blockIdx.x; l < lines * batch; l += gridDim.x) {
      const index_t bt = l / lines, line = l % lines;
      const element_t<S>* p = x + bt * stride + line * line_step;
      for (index_t t = threadIdx.x; t < len; t += blockDim.x) {
        const index_t i = col_major ? t : line, j = col_major ? line : t;
        if (lower_only && j > i) continue;
        detail::scan_value<S>(local, p[t * step], (unsigned long long)((bt * rows + i) * cols + j));
      }
    }
  }
  // One atomic per warp, not per thread: hundreds of thousands of atomics on one address cost
  // more than the scan itself (measured: plus-times i32 at 4096³ lost 13 %).
  for (int offset = 16; offset > 0; offset /= 2) {
    const unsigned long long bad = __shfl_down_sync(0xffffffffu, local.first_bad, offset);
    const unsigned long long mag = __shfl_down_sync(0xffffffffu, local.max_magnitude, offset);
    if (bad < local.first_bad) local.first_bad = bad;
    if (mag > local.max_magnitude) local.max_magnitude = mag;
  }
  if (threadIdx.x % 32 != 0) return;
  if (local.first_bad != detail::ValueScan::none) atomicMax(&out->not_first_bad, ~local.first_bad);
  if (local.max_magnitude) atomicMax(&out->max_magnitude, local.max_magnitude);
}

// Scans the first `count` views of `views` (device memory) in one launch on `stream`, runs
// `meanwhile` on the host, and waits for the verdict: what scan_value found in each view, in order.
template <class S, class HostWork>
std::array<detail::ValueScan, max_scanned_views> scan_on_device(const ScannedViews<element_t<S>>& views, int count,
                                                                cudaStream_t stream, HostWork&& meanwhile) {
  std::array<detail::ValueScan, max_scanned_views> found{};
  if (count <= 0) {
    meanwhile();
    return found;
  }
  // Enough blocks for the largest view to fill the machine (8 of 256 threads per SM, two waves)
  // with loads in flight; a smaller view's extra blocks find nothing to read.
  index_t blocks = 1;
  for (int i = 0; i < count; ++i) {
    const ScannedView<element_t<S>>& v = views.view[i];
    const index_t total = v.rows * v.cols * v.members;
    blocks = std::max(blocks, std::min<index_t>((total + 255) / 256, 16 * index_t(multiprocessor_count())));
  }
  DeviceBuffer<DeviceScan> slots(std::size_t(count), stream);
  cuda_check(cudaMemsetAsync(slots.get(), 0, std::size_t(count) * sizeof(DeviceScan), stream), "cudaMemsetAsync");
  scan_kernel<S><<<dim3(unsigned(blocks), unsigned(count)), 256, 0, stream>>>(slots.get(), views);
  check_launch("scan_kernel");
  meanwhile();
  DeviceScan verdict[max_scanned_views];
  cuda_check(cudaMemcpyAsync(verdict, slots.get(), std::size_t(count) * sizeof(DeviceScan), cudaMemcpyDeviceToHost,
                             stream),
             "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(stream), "value scan (cudaStreamSynchronize)");
  for (int i = 0; i < count; ++i) found[std::size_t(i)] = verdict[i].value();
  return found;
}

}  // namespace ringmm::cuda_detail
