// ringmm::apsp on the CPU backend against an independent Floyd–Warshall (apsp_cases.inc), and
// ringmm::route's own checks.
#include "apsp_testing.hpp"

namespace ringmm::testing {
namespace {
Context apsp_context() {
  Context ctx;
  ctx.backend = Backend::cpu;
  return ctx;
}
}  // namespace
}  // namespace ringmm::testing
#define APSP_SUITE CpuApsp
#define APSP_PRECONDITION() \
  do {                      \
  } while (0)
#include "apsp_cases.inc"

namespace ringmm::testing {
namespace {

TEST(Route, RefusesVerticesOutOfRangeAndBrokenMatrices) {
  const std::vector<std::int32_t> next{0, 1, -1, 0, 1, -1, 1, 1, 2};  // 2 → 1 → 0; nothing reaches 2
  const MatrixView<const std::int32_t> nx{next.data(), 3, 3, 3, Layout::row_major};
  EXPECT_EQ(route(nx, 2, 0), (std::vector<index_t>{2, 1, 0}));
  EXPECT_TRUE(route(nx, 0, 2).empty());
  EXPECT_EQ(route(nx, 1, 1), (std::vector<index_t>{1}));
  EXPECT_THROW(route(nx, 3, 0), Error);
  EXPECT_THROW(route(nx, 0, -1), Error);
  const std::vector<std::int32_t> circular{0, 2, 2, 0, 1, 2, 0, 0, 2};  // toward 1: 0 → 2 → 0 → …
  try {
    route({circular.data(), 3, 3, 3, Layout::row_major}, 0, 1);
    FAIL() << "a circular successor matrix was followed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format_error);
  }
}

}  // namespace
}  // namespace ringmm::testing
