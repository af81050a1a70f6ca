// Process grids, the block-cyclic map, the layout DistMatrix and DeviceDistMatrix share,
// scatter/gather round trips and the distributed transpose with the block plan it shares with the
// device-resident one.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "dist_testing.hpp"
#include "ringmm_testing.hpp"
#include "transpose_plan.hpp"

namespace ringmm::testing {
namespace {

TEST(Grid, NearSquareFactorisation) {
  EXPECT_EQ(dist::near_square_grid(1), std::make_pair(1, 1));
  EXPECT_EQ(dist::near_square_grid(2), std::make_pair(1, 2));
  EXPECT_EQ(dist::near_square_grid(4), std::make_pair(2, 2));
  EXPECT_EQ(dist::near_square_grid(6), std::make_pair(2, 3));
  EXPECT_EQ(dist::near_square_grid(7), std::make_pair(1, 7));
  EXPECT_EQ(dist::near_square_grid(12), std::make_pair(3, 4));
}

TEST(Grid, EveryShapeHasConsistentCoordinatesAndCommunicators) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    EXPECT_EQ(grid.rank_of(grid.row(), grid.col()), world_rank());
    int row_size = 0, row_rank = 0, col_size = 0, col_rank = 0;
    MPI_Comm_size(grid.row_comm(), &row_size);
    MPI_Comm_rank(grid.row_comm(), &row_rank);
    MPI_Comm_size(grid.col_comm(), &col_size);
    MPI_Comm_rank(grid.col_comm(), &col_rank);
    EXPECT_EQ(row_size, pc);
    EXPECT_EQ(row_rank, grid.col());
    EXPECT_EQ(col_size, pr);
    EXPECT_EQ(col_rank, grid.row());
  }
  dist::Grid automatic(MPI_COMM_WORLD);
  EXPECT_EQ(std::make_pair(automatic.rows(), automatic.cols()), dist::near_square_grid(world_size()));
}

TEST(Grid, WrongProcessCountIsRefusedOnEveryRank) {
  expect_same_error_everywhere([] { dist::Grid grid(MPI_COMM_WORLD, 2, world_size()); }, Errc::invalid_argument, "grid");
}

TEST(Grid, DisagreeingShapesAreRefusedOnEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  const int p = world_size();
  // Rank 0 asks for 1×p, the others for p×1: the check names the first differing parameter.
  expect_same_error_everywhere([&] { dist::Grid grid(MPI_COMM_WORLD, world_rank() == 0 ? 1 : p, world_rank() == 0 ? p : 1); },
                               Errc::distributed_mismatch, "grid rows");
}

TEST(BlockCyclic, LocalSizesCoverEveryIndexOnce) {
  for (index_t n : {0, 1, 7, 33, 97, 131})
    for (index_t nb : {1, 4, 32, 200})
      for (int procs : {1, 2, 3, 6}) {
        const dist::BlockCyclic map{n, nb, procs};
        index_t total = 0;
        for (int p = 0; p < procs; ++p) {
          total += map.local_size(p);
          for (index_t l = 0; l < map.local_size(p); ++l) {
            const index_t g = map.to_global(p, l);
            ASSERT_LT(g, n);
            ASSERT_EQ(map.owner(g), p);
            ASSERT_EQ(map.to_local(g), l);
          }
        }
        EXPECT_EQ(total, n) << "n=" << n << " nb=" << nb << " procs=" << procs;
      }
}

