// The host pipeline: a product whose A, B and C are all host memory runs in row panels of C, so
// that the upload of panel i+1, the product of panel i and the download of panel i−1 overlap
// (PCIe is full duplex) and the call costs about max(copy, compute) instead of their sum.
//
//   up stream:    B (whole: every panel reads it), then A's rows of each panel (and C's, when
//                 β ≠ 0̄ reads C), into compact device copies;
//   main stream:  the caller's stream: panel i's product, on device views, once its rows are up;
//   down stream:  panel i's rows of C back, once its product is done.
//
// Pageable memory goes through pinned staging slots (host_staging.hpp): the host copies the next
// chunk into a slot, on a few threads, while the copy engines move the last one (a
// cudaMemcpyAsync from pageable memory is staged by the driver on one thread, at ~6 GB/s here).
// The host reuses a slot only after the event of the copy that last used it. Pinned memory is
// copied directly.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <type_traits>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/heuristics.hpp"
#include "ringmm/cuda/host_staging.hpp"
#include "ringmm/cuda/staging.cuh"
#include "ringmm/detail/problem.hpp"

namespace ringmm::cuda_detail {

// True when every part of x is runs of contiguous elements that do not overlap (as_lines reads it
// so): always the case for MatrixView. Anything else takes the ordinary staging.
template <class T> bool whole_lines(const detail::Strided<T>& x) {
  if (as_lines(x).rows_are_lines) return true;
  return (x.rows <= 1 || x.rs == 1) && (x.cols <= 1 || x.cs >= x.rows);
}

// Compact device region ↔ host lines (as_lines), through the staging slots or, for pinned
// memory, directly. Construction forks the copy streams from `main`; finish() joins them and waits
// for `main`; the destructor, on an error, waits for the copy streams so that no copy still uses
// the staging slots or device buffers when they are released.
class HostTransfers {
 public:
  HostTransfers(PipelineResources& r, const StagingSet* staging, cudaStream_t main)
      : r_(r), staging_(staging), main_(main) {
    cuda_check(cudaEventRecord(r_.fork, main_), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(r_.up, r_.fork, 0), "cudaStreamWaitEvent");
    cuda_check(cudaStreamWaitEvent(r_.down, r_.fork, 0), "cudaStreamWaitEvent");
  }
  HostTransfers(const HostTransfers&) = delete;
  HostTransfers& operator=(const HostTransfers&) = delete;
  ~HostTransfers() {
    if (finished_) return;
    cudaStreamSynchronize(r_.up);  // errors here would only repeat the one being thrown
    cudaStreamSynchronize(r_.down);
    join();
  }

  void finish() {
    join();
    finished_ = true;
    cuda_check(cudaStreamSynchronize(main_), "gemm (cudaStreamSynchronize)");
  }

  // Host lines → dev on the up stream.
  void upload(const void* host, Lines l, std::size_t elem, void* dev, bool pinned) {
    const std::size_t len = std::size_t(l.len) * elem, pitch = std::size_t(l.pitch) * elem, lines = std::size_t(l.lines);
    if (len == 0 || lines == 0) return;
    if (pinned) {
      cuda_check(cudaMemcpy2DAsync(dev, len, host, pitch, len, lines, cudaMemcpyHostToDevice, r_.up),
                 "host pipeline upload (cudaMemcpy2DAsync)");
      return;
    }
    for_chunks(len, lines, [&](const Chunk& ch) {
      const int s = up_slot_;
      up_slot_ ^= 1;
      cuda_check(cudaEventSynchronize(r_.slot_free[s]), "host pipeline (cudaEventSynchronize)");
      copy_lines(staging_->slot[s], ch.bytes, static_cast<const char*>(host) + ch.line * pitch + ch.offset, pitch, ch.bytes,
                 ch.lines);
      cuda_check(cudaMemcpyAsync(static_cast<char*>(dev) + ch.line * len + ch.offset, staging_->slot[s],
                                 ch.lines * ch.bytes, cudaMemcpyHostToDevice, r_.up),
                 "host pipeline upload (cudaMemcpyAsync)");
      cuda_check(cudaEventRecord(r_.slot_free[s], r_.up), "cudaEventRecord");
    });
  }

