// The host side of the host pipeline (host_pipeline.cuh), compiled once into libringmm
// (src/cuda/host_staging.cpp): its tuning, pinned staging slots, a few threads that copy between
// the caller's pageable memory and those slots, and the pipeline's streams and events.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>

#include "ringmm/types.hpp"

namespace ringmm::cuda_detail {

// When and how host → host products are pipelined. Process-wide and not synchronised: tests lower
// the thresholds (before any call, from one thread) so that small shapes take the pipeline.
struct HostPipelineTuning {
  // Host operands of at least this many bytes (A, B, C, and C again where β ≠ 0̄ reads it) are
  // pipelined: from about a millisecond of pageable copies (1024³ f32, 12 MiB: 1.5 ms with
  // transfers against 0.15 ms for the product on the H100), fixed costs are a small share.
  std::size_t min_bytes = std::size_t(8) << 20;
  index_t panel_rows = 0;                          // rows of C per panel; 0: chosen per call
  std::size_t slot_bytes = std::size_t(8) << 20;   // each pinned staging slot (at least 4 KiB)
  std::atomic<unsigned long> runs{0};              // pipelined calls so far, for tests
};
HostPipelineTuning& host_pipeline_tuning();

// True when the bytes [first, last] are page-locked host memory (cudaMallocHost or
// cudaHostRegister), which the copy engines read and write directly.
bool is_pinned_host(const void* first, const void* last);

// Copies `lines` runs of `len` bytes, `src_pitch` apart, to runs `dst_pitch` apart, split over a
// few threads (one memcpy thread reaches ~10 GB/s; the copy engines ~50). Blocks until done.
void copy_lines(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t len,
                std::size_t lines);

// Copies `lines` runs of `len` bytes between pageable host memory (runs `host_pitch` bytes apart)
// and device memory (`device_pitch` apart) through pinned staging slots, the host threads filling
// (or emptying) one slot while the copy engine moves another: a cudaMemcpy from pageable memory
// moves 2–3 GB/s, this about the host's copy bandwidth. Waits for `stream` first (the host side
// moves at once) and returns when done. More than one line needs pitches of at least `len`
// (Errc::invalid_argument). Pinned host memory needs none of this: copy it directly.
void upload_lines(void* device, std::size_t device_pitch, const void* host, std::size_t host_pitch, std::size_t len,
                  std::size_t lines, cudaStream_t stream);
void download_lines(void* host, std::size_t host_pitch, const void* device, std::size_t device_pitch, std::size_t len,
                    std::size_t lines, cudaStream_t stream);

// Pinned staging slots: two for uploads and two for downloads, each of `bytes`, leased for one
// call (kept for the next one; a second concurrent call gets a set of its own).
constexpr int staging_slots = 4;
struct StagingSet {
  std::size_t bytes = 0;
  void* slot[staging_slots] = {};
};
StagingSet* acquire_staging(std::size_t bytes);
void release_staging(StagingSet* set);

// The pipeline's two copy streams and its events, made once per host thread and device, like
// SideStream's (launch.cuh). `slot_free[s]` follows the last copy through staging slot s.
struct PipelineResources {
  cudaStream_t up = nullptr, down = nullptr;
  cudaEvent_t fork = nullptr, uploaded = nullptr, computed[2] = {}, up_done = nullptr, down_done = nullptr;
  cudaEvent_t slot_free[staging_slots] = {};
};
PipelineResources& pipeline_resources();

}  // namespace ringmm::cuda_detail

// The staged copies, as API for code beside ringmm's calls (ringmm's tools).
namespace ringmm::cuda {
using cuda_detail::download_lines;
using cuda_detail::upload_lines;
}  // namespace ringmm::cuda
