// Every refused call names its problem and leaves C untouched.
#include <gtest/gtest.h>

#include "ringmm_testing.hpp"

namespace ringmm {
namespace {
using testing::HostMatrix;
}  // namespace
}  // namespace ringmm
