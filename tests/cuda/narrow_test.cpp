// Narrow operands (ringmm/narrow.hpp) in device memory: widened and rounded on the device, against
// the same calls on host memory through the CPU backend (whose products tests/cpu/narrow_test.cpp
// checks against the reference). Tropical results match bit for bit, log-plus within a tolerance.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "narrow_values.hpp"
#include "ringmm/narrow.hpp"

namespace ringmm {
namespace {

using testing::DeviceCopy;
using testing::narrow;
using testing::random_narrow;

// A view of `rows`×`cols` in `layout` with `pad` spare elements per run, over `data`.
template <class T> MatrixView<T> padded(T* data, index_t rows, index_t cols, Layout layout, index_t pad) {
  const index_t inner = layout == Layout::row_major ? cols : rows;
  return {data, rows, cols, std::max<index_t>(inner + pad, 1), layout};
}
index_t padded_count(index_t rows, index_t cols, Layout layout, index_t pad) {
  const index_t outer = layout == Layout::row_major ? rows : cols, inner = layout == Layout::row_major ? cols : rows;
  return outer * std::max<index_t>(inner + pad, 1);
}

struct Case {
  index_t m, n, k;
  Op op_a, op_b;
  Layout layout_a, layout_b;
  index_t pad;
};

template <class S> void expect_same(float got, float want, std::size_t i) {
  if constexpr (std::is_same_v<S, LogPlus<float>>) {
    if (std::isinf(want)) EXPECT_EQ(got, want) << i;
    else EXPECT_NEAR(got, want, 2e-5f * (1 + std::abs(want))) << i;
  } else {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << i << ": " << got << " vs " << want;
  }
}

template <class S, class E> void check_floats(const Case& c) {
  SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << (c.op_a == Op::T ? " A^T" : "")
                                    << (c.op_b == Op::T ? " B^T" : "") << " pad " << c.pad
                                    << (c.layout_b == Layout::col_major ? " B col-major" : ""));
  std::mt19937_64 rng(std::uint64_t(c.m * 1000003 + c.n * 1009 + c.k));
  const index_t ar = c.op_a == Op::N ? c.m : c.k, ac = c.op_a == Op::N ? c.k : c.m;
  const index_t br = c.op_b == Op::N ? c.k : c.n, bc = c.op_b == Op::N ? c.n : c.k;
  constexpr bool plus_infinity = !std::is_same_v<S, LogPlus<float>>;
  auto a = random_narrow<E>(std::size_t(padded_count(ar, ac, c.layout_a, c.pad)), rng, plus_infinity);
  auto b = random_narrow<E>(std::size_t(padded_count(br, bc, c.layout_b, c.pad)), rng, plus_infinity);
  const auto av = padded<const E>(a.data(), ar, ac, c.layout_a, c.pad);
  const auto bv = padded<const E>(b.data(), br, bc, c.layout_b, c.pad);
  std::vector<float> c0(std::size_t(c.m * c.n));
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  for (auto& v : c0) v = d(rng);
  const float alpha = S::one(), beta = std::is_same_v<S, LogPlus<float>> ? -0.5f : S::one();

  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  Context device_ctx;
  device_ctx.backend = Backend::cuda;
  const DeviceCopy<E> ad(a), bd(b);

  // f32 C with β: the old C enters.
  std::vector<float> want = c0, got = c0;
  gemm<S>(host_ctx, c.op_a, av, c.op_b, bv, row_major(want.data(), c.m, c.n), alpha, beta);
  const DeviceCopy<float> cd(c0);
  gemm<S>(device_ctx, c.op_a, ad.on_device(av), c.op_b, bd.on_device(bv), row_major(cd.ptr, c.m, c.n), alpha, beta);
  cd.to_host(got);
  for (std::size_t i = 0; i < got.size(); ++i) expect_same<S>(got[i], want[i], i);

