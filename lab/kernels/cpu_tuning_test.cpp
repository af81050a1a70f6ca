// The CPU kernel's tuning sweep (cpu_tuning.cpp) on a tiny shape: every record is complete and its
// rate follows from its shape and time.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lab_kernels.hpp"

namespace ringmm::lab {
namespace {

void expect_complete(const measure::Record& r) {
  SCOPED_TRACE(r.kernel);
  ASSERT_TRUE(r.m && r.n && r.k && r.seconds && r.updates_per_s);
  EXPECT_GT(*r.seconds, 0);
  EXPECT_TRUE(std::isfinite(*r.updates_per_s));
  EXPECT_NEAR(*r.updates_per_s * *r.seconds, double(*r.m) * double(*r.n) * double(*r.k), 1e-6 * double(*r.m * *r.n * *r.k));
  EXPECT_EQ(r.kernel.substr(r.kernel.size() - 3), " t1");
}

TEST(CpuTuning, CeilingsAreMicroKernelRecords) {
  const auto records = cpu_ceilings(1);
  ASSERT_FALSE(records.empty());
  for (const auto& r : records) {
    EXPECT_EQ(r.backend, "ceiling");
    EXPECT_EQ(r.product, "micro-kernel");
    expect_complete(r);
  }
}

TEST(CpuTuning, SweepTimesTheShippedKernelOnBothSemirings) {
  const auto records = tune_blocked(24, 24, 24, 1);
  bool max_plus = false, plus_times = false;
  for (const auto& r : records) {
    expect_complete(r);
    EXPECT_EQ(*r.m, 24);
    if (r.kernel.rfind("blocked ", 0) == 0 && r.semiring == "max-plus") max_plus = true;
    if (r.kernel.rfind("blocked ", 0) == 0 && r.semiring == "plus-times") plus_times = true;
  }
  EXPECT_TRUE(max_plus);
  EXPECT_TRUE(plus_times);
}

}  // namespace
}  // namespace ringmm::lab
