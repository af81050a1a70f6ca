// The staged copies between pageable host memory and the device (ringmm/cuda/host_staging.hpp:
// upload_lines, download_lines): pitched lines on both sides, one chunk and many, lines longer
// than a staging slot, empty copies; the bytes between lines are left as they were (label gpu;
// skips without a device).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/cuda/host_staging.hpp"

namespace ringmm::testing {
namespace {

// Lowers the staging slots to `bytes` for one test (before any copy of it), so that small copies
// take many chunks; restores the size after.
struct SlotSize {
  std::size_t saved = cuda_detail::host_pipeline_tuning().slot_bytes;
  explicit SlotSize(std::size_t bytes) { cuda_detail::host_pipeline_tuning().slot_bytes = bytes; }
  ~SlotSize() { cuda_detail::host_pipeline_tuning().slot_bytes = saved; }
};

std::vector<std::uint8_t> pattern(std::size_t size, unsigned salt) {
  std::vector<std::uint8_t> v(size);
  for (std::size_t i = 0; i < size; ++i) v[i] = std::uint8_t(i * 131 + i / 251 + salt);
  return v;
}

// Uploads `lines` runs of `len` bytes, `host_pitch` apart, into device lines `device_pitch` apart,
// then downloads them into a second host buffer of the same pitch; both sides are checked.
void round_trip(std::size_t len, std::size_t lines, std::size_t host_pitch, std::size_t device_pitch) {
  SCOPED_TRACE("len " + std::to_string(len) + " lines " + std::to_string(lines) + " pitches " +
               std::to_string(host_pitch) + ", " + std::to_string(device_pitch));
  const std::size_t host_size = lines ? (lines - 1) * host_pitch + len + 1 : 1;
  const std::size_t device_size = lines ? (lines - 1) * device_pitch + len + 1 : 1;
  const std::vector<std::uint8_t> host = pattern(host_size, 1), device_before = pattern(device_size, 7);
  DeviceCopy<std::uint8_t> device(device_before);
  cuda::upload_lines(device.ptr, device_pitch, host.data(), host_pitch, len, lines, nullptr);
  std::vector<std::uint8_t> on_device(device_size), expected = device_before;
  for (std::size_t l = 0; l < lines; ++l)
    for (std::size_t b = 0; b < len; ++b) expected[l * device_pitch + b] = host[l * host_pitch + b];
  device.to_host(on_device);
  EXPECT_TRUE(on_device == expected) << "upload";

  std::vector<std::uint8_t> back = pattern(host_size, 3), back_expected = back;
  for (std::size_t l = 0; l < lines; ++l)
    for (std::size_t b = 0; b < len; ++b) back_expected[l * host_pitch + b] = expected[l * device_pitch + b];
  cuda::download_lines(back.data(), host_pitch, device.ptr, device_pitch, len, lines, nullptr);
  EXPECT_TRUE(back == back_expected) << "download";
}

TEST(CudaStagedCopies, OneChunk) {
  RINGMM_SKIP_WITHOUT_GPU();
  round_trip(0, 5, 8, 8);
  round_trip(3, 0, 8, 8);
  round_trip(64, 10, 64, 64);
  round_trip(100, 33, 128, 112);
}

TEST(CudaStagedCopies, ManyChunksAndLinesLongerThanASlot) {
  RINGMM_SKIP_WITHOUT_GPU();
  const SlotSize small(4096);
  round_trip(1000, 129, 1000, 1000);        // 4 lines a chunk, 33 chunks
  round_trip(1000, 129, 1024, 1100);        // pitched on both sides
  round_trip(4096, 7, 4096, 4096);          // a line fills a slot exactly
  round_trip(10000, 5, 10007, 10240);       // each line in three pieces, the last one short
  round_trip(std::size_t(1) << 20, 1, 0, 0);  // one long run: 256 pieces
}

}  // namespace
}  // namespace ringmm::testing
