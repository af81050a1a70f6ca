// dist::apsp on device-resident matrices against ringmm::apsp on one GPU with the same block:
// distances and successors bit for bit on every grid the world admits, every route walked and of
// the reported length (graphs with ties, negative edges and zero-weight cycles; longest paths of
// DAGs; strips of several 128-vertex sub-blocks); cycles, refused weights and bad calls the same
// error on every rank. Skips alike on every rank without a GPU per rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "apsp_testing.hpp"
#include "device_testing.hpp"

namespace ringmm::testing {
namespace {

// Scatters root's weights to the devices, solves there and gathers to root (empty elsewhere).
template <class T>
std::pair<std::vector<T>, std::vector<std::int32_t>> solve_on_devices(const dist::Grid& grid, const std::vector<T>& weights,
                                                                      index_t n, index_t nb, bool longest,
                                                                      dist::Stats* stats = nullptr) {
  const index_t ld = std::max<index_t>(1, n);
  dist::DeviceDistMatrix<T> d = on_devices<T>(grid, MatrixView<const T>{weights.data(), n, n, ld, Layout::row_major}, nb);
  dist::DeviceDistMatrix<std::int32_t> next(grid, n, n, nb);
  const dist::Stats s = dist::apsp<T>(grid, d, next, {.longest = longest}, device_options());
  if (stats) *stats = s;
  std::vector<T> d_all(grid.rank() == 0 ? std::size_t(n * n) : 0);
  std::vector<std::int32_t> next_all(d_all.size());
  dist::gather<T>(grid, d, MatrixView<T>{d_all.data(), n, n, ld, Layout::row_major}, 0);
  dist::gather<std::int32_t>(grid, next, MatrixView<std::int32_t>{next_all.data(), n, n, ld, Layout::row_major}, 0);
  return {std::move(d_all), std::move(next_all)};
}

Context one_gpu() {
  Context ctx;
  ctx.backend = Backend::cuda;
  return ctx;
}

template <class T> void expect_as_one_gpu(const dist::Grid& grid, const GraphSpec& spec, index_t nb, bool longest) {
  const index_t n = spec.n;
  const std::vector<double> w = random_graph(spec);
  const std::vector<T> weights = converted<T>(w);
  dist::Stats stats;
  const auto [dist_all, next_all] = solve_on_devices<T>(grid, weights, n, nb, longest, &stats);
  EXPECT_EQ(stats.backend, Backend::cuda);
  EXPECT_EQ(stats.staged_bytes, 0u);
  if (grid.rank() != 0) return;
  const std::string label = grid_name(grid) + " n " + std::to_string(n) + " nb " + std::to_string(nb) +
                            (longest ? " longest" : "") + " seed " + std::to_string(spec.seed);
  const ApspResult<T> one = apsp<T>(one_gpu(), MatrixView<const T>{weights.data(), n, n, std::max<index_t>(1, n), Layout::row_major},
                                    {.longest = longest, .block = nb});
  expect_same_bits<T>(one, dist_all, next_all, n, label, "one GPU");
  expect_solution<T>(w, n, dist_all, next_all, longest, label);
}

struct Case {
  index_t n, nb;
};
// Empty and one-vertex graphs, sizes no block divides, nb = 1, one block (nb ≥ n), and blocks
// above the 128-vertex sub-block (300 / 256: a strip of two sub-blocks, then a short round;
// 333 / 200: sub-blocks of 128 and 72).
constexpr Case cases[] = {{0, 4}, {1, 4}, {7, 3}, {13, 1}, {33, 8}, {50, 64}, {129, 16}, {300, 256}, {333, 200}};

template <class T> class DeviceApsp : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DeviceApsp, FloatTypes);

TYPED_TEST(DeviceApsp, EqualsTheOneGpuSolveOnEveryGrid) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    std::uint64_t seed = 1;
    for (const Case& cs : cases) {
      // Integer weights 1..9: many ties; the last vertices isolated: unreachable pairs.
      expect_as_one_gpu<TypeParam>(grid, {.n = cs.n, .density = 0.2, .isolated = cs.n / 8, .seed = seed++}, cs.nb, false);
      // Zero-weight cycles (every zero edge of an undirected graph is one) and negative edges.
      expect_as_one_gpu<TypeParam>(
          grid, {.n = cs.n, .density = 0.2, .max_weight = 3, .negative = true, .zeros = 0.4, .undirected = true, .seed = seed++},
          cs.nb, false);
      // Longest paths of a DAG with negative edges.
      expect_as_one_gpu<TypeParam>(grid, {.n = cs.n, .density = 0.3, .negative = true, .dag = true, .seed = seed++}, cs.nb,
                                   true);
    }
  }
}

TEST(DeviceApsp, ANegativeCycleIsTheSameErrorOnEveryRank) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  const index_t n = 40;
  std::vector<double> w = random_graph({.n = n, .density = 0.1, .seed = 12});
  // 3 → 17 → 30 → 3 weighs −1; nothing else comes back to it (as in tests/graph).
  for (index_t v = 0; v < n; ++v) w[std::size_t(v * n + 3)] = w[std::size_t(v * n + 17)] = w[std::size_t(v * n + 30)] = inf;
  w[3 * n + 17] = 2, w[17 * n + 30] = 2, w[30 * n + 3] = -5;
  const std::vector<float> weights = converted<float>(w);
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    for (index_t nb : {4, 64}) {
      SCOPED_TRACE(grid_name(grid) + " nb " + std::to_string(nb));
      std::vector<index_t> vertices, one_gpu_vertices;
      expect_same_error_everywhere(
          [&] {
            try {
              solve_on_devices<float>(grid, weights, n, nb, false);
            } catch (const CycleError& e) {
              vertices = e.vertices();
              throw;
            }
          },
          Errc::value_out_of_range, "negative cycle");
      try {
        apsp<float>(one_gpu(), MatrixView<const float>{weights.data(), n, n, n, Layout::row_major}, {.block = nb});
        ADD_FAILURE() << "no CycleError on one GPU";
      } catch (const CycleError& e) {
        one_gpu_vertices = e.vertices();
      }
      EXPECT_EQ(vertices, one_gpu_vertices);
      for (index_t v : {3, 17, 30}) EXPECT_NE(std::find(vertices.begin(), vertices.end(), v), vertices.end()) << v;
    }
  }
}

