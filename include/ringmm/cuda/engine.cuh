// The CUDA backend's driver: detail::cuda_run<S>, which gemm<S>, gemm_batched<S> and syrk<S> call
// on Backend::cuda. One call, in the order of cuda_run_impl:
//   choose  the configuration (Context::cuda_config, else the wave model), the border mode
//           (Context::border, else the copy-cost model) and the split of K (Context::cuda_split_k,
//           else heuristics.hpp), or, where the caller named none, `ringmm tune`'s cache entry for
//           the call's shape class (ringmm/tune.hpp);
//   check   refuse out-of-range inputs before any write: host operands are scanned on the host,
//           device operands by scan_kernel, for which device-pointer calls wait;
//   pipe    A, B and C all host memory: row panels through the host pipeline (host_pipeline.cuh),
//           each panel's product by the routes below;
//   stage   copy host operands into compact device buffers; device pointers are used in place;
//   route   log-plus to the shift trick where it pays (log_plus.cuh); or-and to the tensor cores
//           (or_and_mma.cuh); plus-times f32/f64 to cuBLAS
//           where Context::vendor_blas allows, products whose output
//           tiles fill under half a wave to split-K, products with a small M or N to the small
//           kernel (small_kernel.cuh), everything else to the large kernels;
//   pad     pad mode: pack operands that are not already tile-multiple k-major buffers; C is
//           written in place unless M or N is below a tile (then a padded C is copied out), the
//           ragged last block row and column running as a predicated fringe beside the interior;
//           predicate mode reads the strided views directly;
//   launch  the kernel over the tiles (launch.cuh);
//   finish  download a host C; wait for the stream when any operand is host memory.
// Calls on device pointers are otherwise asynchronous on ctx.cuda_stream.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "ringmm/context.hpp"
#include "ringmm/cuda/argmax.cuh"
#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cuda/gemm_kernel.cuh"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/cuda/host_pipeline.cuh"
#include "ringmm/cuda/launch.cuh"
#include "ringmm/cuda/log_plus.cuh"
#include "ringmm/cuda/or_and_mma.cuh"
#include "ringmm/cuda/small_kernel.cuh"
#include "ringmm/cuda/staging.cuh"
#include "ringmm/cuda/support_kernels.cuh"
#include "ringmm/cuda/vendor_blas.hpp"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// ---- choose ---------------------------------------------------------------------------------

// How a call was entered: by the caller; as a row panel of the host pipeline (device views whose
// values the outer call checked; every route); as a part of split-K (checked device views; the
// kernels only).
enum class Entry { caller, panel, split_part };

// The configuration the caller named, else the heuristic's for this device.
template <class S> ConfigId config_for(const Context& ctx, Border border, const Workload& w) {
  if (!ctx.cuda_config.empty()) return find_config(ctx.cuda_config);
  return choose_config(w, border, multiprocessor_count(), [](ConfigId id) { return resident_blocks<S>(id); });
}

// The small kernel's tile edge for this call, 0 for the large kernels: the one the caller named,
// else the heuristic's where the caller left the kernels to the engine.
inline int small_tile_for(const Context& ctx, const Workload& w, Border border) {
  if (const int named = small_config_tile(ctx.cuda_config)) return named;
  return ctx.names_cuda_kernels() ? 0 : small_tile(w, border);
}

// Split-K parts: the caller's Context::cuda_split_k, refused where run_split_k cannot cut K (a
// batch, Aᵀ·A) or where it asks for more parts than K has; else the heuristic's where the caller
// left the kernels to the engine, sized for the kernel that runs them (small: its tile edge).
template <class S> index_t split_k_parts(const Context& ctx, ConfigId id, int small, const Workload& w) {
  if (ctx.cuda_split_k < 0)
    throw Error(Errc::invalid_argument, "cuda_split_k",
                "must be 0 (the engine's choice) or a number of parts >= 1; got " + std::to_string(ctx.cuda_split_k));
  if (ctx.cuda_split_k > 1 && (w.batch != 1 || w.symmetric))
    throw Error(Errc::invalid_argument, "cuda_split_k",
                "splits the K of a single product; this call is " +
                    (w.symmetric ? std::string("A^T A (syrk)") : "a batch of " + std::to_string(w.batch)));
  if (ctx.cuda_split_k > 1 && ctx.cuda_split_k > w.k)
    throw Error(Errc::invalid_argument, "cuda_split_k",
                std::to_string(ctx.cuda_split_k) + " parts of a K of " + std::to_string(w.k));
  if (ctx.cuda_split_k > 0) return ctx.cuda_split_k;
  if (ctx.names_cuda_kernels()) return 1;
  if (small) return k_parts_small(w, small, multiprocessor_count(), small == 64 && small_clusters_run<S>());
  return k_parts(w, config_info(id), multiprocessor_count(), resident_blocks<S>(id));
}

