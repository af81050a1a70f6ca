// Device-resident matrices (ringmm/dist_device.hpp) and their SUMMA against the single-process
// reference: every grid the world admits, both variants (every semiring meets both; see
// runs_case), odd shapes (0, 1, 7, 33, 129, rectangular), transposed operands, α/β; the argmax
// SUMMA against the single-process argmax, ties included; a chain of two products with C kept on
// the devices; the refusals, the same on every rank. Skips on every rank alike when a rank has no
// GPU or the ranks would share one.
#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <type_traits>
#include <string>
#include <utility>

#include "device_testing.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

struct Case {
  index_t m, n, k, nb;
  Op op_a, op_b;
};

constexpr Case cases[] = {
    {0, 5, 7, 4, Op::N, Op::N},     {5, 0, 7, 4, Op::N, Op::T},     {6, 5, 0, 4, Op::N, Op::N},
    {1, 1, 1, 1, Op::N, Op::N},     {7, 33, 13, 5, Op::T, Op::N},   {33, 7, 129, 8, Op::N, Op::T},
    {33, 29, 127, 7, Op::T, Op::T}, {129, 17, 40, 32, Op::N, Op::N}, {129, 129, 129, 16, Op::T, Op::N},
    {520, 300, 600, 256, Op::N, Op::T},  // k blocks wide enough for the engine's padded kernels
};

std::string describe(const dist::Grid& grid, dist::Variant variant, const Case& cs) {
  return grid_name(grid) + " " + std::string(dist::to_string(variant)) + " " + std::to_string(cs.m) + "x" +
         std::to_string(cs.n) + "x" + std::to_string(cs.k) + " nb " + std::to_string(cs.nb) + " op " +
         std::string(to_string(cs.op_a)) + std::string(to_string(cs.op_b));
}

// The whole matrix gathered from the devices to root (poisoned first, so that a missed entry shows).
template <class T> HostMatrix<T> gathered(const dist::Grid& grid, const dist::DeviceDistMatrix<T>& d) {
  HostMatrix<T> x(d.rows(), d.cols(), Layout::row_major);
  for (auto& v : x.storage) v = poison<T>();
  dist::gather<T>(grid, d, x.view, 0);
  return x;
}

template <class S>
void check_case(const dist::Grid& grid, const Case& cs, bool general_scalars, std::uint64_t seed, dist::Variant variant) {
  using T = typename S::value_type;
  std::mt19937_64 rng(seed);  // the same data on every rank; root's copy is scattered
  const index_t a_rows = cs.op_a == Op::N ? cs.m : cs.k, a_cols = cs.op_a == Op::N ? cs.k : cs.m;
  const index_t b_rows = cs.op_b == Op::N ? cs.k : cs.n, b_cols = cs.op_b == Op::N ? cs.n : cs.k;
  const HostMatrix<T> a = random_matrix<S>(a_rows, a_cols, Layout::row_major, 0, rng, cs.k);
  const HostMatrix<T> b = random_matrix<S>(b_rows, b_cols, Layout::row_major, 0, rng, cs.k);
  HostMatrix<T> c = random_matrix<S>(cs.m, cs.n, Layout::row_major, 0, rng, cs.k);
  const T alpha = general_scalars ? random_value<S>(rng) : S::one();
  const T beta = general_scalars ? random_value<S>(rng) : S::zero();

  const dist::DeviceDistMatrix<T> da = on_devices(grid, a.cview(), cs.nb), db = on_devices(grid, b.cview(), cs.nb);
  dist::DeviceDistMatrix<T> dc = on_devices(grid, c.cview(), cs.nb);
  const dist::Stats stats = dist::gemm<S>(grid, cs.op_a, da, cs.op_b, db, dc, alpha, beta, device_options(variant));
  EXPECT_EQ(stats.backend, Backend::cuda);
  EXPECT_EQ(stats.staged_bytes, 0u) << "the resident product stages nothing through the host";
  HostMatrix<T> result = gathered(grid, dc);
  if (grid.rank() != 0) return;
  expect_reference_product<S>(cs.op_a, a, cs.op_b, b, c, alpha, beta, result);
}

// Whether a semiring's typed test runs case `index` of `cases` with `variant`. The variants differ
// only in how panels move, which no semiring changes, and the semirings only in the local
// products and the accumulation, which no variant changes: max-plus f32 (exact) and plus-times
// f32 (rounding) run every case with both variants, the others each case with one variant, in
// turn, so that every semiring meets both. This keeps the multi-rank runs short.
template <class S> bool runs_case(dist::Variant variant, std::size_t index) {
  constexpr bool both = std::is_same_v<S, MaxPlus<float>> || std::is_same_v<S, PlusTimes<float>>;
  return both || index % 2 == std::size_t(variant == dist::Variant::ring);
}

