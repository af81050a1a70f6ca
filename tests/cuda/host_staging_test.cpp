// The host pipeline's copies between pitched lines (ringmm/cuda/host_staging.hpp): small and large,
// on one thread and split over several, parts ending inside lines; the gaps between lines are
// left as they were. Needs no device, so this runs wherever the CUDA backend builds.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "ringmm/cuda/host_staging.hpp"

namespace ringmm {
namespace {

void check_copy(std::size_t len, std::size_t lines, std::size_t src_pitch, std::size_t dst_pitch) {
  const std::size_t src_size = lines ? (lines - 1) * src_pitch + len : 0, dst_size = lines ? (lines - 1) * dst_pitch + len : 0;
  std::vector<std::uint8_t> src(src_size + 1), dst(dst_size + 1, 0xa5), expected(dst.size(), 0xa5);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = std::uint8_t(i * 131 + i / 251);
  for (std::size_t l = 0; l < lines; ++l)
    for (std::size_t b = 0; b < len; ++b) expected[l * dst_pitch + b] = src[l * src_pitch + b];
  cuda_detail::copy_lines(dst.data(), dst_pitch, src.data(), src_pitch, len, lines);
  EXPECT_EQ(dst, expected) << "len " << len << " lines " << lines << " pitches " << src_pitch << ", " << dst_pitch;
}

TEST(HostStaging, CopyLines) {
  check_copy(0, 5, 8, 8);
  check_copy(3, 0, 8, 8);
  check_copy(3, 5, 7, 3);
  check_copy(4, 1, 4, 4);
  check_copy(std::size_t(9) << 20, 1, std::size_t(9) << 20, std::size_t(9) << 20);  // one run, several threads
  check_copy(4096, 2048, 4096, 4096);                                                  // compact lines: one run
  check_copy(4100, 1000, 4200, 4100);                                                  // parts end inside lines
  check_copy(1000, 3000, 1000, 1064);
  check_copy(std::size_t(3) << 20, 3, (std::size_t(3) << 20) + 17, std::size_t(3) << 20);
}

TEST(HostStaging, ConcurrentCallers) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([] {
      for (int r = 0; r < 5; ++r) check_copy(4100, 600, 4164, 4100);
    });
  for (std::thread& t : threads) t.join();
}

}  // namespace
}  // namespace ringmm