// The tune cache is keyed by the registry's names, so it knows the built-in pairs only.
template <class S> inline constexpr bool is_builtin_pair = false;
#define RINGMM_BUILTIN(semiring, dtype, S) template <> inline constexpr bool is_builtin_pair<::ringmm::S> = true;
#include "ringmm/builtins.def"

// `ringmm tune`'s entry for this call, where the caller left the kernels to the engine; null
// otherwise (then the heuristics choose).
template <class S> const TunedKernels* tuned_for(const Context& ctx, const Workload& w) {
  if constexpr (is_builtin_pair<S>) {
    if (ctx.tune_cache && !ctx.names_cuda_kernels())
      return tuned_kernels(S::kind, dtype_of<element_t<S>>::value, w.m, w.n, w.k, w.batch, w.symmetric);
  }
  return nullptr;
}

// The kernels of one call: the caller's, the tune cache's, or the heuristics'. A part of split-K
// runs what the whole call's tuned choice says (`tuned_parent`), else chooses by its own shape,
// and is never split again.
template <class S>
Choice choose(const Context& ctx, const Workload& w, Entry entry, const Choice* tuned_parent = nullptr) {
  if (tuned_parent) {
    Choice part = *tuned_parent;
    part.parts = 1;
    return part;
  }
  const TunedKernels* tuned = entry == Entry::split_part ? nullptr : tuned_for<S>(ctx, w);
  if (tuned && !tuned->heuristic) {
    Choice c = tuned->choice;
    // A hand-edited cache may split what cannot be split: an empty K, batches, Aᵀ·A.
    if (w.k == 0 || w.batch != 1 || w.symmetric) c.parts = 1;
    return c;
  }
  Choice c;
  c.border = choose_border(ctx.border, w);
  c.small = small_tile_for(ctx, w, c.border);
  // A named small configuration is not in the table (and turns split-K off, so id is not read).
  c.id = small_config_tile(ctx.cuda_config) ? ConfigId{} : config_for<S>(ctx, c.border, w);
  c.parts = entry == Entry::split_part ? 1 : split_k_parts<S>(ctx, c.id, c.small, w);
  c.source = ctx.names_cuda_kernels() ? ChoiceSource::caller
             : tuned                    ? ChoiceSource::tune_cache_heuristic
                                        : ChoiceSource::heuristic;
  return c;
}

// ---- check ----------------------------------------------------------------------------------

// Whether `stream` is capturing a CUDA graph, where a call can neither wait for the device nor
// copy from pageable memory. A query the runtime refuses (the legacy stream beside a capturing
// one) counts as capturing.
inline bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// A captured call takes device operands only: host ones are copied and waited for.
inline void refuse_host_operands_in_capture(Residence device, cudaStream_t stream, bool k_star_on_device = true) {
  if ((device.all() && k_star_on_device) || !capturing(stream)) return;
  const char* name = !device.a ? "A" : !device.b ? "B" : !device.c ? "C" : "K*";
  throw Error(Errc::unsupported, name,
              "is host memory, and the stream is capturing a CUDA graph: a captured call takes device operands "
              "(host ones are copied through staging buffers and waited for)");
}

