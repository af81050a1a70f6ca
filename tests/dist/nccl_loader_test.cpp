// The NCCL loader (src/dist/nccl_loader.hpp) finds every function it names in the NCCL the build
// found. Opening the library needs no GPU, so this runs where the device path of SUMMA cannot.
#include <gtest/gtest.h>

#include <string>

#include "nccl_loader.hpp"

namespace ringmm::testing {
namespace {

TEST(NcclLoader, ResolvesEveryFunctionOfTheInstalledNccl) {
  const dist::detail::NcclApi* api = nullptr;
  ASSERT_NO_THROW(api = &dist::detail::nccl());  // throws when a function is missing
  // One call that needs no device: the pointers lead into NCCL.
  EXPECT_EQ(std::string(api->error_string(ncclSystemError)).rfind("unhandled system error", 0), 0u);
}

}  // namespace
}  // namespace ringmm::testing