  // C of the operands' type, column-major with a pad, β = 0̄ and then β = 1̄ (the old C widened).
  const index_t cpad = 2;
  std::vector<E> cn0(std::size_t(padded_count(c.m, c.n, Layout::col_major, cpad)), narrow<E>(0.5f));
  for (float b_c : {S::zero(), beta}) {
    std::vector<E> cn_want = cn0, cn_got = cn0;
    gemm<S>(host_ctx, c.op_a, av, c.op_b, bv, padded(cn_want.data(), c.m, c.n, Layout::col_major, cpad), alpha, b_c);
    const DeviceCopy<E> cnd(cn0);
    gemm<S>(device_ctx, c.op_a, ad.on_device(av), c.op_b, bd.on_device(bv),
            padded(cnd.ptr, c.m, c.n, Layout::col_major, cpad), alpha, b_c);
    cnd.to_host(cn_got);
    for (std::size_t i = 0; i < cn_got.size(); ++i) {
      if constexpr (std::is_same_v<S, LogPlus<float>>) {
        // The GPU's and the CPU's log-plus differ in the last bits of f32, which rounding to the
        // narrow type can move by one of its units.
        const float g = to_float(cn_got[i]), w = to_float(cn_want[i]);
        if (std::isinf(w)) EXPECT_EQ(g, w) << i;
        else EXPECT_NEAR(g, w, 0.01f * (1 + std::abs(w))) << i;
      } else {
        EXPECT_EQ(cn_got[i].bits, cn_want[i].bits) << i;  // pad elements included: they stay 0.5
      }
    }
  }
}

template <class S> void check_every_shape() {
  const Layout R = Layout::row_major, C = Layout::col_major;
  for (index_t m : {0, 1, 7, 33, 129})
    for (index_t n : {1, 33, 127})
      for (index_t k : {0, 1, 7, 129}) {
        check_floats<S, bf16>({m, n, k, Op::N, Op::N, R, R, 0});
        check_floats<S, f16>({m, n, k, Op::T, Op::N, R, C, 3});
        check_floats<S, bf16>({m, n, k, Op::N, Op::T, C, R, 1});
      }
  // Runs of whole 16-byte groups, 16-byte aligned: the widening's one-load-a-thread kernel.
  check_floats<S, bf16>({64, 96, 256, Op::N, Op::N, R, R, 0});
  check_floats<S, f16>({40, 72, 136, Op::T, Op::N, C, R, 8});
  check_floats<S, f16>({1000, 1025, 129, Op::N, Op::N, R, R, 0});
  check_floats<S, bf16>({1025, 33, 1000, Op::T, Op::T, R, R, 5});
}

TEST(CudaNarrow, MaxPlus) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_every_shape<MaxPlus<float>>();
}
TEST(CudaNarrow, MinPlus) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_every_shape<MinPlus<float>>();
}
TEST(CudaNarrow, MaxMin) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_every_shape<MaxMin<float>>();
}
TEST(CudaNarrow, MinMax) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_every_shape<MinMax<float>>();
}
TEST(CudaNarrow, LogPlus) {
  RINGMM_SKIP_WITHOUT_GPU();
  check_every_shape<LogPlus<float>>();
}

// i8 operands on the device: −128 is −∞ for max-plus, 127 is +∞ for min-plus, exactly as on the host.
template <class S> void check_i8(index_t m, index_t n, index_t k, Layout layout_b, index_t pad) {
  SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " pad " << pad);
  std::mt19937_64 rng(std::uint64_t(m * 31 + n * 7 + k));
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> a(std::size_t(padded_count(m, k, Layout::row_major, pad))),
      b(std::size_t(padded_count(k, n, layout_b, pad)));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  for (std::size_t i = 0; i < a.size(); i += 5) a[i] = detail::i8_sentinel<S>();
  const auto av = padded<const std::int8_t>(a.data(), m, k, Layout::row_major, pad);
  const auto bv = padded<const std::int8_t>(b.data(), k, n, layout_b, pad);
  std::vector<std::int32_t> want(std::size_t(m * n), 5), got = want;
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  gemm<S>(host_ctx, Op::N, av, Op::N, bv, row_major(want.data(), m, n), S::one(), S::one());
  Context device_ctx;
  device_ctx.backend = Backend::cuda;
  const DeviceCopy<std::int8_t> ad(a), bd(b);
  const DeviceCopy<std::int32_t> cd(got);
  gemm<S>(device_ctx, Op::N, ad.on_device(av), Op::N, bd.on_device(bv), row_major(cd.ptr, m, n), S::one(), S::one());
  cd.to_host(got);
  EXPECT_EQ(got, want);
}