  // dev → host lines on the down stream; for pageable memory, returns when the host has them.
  void download(void* host, Lines l, std::size_t elem, const void* dev, bool pinned) {
    const std::size_t len = std::size_t(l.len) * elem, pitch = std::size_t(l.pitch) * elem, lines = std::size_t(l.lines);
    if (len == 0 || lines == 0) return;
    if (pinned) {
      cuda_check(cudaMemcpy2DAsync(host, pitch, dev, len, len, lines, cudaMemcpyDeviceToHost, r_.down),
                 "host pipeline download (cudaMemcpy2DAsync)");
      return;
    }
    // Two chunks in flight: the host empties one slot while the copy engine fills the other.
    std::deque<std::pair<Chunk, int>> queued;
    auto drain = [&] {
      const auto [ch, s] = queued.front();
      queued.pop_front();
      cuda_check(cudaEventSynchronize(r_.slot_free[s]), "host pipeline (cudaEventSynchronize)");
      copy_lines(static_cast<char*>(host) + ch.line * pitch + ch.offset, pitch, staging_->slot[s], ch.bytes, ch.bytes,
                 ch.lines);
    };
    for_chunks(len, lines, [&](const Chunk& ch) {
      if (queued.size() == 2) drain();
      const int s = 2 + down_slot_;
      down_slot_ ^= 1;
      cuda_check(cudaMemcpyAsync(staging_->slot[s], static_cast<const char*>(dev) + ch.line * len + ch.offset,
                                 ch.lines * ch.bytes, cudaMemcpyDeviceToHost, r_.down),
                 "host pipeline download (cudaMemcpyAsync)");
      cuda_check(cudaEventRecord(r_.slot_free[s], r_.down), "cudaEventRecord");
      queued.emplace_back(ch, s);
    });
    while (!queued.empty()) drain();
  }

 private:
  // `lines` whole lines from `line` on, or, for lines longer than a slot, bytes [offset,
  // offset + bytes) of one line.
  struct Chunk {
    std::size_t line, lines, offset, bytes;
  };
  template <class F> void for_chunks(std::size_t len, std::size_t lines, F&& f) const {
    const std::size_t slot = staging_->bytes;
    if (len <= slot) {
      const std::size_t per = slot / len;
      for (std::size_t l = 0; l < lines; l += per) f(Chunk{l, std::min(per, lines - l), 0, len});
    } else {
      for (std::size_t l = 0; l < lines; ++l)
        for (std::size_t o = 0; o < len; o += slot) f(Chunk{l, 1, o, std::min(slot, len - o)});
    }
  }

  void join() {  // errors here are reported by the synchronisation that follows
    cudaEventRecord(r_.up_done, r_.up);
    cudaEventRecord(r_.down_done, r_.down);
    cudaStreamWaitEvent(main_, r_.up_done, 0);
    cudaStreamWaitEvent(main_, r_.down_done, 0);
  }

  PipelineResources& r_;
  const StagingSet* staging_;
  cudaStream_t main_;
  int up_slot_ = 0, down_slot_ = 0;
  bool finished_ = false;
};

// A staging set leased for one call.
class StagingLease {
 public:
  explicit StagingLease(StagingSet* set) : set_(set) {}
  StagingLease(const StagingLease&) = delete;
  StagingLease& operator=(const StagingLease&) = delete;
  ~StagingLease() { release_staging(set_); }
  const StagingSet* get() const { return set_; }