// The input check (ringmm/detail/input_check.hpp), unless the caller trusts its inputs. Host
// operands are scanned on the host, device operands by scan_kernel, whose verdict the host waits
// for; throws Error(value_out_of_range) before any write.
template <class S>
void check_values(const Context& ctx, const detail::Problem<S>& p, Residence device, cudaStream_t stream) {
  using T = element_t<S>;
  if constexpr (detail::scans_inputs<S>) {
    if (ctx.trust_inputs) return;
    if ((device.a || device.b || device.c) && capturing(stream))
      throw Error(Errc::unsupported, "trust_inputs",
                  detail::semiring_name<S>() + " checks its inputs on the device and waits for the verdict, which a "
                  "stream capturing a CUDA graph cannot do: set Context::trust_inputs for data known to be in its "
                  "domain (" + semiring_traits<S>::input_domain() + ")");
    detail::check_scalars<S>(p.alpha, p.beta);
    const bool reads_c = !(p.beta == scalar_t<S>(S::zero()));
    const bool on_device[3] = {device.a, device.b, device.c};
    detail::CheckedOperand<S> ops[3] = {{"A", "", p.a, p.stride_a, p.batch},
                                        {"B", "", p.b, p.stride_b, p.batch},
                                        {"C", "", {p.c.p, p.c.rows, p.c.cols, p.c.rs, p.c.cs}, p.stride_c, p.batch, p.symmetric}};
    const int operands = reads_c ? 3 : 2;
    // Device operands in one launch of scan_kernel; host ones on the host meanwhile.
    ScannedViews<T> views;
    int slot_of[3] = {-1, -1, -1}, count = 0;
    bool on_host[3] = {false, false, false};
    for (int o = 0; o < operands; ++o) {
      const detail::CheckedOperand<S>& x = ops[o];
      const index_t members = x.stride == 0 ? 1 : x.members;
      if (x.view.rows * x.view.cols * members == 0) continue;
      if (!on_device[o]) {
        on_host[o] = true;
        continue;
      }
      slot_of[o] = count;
      views.view[count++] = {x.view.p, x.view.rows, x.view.cols, x.view.rs, x.view.cs, x.stride, members, x.lower_only};
    }
    const auto found = scan_on_device<S>(views, count, stream, [&] {
      for (int o = 0; o < operands; ++o)
        if (on_host[o]) detail::scan_on_host(ops[o]);
    });
    for (int o = 0; o < operands; ++o)
      if (slot_of[o] >= 0) ops[o].scan = found[std::size_t(slot_of[o])];
    // A refused value is fetched from wherever its operand lives, for the message.
    auto read = [](const T* address) {
      T value{};
      cuda_check(cudaMemcpy(&value, address, sizeof(T), cudaMemcpyDefault), "cudaMemcpy");
      return value;
    };
    detail::check_scans(ops, std::size_t(operands), p.alpha, p.beta, p.k(), read);
  }
}

// ---- route ----------------------------------------------------------------------------------

// cuBLAS takes plus-times f32/f64 unless the caller asked for ringmm's kernels (vendor_blas off,
// or a configuration, border policy or split named).
template <class S> bool takes_vendor_blas(const Context& ctx) {
  using T = element_t<S>;
  return std::is_same_v<S, PlusTimes<T>> && std::is_floating_point_v<T> && ctx.vendor_blas && !ctx.names_cuda_kernels();
}

// Runs p on cuBLAS where it takes it; returns false, having done nothing, where it does not.
template <class S>
bool run_on_vendor_blas(const Context& ctx, const detail::Problem<S>& p, const Staged<S>& s, cudaStream_t stream) {
  using T = element_t<S>;
  if constexpr (std::is_same_v<S, PlusTimes<T>> && std::is_floating_point_v<T>) {
    if (!takes_vendor_blas<S>(ctx)) return false;
    detail::Problem<S> d = s.on_device(p);
    // Aᵀ·A: B is A's transpose; host operands were staged twice, so both name A's copy.
    if (p.symmetric)
      d.b = {s.a.view.p, s.a.view.cols, s.a.view.rows, s.a.view.cs, s.a.view.rs}, d.stride_b = s.a.stride;
    return vendor_gemm(d, stream);
  } else {
    return false;
  }
}

// ---- pad or predicate -----------------------------------------------------------------------

template <class S> KernelArgs<S> kernel_args(const detail::Problem<S>& p) {
  KernelArgs<S> args{};
  args.alpha = p.alpha, args.beta = p.beta, args.symmetric = p.symmetric;
  return args;
}