TEST(CudaNarrow, Int8MaxPlusAndMinPlus) {
  RINGMM_SKIP_WITHOUT_GPU();
  for (index_t m : {1, 7, 33, 129, 1000})
    for (index_t k : {1, 33, 127, 1025}) {
      check_i8<MaxPlus<std::int32_t>>(m, 33, k, Layout::row_major, 0);
      check_i8<MinPlus<std::int32_t>>(m, 129, k, Layout::col_major, 3);
    }
  // Runs of whole 16-byte groups, 16-byte aligned: the widening's one-load-a-thread kernel.
  check_i8<MaxPlus<std::int32_t>>(48, 64, 256, Layout::row_major, 16);
  check_i8<MinPlus<std::int32_t>>(32, 64, 128, Layout::col_major, 0);
}

// Where each operand of an i8 lanes call lives: device memory, or host memory (copied up as bytes,
// and C back).
struct Homes {
  bool a_host = false, b_host = false, c_host = false;
};

// An i8 operand of a lanes call: its op, its values, their view (from the first value) and its
// batch stride.
struct LanesOperand {
  Op op;
  const std::vector<std::int8_t>& values;
  MatrixView<const std::int8_t> view;
  index_t stride;
};

// The lanes call (narrow.hpp: i8_product_in_lanes, called directly so that the route is known to
// run) with each operand where `homes` puts it, host memory or a device copy, into C (`c_values`,
// viewed by `c` from its first value); C must then equal `want`.
template <class S>
void expect_lanes(Homes homes, const LanesOperand& a, const LanesOperand& b, std::vector<std::int32_t>& c_values,
                  const MatrixView<std::int32_t>& c, index_t stride_c, index_t batch, std::int32_t alpha,
                  std::int32_t beta, const std::vector<std::int32_t>& want) {
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.trust_inputs = beta != S::zero();  // C's old values enter unchecked
  const DeviceCopy<std::int8_t> ad(a.values), bd(b.values);
  const DeviceCopy<std::int32_t> cd(c_values);
  EXPECT_TRUE(detail::i8_product_in_lanes<S>(ctx, a.op, homes.a_host ? a.view : ad.on_device(a.view), a.stride, b.op,
                                             homes.b_host ? b.view : bd.on_device(b.view), b.stride,
                                             homes.c_host ? c : cd.on_device(c), stride_c, batch, alpha, beta));
  if (!homes.c_host) cd.to_host(c_values);
  EXPECT_EQ(c_values, want);
}

// i8 max-plus and min-plus on the CUDA backend multiply as 16-bit lane pairs (expect_lanes): C
// equals the CPU backend's i32 product bit for bit, for transposed, column-major and strided
// operands, odd N (the last word's high lane is padding), α, β 0̄ or not, and operands in device or
// host memory; C's padding is left alone.
template <class S> void check_i8_lanes(const Case& c, std::int32_t alpha, std::int32_t beta, Homes homes = {}) {
  SCOPED_TRACE(::testing::Message() << c.m << "x" << c.n << "x" << c.k << (c.op_a == Op::T ? " A^T" : "")
                                    << (c.op_b == Op::T ? " B^T" : "") << " pad " << c.pad << " alpha " << alpha
                                    << " beta " << beta << (homes.a_host ? " host A" : "") << (homes.b_host ? " host B" : "")
                                    << (homes.c_host ? " host C" : ""));
  std::mt19937_64 rng(std::uint64_t(c.m * 1000003 + c.n * 1009 + c.k));
  std::uniform_int_distribution<int> d(-128, 127), small(-100, 100);
  const index_t ar = c.op_a == Op::N ? c.m : c.k, ac = c.op_a == Op::N ? c.k : c.m;
  const index_t br = c.op_b == Op::N ? c.k : c.n, bc = c.op_b == Op::N ? c.n : c.k;
  std::vector<std::int8_t> a(std::size_t(padded_count(ar, ac, c.layout_a, c.pad))),
      b(std::size_t(padded_count(br, bc, c.layout_b, c.pad)));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  for (std::size_t i = 0; i < a.size(); i += 5) a[i] = detail::i8_sentinel<S>();
  for (std::size_t i = 3; i < b.size(); i += 7) b[i] = detail::i8_sentinel<S>();
  std::vector<std::int32_t> want(std::size_t(padded_count(c.m, c.n, Layout::row_major, c.pad)));
  for (auto& v : want) v = std::int32_t(small(rng));
  for (std::size_t i = 0; i < want.size(); i += 11) want[i] = S::zero();
  std::vector<std::int32_t> got = want;
  const auto av = padded<const std::int8_t>(a.data(), ar, ac, c.layout_a, c.pad);
  const auto bv = padded<const std::int8_t>(b.data(), br, bc, c.layout_b, c.pad);
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  gemm<S>(host_ctx, c.op_a, av, c.op_b, bv, padded(want.data(), c.m, c.n, Layout::row_major, c.pad), alpha, beta);
  expect_lanes<S>(homes, {c.op_a, a, av, 0}, {c.op_b, b, bv, 0}, got, padded(got.data(), c.m, c.n, Layout::row_major, c.pad),
                  0, 1, alpha, beta, want);
}

