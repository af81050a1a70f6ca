// dist::apsp against the single-process ringmm::apsp (CPU, the same block): distances and
// successors bit for bit on every grid the world admits, routes of the reported length, cycles
// and refused weights reported alike on every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "apsp_testing.hpp"
#include "dist_testing.hpp"

namespace ringmm::testing {
namespace {

dist::Options cpu_options() {
  dist::Options options;
  options.context.backend = Backend::cpu;
  options.context.cpu_threads = 1;  // ranks share the cores
  return options;
}

// Scatters root's weights, solves on the grid and gathers to root (empty elsewhere).
template <class T>
std::pair<std::vector<T>, std::vector<std::int32_t>> solve_on_grid(const dist::Grid& grid, const std::vector<double>& w,
                                                                   index_t n, index_t nb, bool longest,
                                                                   dist::Stats* stats = nullptr,
                                                                   const dist::Options& options = cpu_options()) {
  const std::vector<T> weights = converted<T>(w);
  const index_t ld = std::max<index_t>(1, n);
  dist::DistMatrix<T> d(grid, n, n, nb);
  dist::DistMatrix<std::int32_t> next(grid, n, n, nb);
  dist::scatter<T>(grid, MatrixView<const T>{weights.data(), n, n, ld, Layout::row_major}, d, 0);
  const dist::Stats s = dist::apsp<T>(grid, d, next, {.longest = longest}, options);
  if (stats) *stats = s;
  std::vector<T> d_all(grid.rank() == 0 ? std::size_t(n * n) : 0);
  std::vector<std::int32_t> next_all(d_all.size());
  dist::gather<T>(grid, d, MatrixView<T>{d_all.data(), n, n, ld, Layout::row_major}, 0);
  dist::gather<std::int32_t>(grid, next, MatrixView<std::int32_t>{next_all.data(), n, n, ld, Layout::row_major}, 0);
  return {std::move(d_all), std::move(next_all)};
}

// On root: equal to ringmm::apsp on the CPU with the same block, bit for bit, and every route a
// walk of real edges whose length is the reported distance. The local products run on `backend`.
template <class T>
void expect_as_one_process(const dist::Grid& grid, const GraphSpec& spec, index_t nb, bool longest,
                           Backend backend = Backend::cpu) {
  const index_t n = spec.n;
  const std::vector<double> w = random_graph(spec);
  dist::Options options = cpu_options();
  options.context.backend = backend;
  dist::Stats stats;
  const auto [dist_all, next_all] = solve_on_grid<T>(grid, w, n, nb, longest, &stats, options);
  EXPECT_EQ(stats.backend, backend);
  if (grid.rank() != 0) return;
  const std::string label = grid_name(grid) + " n " + std::to_string(n) + " nb " + std::to_string(nb) +
                            (longest ? " longest" : "") + " seed " + std::to_string(spec.seed) + " " +
                            std::string(to_string(backend));
  Context ctx;
  ctx.backend = Backend::cpu;
  const std::vector<T> weights = converted<T>(w);
  const ApspResult<T> one = apsp<T>(ctx, MatrixView<const T>{weights.data(), n, n, std::max<index_t>(1, n), Layout::row_major},
                                    {.longest = longest, .block = nb});
  expect_same_bits<T>(one, dist_all, next_all, n, label, "one process");
  expect_solution<T>(w, n, dist_all, next_all, longest, label);
}

struct Case {
  index_t n, nb;
};
// Odd sizes, a size no block divides, nb = 1, nb ≥ n (one round) and a block above the column
// strip's 64-vertex sub-block.
// {7, 1 << 20}: a block far past the vertex count is one block (its panels sized by n, not the block).
constexpr Case cases[] = {{0, 4}, {1, 4}, {7, 3}, {7, 16}, {7, 1 << 20}, {33, 8}, {13, 1}, {50, 7}, {129, 16}, {129, 80}};

template <class T> class DistApsp : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DistApsp, FloatTypes);

TYPED_TEST(DistApsp, EqualsTheSingleProcessSolveOnEveryGrid) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    std::uint64_t seed = 1;
    for (const Case& cs : cases) {
      // Integer weights 1..9: many ties; the last vertices isolated: unreachable pairs.
      expect_as_one_process<TypeParam>(grid, {.n = cs.n, .density = 0.2, .isolated = cs.n / 8, .seed = seed++}, cs.nb, false);
      // Negative edges without a negative cycle.
      expect_as_one_process<TypeParam>(grid, {.n = cs.n, .density = 0.3, .negative = true, .seed = seed++}, cs.nb, false);
      // Zero-weight cycles (every zero edge of an undirected graph is one) and negative edges.
      expect_as_one_process<TypeParam>(
          grid, {.n = cs.n, .density = 0.2, .max_weight = 3, .negative = true, .zeros = 0.4, .undirected = true, .seed = seed++},
          cs.nb, false);
    }
  }
}