 private:
  StagingSet* set_;
};

// Rows of C per panel: about 16 panels, so that the pipeline's fill (B and the first panel's
// rows up) and drain (the last panel's rows down) are a small share, but no panel under ~100 µs of
// copies or product, whose fixed costs (launches, events, waking the copy threads, tens of µs)
// would show. Rows are a multiple of 128, the largest kernel tile, except in the last panel.
// (Panels of few tile rows still fill the GPU: split-K takes products of under half a wave.)
template <class S> index_t panel_rows(const detail::Problem<S>& p, bool reads_c) {
  if (host_pipeline_tuning().panel_rows > 0) return host_pipeline_tuning().panel_rows;
  constexpr double updates_per_s = 12e12, copy_bytes_per_s = 20e9, min_panel_s = 100e-6;
  constexpr index_t max_panels = 16, tile = 128;
  const double n = double(p.n()), k = double(p.k());
  const double row_s = std::max(n * k / updates_per_s,
                                (k + n * (reads_c ? 2 : 1)) * double(sizeof(element_t<S>)) / copy_bytes_per_s);
  const index_t panels = std::clamp<index_t>(index_t(double(p.m()) * row_s / min_panel_s), 1, max_panels);
  return round_up(ceil_div(p.m(), panels), tile);
}

// Runs p (A, B and C all host memory; values already checked) through the pipeline and returns
// true, or returns false, having done nothing, where the ordinary staging takes it: batches,
// Aᵀ·A, argmax, empty C, products whose operands are under HostPipelineTuning::min_bytes, and
// views that are not whole lines. run_panel(q) runs one panel's product q, on device views, on
// `stream`. A CUDA error mid-way is thrown as by cuda_check; the panels downloaded before it
// keep their new values.
template <class S, class RunPanel>
bool run_host_pipeline(const detail::Problem<S>& p, Residence device, cudaStream_t stream, RunPanel&& run_panel) {
  using T = element_t<S>;
  HostPipelineTuning& tuning = host_pipeline_tuning();
  const index_t m = p.m(), n = p.n(), k = p.k();
  const bool reads_c = !(p.beta == scalar_t<S>(S::zero()));
  if (device.a || device.b || device.c || p.batch != 1 || p.symmetric || p.argmax() || m == 0 || n == 0) return false;
  if (!whole_lines(p.a) || !whole_lines(p.b) || !whole_lines(p.c)) return false;
  const double bytes = double(sizeof(T)) * (double(m) * double(k) + double(k) * double(n) + double(m) * double(n) * (reads_c ? 2 : 1));
  if (bytes < double(tuning.min_bytes)) return false;

  auto pinned = [](const auto& x) {
    return x.rows == 0 || x.cols == 0 || is_pinned_host(x.p, x.p + (x.rows - 1) * x.rs + (x.cols - 1) * x.cs);
  };
  const bool pinned_a = pinned(p.a), pinned_b = pinned(p.b), pinned_c = pinned(p.c);
  const bool pageable = !(pinned_a && pinned_b && pinned_c);
  // The host reads and writes pageable memory at once; a cudaMemcpyAsync from it would first wait
  // for the stream's earlier work, and so does this.
  if (pageable) cuda_check(cudaStreamSynchronize(stream), "host pipeline (cudaStreamSynchronize)");
  PipelineResources& r = pipeline_resources();
  const StagingLease staging(pageable ? acquire_staging(std::max<std::size_t>(tuning.slot_bytes, 4096)) : nullptr);
  // Compact device copies of the whole operands (as the ordinary staging makes), panel i's rows
  // at row i·rows; at least one element, so that every view is a device pointer.
  const DeviceBuffer<T> da(std::size_t(std::max<index_t>(1, m * k)), stream);
  const DeviceBuffer<T> db(std::size_t(std::max<index_t>(1, k * n)), stream);
  const DeviceBuffer<T> dc(std::size_t(std::max<index_t>(1, m * n)), stream);
  HostTransfers transfers(r, staging.get(), stream);
  ++tuning.runs;

  // The compact device view of a host view's region at `dev`, laid out as its lines.
  auto device_view = [](auto* dev, const auto& host) {
    const Lines l = as_lines(host);
    return detail::Strided<std::remove_pointer_t<decltype(dev)>>{dev, host.rows, host.cols, l.rows_are_lines ? l.len : 1,
                                                                 l.rows_are_lines ? 1 : l.len};
  };
  auto rows_of = [](const auto& x, index_t i0, index_t h) {
    return std::remove_cvref_t<decltype(x)>{x.p + i0 * x.rs, h, x.cols, x.rs, x.cs};
  };

  const index_t rows = panel_rows<S>(p, reads_c), panels = ceil_div(m, rows);
  auto first_row = [&](index_t i) { return i * rows; };
  auto height = [&](index_t i) { return std::min(rows, m - i * rows); };
  // Panel i's rows of A (and of C, when read) up; the main stream's next product waits for them.
  auto upload_panel = [&](index_t i) {
    const detail::Strided<const T> a_host = rows_of(p.a, first_row(i), height(i));
    transfers.upload(a_host.p, as_lines(a_host), sizeof(T), da.get() + first_row(i) * k, pinned_a);
    if (reads_c) {
      const detail::Strided<T> c_host = rows_of(p.c, first_row(i), height(i));
      transfers.upload(c_host.p, as_lines(c_host), sizeof(T), dc.get() + first_row(i) * n, pinned_c);
    }
    cuda_check(cudaEventRecord(r.uploaded, r.up), "cudaEventRecord");
    cuda_check(cudaStreamWaitEvent(stream, r.uploaded, 0), "cudaStreamWaitEvent");
  };
  const detail::Strided<const T> b_dev = device_view(static_cast<const T*>(db.get()), p.b);
  auto multiply_panel = [&](index_t i) {
    detail::Problem<S> q = p;
    q.a = device_view(static_cast<const T*>(da.get() + first_row(i) * k), rows_of(p.a, first_row(i), height(i)));
    q.b = b_dev;
    q.c = device_view(dc.get() + first_row(i) * n, rows_of(p.c, first_row(i), height(i)));
    q.stride_a = q.stride_b = q.stride_c = 0;
    run_panel(q);
    cuda_check(cudaEventRecord(r.computed[i % 2], stream), "cudaEventRecord");
  };
  auto download_panel = [&](index_t i) {
    const detail::Strided<T> c_host = rows_of(p.c, first_row(i), height(i));
    cuda_check(cudaStreamWaitEvent(r.down, r.computed[i % 2], 0), "cudaStreamWaitEvent");
    transfers.download(c_host.p, as_lines(c_host), sizeof(T), dc.get() + first_row(i) * n, pinned_c);
  };

  // The product of panel i is queued before the host stages panel i+1 and empties panel i−1, so
  // the GPU has the next product in hand while the host copies.
  transfers.upload(p.b.p, as_lines(p.b), sizeof(T), db.get(), pinned_b);
  upload_panel(0);
  for (index_t i = 0; i < panels; ++i) {
    multiply_panel(i);
    if (i + 1 < panels) upload_panel(i + 1);
    if (i > 0) download_panel(i - 1);
  }
  download_panel(panels - 1);
  transfers.finish();
  return true;
}

}  // namespace ringmm::cuda_detail