TEST(CudaNarrow, Int8MultipliesInLanePairs) {
  RINGMM_SKIP_WITHOUT_GPU();
  using Max = MaxPlus<std::int32_t>;
  using Min = MinPlus<std::int32_t>;
  const Layout R = Layout::row_major, C = Layout::col_major;
  const std::vector<Case> cases = {
      {1, 1, 1, Op::N, Op::N, R, R, 0},         {7, 33, 127, Op::N, Op::N, R, R, 3},
      {33, 7, 129, Op::T, Op::N, R, C, 0},      {129, 127, 33, Op::N, Op::T, C, R, 2},
      {1000, 1025, 7, Op::T, Op::T, C, C, 0},   {1025, 1000, 129, Op::N, Op::N, R, R, 0},
      {127, 1, 1025, Op::N, Op::T, R, R, 1},    {1, 129, 1000, Op::T, Op::N, C, R, 0},
      {64, 64, 256, Op::N, Op::N, R, R, 0},     {0, 9, 5, Op::N, Op::N, R, R, 0},
      {9, 0, 5, Op::N, Op::N, R, R, 2}};
  for (const Case& c : cases) {
    check_i8_lanes<Max>(c, 0, Max::zero());
    check_i8_lanes<Max>(c, 3, -2);
    check_i8_lanes<Min>(c, 0, Min::zero());
    check_i8_lanes<Min>(c, -4, 5);
  }
}

// Host operands go up as bytes and a host C comes back, on every layout, alone or together.
TEST(CudaNarrow, Int8LanePairsTakeHostOperands) {
  RINGMM_SKIP_WITHOUT_GPU();
  using Max = MaxPlus<std::int32_t>;
  using Min = MinPlus<std::int32_t>;
  const Layout R = Layout::row_major, C = Layout::col_major;
  const std::vector<Case> cases = {{1, 1, 1, Op::N, Op::N, R, R, 0},
                                   {7, 33, 127, Op::N, Op::N, R, R, 3},
                                   {33, 7, 129, Op::T, Op::N, R, C, 0},
                                   {129, 127, 33, Op::N, Op::T, C, R, 2},
                                   {1000, 1025, 7, Op::T, Op::T, C, C, 1},
                                   {0, 9, 5, Op::N, Op::N, R, R, 0}};
  const std::vector<Homes> homes = {{true, true, true}, {true, false, false}, {false, true, false}, {false, false, true}};
  for (const Case& c : cases)
    for (const Homes& h : homes) {
      check_i8_lanes<Max>(c, 3, Max::zero(), h);
      check_i8_lanes<Min>(c, -4, 5, h);
    }
}