TEST(DeviceApsp, RefusesNanAndMinusInfinityBeforeAnyWork) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  const index_t n = 23, nb = 4;
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), -inf}) {
    std::vector<double> w = random_graph({.n = n, .seed = 5});
    w[std::size_t(17 * n + 2)] = bad;  // the first in row-major order is named
    w[std::size_t(19 * n + 20)] = std::numeric_limits<double>::quiet_NaN();
    const std::vector<float> weights = converted<float>(w);
    std::string one_gpu_message;
    try {
      apsp<float>(one_gpu(), MatrixView<const float>{weights.data(), n, n, n, Layout::row_major});
    } catch (const Error& e) {
      one_gpu_message = e.what();
    }
    for (auto [pr, pc] : grid_shapes(world_size())) {
      const dist::Grid& grid = SharedGrids::get(pr, pc);
      dist::DeviceDistMatrix<float> d = on_devices<float>(grid, MatrixView<const float>{weights.data(), n, n, n, Layout::row_major}, nb);
      dist::DeviceDistMatrix<std::int32_t> next(grid, n, n, nb);
      const std::string message = expect_same_error_everywhere(
          [&] { dist::apsp<float>(grid, d, next, {}, device_options()); }, Errc::value_out_of_range, "weights");
      EXPECT_EQ(message, one_gpu_message);
      std::vector<float> after(grid.rank() == 0 ? std::size_t(n * n) : 0);
      dist::gather<float>(grid, d, MatrixView<float>{after.data(), n, n, n, Layout::row_major}, 0);
      if (grid.rank() == 0) EXPECT_EQ(std::memcmp(after.data(), weights.data(), after.size() * sizeof(float)), 0) << "the weights changed";
    }
  }
}

TEST(DeviceApsp, RefusesBadCallsAlikeOnEveryRank) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  const dist::Grid& grid = SharedGrids::get(1, world_size());
  dist::DeviceDistMatrix<float> d(grid, 9, 9, 4), wide(grid, 9, 10, 4);
  dist::DeviceDistMatrix<std::int32_t> next(grid, 9, 9, 4), next_other_block(grid, 9, 9, 3);
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, wide, next, {}, device_options()); }, Errc::dimension_mismatch,
                               "dist");
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next_other_block, {}, device_options()); },
                               Errc::invalid_argument, "next");
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {.block = 2}, device_options()); },
                               Errc::invalid_argument, "block");
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {}, device_options(dist::Variant::ring)); },
                               Errc::unsupported, "variant");
  dist::Options on_cpu = device_options();
  on_cpu.context.backend = Backend::cpu;
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {}, on_cpu); }, Errc::invalid_argument, "backend");
  dist::DeviceDistMatrix<float> none;  // on no device (or, with several ranks, built for no grid)
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, none, next, {}, device_options()); }, Errc::invalid_argument,
                               "dist");
  if (world_size() > 1) {  // one rank asking for longest paths: a disagreement, not a hang
    const bool last = grid.rank() == world_size() - 1;
    expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {.longest = last}, device_options()); },
                                 Errc::distributed_mismatch, "longest");
  }
  // The communicators still work: a good call after the refused ones.
  const std::vector<double> w = random_graph({.n = 9, .seed = 3});
  const auto [dist_all, next_all] = solve_on_devices<float>(grid, converted<float>(w), 9, 4, false);
  if (grid.rank() == 0) expect_solution<float>(w, 9, dist_all, next_all, false, "after refusals");
}

// The bytes the rounds broadcast, counted independently of dist::apsp's own accounting, summed
// over the ranks: per sub-block Ks of each round, its snapshot (sb²) and, unless it is the whole
// strip, D[Ks,K] (sb·kb) down a process column (pr − 1 receivers each); then the column panel and
// its successors along every process row ((pc − 1)·n·kb each) and the row panel down every process
// column ((pr − 1)·n·kb).
TEST(DeviceApsp, PanelTrafficIsWhatTheRoundsMove) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  const index_t n = 301, nb = 256;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    dist::Stats stats;
    solve_on_devices<float>(grid, converted<float>(random_graph({.n = n, .seed = 9})), n, nb, false, &stats);
    std::uint64_t totals[2] = {stats.bytes_sent, stats.bytes_received};
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    std::uint64_t expected = 0;
    for (index_t k0 = 0; k0 < n; k0 += nb) {
      const std::uint64_t kb = std::uint64_t(std::min(nb, n - k0));
      for (std::uint64_t s0 = 0; s0 < kb; s0 += 128) {
        const std::uint64_t sb = std::min<std::uint64_t>(128, kb - s0);
        expected += 4 * (pr - 1) * (sb * sb + (sb == kb ? 0 : sb * kb));
      }
      expected += 4 * (2 * (pc - 1) * std::uint64_t(n) * kb + (pr - 1) * std::uint64_t(n) * kb);
    }
    EXPECT_EQ(totals[1], expected) << pr << "x" << pc;
    EXPECT_EQ(totals[0], expected) << pr << "x" << pc;
    EXPECT_EQ(stats.steps, 2);
  }
}

}  // namespace
}  // namespace ringmm::testing