template <class S> class DeviceResidentSumma : public ::testing::Test {};
TYPED_TEST_SUITE(DeviceResidentSumma, BuiltinSemirings, SemiringNames);

// Exact where the semiring is (max-plus f32 and every tropical or integer type), within the
// rounding bound for plus-times f32 and f64.
TYPED_TEST(DeviceResidentSumma, MatchesTheSingleProcessProduct) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      std::uint64_t seed = 300;
      for (std::size_t index = 0; index < std::size(cases); ++index) {
        const Case& cs = cases[index];
        if (!runs_case<TypeParam>(variant, index)) continue;
        const bool general = seed % 2 == 1;
        SCOPED_TRACE(describe(grid, variant, cs) + (general ? " general alpha/beta" : ""));
        check_case<TypeParam>(grid, cs, general, seed++, variant);
      }
    }
  }
}

// dist::gemm_argmax on the devices against the single-process gemm_argmax on the CPU of the whole
// matrices, with the same α, β and incoming K*: C and K* equal exactly, and each index, walked,
// names a term that gives C. `ties`: A and B all 1̄, so every term ties and every panel of every
// rank must leave the first k (0) in place.
template <class S>
void check_argmax_case(const dist::Grid& grid, const Case& cs, bool general_scalars, bool ties, std::uint64_t seed,
                       dist::Variant variant) {
  using T = typename S::value_type;
  std::mt19937_64 rng(seed);
  const index_t a_rows = cs.op_a == Op::N ? cs.m : cs.k, a_cols = cs.op_a == Op::N ? cs.k : cs.m;
  const index_t b_rows = cs.op_b == Op::N ? cs.k : cs.n, b_cols = cs.op_b == Op::N ? cs.n : cs.k;
  HostMatrix<T> a = random_matrix<S>(a_rows, a_cols, Layout::row_major, 0, rng, cs.k);
  HostMatrix<T> b = random_matrix<S>(b_rows, b_cols, Layout::row_major, 0, rng, cs.k);
  if (ties) {
    for (auto& x : a.storage) x = S::one();
    for (auto& x : b.storage) x = S::one();
  }
  HostMatrix<T> c = random_matrix<S>(cs.m, cs.n, Layout::row_major, 0, rng, cs.k);
  HostMatrix<std::int32_t> ks(cs.m, cs.n, Layout::row_major);
  for (auto& x : ks.storage) x = std::int32_t(rng() % 1000);  // incoming indexes, kept where β ⊗ C wins
  const T alpha = general_scalars ? random_value<S>(rng) : S::one();
  const T beta = general_scalars ? random_value<S>(rng) : S::zero();

  const dist::DeviceDistMatrix<T> da = on_devices(grid, a.cview(), cs.nb), db = on_devices(grid, b.cview(), cs.nb);
  dist::DeviceDistMatrix<T> dc = on_devices(grid, c.cview(), cs.nb);
  dist::DeviceDistMatrix<std::int32_t> dk = on_devices(grid, ks.cview(), cs.nb);
  const dist::Stats stats =
      dist::gemm_argmax<S>(grid, cs.op_a, da, cs.op_b, db, dc, dk, alpha, beta, device_options(variant));
  EXPECT_EQ(stats.backend, Backend::cuda);
  const HostMatrix<T> got_c = gathered(grid, dc);
  const HostMatrix<std::int32_t> got_k = gathered(grid, dk);
  if (grid.rank() != 0) return;
  HostMatrix<T> want_c = c;
  HostMatrix<std::int32_t> want_k = ks;
  gemm_argmax<S>(cpu_context(1), cs.op_a, a.cview(), cs.op_b, b.cview(), want_c.view, want_k.view, alpha, beta);
  index_t wrong_c = 0, wrong_k = 0, bad_walk = 0;
  for (index_t i = 0; i < cs.m; ++i)
    for (index_t j = 0; j < cs.n; ++j) {
      wrong_c += !same_bits(std::vector<T>{got_c(i, j)}, std::vector<T>{want_c(i, j)});
      wrong_k += got_k(i, j) != want_k(i, j);
      // The walk: an index from this product (not the incoming one) names the term α ⊗ A(i, k) ⊗ B(k, j)
      // that, ⊕ β ⊗ C, gives the result.
      const std::int32_t k = got_k(i, j);
      if (k < 0 || k >= cs.k || (general_scalars && k == ks(i, j))) continue;
      const T ai = cs.op_a == Op::N ? a(i, k) : a(k, i), bj = cs.op_b == Op::N ? b(k, j) : b(j, k);
      const T term = semiring_traits<S>::scale(alpha, semiring_traits<S>::finalize(S::mul(ai, bj)));
      const T incoming = beta == S::zero() ? S::zero() : semiring_traits<S>::scale(beta, c(i, j));
      bad_walk += !same_bits(std::vector<T>{S::add(term, incoming)}, std::vector<T>{got_c(i, j)});
    }
  EXPECT_EQ(wrong_c, 0) << "entries of C that differ from the single-process product";
  EXPECT_EQ(wrong_k, 0) << "entries of K* that differ from the single-process product";
  EXPECT_EQ(bad_walk, 0) << "indexes whose term does not give C";
  if (ties && cs.m > 0 && cs.n > 0 && cs.k > 0 && !general_scalars) EXPECT_EQ(got_k(0, 0), 0);
}