// A batch in lane pairs: every member packed, multiplied and written at once, members apart by
// their own size, by more (gaps left untouched), or A broadcast to every member (stride 0); from
// device or host memory. C equals the CPU backend's batch bit for bit.
template <class S>
void check_i8_lanes_batch(index_t m, index_t n, index_t k, Op op_a, Op op_b, index_t batch, bool a_broadcast, index_t gap,
                          Homes homes) {
  SCOPED_TRACE(::testing::Message() << batch << " x " << m << "x" << n << "x" << k << (op_a == Op::T ? " A^T" : "")
                                    << (op_b == Op::T ? " B^T" : "") << (a_broadcast ? " A broadcast" : "") << " gap "
                                    << gap << (homes.a_host ? " host A" : "") << (homes.c_host ? " host C" : ""));
  std::mt19937_64 rng(std::uint64_t(batch * 7919 + m * 31 + n * 7 + k));
  std::uniform_int_distribution<int> d(-128, 127);
  const index_t ar = op_a == Op::N ? m : k, ac = op_a == Op::N ? k : m, br = op_b == Op::N ? k : n, bc = op_b == Op::N ? n : k;
  const index_t stride_a = a_broadcast ? 0 : ar * ac + gap, stride_b = br * bc + gap, stride_c = m * n + gap;
  std::vector<std::int8_t> a(std::size_t(a_broadcast ? ar * ac : batch * stride_a)), b(std::size_t(batch * stride_b));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  for (std::size_t i = 0; i < a.size(); i += 5) a[i] = detail::i8_sentinel<S>();
  std::vector<std::int32_t> want(std::size_t(batch * stride_c), 4242);  // the gaps keep 4242
  std::vector<std::int32_t> got = want;
  const auto av = row_major<const std::int8_t>(a.data(), ar, ac), bv = row_major<const std::int8_t>(b.data(), br, bc);
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  gemm_batched<S>(host_ctx, op_a, av, stride_a, op_b, bv, stride_b, row_major(want.data(), m, n), stride_c, batch, 2);
  expect_lanes<S>(homes, {op_a, a, av, stride_a}, {op_b, b, bv, stride_b}, got, row_major(got.data(), m, n), stride_c,
                  batch, 2, S::zero(), want);
}

TEST(CudaNarrow, Int8LanePairsInBatches) {
  RINGMM_SKIP_WITHOUT_GPU();
  using Max = MaxPlus<std::int32_t>;
  using Min = MinPlus<std::int32_t>;
  for (const Homes& h : {Homes{}, Homes{true, true, true}}) {
    check_i8_lanes_batch<Max>(64, 64, 64, Op::N, Op::N, 3, false, 0, h);
    check_i8_lanes_batch<Min>(33, 7, 129, Op::T, Op::N, 5, false, 9, h);
    check_i8_lanes_batch<Max>(7, 129, 33, Op::N, Op::T, 4, true, 0, h);
    check_i8_lanes_batch<Min>(129, 33, 1000, Op::T, Op::T, 2, true, 3, h);
    check_i8_lanes_batch<Max>(1, 1, 1, Op::N, Op::N, 300, false, 1, h);
    check_i8_lanes_batch<Min>(32, 64, 16, Op::N, Op::N, 6, false, 4, h);  // rows of whole quads, gaps between members
  }
}

// Rows of whole quads that start off a 4-byte boundary (views from the second byte) are packed a
// byte at a time, and C's rows off a 16-byte boundary are written an element at a time: the
// vector loads and stores would fault there.
TEST(CudaNarrow, Int8LanePairsOffVectorBoundaries) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<std::int32_t>;
  const index_t m = 8, n = 16, k = 12;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> a(std::size_t(1 + m * k)), b(std::size_t(1 + k * n));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  std::vector<std::int32_t> want(std::size_t(1 + m * n), 7);
  std::vector<std::int32_t> got = want;
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  gemm<S>(host_ctx, Op::N, row_major<const std::int8_t>(a.data() + 1, m, k), Op::N,
          row_major<const std::int8_t>(b.data() + 1, k, n), row_major(want.data() + 1, m, n), 2);
  const DeviceCopy<std::int8_t> ad(a), bd(b);
  const DeviceCopy<std::int32_t> cd(got);
  Context ctx;
  ctx.backend = Backend::cuda;
  EXPECT_TRUE(detail::i8_product_in_lanes<S>(ctx, Op::N, row_major<const std::int8_t>(ad.ptr + 1, m, k), 0, Op::N,
                                             row_major<const std::int8_t>(bd.ptr + 1, k, n), 0,
                                             row_major(cd.ptr + 1, m, n), 0, 1, 2, S::zero()));
  cd.to_host(got);
  EXPECT_EQ(got, want);
}

