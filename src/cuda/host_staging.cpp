// The host side of the host pipeline (ringmm/cuda/host_staging.hpp).
#include "ringmm/cuda/host_staging.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ringmm/cuda/check.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

HostPipelineTuning& host_pipeline_tuning() {
  static HostPipelineTuning tuning;
  return tuning;
}

bool is_pinned_host(const void* first, const void* last) {
  auto pinned = [](const void* p) {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      cudaGetLastError();
      return false;
    }
    return attr.type == cudaMemoryTypeHost;
  };
  return pinned(first) && pinned(last);
}

namespace {

// Threads that run the parts of one job at a time, the caller's thread taking part 0. Made on
// first use and never stopped (threads waiting at exit are harmless; joining them in a static
// destructor is not, when a caller's thread still uses them).
class CopyThreads {
 public:
  CopyThreads() {
    // Eight threads reach most of a socket's memory bandwidth for copies.
    const int count = int(std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
    for (int i = 1; i < count; ++i) std::thread([this, i] { work(i); }).detach();
    count_ = count;
  }
  int count() const { return count_; }

  void run(int parts, const std::function<void(int)>& part) {
    const std::lock_guard<std::mutex> one_job(job_);
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      part_ = &part, parts_ = parts, pending_ = parts - 1;
      ++generation_;
    }
    start_.notify_all();
    part(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void work(int index) {
    unsigned long seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      start_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (index >= parts_) continue;
      const std::function<void(int)>* part = part_;
      lock.unlock();
      (*part)(index);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  int count_ = 1;
  std::mutex job_, mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int)>* part_ = nullptr;
  int parts_ = 0, pending_ = 0;
  unsigned long generation_ = 0;
};

CopyThreads& copy_threads() {
  static CopyThreads* threads = new CopyThreads;  // never destroyed: see CopyThreads
  return *threads;
}

}  // namespace

void copy_lines(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t len,
                std::size_t lines) {
  const std::size_t total = len * lines;
  if (total == 0) return;
  if (lines > 1 && dst_pitch == len && src_pitch == len) len = total, lines = 1, dst_pitch = src_pitch = total;
  auto* const d = static_cast<char*>(dst);
  const auto* const s = static_cast<const char*>(src);
  // Part p copies bytes [total·p/parts, total·(p+1)/parts) of the lines laid end to end; parts of
  // at least 512 KiB, so that waking a thread (~10 µs) costs under a tenth of its copy.
  const int parts = int(std::min<std::size_t>(std::size_t(copy_threads().count()), std::max<std::size_t>(1, total >> 19)));
  const std::function<void(int)> part = [&](int p) {
    const auto bound = [&](int q) { return q == parts ? total : total / std::size_t(parts) * std::size_t(q) / 64 * 64; };
    std::size_t at = bound(p);
    const std::size_t end = bound(p + 1);
    while (at < end) {
      const std::size_t line = at / len, offset = at % len, bytes = std::min(len - offset, end - at);
      std::memcpy(d + line * dst_pitch + offset, s + line * src_pitch + offset, bytes);
      at += bytes;
    }
  };
  if (parts == 1) part(0);
  else copy_threads().run(parts, part);
}

namespace {
std::mutex staging_mutex;
std::vector<StagingSet*> free_staging;
}  // namespace

StagingSet* acquire_staging(std::size_t bytes) {
  {
    const std::lock_guard<std::mutex> lock(staging_mutex);
    for (std::size_t i = 0; i < free_staging.size(); ++i) {
      StagingSet* set = free_staging[i];
      if (set->bytes != bytes) continue;
      free_staging.erase(free_staging.begin() + std::ptrdiff_t(i));
      return set;
    }
  }
  auto* set = new StagingSet;
  void* block = nullptr;
  // Portable: the slots are page-locked for every device's context, not only the current one.
  const cudaError_t err = cudaHostAlloc(&block, bytes * staging_slots, cudaHostAllocPortable);
  if (err != cudaSuccess) {
    delete set;
    cuda_check(err, "cudaHostAlloc (host pipeline staging)");
  }
  set->bytes = bytes;
  for (int s = 0; s < staging_slots; ++s) set->slot[s] = static_cast<char*>(block) + std::size_t(s) * bytes;
  return set;
}

void release_staging(StagingSet* set) {
  if (!set) return;
  const std::lock_guard<std::mutex> lock(staging_mutex);
  // A set of another size (the tuning changed) is not kept.
  if (!free_staging.empty() && free_staging.front()->bytes != set->bytes) {
    for (StagingSet* old : free_staging) cudaFreeHost(old->slot[0]), delete old;
    free_staging.clear();
  }
  free_staging.push_back(set);
}

namespace {

// Runs of a copy grouped into chunks that fit one staging slot; a run longer than a slot is cut
// into pieces of at most a slot.
struct Chunks {
  std::size_t len, lines, slot;
  std::size_t pieces_per_line() const { return (len + slot - 1) / slot; }
  std::size_t lines_per_chunk() const { return len >= slot ? 1 : std::min(lines, slot / len); }
  std::size_t count() const {
    return len >= slot ? lines * pieces_per_line() : (lines + lines_per_chunk() - 1) / lines_per_chunk();
  }
  // Chunk c: its first line, how many lines, and the byte range [offset, offset + bytes) of each.
  struct Part {
    std::size_t line, lines, offset, bytes;
  };
  Part part(std::size_t c) const {
    if (len >= slot) {
      const std::size_t piece = c % pieces_per_line(), offset = piece * slot;
      return {c / pieces_per_line(), 1, offset, std::min(slot, len - offset)};
    }
    const std::size_t first = c * lines_per_chunk();
    return {first, std::min(lines_per_chunk(), lines - first), 0, len};
  }
};

// Copies p.lines runs of p.bytes between a staging slot (runs back to back) and device lines
// `pitch` apart; one run as a plain copy (the pitch of a single line may be anything).
void copy_part(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t bytes,
               std::size_t lines, cudaMemcpyKind kind, cudaStream_t stream, const char* what) {
  if (lines == 1) cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, stream), what);
  else cuda_check(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, bytes, lines, kind, stream), what);
}