template <class S> class DeviceResidentArgmax : public ::testing::Test {};
TYPED_TEST_SUITE(DeviceResidentArgmax, SelectingSemirings, SemiringNames);

TYPED_TEST(DeviceResidentArgmax, MatchesTheSingleProcessArgmax) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      std::uint64_t seed = 500;
      for (std::size_t index = 0; index < std::size(cases); ++index)
        for (bool ties : {false, true}) {
          const Case& cs = cases[index];
          if (!runs_case<TypeParam>(variant, index)) continue;
          if (ties && cs.k <= cs.nb) continue;  // ties across panels need two panels at least
          const bool general = seed % 3 == 1;
          SCOPED_TRACE(describe(grid, variant, cs) + (general ? " general alpha/beta" : "") + (ties ? " all ties" : ""));
          check_argmax_case<TypeParam>(grid, cs, general, ties, seed++, variant);
        }
    }
  }
}

// The host matrices' dist::gemm_argmax with the cuda backend goes through the devices and gives
// the CPU SUMMA's C and K*.
TEST(DeviceResident, HostArgmaxThroughTheDevicesEqualsTheCpuSumma) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  using S = MinPlus<float>;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    std::mt19937_64 rng(17);
    const index_t m = 65, n = 40, k = 90, nb = 8;
    const HostMatrix<float> a = random_matrix<S>(m, k, Layout::row_major, 0, rng, k);
    const HostMatrix<float> b = random_matrix<S>(k, n, Layout::row_major, 0, rng, k);
    dist::DistMatrix<float> ha(grid, m, k, nb), hb(grid, k, n, nb), c_cpu(grid, m, n, nb), c_gpu(grid, m, n, nb);
    dist::DistMatrix<std::int32_t> k_cpu(grid, m, n, nb), k_gpu(grid, m, n, nb);
    dist::scatter<float>(grid, a.cview(), ha, 0);
    dist::scatter<float>(grid, b.cview(), hb, 0);
    dist::Options cpu;
    cpu.context.backend = Backend::cpu;
    dist::gemm_argmax<S>(grid, Op::N, ha, Op::N, hb, c_cpu, k_cpu, S::one(), S::zero(), cpu);
    const dist::Stats stats = dist::gemm_argmax<S>(grid, Op::N, ha, Op::N, hb, c_gpu, k_gpu, S::one(), S::zero(),
                                                   device_options(dist::Variant::broadcast));
    EXPECT_EQ(stats.backend, Backend::cuda);
    EXPECT_GT(stats.staged_bytes, 0u) << "host matrices are staged to the devices";
    index_t differ = 0;
    for (index_t e = 0; e < c_cpu.local_rows() * c_cpu.local_cols(); ++e)
      differ += !(c_cpu.local().data[e] == c_gpu.local().data[e]) || k_cpu.local().data[e] != k_gpu.local().data[e];
    EXPECT_EQ(differ, 0) << grid_name(grid) << " rank " << grid.rank();
  }
}