// The public batched call: every route gives the CPU backend's batch (the lanes on the CUDA
// backend; with β ≠ 0̄ unchecked-C refusal aside, the i32 route), and bf16 operands too.
TEST(CudaNarrow, BatchedNarrowOperands) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<std::int32_t>;
  const index_t m = 17, n = 9, k = 33, batch = 6;
  std::mt19937_64 rng(8);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> a(std::size_t(batch * m * k)), b(std::size_t(k * n));
  for (auto& v : a) v = std::int8_t(d(rng));
  for (auto& v : b) v = std::int8_t(d(rng));
  std::vector<std::int32_t> c0(std::size_t(batch * m * n));
  for (auto& v : c0) v = std::int32_t(d(rng));
  std::vector<std::int32_t> want = c0;
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  const auto av = row_major<const std::int8_t>(a.data(), m, k), bv = row_major<const std::int8_t>(b.data(), k, n);
  gemm_batched<S>(host_ctx, Op::N, av, m * k, Op::N, bv, 0, row_major(want.data(), m, n), m * n, batch, 1, 3);
  // β ≠ 0̄ with C checked: the i32 route, every member widened first.
  const DeviceCopy<std::int8_t> ad(a), bd(b);
  const DeviceCopy<std::int32_t> cd(c0);
  Context ctx;
  ctx.backend = Backend::cuda;
  gemm_batched<S>(ctx, Op::N, ad.on_device(av), m * k, Op::N, bd.on_device(bv), 0, row_major(cd.ptr, m, n), m * n, batch, 1,
                  3);
  std::vector<std::int32_t> got(c0.size());
  cd.to_host(got);
  EXPECT_EQ(got, want);
  // bf16 operands: the f32 batch of the widened values.
  std::vector<bf16> x(std::size_t(batch * m * k)), y(std::size_t(batch * k * n));
  std::uniform_real_distribution<float> u(-4, 4);
  for (auto& v : x) v = to_bf16(u(rng));
  for (auto& v : y) v = to_bf16(u(rng));
  std::vector<float> fwant(std::size_t(batch * m * n)), fgot(fwant.size());
  const auto xv = row_major<const bf16>(x.data(), m, k), yv = row_major<const bf16>(y.data(), k, n);
  gemm_batched<MaxPlus<float>>(host_ctx, Op::N, xv, m * k, Op::N, yv, k * n, row_major(fwant.data(), m, n), m * n, batch);
  const DeviceCopy<bf16> xd(x), yd(y);
  const DeviceCopy<float> fd(fgot);
  gemm_batched<MaxPlus<float>>(ctx, Op::N, xd.on_device(xv), m * k, Op::N, yd.on_device(yv), k * n,
                               row_major(fd.ptr, m, n), m * n, batch);
  fd.to_host(fgot);
  EXPECT_EQ(fgot, fwant);
}

// Where the lanes cannot take the call it is left to the i32 route, untouched: the CPU backend, an
// empty K, and C's old values without trust_inputs (the i32 route checks them).
TEST(CudaNarrow, Int8LanePairsDeclineWhatTheyCannotTake) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<std::int32_t>;
  const std::vector<std::int8_t> a(12, 1), b(12, 2);
  const DeviceCopy<std::int8_t> ad(a), bd(b);
  std::vector<std::int32_t> c(9, 7);
  const DeviceCopy<std::int32_t> cd(c);
  Context ctx;
  ctx.backend = Backend::cuda;
  Context cpu_ctx;
  cpu_ctx.backend = Backend::cpu;
  const auto a_dev = row_major<const std::int8_t>(ad.ptr, 3, 4), b_dev = row_major<const std::int8_t>(bd.ptr, 4, 3);
  EXPECT_FALSE(detail::i8_product_in_lanes<S>(ctx, Op::N, a_dev, 0, Op::N, b_dev, 0, row_major(cd.ptr, 3, 3), 0, 1, 0, 1));
  EXPECT_FALSE(detail::i8_product_in_lanes<S>(cpu_ctx, Op::N, row_major<const std::int8_t>(a.data(), 3, 4), 0, Op::N,
                                              row_major<const std::int8_t>(b.data(), 4, 3), 0, row_major(c.data(), 3, 3), 0,
                                              1, 0, S::zero()));
  EXPECT_FALSE(detail::i8_product_in_lanes<S>(ctx, Op::N, row_major<const std::int8_t>(ad.ptr, 3, 0), 0, Op::N,
                                              row_major<const std::int8_t>(bd.ptr, 0, 3), 0, row_major(cd.ptr, 3, 3), 0, 1,
                                              0, S::zero()));
  std::vector<std::int32_t> after(c.size());
  cd.to_host(after);
  EXPECT_EQ(after, c);
  EXPECT_EQ(c, std::vector<std::int32_t>(9, 7));
}