// Pad mode: A and B as tile-multiple buffers, A k-major (a_rs = 1) and B n-contiguous (b_cs = 1),
// 16-byte aligned, filled with 0̄ past their extent; staged operands already in that form are used
// as they are, the others are replaced by packed copies. C is written in place when M and N are
// tile multiples or the fringe is split off; otherwise the kernel writes c_padded.
template <class S>
KernelArgs<S> pad_operands(Staged<S>& s, const detail::Problem<S>& p, const ConfigInfo& cfg, bool split,
                           DeviceBuffer<element_t<S>>& c_padded, cudaStream_t stream) {
  using T = element_t<S>;
  const index_t m = p.m(), n = p.n(), k = p.k(), batch = p.batch;
  // A symmetric product mirrors inside C's buffer, so its padded C stays square.
  const index_t tile_m = p.symmetric ? std::max(cfg.bm, cfg.bn) : cfg.bm, tile_n = p.symmetric ? tile_m : cfg.bn;
  const index_t mp = round_up(m, tile_m), np = round_up(n, tile_n), kp = round_up(k, cfg.bk);
  auto aligned = [](const void* ptr, index_t ld, index_t stride) {
    return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0 && ld % vec16<T> == 0 && stride % vec16<T> == 0;
  };
  auto members = [&](const DeviceOperand<const T>& x) { return (x.stride == 0 || batch == 1) ? 1 : batch; };
  if (!(s.a.view.rs == 1 && m == mp && k == kp && (k == 0 || aligned(s.a.view.p, s.a.view.cs, s.a.stride)))) {
    const index_t count = members(s.a);
    DeviceOperand<const T> packed;
    packed.storage = DeviceBuffer<T>(std::size_t(mp * kp * count), stream);
    pack(packed.storage.get(), mp, mp, kp, mp * kp, s.a.view, s.a.stride, count, S::zero(), stream);
    packed.view = {packed.storage.get(), mp, kp, 1, mp};
    packed.stride = count == 1 ? 0 : mp * kp;
    s.a = std::move(packed);
  }
  if (!(s.b.view.cs == 1 && n == np && k == kp && (k == 0 || aligned(s.b.view.p, s.b.view.rs, s.b.stride)))) {
    const index_t count = members(s.b);
    const detail::Strided<const T> bt{s.b.view.p, s.b.view.cols, s.b.view.rows, s.b.view.cs, s.b.view.rs};  // Bᵀ
    DeviceOperand<const T> packed;
    packed.storage = DeviceBuffer<T>(std::size_t(np * kp * count), stream);
    pack(packed.storage.get(), np, np, kp, np * kp, bt, s.b.stride, count, S::zero(), stream);
    packed.view = {packed.storage.get(), kp, np, np, 1};
    packed.stride = count == 1 ? 0 : np * kp;
    s.b = std::move(packed);
  }
  KernelArgs<S> args = kernel_args(p);
  args.a = s.a.view.p, args.a_rs = 1, args.a_cs = s.a.view.cs, args.stride_a = s.a.stride;
  args.b = s.b.view.p, args.b_rs = s.b.view.rs, args.b_cs = 1, args.stride_b = s.b.stride;
  if ((m == mp && n == np) || split) {
    args.c = s.c.view.p, args.c_rs = s.c.view.rs, args.c_cs = s.c.view.cs, args.stride_c = s.c.stride;
  } else {
    c_padded = DeviceBuffer<T>(std::size_t(mp * np * batch), stream);
    if (!(p.beta == scalar_t<S>(S::zero()))) {
      const detail::Strided<const T> ct{s.c.view.p, n, m, s.c.view.cs, s.c.view.rs};  // Cᵀ: rows of C become contiguous
      pack(c_padded.get(), np, np, mp, mp * np, ct, s.c.stride, batch, S::zero(), stream);
    }
    args.c = c_padded.get(), args.c_rs = np, args.c_cs = 1, args.stride_c = mp * np;
  }
  args.m = mp, args.n = np, args.k = kp;
  return args;
}

// Predicate mode: the kernel reads the strided views with bounds checks.
template <class S> KernelArgs<S> predicated_operands(const Staged<S>& s, const detail::Problem<S>& p) {
  const auto &a = s.a.view, &b = s.b.view;
  const auto& c = s.c.view;
  KernelArgs<S> args = kernel_args(p);
  args.a = a.p, args.a_rs = a.rs, args.a_cs = a.cs, args.stride_a = s.a.stride;
  args.b = b.p, args.b_rs = b.rs, args.b_cs = b.cs, args.stride_b = s.b.stride;
  args.c = c.p, args.c_rs = c.rs, args.c_cs = c.cs, args.stride_c = s.c.stride;
  args.m = p.m(), args.n = p.n(), args.k = p.k();
  args.a_m_fast = a.rs == 1 && a.cs != 1;
  args.b_n_fast = b.cs == 1 && b.rs != 1;
  return args;
}

