// dist::gemm (SUMMA) against the single-process reference: every grid the world admits, both
// variants, sizes 0, 1, primes and sizes divisible by neither grid nor block, ops N/T, α/β.
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "dist_testing.hpp"
#include "nan_policy.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

struct Case {
  index_t m, n, k, nb;
  Op op_a, op_b;
};

constexpr Case cases[] = {
    {0, 5, 7, 4, Op::N, Op::N},    {5, 0, 7, 4, Op::N, Op::T},      {6, 5, 0, 4, Op::N, Op::N},
    {1, 1, 1, 1, Op::N, Op::N},    {7, 33, 13, 5, Op::T, Op::N},    {97, 131, 61, 16, Op::N, Op::T},
    {33, 29, 127, 7, Op::T, Op::T}, {129, 17, 40, 32, Op::N, Op::N}, {131, 97, 131, 9, Op::N, Op::N},
    {127, 33, 23, 1, Op::T, Op::N},
};

dist::Options cpu_options(dist::Variant variant) {
  dist::Options options;
  options.variant = variant;
  options.context.backend = Backend::cpu;
  options.context.cpu_threads = 1;  // ranks share the cores
  return options;
}

template <class S>
void check_case(const dist::Grid& grid, const Case& cs, bool general_scalars, std::uint64_t seed,
                const dist::Options& options) {
  using T = typename S::value_type;
  std::mt19937_64 rng(seed);  // the same data on every rank; root's copy is scattered
  const index_t a_rows = cs.op_a == Op::N ? cs.m : cs.k, a_cols = cs.op_a == Op::N ? cs.k : cs.m;
  const index_t b_rows = cs.op_b == Op::N ? cs.k : cs.n, b_cols = cs.op_b == Op::N ? cs.n : cs.k;
  const HostMatrix<T> a = random_matrix<S>(a_rows, a_cols, Layout::row_major, 0, rng, cs.k);
  const HostMatrix<T> b = random_matrix<S>(b_rows, b_cols, Layout::row_major, 0, rng, cs.k);
  HostMatrix<T> c = random_matrix<S>(cs.m, cs.n, Layout::row_major, 0, rng, cs.k);
  const T alpha = general_scalars ? random_value<S>(rng) : S::one();
  const T beta = general_scalars ? random_value<S>(rng) : S::zero();

  dist::DistMatrix<T> da(grid, a_rows, a_cols, cs.nb), db(grid, b_rows, b_cols, cs.nb), dc(grid, cs.m, cs.n, cs.nb);
  dist::scatter<T>(grid, a.cview(), da, 0);
  dist::scatter<T>(grid, b.cview(), db, 0);
  dist::scatter<T>(grid, c.cview(), dc, 0);
  const dist::Stats stats = dist::gemm<S>(grid, cs.op_a, da, cs.op_b, db, dc, alpha, beta, options);
  EXPECT_EQ(stats.backend, options.context.backend);
  // The device path of host matrices copies A and B up once and C up and back; the CPU path and a
  // product without panels (K = 0) copy nothing.
  const auto local_bytes = [](const auto& x) {
    return std::uint64_t(x.local_rows()) * std::uint64_t(x.local_cols()) * sizeof(T);
  };
  const bool staged = stats.backend == Backend::cuda && cs.k > 0;
  EXPECT_EQ(stats.staged_bytes, staged ? local_bytes(da) + local_bytes(db) + 2 * local_bytes(dc) : 0u);

  HostMatrix<T> result(cs.m, cs.n, Layout::row_major);
  for (auto& x : result.storage) x = poison<T>();
  dist::gather<T>(grid, dc, result.view, 0);
  if (grid.rank() != 0) return;
  expect_reference_product<S>(cs.op_a, a, cs.op_b, b, c, alpha, beta, result);
}

template <class S> class Summa : public ::testing::Test {};
TYPED_TEST_SUITE(Summa, BuiltinSemirings, SemiringNames);

