// The cuBLAS loader (ringmm/cuda/cublas.hpp) finds every function it names in the installed
// cuBLAS. Opening the library needs no device, so this runs wherever the CUDA backend builds,
// while the tests that call cuBLAS skip without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "ringmm/cuda/cublas.hpp"

namespace ringmm {
namespace {

TEST(CublasLoader, ResolvesEveryFunctionOfTheInstalledCublas) {
  const cuda_detail::CublasApi* api = nullptr;
  ASSERT_NO_THROW(api = &cuda_detail::cublas());  // throws when a function is missing
  // One call that needs no device: the pointers lead into cuBLAS.
  EXPECT_EQ(std::string(api->status_string(CUBLAS_STATUS_ALLOC_FAILED)), "the resource allocation failed");
}

}  // namespace
}  // namespace ringmm
