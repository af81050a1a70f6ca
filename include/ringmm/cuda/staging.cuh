// Operand staging: host operands into compact device copies and a host C back, tile-multiple
// packed copies for pad mode, and a padded C copied out into the caller's C.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <type_traits>
#include <utility>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/support_kernels.cuh"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// A device-resident operand: a strided view, its batch stride, and the buffer it lives in when
// it had to be copied.
template <class T> struct DeviceOperand {
  detail::Strided<T> view;
  index_t stride = 0;
  DeviceBuffer<std::remove_const_t<T>> storage;
};

// A matrix view as pitched lines: `lines` runs of `len` contiguous elements, `pitch` apart.
struct Lines {
  index_t lines, len, pitch;
  bool rows_are_lines;
};
template <class T> Lines as_lines(const detail::Strided<T>& x) {
  if (x.cs == 1 && (x.rows <= 1 || x.rs >= x.cols)) return {x.rows, x.cols, x.rows <= 1 ? x.cols : x.rs, true};
  return {x.cols, x.rows, x.cols <= 1 ? x.rows : x.cs, false};
}

// Upload a host operand into a compact device copy with the same orientation.
template <class T>
DeviceOperand<const T> upload(const detail::Strided<const T>& x, index_t stride, index_t batch, cudaStream_t stream) {
  const Lines l = as_lines(x);
  const index_t members = (stride == 0 || batch == 1) ? 1 : batch;
  const index_t size = l.lines * l.len;
  DeviceOperand<const T> out;
  out.storage = DeviceBuffer<T>(std::size_t(size * members), stream);
  for (index_t bt = 0; bt < members && size > 0; ++bt)
    cuda_check(cudaMemcpy2DAsync(out.storage.get() + bt * size, std::size_t(l.len) * sizeof(T), x.p + bt * stride,
                                 std::size_t(l.pitch) * sizeof(T), std::size_t(l.len) * sizeof(T), std::size_t(l.lines),
                                 cudaMemcpyHostToDevice, stream),
               "upload (cudaMemcpy2DAsync)");
  out.view = {out.storage.get(), x.rows, x.cols, l.rows_are_lines ? l.len : 1, l.rows_are_lines ? 1 : l.len};
  out.stride = members == 1 ? 0 : size;
  return out;
}

template <class T>
void download(const detail::Strided<T>& host, index_t host_stride, const detail::Strided<T>& dev, index_t dev_stride,
              index_t batch, cudaStream_t stream) {
  const Lines h = as_lines(host);
  const index_t dev_pitch = h.lines <= 1 ? h.len : (h.rows_are_lines ? dev.rs : dev.cs);
  for (index_t bt = 0; bt < batch; ++bt)
    cuda_check(cudaMemcpy2DAsync(host.p + bt * host_stride, std::size_t(h.pitch) * sizeof(T), dev.p + bt * dev_stride,
                                 std::size_t(dev_pitch) * sizeof(T), std::size_t(h.len) * sizeof(T), std::size_t(h.lines),
                                 cudaMemcpyDeviceToHost, stream),
               "download (cudaMemcpy2DAsync)");
}

// The device views of one call's operands: the caller's device pointers in place, host operands
// staged (a host C only when β ≠ 0̄ makes it an input; otherwise just allocated).
template <class S> struct Staged {
  using T = element_t<S>;
  DeviceOperand<const T> a, b;
  DeviceOperand<T> c;

  // p with its operands replaced by the device views.
  detail::Problem<S> on_device(const detail::Problem<S>& p) const {
    detail::Problem<S> d = p;
    d.a = a.view, d.b = b.view, d.c = c.view;
    d.stride_a = a.stride, d.stride_b = b.stride, d.stride_c = c.stride;
    return d;
  }
};

// Where the caller's A, B and C live.
struct Residence {
  bool a, b, c;
  bool all() const { return a && b && c; }
};

template <class S> Staged<S> stage(const detail::Problem<S>& p, Residence device, cudaStream_t stream) {
  using T = element_t<S>;
  const index_t m = p.m(), n = p.n(), batch = p.batch;
  Staged<S> s;
  if (device.a) s.a.view = p.a, s.a.stride = p.stride_a;
  else s.a = upload(p.a, p.stride_a, batch, stream);
  if (device.b) s.b.view = p.b, s.b.stride = p.stride_b;
  else s.b = upload(p.b, p.stride_b, batch, stream);
  if (device.c) {
    s.c.view = p.c, s.c.stride = p.stride_c;
  } else {
    const detail::Strided<const T> host_c{p.c.p, m, n, p.c.rs, p.c.cs};
    if (!(p.beta == scalar_t<S>(S::zero()))) {
      auto staged = upload(host_c, p.stride_c, batch, stream);
      s.c.storage = std::move(staged.storage);
      s.c.view = {s.c.storage.get(), m, n, staged.view.rs, staged.view.cs};
      s.c.stride = staged.stride;
    } else {
      const Lines l = as_lines(host_c);
      s.c.storage = DeviceBuffer<T>(std::size_t(l.lines * l.len * batch), stream);
      s.c.view = {s.c.storage.get(), m, n, l.rows_are_lines ? l.len : 1, l.rows_are_lines ? 1 : l.len};
      s.c.stride = l.lines * l.len;
    }
  }
  return s;
}

// dst[c·ld + r] = src(r, c) in a rows_p × cols_p buffer per member, `fill` past src's extent.
template <class T>
void pack(T* dst, index_t ld, index_t rows_p, index_t cols_p, index_t dst_stride, const detail::Strided<const T>& src,
          index_t src_stride, index_t members, T fill, cudaStream_t stream) {
  if (rows_p == 0 || cols_p == 0 || members == 0) return;
  const dim3 block(pack_tile, 8);
  for (index_t b0 = 0; b0 < members; b0 += 65535) {
    const dim3 grid(unsigned((rows_p + pack_tile - 1) / pack_tile), unsigned((cols_p + pack_tile - 1) / pack_tile),
                    unsigned(std::min<index_t>(65535, members - b0)));
    pack_kernel<T><<<grid, block, 0, stream>>>(dst + b0 * dst_stride, ld, rows_p, cols_p, dst_stride,
                                                src.p + b0 * src_stride, src.rows, src.cols, src.rs, src.cs, src_stride,
                                                fill);
    check_launch("pack_kernel");
  }
}

// Copies the M×N corner of each member of a padded row-major result (leading dimension ld) into C.
template <class T>
void unpack(const DeviceOperand<T>& c, index_t m, index_t n, const T* padded, index_t ld, index_t padded_stride,
            index_t batch, cudaStream_t stream) {
  const unsigned grid_x = unsigned(std::min<index_t>((m * n + 255) / 256, 1024));
  for (index_t b0 = 0; b0 < batch; b0 += 65535) {
    const unsigned z = unsigned(std::min<index_t>(65535, batch - b0));
    unpack_kernel<T><<<dim3(grid_x, 1, z), 256, 0, stream>>>(c.view.p + b0 * c.stride, m, n, c.view.rs, c.view.cs,
                                                            c.stride, padded + b0 * padded_stride, ld, padded_stride);
    check_launch("unpack_kernel");
  }
}

}  // namespace ringmm::cuda_detail