// The kernel route: pad or predicate, launch, and copy a padded C out.
template <class S>
void run_kernels(ConfigId id, Border border, Staged<S>& s, const detail::Problem<S>& p, cudaStream_t stream) {
  const bool split =
      splits_fringe(config_info(id), border, workload_of(p), index_t(multiprocessor_count()) * resident_blocks<S>(id));
  DeviceBuffer<unsigned> known;
  const unsigned* sign_known_word = scan_signs<S>(s.on_device(p), known, stream);
  DeviceBuffer<element_t<S>> c_padded;
  KernelArgs<S> args = border == Border::pad ? pad_operands<S>(s, p, config_info(id), split, c_padded, stream)
                                             : predicated_operands<S>(s, p);
  args.sign_known = sign_known_word;
  launch_product<S>(id, border, split, args, p.m(), p.n(), p.batch, stream);
  if (c_padded.get()) unpack(s.c, p.m(), p.n(), c_padded.get(), args.n, args.stride_c, p.batch, stream);
}

// ---- finish ---------------------------------------------------------------------------------

// A host C comes back, and a call on host memory returns when done.
template <class S> void finish(const detail::Problem<S>& p, const Staged<S>& s, Residence device, cudaStream_t stream) {
  if (!device.c) download(p.c, p.stride_c, s.c.view, s.c.stride, p.batch, stream);
  if (!device.all()) cuda_check(cudaStreamSynchronize(stream), "gemm (cudaStreamSynchronize)");
}

// Whether split-K's parts meet in thread block clusters (small_kernel.cuh: reduce_cluster_parts)
// rather than in a workspace reduced by a second launch: where every part is a member of one batch
// (no remainder), at most max_cluster_parts of them, the parts take the T = 64 small kernel
// (`part`: their choice), and the GPU runs its clusters.
template <class S> bool split_in_clusters(const KSplit& split, const Choice& part) {
  return split.rest == 0 && split.members > 1 && split.members <= max_cluster_parts && part.small == 64 &&
         small_clusters_run<S>();
}

// How a call split into `parts` runs: K's cut (split_k_of), the choice of its parts (those of the
// batch of members; a tuned whole call's parts run its kernels), and where they meet.
struct SplitPlan {
  KSplit split;
  Choice part;
  bool clusters = false;  // split_in_clusters, else a workspace and reduce_parts_kernel
};
template <class S>
SplitPlan plan_split(const Context& ctx, const Workload& whole, index_t parts, const Choice* tuned_whole) {
  SplitPlan plan;
  plan.split = split_k_of<S>(whole.k, parts);
  Workload members = whole;
  members.k = plan.split.chunk, members.batch = std::max<index_t>(1, plan.split.members);
  plan.part = choose<S>(ctx, members, Entry::split_part, tuned_whole);
  plan.clusters = split_in_clusters<S>(plan.split, plan.part);
  return plan;
}

// ---- one call -------------------------------------------------------------------------------

template <class S>
void cuda_run_impl(const Context& ctx, const detail::Problem<S>& p, Entry entry = Entry::caller,
                   const Choice* tuned_parent = nullptr) {
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
  const Choice choice = choose<S>(ctx, workload_of(p), entry, tuned_parent);
  // Panels and parts are device views by construction, some in workspace that a CUDA graph's
  // capture has not mapped yet (which the pointer query would call host memory); so are the
  // operands a caller marks (Problem::a_on_device, ...).
  const Residence device = entry != Entry::caller
                               ? Residence{true, true, true}
                               : Residence{p.a_on_device || is_device_pointer(p.a.p), p.b_on_device || is_device_pointer(p.b.p),
                                           p.c_on_device || is_device_pointer(p.c.p)};

  if (entry == Entry::caller) {
    refuse_host_operands_in_capture(device, stream);
    check_values<S>(ctx, p, device, stream);
    if (run_host_pipeline<S>(p, device, stream,
                             [&](const detail::Problem<S>& panel) { cuda_run_impl<S>(ctx, panel, Entry::panel); }))
      return;
  }
  Staged<S> staged = stage<S>(p, device, stream);
  if (entry != Entry::split_part && (run_log_plus_shift<S>(ctx, staged.on_device(p), stream) ||
                                     run_or_and_mma<S>(ctx, staged.on_device(p), stream))) {
    finish<S>(p, staged, device, stream);
    return;
  }
  if (!run_on_vendor_blas<S>(ctx, p, staged, stream)) {
    const Choice* tuned = choice.source == ChoiceSource::tune_cache ? &choice : nullptr;
    if (choice.parts > 1) {
      const detail::Problem<S> on_device = staged.on_device(p);
      const SplitPlan plan = plan_split<S>(ctx, workload_of(on_device), choice.parts, tuned);
      if (plan.clusters) {
        detail::Problem<S> members = split_members(on_device, plan.split);
        members.stride_c = 0;  // every part reduces into the one C
        run_small<S>(64, members, stream, int(plan.split.members));
      } else {
        run_split_k<S>(on_device, plan.split, stream,
                       [&](const detail::Problem<S>& part) { cuda_run_impl<S>(ctx, part, Entry::split_part, tuned); });
      }
    } else if (choice.small)
      run_small<S>(choice.small, staged.on_device(p), stream);
    else
      run_kernels<S>(choice.id, choice.border, staged, p, stream);
  }
  finish<S>(p, staged, device, stream);
}

