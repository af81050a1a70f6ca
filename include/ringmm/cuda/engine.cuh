// The CUDA backend's driver: detail::cuda_run<S>. Included by the engine_*.cu files, each of
// which instantiates it (and so every configuration's kernels) for a few semirings, so that the
// kernels compile in parallel.
//
// Steps of one call:
//   1. pick the configuration (Context::cuda_config, else the heuristic in choose_config) and the
//      border policy (Context::border, else choose_border);
//   2. refuse out-of-range inputs (integer tropical range, plus-times i32 overflow bound): host
//      operands are scanned on the host, device operands by scan_kernel, before any write;
//   3. stage host operands into compact device buffers (device pointers are used in place);
//      plus-times f32/f64 then go to cuBLAS when Context::vendor_blas allows (vendor_blas.hpp),
//      and products whose output tiles fill under half a wave split K (k_parts);
//   4. pad: pack operands that are not already tile-multiple k-major buffers, run the
//      branch-free kernel on whole tiles (the ragged last block row/column, when M, N are at
//      least one tile, as a predicated fringe beside it; otherwise into a padded C copied out);
//      predicate: run on the strided views directly;
//   5. download a host C. Calls on device pointers are asynchronous on ctx.cuda_stream, except
//      for the value check of integer semirings, which waits for its scan.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/cuda/support_kernels.cuh"
#include "ringmm/cuda/vendor_blas.hpp"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

bool is_device_pointer(const void* p);
int multiprocessor_count();
ConfigId find_config(const std::string& name);  // throws invalid_argument naming cuda_config

template <class S> int resident_blocks(ConfigId id);

// The configuration the caller named, else the heuristic's (heuristics.hpp).
template <class S> ConfigId config_for(const Context& ctx, Border border, const Workload& w) {
  if (!ctx.cuda_config.empty()) return find_config(ctx.cuda_config);
  return choose_config(w, border, multiprocessor_count(), [](ConfigId id) { return resident_blocks<S>(id); });
}

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

