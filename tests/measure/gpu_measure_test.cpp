// The GPU measurements: ceilings are positive, finite and plausible for every built-in pair;
// timings are positive; wrong arguments and missing devices give the documented errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "measure/gpu_measure.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/error.hpp"
#include "ringmm/tune.hpp"

namespace ringmm {
namespace {

bool have_device() { return cuda_device_available(); }

template <class F> Errc error_code(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no ringmm::Error was thrown";
  return Errc::invalid_argument;
}


TEST(Microbench, EveryBuiltinPairHasThreePlausibleCeilings) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (const SemiringPair& p : builtin_pairs) {
    const auto ceilings = measure::microbench(p.kind, p.type);
    ASSERT_EQ(ceilings.size(), 3u);
    EXPECT_EQ(ceilings[0].level, "reg-reg");
    EXPECT_EQ(ceilings[1].level, "smem-one");
    EXPECT_EQ(ceilings[2].level, "smem-both");
    for (const auto& c : ceilings) {
      SCOPED_TRACE(std::string(to_string(p.kind)) + " " + std::string(to_string(p.type)) + " " + c.level);
      EXPECT_TRUE(std::isfinite(c.updates_per_second));
      // Between a slow laptop part and twice the H100's packed-integer issue rate.
      EXPECT_GT(c.updates_per_second, 1e10);
      EXPECT_LT(c.updates_per_second, 1.5e14);
    }
  }
}

TEST(Microbench, RefusesPairsThatAreNotBuiltIn) {
  EXPECT_EQ(error_code([] { measure::microbench(SemiringKind::or_and, DType::f32); }), Errc::unsupported);
}

TEST(TimeCublas, PedanticSgemmDgemmBatchedAndSyrk) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (DType type : {DType::f32, DType::f64}) {
    const auto gemm = measure::time_cublas(type, measure::Product::gemm, 256, 192, 128, 1, 3);
    EXPECT_GT(gemm.kernel_seconds, 0);
    EXPECT_GT(gemm.with_transfers_seconds, gemm.kernel_seconds);
    EXPECT_GT(measure::time_cublas(type, measure::Product::batched, 64, 64, 64, 5, 3).kernel_seconds, 0);
    EXPECT_GT(measure::time_cublas(type, measure::Product::syrk, 96, 96, 200, 1, 3).kernel_seconds, 0);
  }
}

TEST(TimeCublas, OtherTypesAndBadShapesAreRefused) {
  EXPECT_EQ(error_code([] { measure::time_cublas(DType::i32, measure::Product::gemm, 8, 8, 8, 1, 1); }), Errc::unsupported);
  EXPECT_EQ(error_code([] { measure::time_cublas(DType::f32, measure::Product::syrk, 8, 9, 8, 1, 1); }),
            Errc::invalid_argument);
  EXPECT_EQ(error_code([] { measure::time_cublas(DType::f32, measure::Product::gemm, 8, 8, 0, 1, 1); }),
            Errc::invalid_argument);
}

TEST(Tools, WithoutADeviceEveryToolSaysSo) {
  if (have_device()) GTEST_SKIP() << "a device is present";
  EXPECT_TRUE(measure::describe_devices().empty());
  EXPECT_EQ(error_code([] { measure::microbench(SemiringKind::max_plus, DType::i32); }), Errc::backend_unavailable);
  EXPECT_EQ(error_code([] { measure::time_cublas(DType::f32, measure::Product::gemm, 8, 8, 8, 1, 1); }),
            Errc::backend_unavailable);
  EXPECT_EQ(error_code([] {
              measure::time_ringmm(Context{}, SemiringKind::max_plus, DType::f32, measure::Product::gemm, 8, 8, 8, 1, 1);
            }),
            Errc::backend_unavailable);
  // ringmm tune: device-only timings, the engine's choice and the machine's cache key.
  EXPECT_EQ(error_code([] {
              measure::time_ringmm(Context{}, SemiringKind::max_plus, DType::f32, measure::Product::gemm, 8, 8, 8, 1, 1,
                                   measure::HostMemory::none);
            }),
            Errc::backend_unavailable);
  EXPECT_EQ(error_code([] { describe_cuda_choice(Context{}, SemiringKind::max_plus, DType::f32, 8, 8, 8); }),
            Errc::backend_unavailable);
  EXPECT_EQ(error_code([] { current_tune_key(); }), Errc::backend_unavailable);
}

TEST(Tools, DescribeDevicesNamesEachDevice) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const auto lines = measure::describe_devices();
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("SMs"), std::string::npos);
}

}  // namespace
}  // namespace ringmm