TYPED_TEST(Summa, MatchesTheSingleProcessProduct) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      std::uint64_t seed = 1;
      for (const Case& cs : cases) {
        const bool general = seed % 2 == 0;
        SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)) + " " + std::to_string(cs.m) + "x" +
                     std::to_string(cs.n) + "x" + std::to_string(cs.k) + " nb " + std::to_string(cs.nb) + " op " +
                     std::string(to_string(cs.op_a)) + std::string(to_string(cs.op_b)) +
                     (general ? " general alpha/beta" : ""));
        check_case<TypeParam>(grid, cs, general, seed++, cpu_options(variant));
      }
    }
  }
}

// dist::gemm_argmax against the single-process gemm_argmax (CPU): values from {0, 1, 2, 3} and
// 0̄ make ties across panels and ranks, whose smallest k must win; with β ≠ 0̄ an incoming K* is
// carried where β ⊗ C wins.
template <class S>
void check_argmax_case(const dist::Grid& grid, const Case& cs, bool general_scalars, std::uint64_t seed,
                       const dist::Options& options) {
  using T = typename S::value_type;
  std::mt19937_64 rng(seed);
  auto tie_prone = [&](index_t rows, index_t cols) {
    HostMatrix<T> x(rows, cols, Layout::row_major);
    for (T& v : x.storage) v = rng() % 9 == 0 ? S::zero() : T(rng() % 4);
    return x;
  };
  const index_t a_rows = cs.op_a == Op::N ? cs.m : cs.k, a_cols = cs.op_a == Op::N ? cs.k : cs.m;
  const index_t b_rows = cs.op_b == Op::N ? cs.k : cs.n, b_cols = cs.op_b == Op::N ? cs.n : cs.k;
  const HostMatrix<T> a = tie_prone(a_rows, a_cols), b = tie_prone(b_rows, b_cols);
  HostMatrix<T> c = tie_prone(cs.m, cs.n);
  HostMatrix<std::int32_t> k_star(cs.m, cs.n, Layout::row_major);
  for (auto& x : k_star.storage) x = std::int32_t(rng() % 1000);
  const T alpha = general_scalars ? T(1) : S::one();
  const T beta = general_scalars ? T(2) : S::zero();

  dist::DistMatrix<T> da(grid, a_rows, a_cols, cs.nb), db(grid, b_rows, b_cols, cs.nb), dc(grid, cs.m, cs.n, cs.nb);
  dist::DistMatrix<std::int32_t> dk(grid, cs.m, cs.n, cs.nb);
  dist::scatter<T>(grid, a.cview(), da, 0);
  dist::scatter<T>(grid, b.cview(), db, 0);
  dist::scatter<T>(grid, c.cview(), dc, 0);
  dist::scatter<std::int32_t>(grid, k_star.cview(), dk, 0);
  dist::gemm_argmax<S>(grid, cs.op_a, da, cs.op_b, db, dc, dk, alpha, beta, options);

  HostMatrix<T> result(cs.m, cs.n, Layout::row_major);
  HostMatrix<std::int32_t> result_k(cs.m, cs.n, Layout::row_major);
  dist::gather<T>(grid, dc, result.view, 0);
  dist::gather<std::int32_t>(grid, dk, result_k.view, 0);
  if (grid.rank() != 0) return;
  Context ctx;
  ctx.backend = Backend::cpu;
  gemm_argmax<S>(ctx, cs.op_a, a.cview(), cs.op_b, b.cview(), c.view, k_star.view, alpha, beta);
  index_t bad = 0;
  for (index_t i = 0; i < cs.m; ++i)
    for (index_t j = 0; j < cs.n; ++j)
      if (!(result.view(i, j) == c.view(i, j)) || result_k.view(i, j) != k_star.view(i, j))
        if (bad++ < 3)
          ADD_FAILURE() << "(" << i << ", " << j << "): C " << double(result.view(i, j)) << " K* " << result_k.view(i, j)
                        << ", single process " << double(c.view(i, j)) << " K* " << k_star.view(i, j);
  EXPECT_EQ(bad, 0);
}