// ---- describe -------------------------------------------------------------------------------

// What cuda_run_impl runs for p on device operands (p's pointers are not read): the route, the
// choice with the number of K parts that run (split_k's, which can be fewer than asked: K = 40 of
// a sum in 8 parts runs 3 chunks of 16), and a split's parts' choice (those of its batch).
template <class S> ChoiceReport describe(const Context& ctx, const detail::Problem<S>& p) {
  ChoiceReport r;
  const Workload w = workload_of(p);
  r.whole = choose<S>(ctx, w, Entry::caller);
  if (takes_vendor_blas<S>(ctx)) r.route = EngineRoute::vendor_blas;
  else if (takes_or_and_mma<S>(ctx, p)) r.route = EngineRoute::or_and_mma;
  else if (takes_log_plus_shift<S>(ctx, p)) r.route = EngineRoute::log_plus_shift;
  if (r.route != EngineRoute::kernels) r.whole.parts = 1;  // the other routes never cut K
  r.part = r.whole;
  if (r.whole.parts > 1) {
    const SplitPlan plan =
        plan_split<S>(ctx, w, r.whole.parts, r.whole.source == ChoiceSource::tune_cache ? &r.whole : nullptr);
    r.whole.parts = plan.split.launched();
    r.part = plan.part, r.clusters = plan.clusters;
  }
  return r;
}

}  // namespace ringmm::cuda_detail

namespace ringmm::detail {
template <class S> void cuda_run(const Context& ctx, const Problem<S>& p) {
  static_assert(16 % sizeof(element_t<S>) == 0, "the CUDA kernels load 16-byte vectors of elements");
  cuda_detail::cuda_run_impl<S>(ctx, p);
}

// Argmax products (ringmm/cuda/argmax.cuh); instantiated for every pair, refused at run time
// for those whose ⊕ does not select (gemm_argmax refuses them at compile time already).
template <class S> void cuda_run_argmax(const Context& ctx, const Problem<S>& p) {
  if constexpr (!semiring_traits<S>::selects) {
    throw argmax_needs_selection();
  } else {
    const cudaStream_t stream = static_cast<cudaStream_t>(ctx.cuda_stream);
    using cuda_detail::is_device_pointer;
    const cuda_detail::Residence device{is_device_pointer(p.a.p), is_device_pointer(p.b.p), is_device_pointer(p.c.p)};
    const bool k_on_device = is_device_pointer(p.k_star.p ? static_cast<const void*>(p.k_star.p) : p.k_star_wide.p);
    cuda_detail::refuse_host_operands_in_capture(device, stream, k_on_device);
    cuda_detail::check_values<S>(ctx, p, device, stream);
    cuda_detail::run_argmax<S>(ctx, p, device);
  }
}
}  // namespace ringmm::detail

// Instantiates the backend (and every configuration's kernels) for one semiring: the library's
// generated units do this for each built-in pair (after ringmm/cuda/gemm.cuh declared them extern).
#define RINGMM_CUDA_INSTANTIATE(S)                                                                     \
  template void ringmm::detail::cuda_run<S>(const ringmm::Context&, const ringmm::detail::Problem<S>&); \
  template void ringmm::detail::cuda_run_argmax<S>(const ringmm::Context&, const ringmm::detail::Problem<S>&); \
  template ringmm::cuda_detail::ChoiceReport ringmm::cuda_detail::describe<S>(const ringmm::Context&,       \
                                                                              const ringmm::detail::Problem<S>&);
