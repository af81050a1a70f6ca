// Launching gemm_kernel: one configuration of the table chosen at run time, batches past the grid's
// z limit, occupancy per configuration, the fringe beside a padded interior on a second stream,
// and split-K's parts and reduction.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/cuda/support_kernels.cuh"
#include "ringmm/cuda/thin_fringe.cuh"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// One configuration's kernel over `blocks` tiles of every member of the batch (grid z, in slices
// within its 65535 limit).
template <class S, ConfigId id, Border B>
void launch_kernel(KernelArgs<S> args, index_t blocks, index_t batch, cudaStream_t stream) {
  using Cfg = tile_of<id>;
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

template <class S, ConfigId id>
void launch_config(Border border, const KernelArgs<S>& args, index_t blocks, index_t batch, cudaStream_t stream) {
  if (border == Border::pad) launch_kernel<S, id, Border::pad>(args, blocks, batch, stream);
  else launch_kernel<S, id, Border::predicate>(args, blocks, batch, stream);
}

// The configuration chosen at run time, among every one of the table.
template <class S>
void launch(ConfigId id, Border border, const KernelArgs<S>& args, index_t blocks, index_t batch, cudaStream_t stream) {
  switch (id) {
#define RINGMM_CONFIG_CASE(name, ...) \
  case ConfigId::name: return launch_config<S, ConfigId::name>(border, args, blocks, batch, stream);
    RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_CASE)
#undef RINGMM_CONFIG_CASE
  }
}

template <class S, ConfigId id> int occupancy() {
  int blocks = 0;
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, gemm_kernel<S, tile_of<id>, Border::pad>,
                                                           tile_of<id>::threads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

// Resident blocks per SM of a configuration's pad-mode kernel (occupancy API, cached).
template <class S> int resident_blocks(ConfigId id) {
  static std::atomic<int> cache[config_count] = {};
  int blocks = cache[int(id)].load(std::memory_order_relaxed);
  if (blocks > 0) return blocks;
  switch (id) {
#define RINGMM_CONFIG_OCCUPANCY(name, ...) \
  case ConfigId::name: blocks = occupancy<S, ConfigId::name>(); break;
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
// bottom rows [m_main, m) × [0, n) and the right columns [0, m_main) × [n_main, n) run beside it:
// thin_fringe_kernel where they are at most kThinFringe lines, else predicated with
// fringe_config() (which reads the long side once per 64 lines, the thin kernel once per 8).
inline constexpr index_t kThinFringe = 2 * kThinLines;
template <class S>
void launch_split(ConfigId id, const KernelArgs<S>& args, index_t m, index_t n, index_t batch, cudaStream_t stream) {
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
    if (rows <= kThinFringe) return launch_thin_fringe<S, true>(f, rows, batch, side.get());
    if (cols <= kThinFringe) return launch_thin_fringe<S, false>(f, cols, batch, side.get());
    f.tiles_n = int(ceil_div(cols, small.bn));
    launch<S>(fringe_config(), Border::predicate, f, ceil_div(rows, small.bm) * f.tiles_n, batch, side.get());
  };
  fringe(m_main, 0, m - m_main, n);
  fringe(0, n_main, m_main, n - n_main);
  launch<S>(id, Border::pad, interior, (m_main / cfg.bm) * (n_main / cfg.bn), batch, stream);
}

// Launches the product `args` describes (args.m × args.n, padded sizes in pad mode): every tile
// of C, or for Aᵀ·A with square tiles only the lower-triangle ones (otherwise every tile runs and
// the epilogue keeps i ≥ j); with the fringe split, the interior and fringe of the m × n result.
template <class S>
void launch_product(ConfigId id, Border border, bool split, KernelArgs<S> args, index_t m, index_t n, index_t batch,
                    cudaStream_t stream) {
  const ConfigInfo& cfg = config_info(id);
  const index_t tiles_m = ceil_div(args.m, cfg.bm), tiles_n = ceil_div(args.n, cfg.bn);
  args.tiles_n = int(tiles_n);
  args.triangular = args.symmetric && cfg.bm == cfg.bn;
  if (split) launch_split<S>(id, args, m, n, batch, stream);
  else launch<S>(id, border, args, args.triangular ? tiles_m * (tiles_m + 1) / 2 : tiles_m * tiles_n, batch, stream);
}

// The step of overlapping split-K parts (split_k), in elements: a 16-byte vector (the pad route
// reads aligned operands in place) and at least a quad (the small kernel's vector loads).
template <class T> inline constexpr index_t split_quantum = vec16<T> > 4 ? vec16<T> : 4;

// How split-K cuts a K of the pair S into at most `parts` parts: overlapping members of one batch
// where ⊕ selects, else chunks and a remainder (split_k).
template <class S> KSplit split_k_of(index_t k, index_t parts) {
  return split_k(k, parts, semiring_traits<S>::selects, split_quantum<element_t<S>>);
}

// The batch members of `split` as one batched problem over p's operands (C, α and β still p's).
template <class S> detail::Problem<S> split_members(const detail::Problem<S>& p, const KSplit& split) {
  detail::Problem<S> part = p;
  part.a.cols = split.chunk, part.b.rows = split.chunk;
  part.batch = split.members, part.stride_a = split.step * p.a.cs, part.stride_b = split.step * p.b.rs;
  return part;
}

// Split-K: runs the device problem p as the K parts of `split` (split_k_of(p.k(), parts):
// overlapping members of one batch where ⊕ selects, else chunks and a remainder) into a
// workspace, each through run_part (α = 1̄, β = 0̄), then reduces them into p.c with p's α and β.
template <class S, class RunPart>
void run_split_k(const detail::Problem<S>& p, const KSplit& split, cudaStream_t stream, RunPart&& run_part) {
  using T = element_t<S>;
  const index_t m = p.m(), n = p.n();
  DeviceBuffer<T> w(std::size_t(split.launched() * m * n), stream);
  detail::Problem<S> part = split_members(p, split);
  part.alpha = S::one(), part.beta = S::zero();
  part.c = {w.get(), m, n, n, 1};
  part.stride_c = m * n;
  if (split.members > 0) run_part(part);  // K under one chunk (more parts asked than 16-long chunks) is all rest
  if (split.rest > 0) {
    const index_t done = split.members * split.step;
    part.a.p = p.a.p + done * p.a.cs, part.a.cols = split.rest;
    part.b.p = p.b.p + done * p.b.rs, part.b.rows = split.rest;
    part.c.p = w.get() + split.members * m * n;
    part.batch = 1, part.stride_a = part.stride_b = part.stride_c = 0;
    run_part(part);
  }
  const unsigned blocks = unsigned(std::min<index_t>(ceil_div(m * n, reduce_lanes), 8192));
  reduce_parts_kernel<S><<<blocks, dim3(reduce_lanes, reduce_groups), 0, stream>>>(
      p.c.p, m, n, p.c.rs, p.c.cs, w.get(), split.launched(), m * n, p.alpha, p.beta);
  check_launch("reduce_parts_kernel");
}

}  // namespace ringmm::cuda_detail