template <class S> class SummaArgmax : public ::testing::Test {};
TYPED_TEST_SUITE(SummaArgmax, SelectingSemirings, SemiringNames);

TYPED_TEST(SummaArgmax, MatchesTheSingleProcessArgmaxWithTiesToTheSmallestK) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      std::uint64_t seed = 1;
      for (const Case& cs : cases) {
        const bool general = seed % 2 == 0;
        SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)) + " " + std::to_string(cs.m) + "x" +
                     std::to_string(cs.n) + "x" + std::to_string(cs.k) + " nb " + std::to_string(cs.nb) +
                     (general ? " alpha 1, beta 2" : ""));
        check_argmax_case<TypeParam>(grid, cs, general, seed++, cpu_options(variant));
      }
    }
  }
}

template <class S> class SummaArgmaxNanIncoming : public ::testing::Test {};
TYPED_TEST_SUITE(SummaArgmaxNanIncoming, NanProductSelectingSemirings, SemiringNames);

// β ⊗ C that is NaN counts as 0̄ in SUMMA too: the index names the product's winning term.
TYPED_TEST(SummaArgmaxNanIncoming, IndexComesFromTheProduct) {
  using S = TypeParam;
  using T = typename S::value_type;
  const index_t m = 13, n = 9, k = 40, nb = 4;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    const std::string failure = check_nan_incoming_argmax<S>(m, n, k, [&](const T* a, const T* b, T* c, std::int32_t* ks, T beta) {
      dist::DistMatrix<T> da(grid, m, k, nb), db(grid, k, n, nb), dc(grid, m, n, nb);
      dist::DistMatrix<std::int32_t> dk(grid, m, n, nb);
      dist::scatter<T>(grid, MatrixView<const T>{a, m, k, k, Layout::row_major}, da, 0);
      dist::scatter<T>(grid, MatrixView<const T>{b, k, n, n, Layout::row_major}, db, 0);
      dist::scatter<T>(grid, MatrixView<const T>{c, m, n, n, Layout::row_major}, dc, 0);
      dist::scatter<std::int32_t>(grid, MatrixView<const std::int32_t>{ks, m, n, n, Layout::row_major}, dk, 0);
      dist::gemm_argmax<S>(grid, Op::N, da, Op::N, db, dc, dk, S::one(), beta, cpu_options(dist::Variant::broadcast));
      dist::gather<T>(grid, dc, MatrixView<T>{c, m, n, n, Layout::row_major}, 0);
      dist::gather<std::int32_t>(grid, dk, MatrixView<std::int32_t>{ks, m, n, n, Layout::row_major}, 0);
      MPI_Bcast(c, int(m * n * index_t(sizeof(T))), MPI_BYTE, 0, MPI_COMM_WORLD);  // every rank checks
      MPI_Bcast(ks, int(m * n * index_t(sizeof(std::int32_t))), MPI_BYTE, 0, MPI_COMM_WORLD);
    });
    EXPECT_EQ(failure, "") << grid_name(grid);
  }
}

TEST(SummaArgmax, RefusesAnIndexMatrixOfTheWrongShape) {
  dist::Grid grid(MPI_COMM_WORLD, 1, world_size());
  dist::DistMatrix<float> a(grid, 8, 6, 4), b(grid, 6, 5, 4), c(grid, 8, 5, 4);
  dist::DistMatrix<std::int32_t> k_wrong(grid, 5, 8, 4);
  try {
    dist::gemm_argmax<MaxPlus<float>>(grid, Op::N, a, Op::N, b, c, k_wrong, 0.0f, MaxPlus<float>::zero(),
                                      cpu_options(dist::Variant::broadcast));
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "K*");
  }
}