// Device operands on the CPU backend are refused by name, before any work.
TEST(CudaNarrow, DeviceOperandsOnTheCpuBackendAreRefused) {
  RINGMM_SKIP_WITHOUT_GPU();
  const std::vector<f16> a(12, to_f16(1.0f));
  const DeviceCopy<f16> ad(a);
  std::vector<float> c(9, 7.0f);
  Context ctx;
  ctx.backend = Backend::cpu;
  try {
    gemm<MaxPlus<float>>(ctx, Op::N, row_major<const f16>(a.data(), 3, 4), Op::T, row_major<const f16>(ad.ptr, 3, 4),
                         row_major(c.data(), 3, 3));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("B: is device memory, and the call runs on the CPU backend"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(c, std::vector<float>(9, 7.0f));
}

// A stream of the test's own, destroyed with it.
struct OwnStream {
  cudaStream_t s = nullptr;
  OwnStream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  ~OwnStream() { cudaStreamDestroy(s); }
};

// Records what `calls` queue on `stream` into a CUDA graph, launches the graph once and waits.
void replay_captured(cudaStream_t stream, const std::function<void()>& calls) {
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  calls();
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  if (exec) {
    EXPECT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(exec);
  }
  cudaGraphDestroy(graph);
}

// The device widening and rounding go on the Context's stream and allocate from the engine's
// pool, so a narrow call can be captured in a CUDA graph; its replay gives the direct call's C.
TEST(CudaNarrow, CapturedInAGraph) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t n = 257;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> d(-4.0f, 4.0f);  // finite: every result is finite
  std::vector<bf16> a(std::size_t(n * n)), b(a.size());
  for (auto& x : a) x = to_bf16(d(rng));
  for (auto& x : b) x = to_bf16(d(rng));
  const DeviceCopy<bf16> ad(a), bd(b);
  const std::vector<bf16> c0(std::size_t(n * n), bf16{0x7fc0});  // NaN: a C left untouched shows
  const DeviceCopy<bf16> direct(c0), replayed(c0);
  const OwnStream stream;
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = stream.s;
  const auto call = [&](bf16* c) {
    gemm<MinPlus<float>>(ctx, Op::N, row_major<const bf16>(ad.ptr, n, n), Op::T, row_major<const bf16>(bd.ptr, n, n),
                         row_major(c, n, n));
  };
  call(direct.ptr);
  ASSERT_NO_FATAL_FAILURE(replay_captured(stream.s, [&] { call(replayed.ptr); }));
  std::vector<bf16> want(c0.size()), got(c0.size());
  direct.to_host(want);
  replayed.to_host(got);
  EXPECT_EQ(got, want);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(std::isfinite(to_float(got[i]))) << i;
}

// The lane pairs' passes and product go on the Context's stream with workspace from the engine's
// pool: an i8 call is captured in a CUDA graph, and its replay gives the direct call's C.
TEST(CudaNarrow, Int8LanePairsCapturedInAGraph) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MinPlus<std::int32_t>;
  const index_t m = 257, n = 129, k = 65;  // odd N: the last word's high lane is padding
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<int> d(-128, 127);
  std::vector<std::int8_t> a(std::size_t(m * k)), b(std::size_t(k * n));
  for (auto& x : a) x = std::int8_t(d(rng));
  for (auto& x : b) x = std::int8_t(d(rng));
  const DeviceCopy<std::int8_t> ad(a), bd(b);
  const std::vector<std::int32_t> c0(std::size_t(m * n), 12345);  // a C left untouched shows
  const DeviceCopy<std::int32_t> direct(c0), replayed(c0);
  const OwnStream stream;
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = stream.s;
  const auto call = [&](std::int32_t* c) {
    gemm<S>(ctx, Op::N, row_major<const std::int8_t>(ad.ptr, m, k), Op::N, row_major<const std::int8_t>(bd.ptr, k, n),
            row_major(c, m, n));
  };
  call(direct.ptr);
  ASSERT_NO_FATAL_FAILURE(replay_captured(stream.s, [&] { call(replayed.ptr); }));
  std::vector<std::int32_t> want(c0.size()), got(c0.size()), direct_c(c0.size());
  Context host_ctx;
  host_ctx.backend = Backend::cpu;
  gemm<S>(host_ctx, Op::N, row_major<const std::int8_t>(a.data(), m, k), Op::N, row_major<const std::int8_t>(b.data(), k, n),
          row_major(want.data(), m, n));
  direct.to_host(direct_c);
  replayed.to_host(got);
  EXPECT_EQ(direct_c, want);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace ringmm