// The same result as the CPU SUMMA, bit for bit, for max-plus f32 (⊕ = max is exact in any order).
TEST(DeviceResident, MaxPlusEqualsTheCpuSummaBitForBit) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  using S = MaxPlus<float>;
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    std::mt19937_64 rng(7);
    const index_t m = 129, n = 33, k = 77, nb = 8;
    const HostMatrix<float> a = random_matrix<S>(k, m, Layout::row_major, 0, rng, k);  // used as Aᵀ
    const HostMatrix<float> b = random_matrix<S>(k, n, Layout::row_major, 0, rng, k);
    const HostMatrix<float> c = random_matrix<S>(m, n, Layout::row_major, 0, rng, k);
    dist::DistMatrix<float> ha(grid, k, m, nb), hb(grid, k, n, nb), hc(grid, m, n, nb);
    dist::scatter<float>(grid, a.cview(), ha, 0);
    dist::scatter<float>(grid, b.cview(), hb, 0);
    dist::scatter<float>(grid, c.cview(), hc, 0);
    const dist::DeviceDistMatrix<float> da = dist::to_device(grid, ha), db = dist::to_device(grid, hb);
    dist::DeviceDistMatrix<float> dc = dist::to_device(grid, hc);
    dist::Options cpu;
    cpu.context.backend = Backend::cpu;
    cpu.context.cpu_threads = 1;
    dist::gemm<S>(grid, Op::T, ha, Op::N, hb, hc, 1.5f, -0.5f, cpu);
    dist::gemm<S>(grid, Op::T, da, Op::N, db, dc, 1.5f, -0.5f, device_options(dist::Variant::ring));
    const dist::DistMatrix<float> back = dist::to_host(grid, dc);
    const MatrixView<const float> want = hc.local(), got = back.local();
    index_t differ = 0;
    for (index_t i = 0; i < want.rows; ++i)
      for (index_t j = 0; j < want.cols; ++j) differ += !(want(i, j) == got(i, j));
    EXPECT_EQ(differ, 0) << grid_name(grid) << " rank " << grid.rank();
  }
}

// C = A·B, then D = C·B with C still on the devices (APSP and matrix powers work this way). Each
// product is checked against the reference of its own inputs (D's against the devices' C), so
// that plus-times's bound is not charged with the first product's rounding.
template <class S> void check_chain(const dist::Grid& grid, dist::Variant variant) {
  using T = typename S::value_type;
  std::mt19937_64 rng(11);
  const index_t n = 97, nb = 16;
  const HostMatrix<T> a = random_matrix<S>(n, n, Layout::row_major, 0, rng, n);
  const HostMatrix<T> b = random_matrix<S>(n, n, Layout::row_major, 0, rng, n);
  const dist::DeviceDistMatrix<T> da = on_devices(grid, a.cview(), nb), db = on_devices(grid, b.cview(), nb);
  dist::DeviceDistMatrix<T> dc(grid, n, n, nb), dd(grid, n, n, nb);
  dist::gemm<S>(grid, Op::N, da, Op::N, db, dc, S::one(), S::zero(), device_options(variant));
  dist::gemm<S>(grid, Op::N, dc, Op::N, db, dd, S::one(), S::zero(), device_options(variant));
  HostMatrix<T> c_devices = gathered(grid, dc), d_devices = gathered(grid, dd);
  if (grid.rank() != 0) return;
  HostMatrix<T> c(n, n, Layout::row_major), d(n, n, Layout::row_major);
  auto first = ringmm::detail::make_problem<S>(Op::N, a.cview(), Op::N, b.cview(), c.view, S::one(), S::zero());
  cpu::reference_gemm<S>(first);
  EXPECT_TRUE(matrices_match<S>(first, ringmm::detail::apply_op(Op::N, c.view),
                                ringmm::detail::apply_op(Op::N, c_devices.view)));
  auto second = ringmm::detail::make_problem<S>(Op::N, c_devices.cview(), Op::N, b.cview(), d.view, S::one(), S::zero());
  cpu::reference_gemm<S>(second);
  EXPECT_TRUE(matrices_match<S>(second, ringmm::detail::apply_op(Op::N, d.view),
                                ringmm::detail::apply_op(Op::N, d_devices.view)));
}

TEST(DeviceResident, ChainsTwoProductsOnTheDevices) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    for (dist::Variant variant : {dist::Variant::broadcast, dist::Variant::ring}) {
      SCOPED_TRACE(grid_name(grid) + " " + std::string(dist::to_string(variant)));
      check_chain<MaxPlus<float>>(grid, variant);
      check_chain<PlusTimes<float>>(grid, variant);
    }
  }
}