TEST(SummaTraffic, EveryByteSentIsReceivedAndOneRankSendsNothing) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    const index_t n = 61, nb = 8;
    dist::DistMatrix<float> a(grid, n, n, nb), b(grid, n, n, nb), c(grid, n, n, nb);
    std::uint64_t received[2] = {0, 0};
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      const dist::Stats s = dist::gemm<PlusTimes<float>>(grid, Op::N, a, Op::N, b, c, 1.0f, 0.0f, cpu_options(variant));
      std::uint64_t totals[2] = {s.bytes_sent, s.bytes_received};
      MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_EQ(totals[0], totals[1]) << dist::to_string(variant);
      if (grid.size() == 1) EXPECT_EQ(totals[0], 0u);
      EXPECT_EQ(s.steps, (n + nb - 1) / nb);
      received[int(variant)] = s.bytes_received;
    }
    EXPECT_EQ(received[0], received[1]) << "both variants deliver the same panels";
    // Each rank receives every panel element of its row of A and column of B it does not own.
    const std::uint64_t expected =
        std::uint64_t(c.local_rows() * (n - a.col_map().local_size(grid.col())) +
                      (n - b.row_map().local_size(grid.row())) * c.local_cols()) * sizeof(float);
    EXPECT_EQ(received[0], expected);
  }
}

TEST(SummaVariant, AutomaticRingsOnlyWhereEveryPanelMakesOneHop) {
  using dist::Variant;
  const struct {
    int rows, cols;
    Variant chosen;
  } grids[] = {{1, 1, Variant::ring},      {1, 2, Variant::ring},      {2, 1, Variant::ring},
               {2, 2, Variant::ring},      {1, 3, Variant::broadcast}, {1, 4, Variant::broadcast},
               {4, 1, Variant::broadcast}, {2, 4, Variant::broadcast}, {3, 3, Variant::broadcast}};
  for (const auto& g : grids) {
    EXPECT_EQ(dist::resolve_variant(Variant::automatic, g.rows, g.cols), g.chosen) << g.rows << "x" << g.cols;
    for (Variant v : {Variant::broadcast, Variant::ring}) EXPECT_EQ(dist::resolve_variant(v, g.rows, g.cols), v);
  }
  EXPECT_EQ(dist::Options{}.variant, Variant::automatic);
  for (Variant v : {Variant::broadcast, Variant::ring, Variant::automatic})
    EXPECT_EQ(dist::parse_variant(dist::to_string(v)), v);
  try {
    dist::parse_variant("Ring", "--variant");
    ADD_FAILURE() << "not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_EQ(e.subject(), "--variant");
  }
}

TEST(SummaVariant, AutomaticMovesPanelsAsTheVariantItChose) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    const index_t n = 45, nb = 4;
    dist::DistMatrix<float> a(grid, n, n, nb), b(grid, n, n, nb), c(grid, n, n, nb);
    const dist::Variant chosen = dist::resolve_variant(dist::Variant::automatic, pr, pc);
    const dist::Stats automatic =
        dist::gemm<MaxPlus<float>>(grid, Op::N, a, Op::N, b, c, 0.0f, -INFINITY, cpu_options(dist::Variant::automatic));
    const dist::Stats explicit_choice =
        dist::gemm<MaxPlus<float>>(grid, Op::N, a, Op::N, b, c, 0.0f, -INFINITY, cpu_options(chosen));
    EXPECT_EQ(automatic.variant, chosen) << grid_name(grid);
    EXPECT_EQ(explicit_choice.variant, chosen);
    // The variants charge a rank's sends differently (the owner q − 1 copies, or one hop each), so
    // equal counts on every rank mean the panels moved the same way.
    EXPECT_EQ(automatic.bytes_sent, explicit_choice.bytes_sent) << grid_name(grid);
    EXPECT_EQ(automatic.bytes_received, explicit_choice.bytes_received);
  }
}