// Step 2: the input check (ringmm/detail/input_check.hpp). Host operands are scanned on the host,
// device operands by scan_kernel; throws Error(value_out_of_range) before any write.
template <class S>
void check_values(const detail::Problem<S>& p, const bool on_device[3], cudaStream_t stream) {
  using T = element_t<S>;
  if constexpr (detail::scans_inputs<S>) {
    detail::check_scalars<S>(p.alpha, p.beta);
    const bool reads_c = !(p.beta == scalar_t<S>(S::zero()));
    detail::CheckedOperand<S> ops[3] = {{"A", "", p.a, p.stride_a, p.batch},
                                        {"B", "", p.b, p.stride_b, p.batch},
                                        {"C", "", {p.c.p, p.c.rows, p.c.cols, p.c.rs, p.c.cs}, p.stride_c, p.batch, p.symmetric}};
    const int operands = reads_c ? 3 : 2;
    DeviceBuffer<detail::ValueScan> slots(3, stream);
    const detail::ValueScan fresh[3] = {};
    cuda_check(cudaMemcpyAsync(slots.get(), fresh, sizeof(fresh), cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync");
    bool any_device = false;
    for (int o = 0; o < operands; ++o) {
      const detail::CheckedOperand<S>& x = ops[o];
      const index_t members = x.stride == 0 ? 1 : x.members, total = x.view.rows * x.view.cols * members;
      if (total == 0) continue;
      if (!on_device[o]) {
        detail::scan_on_host(ops[o]);
        continue;
      }
      any_device = true;
      const int blocks = int(std::min<index_t>((total + 255) / 256, 4 * index_t(multiprocessor_count())));
      scan_kernel<S><<<blocks, 256, 0, stream>>>(slots.get() + o, x.view.p, x.view.rows, x.view.cols, x.view.rs,
                                                 x.view.cs, x.stride, members, x.lower_only);
      check_launch("scan_kernel");
    }
    if (any_device) {
      detail::ValueScan dev[3];
      cuda_check(cudaMemcpyAsync(dev, slots.get(), sizeof(dev), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
      cuda_check(cudaStreamSynchronize(stream), "value scan (cudaStreamSynchronize)");
      for (int o = 0; o < operands; ++o)
        if (on_device[o]) ops[o].scan = dev[o];
    }
    // A refused value is fetched from wherever its operand lives, for the message.
    auto read = [](const T* address) {
      T value{};
      cuda_check(cudaMemcpy(&value, address, sizeof(T), cudaMemcpyDefault), "cudaMemcpy");
      return value;
    };
    detail::check_scans(ops, std::size_t(operands), p.alpha, p.beta, p.k(), read);
  }
}

template <class S, class Cfg, Border B>
void launch_kernel(KernelArgs<S> args, index_t blocks, index_t batch, cudaStream_t stream) {
  constexpr index_t max_z = 65535;
  for (index_t b0 = 0; b0 < batch; b0 += max_z) {
    const unsigned z = unsigned(std::min(max_z, batch - b0));
    gemm_kernel<S, Cfg, B><<<dim3(unsigned(blocks), 1, z), Cfg::threads, 0, stream>>>(args);
    check_launch("gemm_kernel");
    args.a += max_z * args.stride_a;
    args.b += max_z * args.stride_b;
    args.c += max_z * args.stride_c;
  }
}

template <class S>
void launch(ConfigId id, Border border, const KernelArgs<S>& args, index_t blocks, index_t batch,
            cudaStream_t stream) {
  switch (id) {
#define RINGMM_CONFIG_CASE(name, bm, bn, bk, tm, tn, sm, sn, pa, pb, mb, ...)                    \
  case ConfigId::name: {                                                                    \
    using Cfg = Tile<bm, bn, bk, tm, tn, sm, sn, Place::pa, Place::pb, mb>;                 \
    if (border == Border::pad) launch_kernel<S, Cfg, Border::pad>(args, blocks, batch, stream); \
    else launch_kernel<S, Cfg, Border::predicate>(args, blocks, batch, stream);             \
    return;                                                                                 \
  }
    RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_CASE)
#undef RINGMM_CONFIG_CASE
  }
}

// Resident blocks per SM of a configuration's pad-mode kernel (occupancy API, cached).
template <class S> int resident_blocks(ConfigId id) {
  static std::atomic<int> cache[config_count] = {};
  int blocks = cache[int(id)].load(std::memory_order_relaxed);
  if (blocks > 0) return blocks;
  switch (id) {
#define RINGMM_CONFIG_OCCUPANCY(name, bm, bn, bk, tm, tn, sm, sn, pa, pb, mb, ...)                                  \
  case ConfigId::name: {                                                                                     \
    using Cfg = Tile<bm, bn, bk, tm, tn, sm, sn, Place::pa, Place::pb, mb>;                                  \
    cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gemm_kernel<S, Cfg, Border::pad>, Cfg::threads, 0), \
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor");                                              \
    break;                                                                                                   \
  }
    RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_OCCUPANCY)
#undef RINGMM_CONFIG_OCCUPANCY
  }
  cache[int(id)].store(blocks, std::memory_order_relaxed);
  return blocks;
}

// A second stream, of the highest priority, that starts after the work queued so far on `main` and
// that `main` waits for when it goes out of scope (fork/join through events). The priority lets
// the fringe's blocks start beside the interior's first wave instead of trailing its last. The
// stream and its two events are made once per host thread and device and then reused (creating
// a stream per call cost ~0.3 ms, measured at 1000³) and are kept until the process ends.
class SideStream {
 public:
  explicit SideStream(cudaStream_t main) : main_(main), res_(resources()) {
    cuda_check(cudaEventRecord(res_.fork, main_), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(res_.side, res_.fork, 0), "cudaStreamWaitEvent");
  }
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  ~SideStream() {  // errors here would only repeat one the launches already reported
    cudaEventRecord(res_.join, res_.side);
    cudaStreamWaitEvent(main_, res_.join, 0);
  }
  cudaStream_t get() const { return res_.side; }

 private:
  struct Resources {
    cudaStream_t side = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
  };
  static Resources& resources() {
    thread_local std::vector<Resources> per_device;
    int device = 0;
    cuda_check(cudaGetDevice(&device), "cudaGetDevice");
    if (per_device.size() <= std::size_t(device)) per_device.resize(std::size_t(device) + 1);
    Resources& r = per_device[std::size_t(device)];
    if (!r.side) {
      int least = 0, greatest = 0;
      cuda_check(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
      cuda_check(cudaEventCreateWithFlags(&r.fork, cudaEventDisableTiming), "cudaEventCreateWithFlags");
      cuda_check(cudaEventCreateWithFlags(&r.join, cudaEventDisableTiming), "cudaEventCreateWithFlags");
      cuda_check(cudaStreamCreateWithPriority(&r.side, cudaStreamNonBlocking, greatest), "cudaStreamCreateWithPriority");
    }
    return r;
  }
  cudaStream_t main_;
  Resources& res_;
};

// Pad mode with the fringe split off (splits_fringe): `args` holds the packed operands, C in
// place and the padded sizes; the interior [0, m_main) × [0, n_main) runs on whole tiles, the
// bottom rows [m_main, m) × [0, n) and the right columns [0, m_main) × [n_main, n) run predicated.
template <class S>
void launch_split(ConfigId id, const KernelArgs<S>& args, index_t m, index_t n, index_t batch,
                  cudaStream_t stream) {
  const ConfigInfo& cfg = config_info(id);
  const ConfigInfo& small = config_info(fringe_config());
  const index_t m_main = m / cfg.bm * cfg.bm, n_main = n / cfg.bn * cfg.bn;
  KernelArgs<S> interior = args;
  interior.m = m_main, interior.n = n_main, interior.tiles_n = int(n_main / cfg.bn);
  SideStream side(stream);
  auto fringe = [&](index_t i0, index_t j0, index_t rows, index_t cols) {
    if (rows == 0 || cols == 0) return;
    KernelArgs<S> f = args;
    f.a += i0;  // packed A: rows adjacent (a_rs = 1); packed B: columns adjacent (b_cs = 1)
    f.b += j0;
    f.c += i0 * args.c_rs + j0 * args.c_cs;
    f.m = rows, f.n = cols;
    f.a_m_fast = true, f.b_n_fast = true;
    f.tiles_n = int((cols + small.bn - 1) / small.bn);
    launch<S>(fringe_config(), Border::predicate, f, ((rows + small.bm - 1) / small.bm) * f.tiles_n, batch, side.get());
  };
  fringe(m_main, 0, m - m_main, n);
  fringe(0, n_main, m_main, n - n_main);
  launch<S>(id, Border::pad, interior, (m_main / cfg.bm) * (n_main / cfg.bn), batch, stream);
}

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

// cuBLAS takes plus-times f32/f64 unless the caller asked for ringmm's kernels: vendor_blas off,
// or a configuration or border policy named.
template <class S> bool wants_vendor_blas(const Context& ctx) {
  using T = typename S::value_type;
  constexpr bool float_plus_times = std::is_same_v<S, PlusTimes<T>> && std::is_floating_point_v<T>;
  return float_plus_times && ctx.vendor_blas && !ctx.names_cuda_kernels();
}

// Split-K (heuristics.hpp) only where the caller left the kernels to the engine.
template <class S> index_t split_k_parts(const Context& ctx, ConfigId id, const Workload& w) {
  if (ctx.names_cuda_kernels()) return 1;
  return k_parts(w, config_info(id), multiprocessor_count(), resident_blocks<S>(id));
}

template <class S>
void cuda_run_impl(const Context& ctx, const detail::Problem<S>& p, bool nested = false);

// Runs the device problem p in `parts` K chunks (the last one takes the remainder) into a
// workspace, then reduces them into p.c with p's α and β.
template <class S>
void run_split_k(const Context& ctx, const detail::Problem<S>& p, index_t parts, cudaStream_t stream) {
  using T = typename S::value_type;
  const index_t m = p.m(), n = p.n(), k = p.k();
  const index_t chunk = (k + parts - 1) / parts, full = k / chunk, rest = k - full * chunk;
  const index_t count = full + (rest > 0 ? 1 : 0);
  DeviceBuffer<T> w(std::size_t(count * m * n), stream);
  detail::Problem<S> part = p;
  part.alpha = S::one(), part.beta = S::zero();
  part.a.cols = chunk, part.b.rows = chunk;
  part.c = {w.get(), m, n, n, 1};
  part.batch = full, part.stride_a = chunk * p.a.cs, part.stride_b = chunk * p.b.rs, part.stride_c = m * n;
  cuda_run_impl<S>(ctx, part, true);
  if (rest > 0) {
    part.a.p = p.a.p + full * chunk * p.a.cs, part.a.cols = rest;
    part.b.p = p.b.p + full * chunk * p.b.rs, part.b.rows = rest;
    part.c.p = w.get() + full * m * n;
    part.batch = 1, part.stride_a = part.stride_b = part.stride_c = 0;
    cuda_run_impl<S>(ctx, part, true);
  }
  const unsigned blocks = unsigned(std::min<index_t>((m * n + 255) / 256, 4096));
  reduce_parts_kernel<S><<<blocks, 256, 0, stream>>>(p.c.p, m, n, p.c.rs, p.c.cs, w.get(), count, m * n, p.alpha, p.beta);
  check_launch("reduce_parts_kernel");
}

// nested: a part of a split-K call, on device views whose values the outer call checked.
template <class S> void cuda_run_impl(const Context& ctx, const detail::Problem<S>& p, bool nested) {
  using T = typename S::value_type;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const Workload w = workload_of(p);
  const Border border = choose_border(ctx.border, w);
  const ConfigId id = config_for<S>(ctx, border, w);
  const ConfigInfo& cfg = config_info(id);
  const bool split = splits_fringe(cfg, border, w);
  const bool reads_c = !(p.beta == S::zero());
  const index_t m = p.m(), n = p.n(), k = p.k(), batch = p.batch;

  const bool on_device[3] = {is_device_pointer(p.a.p), is_device_pointer(p.b.p), is_device_pointer(p.c.p)};
  if (!nested) check_values<S>(p, on_device, stream);

  // Step 3: device views of A, B, C.
  DeviceOperand<const T> a, b;
  if (on_device[0]) a.view = p.a, a.stride = p.stride_a;
  else a = upload(p.a, p.stride_a, batch, stream);
  if (on_device[1]) b.view = p.b, b.stride = p.stride_b;
  else b = upload(p.b, p.stride_b, batch, stream);
  DeviceOperand<T> c;
  if (on_device[2]) {
    c.view = p.c, c.stride = p.stride_c;
  } else {
    const detail::Strided<const T> host_c{p.c.p, m, n, p.c.rs, p.c.cs};
    if (reads_c) {
      auto staged = upload(host_c, p.stride_c, batch, stream);
      c.storage = std::move(staged.storage);
      c.view = {c.storage.get(), m, n, staged.view.rs, staged.view.cs};
      c.stride = staged.stride;
    } else {
      const Lines l = as_lines(host_c);
      c.storage = DeviceBuffer<T>(std::size_t(l.lines * l.len * batch), stream);
      c.view = {c.storage.get(), m, n, l.rows_are_lines ? l.len : 1, l.rows_are_lines ? 1 : l.len};
      c.stride = l.lines * l.len;
    }
  }

  // Step 5 (also after cuBLAS): a host C comes back, and a call on host memory returns when done.
  auto finish = [&] {
    if (!on_device[2]) download(p.c, p.stride_c, c.view, c.stride, batch, stream);
    if (!(on_device[0] && on_device[1] && on_device[2]))
      cuda_check(cudaStreamSynchronize(stream), "gemm (cudaStreamSynchronize)");
  };
  detail::Problem<S> on_gpu = p;
  on_gpu.a = a.view, on_gpu.b = b.view, on_gpu.c = c.view;
  on_gpu.stride_a = a.stride, on_gpu.stride_b = b.stride, on_gpu.stride_c = c.stride;
  if constexpr (std::is_same_v<S, PlusTimes<T>> && std::is_floating_point_v<T>) {
    if (wants_vendor_blas<S>(ctx)) {
      detail::Problem<S> same_a = on_gpu;
      // Aᵀ·A: B is A's transpose; host operands were staged twice, so both name A's copy.
      if (p.symmetric) same_a.b = {a.view.p, a.view.cols, a.view.rows, a.view.cs, a.view.rs}, same_a.stride_b = a.stride;
      if (vendor_gemm(same_a, stream)) return finish();
    }
  }
  if (const index_t parts = nested ? 1 : split_k_parts<S>(ctx, id, w); parts > 1) {
    run_split_k<S>(ctx, on_gpu, parts, stream);
    return finish();
  }

  KernelArgs<S> args{};
  args.alpha = p.alpha;
  args.beta = p.beta;
  args.symmetric = p.symmetric;
  const bool square_tiles = cfg.bm == cfg.bn;
  DeviceOperand<T> c_padded;  // pad mode, C not a tile multiple: the kernel writes here
  if (border == Border::pad) {
    // A symmetric product mirrors inside C's buffer, so its padded C stays square.
    const index_t tile_m = p.symmetric ? std::max(cfg.bm, cfg.bn) : cfg.bm, tile_n = p.symmetric ? tile_m : cfg.bn;
    const index_t mp = round_up(m, tile_m), np = round_up(n, tile_n), kp = round_up(k, cfg.bk);
    const index_t vec = vec16<T>;
    auto aligned = [&](const void* ptr, index_t ld, index_t stride) {
      return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % vec == 0 && stride % vec == 0;
    };
    // A k-major (a_rs == 1) and B n-contiguous (b_cs == 1) tile-multiple buffers are used as they are.
    DeviceOperand<const T> a_packed, b_packed;
    const index_t members_a = (a.stride == 0 || batch == 1) ? 1 : batch, members_b = (b.stride == 0 || batch == 1) ? 1 : batch;
    if (!(a.view.rs == 1 && m == mp && k == kp && (k == 0 || aligned(a.view.p, a.view.cs, a.stride)))) {
      a_packed.storage = DeviceBuffer<T>(std::size_t(mp * kp * members_a), stream);
      pack(a_packed.storage.get(), mp, mp, kp, mp * kp, a.view, a.stride, members_a, S::zero(), stream);
      a_packed.view = {a_packed.storage.get(), mp, kp, 1, mp};
      a_packed.stride = members_a == 1 ? 0 : mp * kp;
      a = std::move(a_packed);
    }
    if (!(b.view.cs == 1 && n == np && k == kp && (k == 0 || aligned(b.view.p, b.view.rs, b.stride)))) {
      const detail::Strided<const T> bt{b.view.p, b.view.cols, b.view.rows, b.view.cs, b.view.rs};  // Bᵀ
      b_packed.storage = DeviceBuffer<T>(std::size_t(np * kp * members_b), stream);
      pack(b_packed.storage.get(), np, np, kp, np * kp, bt, b.stride, members_b, S::zero(), stream);
      b_packed.view = {b_packed.storage.get(), kp, np, np, 1};
      b_packed.stride = members_b == 1 ? 0 : np * kp;
      b = std::move(b_packed);
    }
    args.a = a.view.p, args.a_rs = 1, args.a_cs = a.view.cs, args.stride_a = a.stride;
    args.b = b.view.p, args.b_rs = b.view.rs, args.b_cs = 1, args.stride_b = b.stride;
    if ((m == mp && n == np) || split) {
      args.c = c.view.p, args.c_rs = c.view.rs, args.c_cs = c.view.cs, args.stride_c = c.stride;
    } else {
      c_padded.storage = DeviceBuffer<T>(std::size_t(mp * np * batch), stream);
      if (reads_c) {
        const detail::Strided<const T> ct{c.view.p, n, m, c.view.cs, c.view.rs};  // Cᵀ: rows of C become contiguous
        pack(c_padded.storage.get(), np, np, mp, mp * np, ct, c.stride, batch, S::zero(), stream);
      }
      args.c = c_padded.storage.get(), args.c_rs = np, args.c_cs = 1, args.stride_c = mp * np;
    }
    args.m = mp, args.n = np, args.k = kp;
  } else {
    args.a = a.view.p, args.a_rs = a.view.rs, args.a_cs = a.view.cs, args.stride_a = a.stride;
    args.b = b.view.p, args.b_rs = b.view.rs, args.b_cs = b.view.cs, args.stride_b = b.stride;
    args.c = c.view.p, args.c_rs = c.view.rs, args.c_cs = c.view.cs, args.stride_c = c.stride;
    args.m = m, args.n = n, args.k = k;
    args.a_m_fast = a.view.rs == 1 && a.view.cs != 1;
    args.b_n_fast = b.view.cs == 1 && b.view.rs != 1;
  }

  const index_t tiles_m = (args.m + cfg.bm - 1) / cfg.bm, tiles_n = (args.n + cfg.bn - 1) / cfg.bn;
  args.tiles_n = int(tiles_n);
  // Aᵀ·A: only lower-triangle tiles are launched (needs square tiles; otherwise every tile runs
  // and the epilogue keeps i ≥ j).
  args.triangular = p.symmetric && square_tiles;
  const index_t blocks = args.triangular ? tiles_m * (tiles_m + 1) / 2 : tiles_m * tiles_n;
  if (split) {
    launch_split<S>(id, args, m, n, batch, stream);
  } else {
    launch<S>(id, border, args, blocks, batch, stream);
  }

  if (c_padded.storage.get()) {
    const index_t total = m * n;
    const unsigned grid_x = unsigned(std::min<index_t>((total + 255) / 256, 1024));
    for (index_t b0 = 0; b0 < batch; b0 += 65535) {
      const unsigned z = unsigned(std::min<index_t>(65535, batch - b0));
      unpack_kernel<T><<<dim3(grid_x, 1, z), 256, 0, stream>>>(c.view.p + b0 * c.stride, m, n, c.view.rs, c.view.cs,
                                                              c.stride, c_padded.storage.get() + b0 * args.stride_c,
                                                              args.n, args.stride_c);
      check_launch("unpack_kernel");
    }
  }
  finish();
}

}  // namespace ringmm::cuda_detail

namespace ringmm::detail {
template <class S> void cuda_run(const Context& ctx, const Problem<S>& p) {
  cuda_detail::cuda_run_impl<S>(ctx, p);
}
}  // namespace ringmm::detail

// Each engine_*.cu instantiates the backend (and every configuration's kernels) for its semirings.
#define RINGMM_CUDA_INSTANTIATE(S) \
  template void ringmm::detail::cuda_run<S>(const ringmm::Context&, const ringmm::detail::Problem<S>&);