template <class T> void round_trip(const dist::Grid& grid, index_t rows, index_t cols, index_t nb, Layout layout, int root) {
  std::mt19937_64 rng(std::uint64_t(rows * 1000 + cols));
  HostMatrix<T> global = random_matrix<PlusTimes<T>>(rows, cols, layout, 3, rng);  // same on every rank
  dist::DistMatrix<T> d(grid, rows, cols, nb);
  dist::scatter<T>(grid, global.cview(), d, root);
  // Every element this rank owns is where the map says.
  for (index_t li = 0; li < d.local_rows(); ++li)
    for (index_t lj = 0; lj < d.local_cols(); ++lj)
      ASSERT_EQ(d.local()(li, lj), global(d.row_map().to_global(grid.row(), li), d.col_map().to_global(grid.col(), lj)));
  HostMatrix<T> back(rows, cols, layout == Layout::row_major ? Layout::col_major : Layout::row_major, 2);
  for (auto& x : back.storage) x = poison<T>();
  dist::gather<T>(grid, d, back.view, root);
  if (grid.rank() != root) return;
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) ASSERT_EQ(back(i, j), global(i, j)) << "(" << i << ", " << j << ")";
}

TEST(Layout, ScatterGatherRoundTripOnEveryGrid) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    const int last = grid.size() - 1;
    for (auto [rows, cols] : {std::pair<index_t, index_t>{0, 5}, {1, 1}, {7, 33}, {97, 131}, {129, 1}})
      for (index_t nb : {1, 5, 32}) {
        SCOPED_TRACE(grid_name(grid) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " nb " + std::to_string(nb));
        round_trip<double>(grid, rows, cols, nb, Layout::row_major, 0);
        round_trip<std::int32_t>(grid, rows, cols, nb, Layout::col_major, last);
      }
  }
}

TEST(Layout, TransposeMovesEveryBlockToItsMirror) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (auto [rows, cols, nb] : {std::tuple<index_t, index_t, index_t>{0, 4, 3}, {1, 1, 1}, {7, 33, 4}, {97, 61, 8}}) {
      SCOPED_TRACE(grid_name(grid) + " " + std::to_string(rows) + "x" + std::to_string(cols) + " nb " + std::to_string(nb));
      std::mt19937_64 rng(7);
      HostMatrix<float> global = random_matrix<PlusTimes<float>>(rows, cols, Layout::row_major, 0, rng);
      dist::DistMatrix<float> d(grid, rows, cols, nb);
      dist::scatter<float>(grid, global.cview(), d, 0);
      std::uint64_t bytes = 0;
      dist::DistMatrix<float> t = dist::transpose(grid, d, &bytes);
      ASSERT_EQ(t.rows(), cols);
      ASSERT_EQ(t.cols(), rows);
      HostMatrix<float> back(cols, rows, Layout::row_major);
      dist::gather<float>(grid, t, back.view, 0);
      if (grid.rank() == 0)
        for (index_t i = 0; i < rows; ++i)
          for (index_t j = 0; j < cols; ++j) ASSERT_EQ(back(j, i), global(i, j));
      if (grid.size() == 1) EXPECT_EQ(bytes, 0u);
    }
  }
}

TEST(Layout, ScatterWithDisagreeingShapesFailsOnEveryRank) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  dist::Grid grid(MPI_COMM_WORLD);
  std::vector<float> data(40 * 40, 1.0f);
  const index_t rows = world_rank() == world_size() - 1 ? 41 : 40;  // the last rank is off by one
  dist::DistMatrix<float> d(grid, rows, 40, 8);
  expect_same_error_everywhere([&] { dist::scatter<float>(grid, row_major<const float>(data.data(), 40, 40), d, 0); },
                               Errc::distributed_mismatch, "rows");
}

TEST(Layout, RootShapeMismatchFailsOnEveryRank) {
  dist::Grid grid(MPI_COMM_WORLD);
  std::vector<float> data(40 * 40, 1.0f);
  dist::DistMatrix<float> d(grid, 30, 40, 8);
  expect_same_error_everywhere([&] { dist::scatter<float>(grid, row_major<const float>(data.data(), 40, 40), d, 0); },
                               Errc::dimension_mismatch, "global");
}