// The NaN policy across ranks: a NaN reaches every entry it reaches in one process, whichever
// rank holds it and whichever panel step brings it in (the local products accumulate with β = 1̄).
template <class S> void check_nan_case(const dist::Grid& grid, const NanSpec& spec, const dist::Options& options) {
  using T = typename S::value_type;
  const auto x = make_nan_product<S>(spec);  // the same data on every rank; root's copy is scattered
  const index_t nb = 5;
  dist::DistMatrix<T> da(grid, x.av.rows, x.av.cols, nb), db(grid, x.bv.rows, x.bv.cols, nb),
      dc(grid, spec.m, spec.n, nb);
  dist::scatter<T>(grid, MatrixView<const T>{x.a.data(), x.av.rows, x.av.cols, x.av.ld, x.av.layout}, da, 0);
  dist::scatter<T>(grid, MatrixView<const T>{x.b.data(), x.bv.rows, x.bv.cols, x.bv.ld, x.bv.layout}, db, 0);
  dist::scatter<T>(grid, MatrixView<const T>{x.c.data(), x.cv.rows, x.cv.cols, x.cv.ld, x.cv.layout}, dc, 0);
  dist::gemm<S>(grid, spec.op_a, da, spec.op_b, db, dc, x.alpha, x.beta, options);
  std::vector<T> actual = x.c;
  dist::gather<T>(grid, dc, MatrixView<T>{actual.data(), x.cv.rows, x.cv.cols, x.cv.ld, x.cv.layout}, 0);
  if (grid.rank() == 0) EXPECT_TRUE(follows_nan_policy<S>(x, actual)) << describe(spec);
}

template <class S> class SummaNanPolicy : public ::testing::Test {};
TYPED_TEST_SUITE(SummaNanPolicy, FloatSemirings, SemiringNames);

TYPED_TEST(SummaNanPolicy, FollowsTheOracleOnEveryGrid) {
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring})
      for (NanSpec spec : nan_specs()) {
        if (spec.batch > 1 || spec.syrk) continue;  // SUMMA multiplies single products
        spec.k = std::min<index_t>(spec.k, 300);    // keep the oversubscribed ranks quick
        SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)));
        check_nan_case<TypeParam>(grid, spec, cpu_options(variant));
      }
  }
}

// The device path (NCCL panels, local multiplies on the rank's GPU): every grid of the world, both
// variants, the cases above plus one whose k blocks are wide enough for the engine's padded kernels.
template <class S> class SummaDevice : public ::testing::Test {};
TYPED_TEST_SUITE(SummaDevice, BuiltinSemirings, SemiringNames);

TYPED_TEST(SummaDevice, MatchesTheSingleProcessProductOnGpus) {
  int have = cuda_device_available() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!RINGMM_HAVE_NCCL || !have) GTEST_SKIP() << "needs NCCL and a CUDA device on every rank";
  constexpr Case padded{520, 300, 600, 256, Op::N, Op::T};
  for (auto [pr, pc] : grid_shapes(world_size())) {
    dist::Grid grid(MPI_COMM_WORLD, pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      dist::Options options;
      options.variant = variant;
      options.context.backend = Backend::cuda;
      std::uint64_t seed = 100;
      for (const Case& cs : cases) {
        SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)) + " " + std::to_string(cs.m) + "x" +
                     std::to_string(cs.n) + "x" + std::to_string(cs.k) + " nb " + std::to_string(cs.nb));
        try {
          check_case<TypeParam>(grid, cs, seed % 2 == 0, seed, options);
        } catch (const Error& e) {
          // Every rank gets the same refusal (throw_if_any), so every rank skips.
          if (e.code() == Errc::invalid_argument && e.subject() == "ranks") GTEST_SKIP() << e.what();
          throw;
        }
        ++seed;
      }
      SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)) + " 520x300x600 nb 256");
      check_case<TypeParam>(grid, padded, true, seed, options);
    }
  }
}

}  // namespace
}  // namespace ringmm::testing
