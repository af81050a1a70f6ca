// Which builds run on which GPUs (no device needed, so no gpu label): machine code on its own major
// version at the same or a later minor one, arch-specific code on its own capability only, PTX on
// its capability and later; and the architectures this build names.
#include <gtest/gtest.h>

#include "ringmm/context.hpp"
#include "ringmm/cuda/device.hpp"

namespace ringmm::testing {
namespace {

using cuda_detail::arch_runs_on;

TEST(CudaArchitectures, MachineCodeRunsOnItsMajorVersion) {
  EXPECT_TRUE(arch_runs_on("80-real", 80));
  EXPECT_TRUE(arch_runs_on("80-real", 86));
  EXPECT_TRUE(arch_runs_on("86-real", 89));
  EXPECT_FALSE(arch_runs_on("86-real", 80));
  EXPECT_FALSE(arch_runs_on("80-real", 90));
  EXPECT_FALSE(arch_runs_on("89-real", 75));
}

TEST(CudaArchitectures, ArchSpecificCodeRunsOnItsCapabilityOnly) {
  EXPECT_TRUE(arch_runs_on("90a-real", 90));
  EXPECT_FALSE(arch_runs_on("90a-real", 100));
  EXPECT_FALSE(arch_runs_on("90a-virtual", 100));
  EXPECT_TRUE(arch_runs_on("90a", 90));
}

TEST(CudaArchitectures, PtxRunsOnLaterCapabilities) {
  EXPECT_TRUE(arch_runs_on("80-virtual", 90));
  EXPECT_TRUE(arch_runs_on("90-virtual", 120));
  EXPECT_FALSE(arch_runs_on("90-virtual", 89));
  EXPECT_TRUE(arch_runs_on("80", 100));  // a plain number is machine code and PTX
  EXPECT_FALSE(arch_runs_on("", 90));
  EXPECT_FALSE(arch_runs_on("native", 90));
}

TEST(CudaArchitectures, TheBuildNamesItsArchitectures) {
  const std::string built = cuda_architectures();
  EXPECT_FALSE(built.empty());
  EXPECT_EQ(built.find(';'), std::string::npos) << built;
}

}  // namespace
}  // namespace ringmm::testing