TEST(DeviceResident, RoundTripsThroughHostMatricesAndRoot) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  for (auto [pr, pc] : grid_shapes(world_size())) {
    const dist::Grid& grid = SharedGrids::get(pr, pc);
    for (index_t n : {0, 1, 7, 33}) {
      HostMatrix<std::int32_t> x(n, n + 2, Layout::row_major);
      for (std::size_t e = 0; e < x.storage.size(); ++e) x.storage[e] = std::int32_t(e * 7 + 1);
      dist::DistMatrix<std::int32_t> h(grid, n, n + 2, 3);
      dist::scatter<std::int32_t>(grid, x.cview(), h, 0);
      dist::DeviceDistMatrix<std::int32_t> d = dist::to_device(grid, h);
      EXPECT_EQ(d.local_rows(), h.local_rows());
      EXPECT_EQ(d.local_cols(), h.local_cols());
      const dist::DeviceDistMatrix<std::int32_t> moved = std::move(d);  // the allocation moves with it
      EXPECT_EQ(d.local().data, nullptr);
      const HostMatrix<std::int32_t> from_root = gathered(grid, moved);
      const dist::DistMatrix<std::int32_t> from_device = dist::to_host(grid, moved);
      EXPECT_EQ(from_device.local_rows() * from_device.local_cols(), h.local_rows() * h.local_cols());
      for (index_t e = 0; e < h.local_rows() * h.local_cols(); ++e)
        EXPECT_EQ(from_device.local().data[e], h.local().data[e]);
      if (grid.rank() != 0) continue;
      for (index_t i = 0; i < x.view.rows; ++i)
        for (index_t j = 0; j < x.view.cols; ++j) EXPECT_EQ(from_root(i, j), x(i, j)) << grid_name(grid) << " n " << n;
    }
  }
}

TEST(DeviceResident, RefusesBadCallsAlikeOnEveryRank) {
  RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK();
  using S = MaxPlus<float>;
  const dist::Grid& grid = SharedGrids::get(1, world_size());
  const dist::Options options = device_options(dist::Variant::broadcast);
  const float zero = S::zero();
  dist::DeviceDistMatrix<float> a(grid, 8, 6, 4), b(grid, 6, 5, 4), c(grid, 8, 5, 4);
  dist::DeviceDistMatrix<float> b_wrong(grid, 7, 5, 4), b_block(grid, 6, 5, 2), square(grid, 8, 8, 4);

  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, a, Op::N, b_wrong, c, 0.0f, zero, options); },
                               Errc::dimension_mismatch, "B");
  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, a, Op::N, b_block, c, 0.0f, zero, options); },
                               Errc::invalid_argument, "block");
  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, square, Op::N, square, square, 0.0f, zero, options); },
                               Errc::invalid_argument, "C");
  dist::Options on_cpu = options;
  on_cpu.context.backend = Backend::cpu;
  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, a, Op::N, b, c, 0.0f, zero, on_cpu); },
                               Errc::invalid_argument, "backend");
  // A default-constructed matrix lives on no device (or on another grid when there are several ranks).
  dist::DeviceDistMatrix<float> none;
  expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, none, Op::N, b, c, 0.0f, zero, options); },
                               Errc::invalid_argument, "A");
  // Root's matrix of the wrong shape, and a host matrix of the wrong shape.
  HostMatrix<float> wrong(3, 3, Layout::row_major);
  expect_same_error_everywhere([&] { dist::scatter<float>(grid, wrong.cview(), a, 0); }, Errc::dimension_mismatch,
                               "global");
  expect_same_error_everywhere([&] { dist::gather<float>(grid, a, wrong.view, 0); }, Errc::dimension_mismatch,
                               "global");
  dist::DistMatrix<float> host_wrong(grid, 6, 8, 4);
  expect_same_error_everywhere([&] { dist::to_host(grid, a, host_wrong); }, Errc::dimension_mismatch, "host");
  if (world_size() > 1) {
    // Ranks that disagree, and matrices made for another grid.
    const float alpha = float(world_rank());
    expect_same_error_everywhere([&] { dist::gemm<S>(grid, Op::N, a, Op::N, b, c, alpha, zero, options); },
                                 Errc::distributed_mismatch, "alpha");
    const dist::Grid& column = SharedGrids::get(world_size(), 1);
    expect_same_error_everywhere([&] { dist::gemm<S>(column, Op::N, a, Op::N, b, c, 0.0f, zero, options); },
                                 Errc::invalid_argument, "A");
    // A host matrix of the right shape built for the other grid: its local part has another size.
    dist::DistMatrix<float> host_other_grid(column, 8, 6, 4);
    expect_same_error_everywhere([&] { dist::to_host(grid, a, host_other_grid); }, Errc::invalid_argument, "host");
  }
}

}  // namespace
}  // namespace ringmm::testing
