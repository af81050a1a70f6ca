// User-defined semirings on the CUDA backend: structs the library does not ship go through
// ringmm::gemm<S>, gemm_batched<S> and syrk<S> with Backend::cuda, which instantiates the engine
// template in this translation unit (compiled by nvcc: ringmm/cuda/gemm.cuh). Compared with the
// CPU reference on empty, odd, rectangular, transposed and batched shapes and Aᵀ·A, host and
// device pointers, every configuration of the table in both border modes, and split-K.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ringmm/ringmm.hpp"
#include "cuda_testing.hpp"
#include "ringmm_testing.hpp"

namespace {

using ringmm::Backend;
using ringmm::BorderPolicy;
using ringmm::Context;
using ringmm::index_t;
using ringmm::Layout;
using ringmm::MatrixView;
using ringmm::Op;
using ringmm::testing::DeviceCopy;
using ringmm::testing::HostMatrix;

// min-plus that gives up on routes longer than a cap (examples/capped_paths.cu): ⊗ adds, and a
// sum past the cap is +∞. A semiring on [0, cap] ∪ {+∞}, which valid_input enforces, so the
// engine's device scan is instantiated for it too.
struct CappedMinPlus {
  using value_type = float;
  static constexpr float cap = 100.0f;
  RINGMM_HD static constexpr float zero() { return std::numeric_limits<float>::infinity(); }
  RINGMM_HD static constexpr float one() { return 0.0f; }
  RINGMM_HD static float add(float a, float b) { return a < b ? a : b; }
  RINGMM_HD static float mul(float a, float b) {
    const float s = a + b;
    return s <= cap ? s : zero();
  }
  static constexpr bool valid_input(float x) { return x == zero() || (x >= 0.0f && x <= cap); }
  static std::string input_domain() { return "values in [0, 100], or +inf"; }
};

// Path counts that saturate at 65535 instead of wrapping: 2-byte elements summed in 4-byte
// accumulators, so the hardware form's registers are wider than the elements.
struct SaturatingCount {
  using value_type = std::uint16_t;
  using accumulator_type = std::uint32_t;
  static constexpr std::uint32_t top = 65535;
  RINGMM_HD static constexpr std::uint16_t zero() { return 0; }
  RINGMM_HD static constexpr std::uint16_t one() { return 1; }
  RINGMM_HD static std::uint32_t add(std::uint32_t a, std::uint32_t b) { return a + b < top ? a + b : top; }
  RINGMM_HD static std::uint32_t mul(std::uint32_t a, std::uint32_t b) { return a * b < top ? a * b : top; }
  RINGMM_HD static std::uint16_t finalize(std::uint32_t x) { return std::uint16_t(x); }
};

// Inputs: for CappedMinPlus quarters in [0, 60] (sums reach past the cap) and some +∞; for
// SaturatingCount mostly small counts, some zeros and some large enough to saturate.
template <class S> typename S::value_type random_value(std::mt19937_64& rng) {
  if constexpr (std::is_same_v<S, CappedMinPlus>) {
    if (rng() % 10 == 0) return S::zero();
    return float(rng() % 241) / 4.0f;
  } else {
    const unsigned r = unsigned(rng() % 20);
    if (r < 3) return 0;
    if (r < 6) return std::uint16_t(200 + rng() % 65336);
    return std::uint16_t(rng() % 4);
  }
}

enum class Product { gemm, batched, syrk };

struct Case {
  index_t m, n, k;
  Op op_a = Op::N, op_b = Op::N;
  Layout layout_c = Layout::row_major;
  bool device = false, beta = false;
  Product product = Product::gemm;
};

std::string describe(const Case& c, const Context& ctx) {
  const char* product = c.product == Product::batched ? " batched" : c.product == Product::syrk ? " syrk" : "";
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " ops " +
         std::string(to_string(c.op_a)) + std::string(to_string(c.op_b)) + (c.device ? " device" : " host") +
         (c.beta ? " beta" : "") + product + " config " + (ctx.cuda_config.empty() ? "auto" : ctx.cuda_config) +
         " border " + std::string(to_string(ctx.border));
}

constexpr index_t batch_count = 3;

// A batch of matrices, member b at storage + b·stride (A of a batch shares one member: stride 0).
template <class S> struct Batch {
  using T = typename S::value_type;
  HostMatrix<T> matrix;
  std::vector<T> storage;
  index_t stride = 0;
  Batch(index_t rows, index_t cols, Layout layout, index_t members, std::mt19937_64& rng) : matrix(rows, cols, layout) {
    stride = members == 1 ? 0 : index_t(matrix.storage.size());
    storage.resize(matrix.storage.size() * std::size_t(members));
    for (auto& x : storage) x = random_value<S>(rng);
  }
  MatrixView<T> view() {
    return {storage.data(), matrix.view.rows, matrix.view.cols, matrix.view.ld, matrix.view.layout};
  }
};

template <class S> void check(const Context& ctx, const Case& c, std::mt19937_64& rng) {
  using T = typename S::value_type;
  const bool syrk = c.product == Product::syrk;
  const index_t batch = c.product == Product::batched ? batch_count : 1;
  const index_t a_rows = syrk ? c.k : (c.op_a == Op::N ? c.m : c.k);
  const index_t a_cols = syrk ? c.m : (c.op_a == Op::N ? c.k : c.m);
  Batch<S> a(a_rows, a_cols, Layout::col_major, 1, rng);  // every member shares A
  Batch<S> b(c.op_b == Op::N ? c.k : c.n, c.op_b == Op::N ? c.n : c.k, Layout::row_major, batch, rng);
  Batch<S> c_in(c.m, syrk ? c.m : c.n, c.layout_c, batch, rng);
  const T alpha = c.beta ? random_value<S>(rng) : S::one(), beta = c.beta ? random_value<S>(rng) : S::zero();

  Batch<S> expected = c_in;
  using ringmm::detail::make_problem;
  auto problem = syrk ? make_problem<S>(Op::T, a.view(), Op::N, a.view(), expected.view(), alpha, beta)
                      : make_problem<S>(c.op_a, a.view(), c.op_b, b.view(), expected.view(), alpha, beta);
  problem.batch = batch, problem.stride_a = a.stride, problem.stride_b = b.stride, problem.stride_c = c_in.stride;
  problem.symmetric = syrk;
  ringmm::cpu::reference_gemm<S>(problem);

  Batch<S> actual = c_in;
  auto call = [&](MatrixView<const T> av, MatrixView<const T> bv, MatrixView<T> cv) {
    if (syrk) ringmm::syrk<S>(ctx, Op::N, av, cv, alpha, beta);
    else if (batch > 1)
      ringmm::gemm_batched<S>(ctx, c.op_a, av, a.stride, c.op_b, bv, b.stride, cv, c_in.stride, batch, alpha, beta);
    else ringmm::gemm<S>(ctx, c.op_a, av, c.op_b, bv, cv, alpha, beta);
  };
  if (c.device) {
    DeviceCopy<T> da(a.storage), db(b.storage), dc(actual.storage);
    call(da.on_device(MatrixView<const T>(a.view())), db.on_device(MatrixView<const T>(b.view())),
         dc.on_device(actual.view()));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dc.to_host(actual.storage);
  } else {
    call(a.view(), b.view(), actual.view());
  }
  const auto as_strided = [](MatrixView<T> v) { return ringmm::detail::apply_op(Op::N, v); };
  EXPECT_TRUE(ringmm::testing::matrices_match<S>(problem, as_strided(expected.view()), as_strided(actual.view())))
      << describe(c, ctx);
}

// Empty, single, odd, tile-crossing and rectangular shapes; ops, C's layout, α/β and host/device
// pointers rotate across them.
std::vector<Case> cases() {
  const index_t shapes[][3] = {{0, 5, 3},    {5, 4, 0},     {1, 1, 1},   {7, 7, 7},    {33, 33, 33},
                               {129, 129, 129}, {33, 129, 7}, {129, 7, 33}, {7, 33, 129}, {64, 128, 16}};
  std::vector<Case> out;
  int i = 0;
  for (const auto& s : shapes) {
    Case c{s[0], s[1], s[2]};
    c.op_a = (i & 1) ? Op::T : Op::N;
    c.op_b = (i & 2) ? Op::T : Op::N;
    c.layout_c = i % 3 == 2 ? Layout::col_major : Layout::row_major;
    c.device = i % 2 == 0;
    c.beta = i % 4 >= 2;
    out.push_back(c);
    ++i;
  }
  for (Case c : {Case{33, 65, 17}, Case{7, 130, 129}}) {
    c.product = Product::batched;
    c.op_a = c.m == 7 ? Op::T : Op::N;
    c.device = c.m == 7;
    c.beta = c.m == 33;
    out.push_back(c);
  }
  for (Case c : {Case{1, 1, 7}, Case{33, 33, 200}, Case{130, 130, 9}}) {
    c.product = Product::syrk;
    c.device = c.m != 33;
    c.beta = c.m != 1;
    out.push_back(c);
  }
  return out;
}

Context cuda_context(const std::string& config, BorderPolicy border) {
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_config = config;
  ctx.border = border;
  return ctx;
}

template <class S> class UserSemiringOnCuda : public ::testing::Test {};
using UserSemirings = ::testing::Types<CappedMinPlus, SaturatingCount>;
struct Names {
  template <class S> static std::string GetName(int) {
    return std::is_same_v<S, CappedMinPlus> ? "CappedMinPlus" : "SaturatingCount";
  }
};
TYPED_TEST_SUITE(UserSemiringOnCuda, UserSemirings, Names);

TYPED_TEST(UserSemiringOnCuda, DefaultContextMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(1);
  for (const Case& c : cases()) check<TypeParam>(cuda_context("", BorderPolicy::automatic), c, rng);
}

TYPED_TEST(UserSemiringOnCuda, EveryConfigurationAndBorderMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(2);
  for (const ringmm::cuda_detail::ConfigInfo& config : ringmm::cuda_detail::config_table)
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (const Case& c : cases()) check<TypeParam>(cuda_context(std::string(config.name), border), c, rng);
}

// Few output tiles and a long K: split into parts reduced with the semiring's ⊕.
TYPED_TEST(UserSemiringOnCuda, SplitKMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(3);
  std::vector<Case> long_k = {{7, 5, 1000}, {20, 30, 5000}};
  long_k[1].op_a = Op::T, long_k[1].beta = true, long_k[1].device = true;
  for (const Case& c : long_k) check<TypeParam>(cuda_context("", BorderPolicy::automatic), c, rng);
}

// The semiring's own input policy holds on the GPU: a value outside its domain is refused before
// anything is written, from host and from device memory.
TEST(UserSemiringOnCudaRefusals, OutOfDomainInputLeavesCUntouched) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t n = 40;
  for (bool device : {false, true}) {
    std::vector<float> a(n * n, 1.0f), b(n * n, 2.0f), c(n * n, 3.0f);
    a[17] = -1.0f;
    const std::vector<float> c_before = c;
    DeviceCopy<float> da(a), db(b), dc(c);
    const float* pa = device ? da.ptr : a.data();
    const float* pb = device ? db.ptr : b.data();
    float* pc = device ? dc.ptr : c.data();
    try {
      ringmm::gemm<CappedMinPlus>(cuda_context("", BorderPolicy::automatic), Op::N, ringmm::row_major(pa, n, n), Op::N,
                                  ringmm::row_major(pb, n, n), ringmm::row_major(pc, n, n), 0.0f, 0.0f);
      ADD_FAILURE() << "accepted a negative input";
    } catch (const ringmm::Error& e) {
      EXPECT_EQ(e.code(), ringmm::Errc::value_out_of_range) << e.what();
      EXPECT_EQ(e.subject(), "A") << e.what();
    }
    if (device) dc.to_host(c);
    EXPECT_EQ(c, c_before);
  }
}

}  // namespace