// Every element has one owner, and the owner one slot in its local storage.
TEST(DistLayout, GivesEveryElementOneOwnerAndOneSlot) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    const index_t rows = 13, cols = 29, nb = 4;
    const dist::DistLayout layout(grid, rows, cols, nb);
    EXPECT_TRUE(layout.fits(grid));
    const dist::DistMatrix<float> m(grid, rows, cols, nb);
    EXPECT_EQ(m.local_rows(), layout.local_rows());
    EXPECT_EQ(m.local_cols(), layout.local_cols());
    EXPECT_EQ(m.local().ld, layout.ld());
    std::vector<int> slots(std::size_t(layout.local_size()), 0);
    long long owned = 0;
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < cols; ++j)
        if (layout.owns(i, j)) {
          ++owned;
          const index_t at = layout.local_offset(i, j);
          ASSERT_GE(at, 0);
          ASSERT_LT(at, layout.local_size());
          ++slots[std::size_t(at)];
        }
    EXPECT_EQ(owned, layout.local_rows() * layout.local_cols()) << grid_name(grid);
    for (index_t li = 0; li < layout.local_rows(); ++li)
      for (index_t lj = 0; lj < layout.local_cols(); ++lj) EXPECT_EQ(slots[std::size_t(li * layout.ld() + lj)], 1);
    MPI_Allreduce(MPI_IN_PLACE, &owned, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(owned, rows * cols);
    if (pr != pc) {
      dist::Grid other(MPI_COMM_WORLD, pc, pr);
      EXPECT_FALSE(layout.fits(other));
    }
  }
}

// The transpose's block plan: each block of the input is sent once, each block of the result
// received once, and what one rank sends another expects.
TEST(TransposePlan, MovesEveryBlockOnceAndPeersAgreeOnCounts) {
  struct Shape {
    index_t rows, cols, nb;
  };
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (const Shape sh : {Shape{13, 29, 4}, Shape{0, 5, 2}, Shape{7, 7, 7}, Shape{33, 1, 1}, Shape{40, 17, 8}}) {
      SCOPED_TRACE(grid_name(grid) + " " + std::to_string(sh.rows) + "x" + std::to_string(sh.cols) + " nb " +
                   std::to_string(sh.nb));
      const dist::DistLayout in(grid, sh.rows, sh.cols, sh.nb), out(grid, sh.cols, sh.rows, sh.nb);
      const dist::detail::TransposePlan plan = dist::detail::transpose_plan(grid, in);
      std::vector<int> sent(std::size_t(in.local_size()), 0), received(std::size_t(out.local_size()), 0);
      for (const auto& b : plan.sends)
        for (index_t i = 0; i < b.rows; ++i)
          for (index_t j = 0; j < b.cols; ++j) ++sent[std::size_t((b.row0 + i) * in.ld() + b.col0 + j)];
      for (const auto& b : plan.receives)
        for (index_t i = 0; i < b.rows; ++i)
          for (index_t j = 0; j < b.cols; ++j) ++received[std::size_t((b.row0 + i) * out.ld() + b.col0 + j)];
      for (index_t li = 0; li < in.local_rows(); ++li)
        for (index_t lj = 0; lj < in.local_cols(); ++lj) EXPECT_EQ(sent[std::size_t(li * in.ld() + lj)], 1);
      for (index_t li = 0; li < out.local_rows(); ++li)
        for (index_t lj = 0; lj < out.local_cols(); ++lj) EXPECT_EQ(received[std::size_t(li * out.ld() + lj)], 1);
      EXPECT_EQ(plan.send_total, in.local_rows() * in.local_cols());
      EXPECT_EQ(plan.recv_total, out.local_rows() * out.local_cols());
      std::vector<long long> counts(plan.send_counts.begin(), plan.send_counts.end()), expected(counts.size());
      MPI_Alltoall(counts.data(), 1, MPI_LONG_LONG, expected.data(), 1, MPI_LONG_LONG, MPI_COMM_WORLD);
      EXPECT_EQ(expected, std::vector<long long>(plan.recv_counts.begin(), plan.recv_counts.end()));
    }
  }
}

}  // namespace
}  // namespace ringmm::testing
