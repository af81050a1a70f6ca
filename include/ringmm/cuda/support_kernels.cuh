// Small kernels around the GEMM: padding copies, copying a padded result out, split-K's
// reduction, the device-side scan that refuses out-of-domain inputs before anything is written,
// and the sign scan that lets sign-known tropical products take the three-input minimum.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/detail/input_check.hpp"
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

// The device side of the input check: scan_value over every element (lower_only: i ≥ j), the
// first refused position kept by an atomic minimum and the largest magnitude by an atomic maximum.
template <class S>
__global__ void scan_kernel(detail::ValueScan* out, const element_t<S>* x, index_t rows, index_t cols, index_t rs,
                            index_t cs, index_t stride, index_t batch, bool lower_only) {
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
    // 16 bytes a load where the run starts aligned, `ahead` loads in flight a thread before any
    // is read: one element a load, or one vector at a time, keeps too few bytes in flight to come
    // near the memory's bandwidth.
    constexpr int per = sizeof(T) < 16 && 16 % sizeof(T) == 0 ? vec16<T> : 1, ahead = 4;
    using V = Vec<T, per>;
    index_t vectors = 0;
    if constexpr (per > 1)
      if (reinterpret_cast<std::uintptr_t>(x) % 16 == 0) vectors = total / per;
    index_t w = first;
    for (; w + (ahead - 1) * step < vectors; w += ahead * step) {
      V q[ahead];
#pragma unroll
      for (int u = 0; u < ahead; ++u) q[u] = reinterpret_cast<const V*>(x)[w + u * step];
#pragma unroll
      for (int u = 0; u < ahead; ++u)
#pragma unroll
        for (int e = 0; e < per; ++e) scan_at(q[u].v[e], (w + u * step) * per + e);
    }
    for (; w < vectors; w += step) {
      const V q = reinterpret_cast<const V*>(x)[w];
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
  if (local.first_bad != detail::ValueScan::none) atomicMin(&out->first_bad, local.first_bad);
  if (local.max_magnitude) atomicMax(&out->max_magnitude, local.max_magnitude);
}

}  // namespace ringmm::cuda_detail