TYPED_TEST(DistApsp, LongestPathsOnADagEqualTheSingleProcessSolve) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    std::uint64_t seed = 100;
    for (const Case& cs : cases)
      expect_as_one_process<TypeParam>(grid, {.n = cs.n, .density = 0.3, .negative = true, .dag = true, .seed = seed++},
                                       cs.nb, true);
  }
}

// The local products on the GPU (host matrices staged through the CUDA backend every round): the
// same bits as the CPU's solve. Ranks share the machine's GPUs; skipped alike on every rank unless
// every rank sees one.
TYPED_TEST(DistApsp, CudaLocalProductsEqualTheSingleProcessSolve) {
  int have = cuda_device_available() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!have) GTEST_SKIP() << "needs a CUDA device on every rank";
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    std::uint64_t seed = 200;
    for (const Case& cs : cases) {
      expect_as_one_process<TypeParam>(grid, {.n = cs.n, .density = 0.2, .isolated = cs.n / 8, .seed = seed++}, cs.nb, false,
                                       Backend::cuda);
      expect_as_one_process<TypeParam>(grid, {.n = cs.n, .density = 0.3, .negative = true, .dag = true, .seed = seed++},
                                       cs.nb, true, Backend::cuda);
    }
  }
}

// The CycleError of every rank, which must be the same everywhere; returns its vertices.
template <class T> std::vector<index_t> cycle_on_grid(const dist::Grid& grid, const std::vector<double>& w, index_t n, index_t nb,
                                                      bool longest) {
  std::vector<index_t> vertices;
  const std::string message = expect_same_error_everywhere(
      [&] {
        try {
          solve_on_grid<T>(grid, w, n, nb, longest);
        } catch (const CycleError& e) {
          vertices = e.vertices();
          throw;
        }
      },
      Errc::value_out_of_range, longest ? "positive cycle" : "negative cycle");
  return vertices;
}

template <class T> std::vector<index_t> cycle_on_one_process(const std::vector<double>& w, index_t n, index_t nb, bool longest) {
  const std::vector<T> weights = converted<T>(w);
  Context ctx;
  ctx.backend = Backend::cpu;
  try {
    apsp<T>(ctx, MatrixView<const T>{weights.data(), n, n, n, Layout::row_major}, {.longest = longest, .block = nb});
  } catch (const CycleError& e) {
    return e.vertices();
  }
  ADD_FAILURE() << "no CycleError on one process";
  return {};
}

TEST(DistApsp, ANegativeCycleIsTheSameErrorOnEveryRank) {
  const index_t n = 40;
  std::vector<double> w = random_graph({.n = n, .density = 0.1, .seed = 12});
  // 3 → 17 → 30 → 3 weighs −1; nothing else comes back to it (as in tests/graph).
  for (index_t v = 0; v < n; ++v) w[std::size_t(v * n + 3)] = w[std::size_t(v * n + 17)] = w[std::size_t(v * n + 30)] = inf;
  w[3 * n + 17] = 2, w[17 * n + 30] = 2, w[30 * n + 3] = -5;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (index_t nb : {4, 7, 64}) {
      SCOPED_TRACE(grid_name(grid) + " nb " + std::to_string(nb));
      const std::vector<index_t> vertices = cycle_on_grid<float>(grid, w, n, nb, false);
      EXPECT_EQ(vertices, cycle_on_one_process<float>(w, n, nb, false));
      for (index_t v : {3, 17, 30}) EXPECT_NE(std::find(vertices.begin(), vertices.end(), v), vertices.end()) << v;
    }
  }
}

TEST(DistApsp, APositiveCycleIsRefusedForLongestPathsOnEveryRank) {
  std::vector<double> w(49, inf);
  w[0 * 7 + 1] = 1, w[1 * 7 + 5] = -3, w[5 * 7 + 1] = 4;  // 1 → 5 → 1 weighs +1
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    EXPECT_EQ(cycle_on_grid<double>(grid, w, 7, 2, true), (std::vector<index_t>{1, 5}));
  }
}

