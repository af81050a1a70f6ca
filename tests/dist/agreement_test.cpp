// Agreement first: ranks that disagree on a parameter, or one rank with a bad value, get the same
// error on every rank instead of a hang; refused calls leave C untouched and later calls still work.
#include <gtest/gtest.h>

#include <vector>

#include "dist_testing.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

dist::Options cpu_options() {
  dist::Options options;
  options.context.backend = Backend::cpu;
  options.context.cpu_threads = 1;
  return options;
}

struct Operands {
  dist::DistMatrix<float> a, b, c;
  Operands(const dist::Grid& grid, index_t m, index_t n, index_t k, index_t nb = 4)
      : a(grid, m, k, nb), b(grid, k, n, nb), c(grid, m, n, nb) {
    for (auto* x : {&a, &b, &c}) {
      const MatrixView<float> v = x->local();
      for (index_t i = 0; i < v.rows; ++i)
        for (index_t j = 0; j < v.cols; ++j) v(i, j) = float(i - j);
    }
  }
};

bool last_rank() { return world_rank() == world_size() - 1; }

TEST(Agreement, OneRankWithAnotherSizeFailsEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, last_rank() ? 21 : 20, 17, 13);
  const std::vector<float> c_before(ops.c.local().data, ops.c.local().data + ops.c.local_rows() * ops.c.local_cols());
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 1.0f, 0.0f, cpu_options()); },
      Errc::distributed_mismatch, "A.rows");
  EXPECT_TRUE(same_bits(c_before, std::vector<float>(ops.c.local().data, ops.c.local().data + c_before.size())));
}

TEST(Agreement, OneRankWithAnotherVariantFailsEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 20, 17, 13);
  dist::Options options = cpu_options();
  options.variant = last_rank() ? dist::Variant::ring : dist::Variant::broadcast;
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 1.0f, 0.0f, options); },
      Errc::distributed_mismatch, "variant");
}

TEST(Agreement, OneRankWithAnotherSemiringFailsEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 20, 17, 13);
  const std::string message = expect_same_error_everywhere(
      [&] {
        if (last_rank()) dist::gemm<MinPlus<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 0.0f, INFINITY, cpu_options());
        else dist::gemm<MaxPlus<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 0.0f, -INFINITY, cpu_options());
      },
      Errc::distributed_mismatch, "semiring");
  // The two semirings by name, not by fingerprint.
  EXPECT_NE(message.find("has max-plus f32"), std::string::npos) << message;
  EXPECT_NE(message.find("rank " + std::to_string(world_size() - 1) + " has min-plus f32"), std::string::npos) << message;
}

TEST(Agreement, OneRankWithAnotherAlphaOrTransposeFailsEverywhere) {
  if (world_size() == 1) GTEST_SKIP() << "needs two ranks";
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 20, 20, 20);
  const std::string message = expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, last_rank() ? 2.5f : 1.0f, 0.0f, cpu_options()); },
      Errc::distributed_mismatch, "alpha");
  EXPECT_NE(message.find("rank 0 has 1, rank " + std::to_string(world_size() - 1) + " has 2.5"), std::string::npos) << message;
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, last_rank() ? Op::T : Op::N, ops.b, ops.c, 1.0f, 0.0f, cpu_options()); },
      Errc::distributed_mismatch, "transb");
}

TEST(Agreement, AValueOutOfRangeOnOneRankFailsEverywhere) {
  dist::Grid grid(MPI_COMM_WORLD);
  using S = MaxPlus<std::int32_t>;
  const index_t n = 19;
  dist::DistMatrix<std::int32_t> a(grid, n, n, 4), b(grid, n, n, 4), c(grid, n, n, 4);
  if (a.owns(n - 1, n - 1)) a.global(n - 1, n - 1) = 1 << 30;  // beyond the policy range, on one rank only
  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, a, Op::N, b, c, S::one(), S::zero(), cpu_options()); },
                               Errc::value_out_of_range, "A");
}

TEST(Agreement, AgreedButInvalidShapesFailEverywhere) {
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 20, 17, 13);
  dist::DistMatrix<float> wrong_b(grid, 14, 17, 4);
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, wrong_b, ops.c, 1.0f, 0.0f, cpu_options()); },
      Errc::dimension_mismatch, "B");
  dist::DistMatrix<float> other_block(grid, 20, 13, 5);
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, other_block, Op::N, ops.b, ops.c, 1.0f, 0.0f, cpu_options()); },
      Errc::invalid_argument, "block");
}

TEST(Agreement, CudaWithoutDevicesFailsEverywhere) {
  int have = cuda_device_available() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (RINGMM_HAVE_NCCL && have) GTEST_SKIP() << "every rank has a device here";
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 8, 8, 8);
  dist::Options options = cpu_options();
  options.context.backend = Backend::cuda;
  expect_same_error_everywhere(
      [&] { dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 1.0f, 0.0f, options); },
      Errc::backend_unavailable, "backend");
}

TEST(Agreement, CallsAfterRefusedOnesStillWork) {
  dist::Grid grid(MPI_COMM_WORLD);
  Operands ops(grid, 9, 9, 9, 2);
  if (world_size() > 1)
    EXPECT_THROW(dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, world_rank() == 0 ? 1.0f : 3.0f,
                                              0.0f, cpu_options()),
                 Error);
  for (dist::Variant v : {dist::Variant::broadcast, dist::Variant::ring}) {
    dist::Options options = cpu_options();
    options.variant = v;
    EXPECT_NO_THROW(dist::gemm<PlusTimes<float>>(grid, Op::N, ops.a, Op::N, ops.b, ops.c, 1.0f, 0.0f, options));
  }
}

}  // namespace
}  // namespace ringmm::testing