void check_pitches(std::size_t len, std::size_t lines, std::size_t a, std::size_t b) {
  if (lines > 1 && (a < len || b < len))
    throw Error(Errc::invalid_argument, "pitch", "lines of " + std::to_string(len) + " bytes need pitches of at least "
                                                     "that, not " + std::to_string(std::min(a, b)));
}

// One staged copy of `lines` runs of `len` bytes: its pitches checked, the staging slots and their
// events (at most two slots in flight), and its chunks; the stream drained first.
struct StagedCopy {
  StagingSet* set;
  PipelineResources& r = pipeline_resources();
  Chunks chunks;
  StagedCopy(std::size_t len, std::size_t lines, std::size_t device_pitch, std::size_t host_pitch, cudaStream_t stream)
      : set((check_pitches(len, lines, device_pitch, host_pitch),
             acquire_staging(std::max<std::size_t>(host_pipeline_tuning().slot_bytes, 4096)))),
        chunks{len, lines, set->bytes} {
    cuda_check(cudaStreamSynchronize(stream), "staged copy (cudaStreamSynchronize)");
  }
  StagedCopy(const StagedCopy&) = delete;
  StagedCopy& operator=(const StagedCopy&) = delete;
  ~StagedCopy() { release_staging(set); }
  char* slot(std::size_t c) const { return static_cast<char*>(set->slot[c % 2]); }
  cudaEvent_t& done(std::size_t c) const { return r.slot_free[c % 2]; }
};

}  // namespace

void upload_lines(void* device, std::size_t device_pitch, const void* host, std::size_t host_pitch, std::size_t len,
                  std::size_t lines, cudaStream_t stream) {
  if (len == 0 || lines == 0) return;
  const StagedCopy copy(len, lines, device_pitch, host_pitch, stream);
  const Chunks& chunks = copy.chunks;
  auto* const dst = static_cast<char*>(device);
  const auto* const src = static_cast<const char*>(host);
  for (std::size_t c = 0; c < chunks.count(); ++c) {
    const Chunks::Part p = chunks.part(c);
    if (c >= 2) cuda_check(cudaEventSynchronize(copy.done(c)), "staged upload (cudaEventSynchronize)");
    copy_lines(copy.slot(c), p.bytes, src + p.line * host_pitch + p.offset, host_pitch, p.bytes, p.lines);
    copy_part(dst + p.line * device_pitch + p.offset, device_pitch, copy.slot(c), p.bytes, p.bytes, p.lines,
              cudaMemcpyHostToDevice, stream, "staged upload (cudaMemcpyAsync)");
    cuda_check(cudaEventRecord(copy.done(c), stream), "cudaEventRecord");
  }
  cuda_check(cudaStreamSynchronize(stream), "staged upload (cudaStreamSynchronize)");
}

void download_lines(void* host, std::size_t host_pitch, const void* device, std::size_t device_pitch, std::size_t len,
                    std::size_t lines, cudaStream_t stream) {
  if (len == 0 || lines == 0) return;
  const StagedCopy copy(len, lines, device_pitch, host_pitch, stream);
  const Chunks& chunks = copy.chunks;
  auto* const dst = static_cast<char*>(host);
  const auto* const src = static_cast<const char*>(device);
  auto enqueue = [&](std::size_t c) {
    const Chunks::Part p = chunks.part(c);
    copy_part(copy.slot(c), p.bytes, src + p.line * device_pitch + p.offset, device_pitch, p.bytes, p.lines,
              cudaMemcpyDeviceToHost, stream, "staged download (cudaMemcpyAsync)");
    cuda_check(cudaEventRecord(copy.done(c), stream), "cudaEventRecord");
  };
  // Chunk c + 1 moves into its slot while the threads empty chunk c's.
  enqueue(0);
  for (std::size_t c = 0; c < chunks.count(); ++c) {
    if (c + 1 < chunks.count()) enqueue(c + 1);
    const Chunks::Part p = chunks.part(c);
    cuda_check(cudaEventSynchronize(copy.done(c)), "staged download (cudaEventSynchronize)");
    copy_lines(dst + p.line * host_pitch + p.offset, host_pitch, copy.slot(c), p.bytes, p.bytes, p.lines);
  }
}

PipelineResources& pipeline_resources() {
  thread_local std::vector<PipelineResources> per_device;
  int device = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  if (per_device.size() <= std::size_t(device)) per_device.resize(std::size_t(device) + 1);
  PipelineResources& r = per_device[std::size_t(device)];
  if (!r.up) {
    auto event = [](cudaEvent_t* e) {
      cuda_check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    };
    for (cudaEvent_t* e : {&r.fork, &r.uploaded, &r.computed[0], &r.computed[1], &r.up_done, &r.down_done}) event(e);
    for (cudaEvent_t& e : r.slot_free) event(&e);
    cuda_check(cudaStreamCreateWithFlags(&r.down, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    cuda_check(cudaStreamCreateWithFlags(&r.up, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  return r;
}

}  // namespace ringmm::cuda_detail