TEST(DistApsp, RefusesNanAndMinusInfinityBeforeAnyWork) {
  const index_t n = 23, nb = 4;
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), -inf}) {
    std::vector<double> w = random_graph({.n = n, .seed = 5});
    w[std::size_t(17 * n + 2)] = bad;  // the first in row-major order is named
    w[std::size_t(19 * n + 20)] = std::numeric_limits<double>::quiet_NaN();
    const std::vector<float> weights = converted<float>(w);
    std::string one_process;
    Context ctx;
    ctx.backend = Backend::cpu;
    try {
      apsp<float>(ctx, MatrixView<const float>{weights.data(), n, n, n, Layout::row_major});
    } catch (const Error& e) {
      one_process = e.what();
    }
    for (auto [pr, pc] : grid_shapes(world_size())) {
      const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
      dist::DistMatrix<float> d(grid, n, n, nb);
      dist::DistMatrix<std::int32_t> next(grid, n, n, nb);
      dist::scatter<float>(grid, MatrixView<const float>{weights.data(), n, n, n, Layout::row_major}, d, 0);
      const dist::DistMatrix<float> before = d;
      const std::string message = expect_same_error_everywhere(
          [&] { dist::apsp<float>(grid, d, next, {}, cpu_options()); }, Errc::value_out_of_range, "weights");
      EXPECT_EQ(message, one_process);
      const MatrixView<const float> now = d.local(), then = before.local();
      for (index_t i = 0; i < now.rows; ++i)
        for (index_t j = 0; j < now.cols; ++j)
          EXPECT_TRUE(std::memcmp(&now(i, j), &then(i, j), sizeof(float)) == 0) << "the weights changed";
    }
  }
}

TEST(DistApsp, RefusesBadArgumentsAlikeOnEveryRank) {
  const dist::Grid grid(MPI_COMM_WORLD);
  dist::DistMatrix<float> d(grid, 9, 9, 4), wide(grid, 9, 10, 4);
  dist::DistMatrix<std::int32_t> next(grid, 9, 9, 4), next_other_block(grid, 9, 9, 3);
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, wide, next, {}, cpu_options()); }, Errc::dimension_mismatch, "dist");
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next_other_block, {}, cpu_options()); }, Errc::invalid_argument,
                               "next");
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {.block = 2}, cpu_options()); }, Errc::invalid_argument,
                               "block");
  dist::Options ring = cpu_options();
  ring.variant = dist::Variant::ring;
  expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {}, ring); }, Errc::unsupported, "variant");
  if (!cuda_device_available()) {
    dist::Options cuda = cpu_options();
    cuda.context.backend = Backend::cuda;
    expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {}, cuda); }, Errc::backend_unavailable, "backend");
  }
  if (world_size() > 1) {  // one rank asking for longest paths: a disagreement, not a hang
    const bool last = grid.rank() == world_size() - 1;
    expect_same_error_everywhere([&] { dist::apsp<float>(grid, d, next, {.longest = last}, cpu_options()); },
                                 Errc::distributed_mismatch, "longest");
  }
  // The communicators still work: a good call after the refused ones.
  dist::Stats stats;
  const auto [dist_all, next_all] = solve_on_grid<float>(grid, random_graph({.n = 9, .seed = 3}), 9, 4, false, &stats);
  if (grid.rank() == 0) expect_solution<float>(random_graph({.n = 9, .seed = 3}), 9, dist_all, next_all, false, "after refusals");
}

// The panels a round moves, counted independently of dist::apsp's own accounting: the closed
// diagonal block down its process column (pr − 1 receivers), the column panel and its successors
// along every process row (pc − 1 receivers of each row's part: n·kb in all), the row panel down
// every process column ((pr − 1)·n·kb). A missing, extra or wrongly sized broadcast changes it.
TEST(DistApsp, PanelTrafficIsWhatTheRoundsMove) {
  const index_t n = 61, nb = 8;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    dist::Stats stats;
    solve_on_grid<float>(grid, random_graph({.n = n, .seed = 9}), n, nb, false, &stats);
    std::uint64_t totals[2] = {stats.bytes_sent, stats.bytes_received};
    MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    std::uint64_t expected = 0;
    for (index_t k0 = 0; k0 < n; k0 += nb) {
      const std::uint64_t kb = std::uint64_t(std::min(nb, n - k0));
      expected += 4 * ((pr - 1) * kb * kb + 2 * (pc - 1) * std::uint64_t(n) * kb + (pr - 1) * std::uint64_t(n) * kb);
    }
    EXPECT_EQ(totals[1], expected) << pr << "x" << pc;
    EXPECT_EQ(totals[0], expected) << pr << "x" << pc;
    EXPECT_EQ(stats.steps, 8);
    EXPECT_EQ(stats.backend, Backend::cpu);
  }
}

}  // namespace
}  // namespace ringmm::testing
