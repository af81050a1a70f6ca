// The CUDA engine against the CPU reference: every built-in semiring × configuration × border
// policy on odd, rectangular, transposed and padded shapes, host and device pointers, batches,
// Aᵀ·A, β = 0̄ with a poisoned C, host A, B and C through the host pipeline (pageable and pinned),
// and refused inputs leaving C untouched.
// Over 500 lines because every case shares one typed fixture and one reference check.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/host_staging.hpp"
#include "ringmm/ringmm.hpp"
#include "cuda_testing.hpp"
#include "ringmm_testing.hpp"

namespace {

using namespace ringmm;
using ringmm::testing::poison;
using ringmm::testing::random_value;
using ringmm::testing::DeviceCopy;
using ringmm::testing::PinnedCopy;

// Every configuration of this build's table (RINGMM_CUDA_ALL_CONFIGS adds the ones the heuristic
// never picks), named as Context::cuda_config takes them; with_heuristic adds "" first.
std::vector<std::string> configurations(bool with_heuristic = false) {
  std::vector<std::string> names;
  if (with_heuristic) names.emplace_back();
  for (const cuda_detail::ConfigInfo& c : cuda_detail::config_table) names.emplace_back(c.name);
  return names;
}

// A batch of matrices in one host buffer: member b starts at storage + offset + b·stride; elements
// outside the views keep the poison they were filled with.
template <class T> struct Operand {
  std::vector<T> storage;
  MatrixView<T> view;
  index_t stride = 0, offset = 0;
  index_t members = 1;
  // The view over `base` in place of storage (a copy's, or the device's).
  template <class U> MatrixView<U> over(U* base) const { return {base + offset, view.rows, view.cols, view.ld, view.layout}; }
  std::size_t at(index_t member, index_t i, index_t j) const {
    return std::size_t(offset + member * stride + i * view.row_stride() + j * view.col_stride());
  }
};

template <class S>
Operand<typename S::value_type> make_operand(index_t rows, index_t cols, Layout layout, index_t pad, index_t batch,
                                             bool shared_member, std::mt19937_64& rng, index_t k, bool poison_values,
                                             index_t offset = 0) {
  using T = typename S::value_type;
  Operand<T> o;
  const index_t ld = std::max<index_t>(1, (layout == Layout::row_major ? cols : rows) + pad);
  const index_t lines = layout == Layout::row_major ? rows : cols;
  const index_t extent = std::max<index_t>(1, lines * ld);
  o.stride = shared_member ? 0 : extent + 3;  // +3: members not back to back
  o.offset = offset;
  o.members = shared_member ? 1 : batch;
  o.storage.assign(std::size_t(offset + o.stride * (o.members - 1) + extent), poison<T>());
  o.view = {o.storage.data() + offset, rows, cols, ld, layout};
  for (index_t b = 0; b < o.members; ++b)
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < cols; ++j) o.storage[o.at(b, i, j)] = poison_values ? poison<T>() : random_value<S>(rng, k);
  return o;
}

// 0̄ in every member of o where dead(row, column) of its view.
template <class S, class Dead> void zero_where(Operand<typename S::value_type>& o, Dead dead) {
  for (index_t b = 0; b < o.members; ++b)
    for (index_t i = 0; i < o.view.rows; ++i)
      for (index_t j = 0; j < o.view.cols; ++j)
        if (dead(i, j)) o.storage[o.at(b, i, j)] = S::zero();
}

enum class Product { gemm, batched, syrk };

struct Case {
  index_t m, n, k;
  Op op_a = Op::N, op_b = Op::N;
  Layout layout_a = Layout::row_major, layout_b = Layout::row_major, layout_c = Layout::row_major;
  index_t pad = 0;     // ld − contiguous extent, for all three operands
  index_t offset = 0;  // elements before each operand's view in its buffer: odd addresses on the device
  bool random_alpha = false, random_beta = false;
  bool device = false;
  Product product = Product::gemm;
  index_t batch = 1;
  bool shared_a = false;  // batch stride 0 for A
  unsigned pinned = 0;    // host operands in page-locked memory: 1 A, 2 B, 4 C
  // 0̄ in the rows of op(A) below live_m, the columns of op(B) below live_n and the k below live_k,
  // so that C's non-0̄ entries come from the rest alone (the random values' density follows the
  // live k).
  index_t live_m = 0, live_n = 0, live_k = 0;
};

std::string describe(const Case& c, const Context& ctx) {
  return "m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) + " k=" + std::to_string(c.k) + " ops=" +
         std::string(to_string(c.op_a)) + std::string(to_string(c.op_b)) + " pad=" + std::to_string(c.pad) +
         (c.offset ? " offset=" + std::to_string(c.offset) : "") +
         (c.live_m || c.live_n || c.live_k ? " live from (" + std::to_string(c.live_m) + ", " + std::to_string(c.live_n) +
                                                 ", " + std::to_string(c.live_k) + ")"
                                           : "") +
         " batch=" + std::to_string(c.batch) + (c.device ? " device" : " host") + " config=" +
         (ctx.cuda_config.empty() ? "auto" : ctx.cuda_config) + " border=" + std::string(to_string(ctx.border)) +
         (ctx.vendor_blas ? "" : " own-kernels") + (c.random_alpha ? " alpha" : "") + (c.random_beta ? " beta" : "") +
         (c.product == Product::syrk ? " syrk" : "") + (c.pinned ? " pinned=" + std::to_string(c.pinned) : "");
}

// True when every element outside the views of C's members kept its value.
template <class T> bool outside_unchanged(const std::vector<T>& before, const std::vector<T>& after, const Operand<T>& c) {
  std::vector<char> inside(before.size(), 0);
  for (index_t b = 0; b < c.members; ++b)
    for (index_t i = 0; i < c.view.rows; ++i)
      for (index_t j = 0; j < c.view.cols; ++j) inside[c.at(b, i, j)] = 1;
  for (std::size_t e = 0; e < before.size(); ++e)
    if (!inside[e] && std::memcmp(&before[e], &after[e], sizeof(T)) != 0) return false;
  return true;
}

template <class S> void check_case(const Context& ctx, const Case& c, std::mt19937_64& rng) {
  using T = typename S::value_type;
  const bool syrk = c.product == Product::syrk;
  // syrk: C = op(A)ᵀ·op(A) with op(A) k×n, i.e. A is k×n (op N) or n×k (op T).
  const index_t a_rows = syrk ? (c.op_a == Op::N ? c.k : c.n) : (c.op_a == Op::N ? c.m : c.k);
  const index_t a_cols = syrk ? (c.op_a == Op::N ? c.n : c.k) : (c.op_a == Op::N ? c.k : c.m);
  const index_t b_rows = c.op_b == Op::N ? c.k : c.n, b_cols = c.op_b == Op::N ? c.n : c.k;
  const T alpha = c.random_alpha ? random_value<S>(rng, c.k) : S::one();
  T beta = c.random_beta ? random_value<S>(rng, c.k) : S::zero();
  if (c.random_beta && beta == S::zero()) beta = S::one();
  const bool reads_c = !(beta == S::zero());
  const index_t batch = c.product == Product::batched ? c.batch : 1;

  const index_t live_k = std::max<index_t>(1, c.k - c.live_k);
  auto a = make_operand<S>(a_rows, a_cols, c.layout_a, c.pad, batch, c.shared_a, rng, live_k, false, c.offset);
  auto b = make_operand<S>(b_rows, b_cols, c.layout_b, c.pad, batch, false, rng, live_k, false, c.offset);
  auto c_in = make_operand<S>(c.m, syrk ? c.m : c.n, c.layout_c, c.pad, batch, false, rng, c.k, !reads_c, c.offset);
  if (c.live_m || c.live_n || c.live_k) {
    // A's stored (r, col) as (row of C, k): k runs down the rows for op T, and for Aᵀ·A (op(A)ᵀ·op(A)) for op N.
    const bool a_k_down = syrk ? c.op_a == Op::N : c.op_a == Op::T;
    zero_where<S>(a, [&](index_t r, index_t col) {
      const index_t i = a_k_down ? col : r, kk = a_k_down ? r : col;
      return i < c.live_m || kk < c.live_k;
    });
    zero_where<S>(b, [&](index_t r, index_t col) {
      const index_t j = c.op_b == Op::N ? col : r, kk = c.op_b == Op::N ? r : col;
      return j < c.live_n || kk < c.live_k;
    });
  }

  // The expected result: the reference on a copy of C.
  auto expected = c_in;
  expected.view = c_in.over(expected.storage.data());
  auto problem = syrk ? detail::make_problem<S>(c.op_a == Op::N ? Op::T : Op::N, a.view, c.op_a, a.view, expected.view,
                                                alpha, beta)
                      : detail::make_problem<S>(c.op_a, a.view, c.op_b, b.view, expected.view, alpha, beta);
  problem.batch = batch;
  problem.stride_a = a.stride, problem.stride_b = b.stride, problem.stride_c = c_in.stride;
  problem.symmetric = syrk;
  cpu::reference_gemm<S>(problem);

  auto actual = c_in;
  actual.view = c_in.over(actual.storage.data());
  auto call = [&](MatrixView<const T> av, MatrixView<const T> bv, MatrixView<T> cv) {
    if (syrk)
      ringmm::syrk<S>(ctx, c.op_a, av, cv, alpha, beta);
    else if (c.product == Product::batched)
      gemm_batched<S>(ctx, c.op_a, av, a.stride, c.op_b, bv, b.stride, cv, c_in.stride, batch, alpha, beta);
    else
      gemm<S>(ctx, c.op_a, av, c.op_b, bv, cv, alpha, beta);
  };
  if (c.device) {
    DeviceCopy<T> da(a.storage), db(b.storage), dc(actual.storage);
    call(a.over(da.ptr), b.over(db.ptr), actual.over(dc.ptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    dc.to_host(actual.storage);
  } else if (c.pinned) {
    PinnedCopy<T> pa(a.storage), pb(b.storage), pc(actual.storage);
    call(c.pinned & 1 ? a.over(pa.ptr) : a.view, c.pinned & 2 ? b.over(pb.ptr) : b.view,
         c.pinned & 4 ? actual.over(pc.ptr) : actual.view);
    if (c.pinned & 4) pc.to_host(actual.storage);
  } else {
    call(a.view, b.view, actual.view);
  }

  const detail::Strided<T> expected_c = detail::apply_op(Op::N, expected.view);
  const detail::Strided<T> actual_c = detail::apply_op(Op::N, actual.view);
  const detail::Strided<const T> before_c{c_in.view.data, c_in.view.rows, c_in.view.cols, c_in.view.row_stride(),
                                          c_in.view.col_stride()};
  EXPECT_TRUE(ringmm::testing::matrices_match<S>(problem, expected_c, actual_c, &before_c)) << describe(c, ctx);
  EXPECT_TRUE(outside_unchanged(c_in.storage, actual.storage, c_in))
      << "wrote outside C: " << describe(c, ctx);
}

template <class S> class CudaEngine : public ::testing::Test {};
TYPED_TEST_SUITE(CudaEngine, ringmm::testing::BuiltinSemirings, ringmm::testing::SemiringNames);

Context cuda_context(const std::string& config, BorderPolicy border) {
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_config = config;
  ctx.border = border;
  return ctx;
}

// The i-th of a list of shapes with ops, layouts, padding and α/β rotated by i, so that a list
// of shapes sees them all.
Case rotated_case(const index_t (&s)[3], int i) {
  Case c{s[0], s[1], s[2]};
  c.op_a = (i & 1) ? Op::T : Op::N;
  c.op_b = (i & 2) ? Op::T : Op::N;
  c.layout_a = (i % 3 == 0) ? Layout::col_major : Layout::row_major;
  c.layout_b = (i % 5 == 1) ? Layout::col_major : Layout::row_major;
  c.layout_c = (i % 4 == 3) ? Layout::col_major : Layout::row_major;
  c.pad = (i % 3 == 2) ? 3 : 0;
  c.random_alpha = i % 4 >= 2;
  c.random_beta = i % 2 == 1;
  return c;
}

// Odd, rectangular, transposed, padded (ld > cols) and exact tile-multiple shapes; ops, layouts,
// α/β and host/device pointers rotate across the shapes so each configuration sees them all.
std::vector<Case> small_cases() {
  const index_t shapes[][3] = {{1, 1, 1},    {7, 5, 3},      {33, 7, 129}, {127, 129, 65}, {129, 127, 33},
                               {64, 128, 16}, {128, 128, 40}, {5, 6, 0},    {2, 300, 17},  {200, 3, 9}};
  std::vector<Case> cases;
  int i = 0;
  for (const auto& s : shapes) {
    Case c = rotated_case(s, i);
    c.device = i % 2 == 0;
    cases.push_back(c);
    ++i;
  }
  return cases;
}

TYPED_TEST(CudaEngine, EveryConfigurationAndBorderMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(1);
  for (const auto& config : configurations())
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (const Case& c : small_cases()) check_case<TypeParam>(cuda_context(config, border), c, rng);
}

TYPED_TEST(CudaEngine, LargeOddShapes) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(2);
  std::vector<Case> cases = {{1000, 1025, 64}, {1025, 1000, 33}, {1025, 129, 300}};
  cases[1].op_a = Op::T;
  cases[1].device = true;
  cases[2].op_b = Op::T;
  cases[2].random_beta = true;
  cases[2].pad = 5;
  for (BorderPolicy border : {BorderPolicy::automatic, BorderPolicy::pad, BorderPolicy::predicate})
    for (const Case& c : cases) check_case<TypeParam>(cuda_context("", border), c, rng);
}

// Pad mode's ragged last rows and columns run beside the interior: at most 16 lines through the
// thin fringe kernel (thin_fringe.cuh; 8 lines a group, so 8 is one group and 9 and 12 two), more
// through the tiled fringe. Here 140×200 on 64×64 tiles has 12 rows and 8 columns of fringe,
// 136×73 8 and 9, 265×137 9 and 9, the batch of 75×1030 11 and 6; on 128×128 tiles 140×200 has 12
// and 72 and 265×137 9 and 9, while 136×73 and 75×1030 (N or M under 128) split off nothing.
TYPED_TEST(CudaEngine, ThinFringesMatchReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(9);
  std::vector<Case> cases = {{140, 200, 37}, {136, 73, 129}, {265, 137, 64}, {75, 1030, 50}};
  cases[1].op_a = Op::T;
  cases[1].random_beta = true;
  cases[2].op_b = Op::T;
  cases[2].device = true;
  cases[2].pad = 3;
  cases[3].product = Product::batched;
  cases[3].batch = 3;
  cases[3].random_beta = true;
  for (const std::string& config : configurations(true))
    for (const Case& c : cases) check_case<TypeParam>(cuda_context(config, BorderPolicy::pad), c, rng);
}

TYPED_TEST(CudaEngine, Batched) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(3);
  std::vector<Case> cases = {{33, 65, 17}, {64, 64, 32}, {7, 130, 300}};
  for (auto& c : cases) c.product = Product::batched, c.batch = 3;
  cases[0].shared_a = true;
  cases[1].device = true;
  cases[1].random_beta = true;
  cases[2].op_a = Op::T;
  cases[2].device = true;
  cases[2].shared_a = true;
  for (const std::string& config : configurations(true))
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (const Case& c : cases) check_case<TypeParam>(cuda_context(config, border), c, rng);
}

TYPED_TEST(CudaEngine, SymmetricProductComputesOneTriangle) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(4);
  std::vector<Case> cases = {{1, 1, 7}, {33, 33, 200}, {130, 130, 9}, {256, 256, 64}};
  for (auto& c : cases) c.product = Product::syrk;
  cases[1].op_a = Op::T;
  cases[1].random_beta = true;
  cases[2].device = true;
  cases[2].random_beta = true;
  cases[3].device = true;
  cases[3].pad = 2;
  for (const std::string& config : configurations(true))
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (const Case& c : cases) check_case<TypeParam>(cuda_context(config, border), c, rng);
}

// The default context (no configuration or border named): plus-times f32/f64 go through cuBLAS
// (Context::vendor_blas), every other semiring through the heuristic. Every layout, op, α/β, host
// and device pointers, batches with a shared A, and Aᵀ·A with both orientations of C.
TYPED_TEST(CudaEngine, DefaultContextMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(6);
  std::vector<Case> cases = small_cases();
  for (Case c : {Case{33, 65, 17}, Case{64, 64, 300}, Case{7, 130, 300}}) {
    c.product = Product::batched, c.batch = 3;
    c.shared_a = c.m == 33 || c.m == 7;
    c.op_a = c.m == 7 ? Op::T : Op::N;
    c.layout_c = c.m == 64 ? Layout::col_major : Layout::row_major;
    c.device = c.m != 33;
    c.random_beta = c.m == 64;
    cases.push_back(c);
  }
  for (Case c : {Case{1, 1, 7}, Case{33, 33, 200}, Case{130, 130, 9}, Case{256, 256, 64}}) {
    c.product = Product::syrk;
    c.op_a = c.m == 33 ? Op::T : Op::N;
    c.layout_a = c.m == 130 ? Layout::col_major : Layout::row_major;
    c.layout_c = c.m == 33 || c.m == 256 ? Layout::col_major : Layout::row_major;
    c.random_beta = c.m != 1;
    c.device = c.m >= 130;
    c.pad = c.m == 256 ? 2 : 0;
    cases.push_back(c);
  }
  Context own = cuda_context("", BorderPolicy::automatic);
  own.vendor_blas = false;
  for (const Case& c : cases) {
    check_case<TypeParam>(cuda_context("", BorderPolicy::automatic), c, rng);
    check_case<TypeParam>(own, c, rng);
  }
}

// Few output tiles and a long K: the default context splits K into parts reduced with ⊕ (the
// last part shorter than the others in every case here), exact against the reference.
TYPED_TEST(CudaEngine, SplitKMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(7);
  std::vector<Case> cases = {{7, 5, 1000}, {20, 30, 5000}, {200, 190, 2000}, {1, 1, 4097}};
  cases[1].op_a = Op::T, cases[1].layout_c = Layout::col_major, cases[1].random_beta = true, cases[1].device = true;
  cases[2].op_b = Op::T, cases[2].pad = 3, cases[2].random_alpha = true;
  cases[3].layout_a = Layout::col_major, cases[3].random_beta = true, cases[3].device = true;
  for (const Case& c : cases) check_case<TypeParam>(cuda_context("", BorderPolicy::automatic), c, rng);
}

// Split-K as the caller names it, on the small kernel and the large ones in both borders. Where ⊕
// selects, K = 1000 in 2 parts is two equal members of one batch, in 3, 4 and 8 overlapping members
// (steps of 332, 248 and 124 over parts of 336, 256 and 132), in 7 as 6 chunks of 144 and a
// remainder (the overlap would exceed K/16), and K = 999 overlaps by 7, 3 and 7 terms; sums take
// chunks and a remainder, which K = 1024 lacks in 2, 4 and 8 parts. On the small kernel, a split
// into members only, at most 8, meets in thread block clusters where the GPU has them (the
// reductions into 130×70, 65×129 and 70×128 go through both of C's write paths, with α and β);
// the rest through the workspace. Exact against the reference (tolerances for the float sums).
TYPED_TEST(CudaEngine, NamedSplitsOfKMatchReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(17);
  const std::pair<const char*, BorderPolicy> kernels[] = {{"small64", BorderPolicy::automatic},
                                                          {"b64x64_k16_t4x4_blk", BorderPolicy::predicate},
                                                          {"b128x128_k8_t8x8_bcyc", BorderPolicy::pad}};
  for (const auto& [config, border] : kernels)
    for (int parts : {2, 3, 4, 7, 8})
      for (Case c : {Case{130, 70, 1000}, Case{65, 129, 999}, Case{33, 7, 37}, Case{70, 128, 1024}}) {
        Context ctx = cuda_context(config, border);
        ctx.cuda_split_k = parts;
        SCOPED_TRACE(std::string(config) + ", K in " + std::to_string(parts) + " parts");
        c.device = c.k != 999;
        c.random_beta = c.k == 37 || c.k == 1024;
        c.random_alpha = c.k == 1024;
        c.op_b = c.k == 999 ? Op::T : Op::N;
        check_case<TypeParam>(ctx, c, rng);
      }
}

// The small-product kernel (ringmm/cuda/small_kernel.cuh) under each tile edge it has (T = 64 in
// both its builds), on every shape of the tests above (odd, transposed, padded, K = 0, Aᵀ·A, batches
// with a shared A) and on shapes whose quads are whole and aligned (its vector loads and stores),
// row- and column-major.
TYPED_TEST(CudaEngine, SmallKernelMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(8);
  std::vector<Case> cases = small_cases();
  for (index_t s : {0, 1, 7, 33, 127, 129, 1000, 1025}) cases.push_back(Case{s, s == 1025 ? 1000 : s, s == 0 ? 5 : 31});
  for (Case c : {Case{64, 64, 64}, Case{32, 48, 20}, Case{16, 16, 16}, Case{100, 64, 8}, Case{64, 12, 36}}) {
    const bool columns = c.m == 32 || c.m == 100;
    c.layout_a = columns ? Layout::col_major : Layout::row_major;
    c.layout_b = columns || c.m == 64 ? Layout::col_major : Layout::row_major;
    c.layout_c = c.m == 16 ? Layout::col_major : Layout::row_major;
    c.device = c.m != 100;
    c.random_beta = c.m == 64 || c.m == 16;
    cases.push_back(c);
    c.product = Product::batched, c.batch = 5, c.shared_a = c.m == 16;
    cases.push_back(c);
  }
  for (Case c : {Case{33, 33, 20}, Case{64, 64, 16}}) {
    c.product = Product::syrk, c.random_beta = true, c.device = c.m == 64;
    cases.push_back(c);
  }
  // More T = 64 blocks than two per SM on any GPU here (the four-block build, heuristics.hpp:
  // small_min_blocks), with whole aligned quads: most cases above fit two per SM.
  Case many{64, 64, 64};
  many.product = Product::batched, many.batch = 300, many.device = true, many.random_beta = true;
  cases.push_back(many);
  for (const char* tile : {"small16", "small32", "small64"})
    for (const Case& c : cases) check_case<TypeParam>(cuda_context(tile, BorderPolicy::automatic), c, rng);
}

// Batches past the grid's z limit of 65 535: the small kernel numbers tiles on grid x, the large
// kernels launch z in slices. Both, host and device pointers, a shared A.
TEST(CudaEngineBatches, MoreMembersThanTheGridsZLimit) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(9);
  for (Case c : {Case{16, 16, 16}, Case{3, 5, 4}}) {
    c.product = Product::batched, c.batch = 70000;
    c.device = c.m == 16;
    c.shared_a = c.m == 3;
    c.random_beta = c.m == 3;
    check_case<MaxPlus<float>>(cuda_context("", BorderPolicy::automatic), c, rng);
    check_case<MaxPlus<std::int32_t>>(cuda_context("", BorderPolicy::automatic), c, rng);
    check_case<MaxPlus<float>>(cuda_context("b64x64_k16_t4x4_blk", BorderPolicy::predicate), c, rng);
  }
}

// ---- the host pipeline --------------------------------------------------------------------------

// Sets the host pipeline's tuning (ringmm/cuda/host_staging.hpp) for one test and restores it.
class HostPipelineSettings {
 public:
  HostPipelineSettings(std::size_t min_bytes, index_t panel_rows, std::size_t slot_bytes) : saved_(tuning()) {
    tuning().min_bytes = min_bytes, tuning().panel_rows = panel_rows, tuning().slot_bytes = slot_bytes;
  }
  ~HostPipelineSettings() {
    tuning().min_bytes = saved_.min_bytes, tuning().panel_rows = saved_.panel_rows, tuning().slot_bytes = saved_.slot_bytes;
  }
  static unsigned long runs() { return tuning().runs.load(); }

 private:
  struct Saved {
    std::size_t min_bytes;
    index_t panel_rows;
    std::size_t slot_bytes;
    explicit Saved(const cuda_detail::HostPipelineTuning& t) : min_bytes(t.min_bytes), panel_rows(t.panel_rows), slot_bytes(t.slot_bytes) {}
  };
  static cuda_detail::HostPipelineTuning& tuning() { return cuda_detail::host_pipeline_tuning(); }
  Saved saved_;
};

// check_case on host operands, expecting the call to take the host pipeline.
template <class S> void check_pipelined(const Context& ctx, const Case& c, std::mt19937_64& rng) {
  const unsigned long before = HostPipelineSettings::runs();
  check_case<S>(ctx, c, rng);
  EXPECT_EQ(HostPipelineSettings::runs(), before + 1) << "not pipelined: " << describe(c, ctx);
}

// Host A, B and C in row panels of 128 (the last one ragged) through staging slots of 4 KiB, so
// that chunks hold many lines, one line, or a piece of one: M = 1, 7, 129, 1000, 1025, K = 0,
// rectangular, transposed, padded, column-major, β reading C, pageable, pinned and mixed memory.
TYPED_TEST(CudaEngine, HostPipelineMatchesReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  const HostPipelineSettings small(0, 128, 4096);
  std::mt19937_64 rng(12);
  const index_t shapes[][3] = {{1, 1, 1},     {1, 300, 70},   {7, 5, 3},      {129, 65, 17},  {300, 130, 0},
                               {1000, 33, 129}, {1025, 200, 64}, {256, 1100, 9}, {129, 1025, 1030}, {640, 7, 300}};
  const unsigned pinned[] = {0, 7, 0, 4, 3, 0, 7, 1, 0, 6};
  int i = 0;
  for (const auto& s : shapes) {
    Case c = rotated_case(s, i);
    c.pinned = pinned[i];
    check_pipelined<TypeParam>(cuda_context("", BorderPolicy::automatic), c, rng);
    Context own = cuda_context("", BorderPolicy::automatic);
    own.vendor_blas = false;
    check_pipelined<TypeParam>(own, c, rng);
    ++i;
  }
}

// The pipeline as it runs by default (panel rows chosen per call, slots of the default size) on
// a stream of the caller's, and a configuration and border named for its panels.
TYPED_TEST(CudaEngine, HostPipelineDefaultPanels) {
  RINGMM_SKIP_WITHOUT_GPU();
  const HostPipelineSettings any_size(0, 0, cuda_detail::HostPipelineTuning{}.slot_bytes);
  std::mt19937_64 rng(13);
  std::vector<Case> cases = {{1000, 1025, 64}, {2049, 300, 40}, {1025, 129, 0}, {300, 2000, 512}};
  cases[1].random_beta = true, cases[1].layout_c = Layout::col_major;
  cases[2].random_beta = true, cases[2].pinned = 7;
  cases[3].op_a = Op::T, cases[3].pad = 5, cases[3].pinned = 2;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  Context on_stream = cuda_context("", BorderPolicy::automatic);
  on_stream.cuda_stream = stream;
  for (const Case& c : cases) {
    check_pipelined<TypeParam>(on_stream, c, rng);
    check_pipelined<TypeParam>(cuda_context(std::string(cuda_detail::config_table[0].name), BorderPolicy::pad), c, rng);
  }
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// Below the size threshold, and for batches and Aᵀ·A, host operands take the ordinary staging.
TEST(CudaHostPipeline, TakenOnlyWhereItApplies) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(14);
  const unsigned long before = HostPipelineSettings::runs();
  check_case<MaxPlus<float>>(cuda_context("", BorderPolicy::automatic), Case{200, 200, 200}, rng);  // 480 KB < 8 MiB
  EXPECT_EQ(HostPipelineSettings::runs(), before);
  const HostPipelineSettings small(0, 128, 4096);
  Case batched{33, 65, 17};
  batched.product = Product::batched, batched.batch = 3;
  Case syrk{130, 130, 9};
  syrk.product = Product::syrk;
  check_case<MaxPlus<float>>(cuda_context("", BorderPolicy::automatic), batched, rng);
  check_case<MaxPlus<float>>(cuda_context("", BorderPolicy::automatic), syrk, rng);
  EXPECT_EQ(HostPipelineSettings::runs(), before);
}

// ---- or-and on tensor cores ---------------------------------------------------------------------

// Both MMA routes of or-and (ringmm/cuda/or_and_mma.cuh) against the reference: odd, rectangular,
// transposed and padded shapes, α/β, batches with a shared A, Aᵀ·A with β, host and device pointers.
// (The default context's tests above run the automatic route as well.)
TEST(CudaOrAndTensorCores, BothRoutesMatchReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(11);
  std::vector<Case> cases = small_cases();
  for (index_t s : {0, 1, 7, 33, 127, 129, 1000, 1025}) {
    Case c{s, s, s};
    c.op_b = s % 2 ? Op::T : Op::N;
    c.random_beta = s == 129 || s == 1025;
    c.device = s >= 127;
    cases.push_back(c);
  }
  // {33, 102, 77} with ld 104: Bᵀ's rows are contiguous and 4-byte aligned, so the packing walks
  // across them 4 at a time (int8) or transposes 128 at a time (bits), the last 2 past the view.
  std::vector<Case> more = {{1, 300, 2049}, {300, 1, 65}, {129, 257, 4099}, {1000, 7, 1}, {65, 33, 0}, {33, 102, 77}};
  more[0].layout_a = Layout::col_major, more[1].op_a = Op::T, more[1].device = true;
  more[5].pad = 2, more[5].device = true;
  more[2].pad = 5, more[2].random_alpha = true, more[2].random_beta = true, more[2].layout_c = Layout::col_major;
  more[3].device = true, more[4].random_beta = true;
  for (Case c : {Case{33, 65, 17}, Case{129, 7, 300}, Case{64, 64, 1030}}) {
    c.product = Product::batched, c.batch = c.m == 129 ? 5 : 3;
    c.shared_a = c.m != 64;
    c.device = c.m != 33;
    c.random_beta = c.m == 129;
    more.push_back(c);
  }
  for (Case c : {Case{1, 1, 7}, Case{33, 33, 200}, Case{257, 257, 300}, Case{129, 129, 1025}}) {
    c.product = Product::syrk;
    c.op_a = c.m == 33 ? Op::T : Op::N;
    c.layout_c = c.m == 129 ? Layout::col_major : Layout::row_major;
    c.random_beta = c.m != 1;
    c.device = c.m >= 257 || c.m == 1;
    c.pad = c.m == 257 ? 2 : 0;
    more.push_back(c);
  }
  cases.insert(cases.end(), more.begin(), more.end());
  for (BooleanMma route : {BooleanMma::int8, BooleanMma::bits}) {
    Context ctx = cuda_context("", BorderPolicy::automatic);
    ctx.boolean_mma = route;
    SCOPED_TRACE(std::string("route ") + std::string(to_string(route)));
    for (const Case& c : cases) check_case<OrAnd>(ctx, c, rng);
  }
}

// K's short tail and C's ragged fringe (ringmm/cuda/or_and_mma.cuh): the tail of ≤ 8 words past
// K's last whole stage of 32 words is ANDed in by the tile's epilogue on CUDA cores (more runs as a
// last, guarded MMA stage), and m or n mod 128 of 1 to 16 lines by fringe blocks (17 or more as a
// ragged MMA tile). K is given in words of the route (32 booleans a word on bits, 4 on int8), so
// that each route sees each tail. The data are sparse (random_value's density follows K), so that
// about half of C is 0; `live_*` cases zero all but the tail's k or the ragged lines, so that a
// skipped or misplaced tail or fringe leaves ones out.
std::vector<Case> tail_and_fringe_cases(BooleanMma route) {
  const index_t e = route == BooleanMma::bits ? 32 : 4;
  auto k_of = [e](index_t words, index_t short_by) { return words * e - short_by; };  // K in `words` words
  std::vector<Case> cases;
  // The tail on whole tiles (no fringe): 1, 7, 8 words after whole stages, and 9 (a guarded stage);
  // K of fewer words than a stage (all tail, or one guarded stage); whole stages; K = 1 and 0.
  const index_t exact[][3] = {{128, 256, k_of(33, e - 1)}, {256, 128, k_of(39, 0)},  {128, 128, k_of(40, e / 2)},
                              {128, 128, k_of(41, 1)},     {128, 256, k_of(65, 0)},  {128, 128, k_of(2, e - 1)},
                              {128, 128, k_of(8, 0)},      {128, 128, k_of(9, 3)},   {256, 256, k_of(64, 0)},
                              {128, 128, 1},               {128, 128, 0},
                              // The tail's shared memory is the pipeline slot the last stages leave
                              // free (stages mod 3): 3 and 6 stages put it beside the flags in slot 0.
                              {128, 128, k_of(97, 0)},     {128, 256, k_of(99, e - 1)}, {256, 128, k_of(193, 1)},
                              // Tails of 5 to 8 words (two copies a row) copied from inside the loop: slots 2, 0, 1.
                              {128, 128, k_of(71, 0)},     {256, 128, k_of(103, 1)},    {128, 256, k_of(136, 0)}};
  int i = 0;
  for (const auto& s : exact) {
    Case c = rotated_case(s, i++);
    c.device = i % 2 == 0;
    cases.push_back(c);
  }
  // Only the tail's k are shared: its 7 words (after 1 and 3 stages), its one word (after 3) and the
  // one k of its one word (after 2).
  for (Case c : {Case{256, 128, k_of(39, 0)}, Case{128, 256, k_of(65, e - 1)}, Case{128, 128, k_of(97, 0)},
                 Case{128, 128, k_of(103, 0)}}) {
    c.live_k = c.k - (c.k % (32 * e) == 0 ? 32 * e : c.k % (32 * e));
    c.random_beta = c.m == 128;
    cases.push_back(c);
  }
  // The K (bits: 4097 = 128 words and 1, 1248 = 39 words, ...) on a row fringe of 1 and a
  // column fringe of 15.
  for (index_t k : {4097, 1024 + 224, 1024 + 256, 1024 + 257, 33, 255, 257, 1, 0}) {
    Case c{129, 256 + 15, k};
    c.device = k % 2 == 1, c.random_beta = k == 257;
    cases.push_back(c);
  }
  // 1, 2, 15, 16 ragged lines (a fringe) and 17 (a ragged tile), of rows, of columns and of both,
  // and C of fewer lines than a tile; ops, layouts, padding and α/β rotate.
  const index_t k1 = k_of(33, 3);
  const index_t ragged[][3] = {{129, 256, k1}, {130, 256, k1}, {143, 256, k1}, {144, 256, k1}, {145, 256, k1},
                               {256, 129, k1}, {256, 130, k1}, {256, 143, k1}, {256, 144, k1}, {256, 145, k1},
                               {145, 144, k1}, {144, 145, k1}, {272, 130, k1}, {1, 300, k1},   {300, 1, k1},
                               {16, 16, k1},   {17, 16, k1},   {16, 17, k1},   {2, 2, k1},     {16, 200, k1},
                               {200, 16, k1},  {129, 129, 5000}};
  for (const auto& s : ragged) {
    Case c = rotated_case(s, i++);
    c.device = i % 2 == 0;
    c.offset = c.device ? i % 4 : 0;
    cases.push_back(c);
  }
  // Only the ragged lines hold ones: rows (16 of a fringe), columns (15), both (the fringes'
  // corner), 17 of each (ragged tiles); and fringes whose only shared k are in their tail word, or
  // in the second chunk of the thin lines in shared memory (1536 words), of rows and of columns.
  auto live = [](Case c, index_t m_from, index_t n_from, index_t k_from) {
    c.live_m = m_from, c.live_n = n_from, c.live_k = k_from;
    return c;
  };
  for (Case c : {live({272, 256, k1}, 256, 0, 0), live({256, 271, k1}, 0, 256, 0), live({144, 130, k1}, 128, 128, 0),
                 live({145, 145, k1}, 128, 128, 0), live({129, 272, k_of(129, e - 1)}, 0, 0, 128 * e),
                 live({130, 20, k_of(1600, 5 % e)}, 0, 0, 1540 * e), live({20, 130, k_of(1600, 3 % e)}, 0, 0, 1540 * e)}) {
    c.layout_c = c.n == 130 ? Layout::col_major : Layout::row_major;
    c.random_beta = c.m == 145;
    c.op_b = c.m == 20 ? Op::T : Op::N;
    c.device = c.n != 256;
    cases.push_back(c);
  }
  // Batches (A shared and not) over a fringe and a tail; β and column-major C.
  for (Case c : {Case{129, 272, k1}, Case{272, 129, k_of(39, 1)}, Case{144, 17, k1}}) {
    c.product = Product::batched, c.batch = c.m == 144 ? 2 : 3;
    c.shared_a = c.m != 272;
    c.random_beta = c.m != 129, c.layout_c = c.m == 144 ? Layout::col_major : Layout::row_major;
    c.device = c.m != 129, c.offset = c.m == 272 ? 1 : 0;
    if (c.m == 144) c.live_m = 128;
    cases.push_back(c);
  }
  // Aᵀ·A: a row fringe of 1, 15 and 16 (the lower triangle's ragged columns lie in its rows), 17
  // (a ragged tile), C of 1 and 16 lines; β, column-major C, and ones only in the ragged rows.
  for (Case c : {Case{129, 129, k1}, Case{271, 271, k_of(39, 0)}, Case{144, 144, k1}, Case{145, 145, k1},
                 Case{1, 1, k1}, Case{16, 16, k_of(9, 1)}, Case{272, 272, k1}}) {
    c.product = Product::syrk;
    c.op_a = c.m == 271 ? Op::T : Op::N;
    c.random_beta = c.m != 1, c.layout_c = c.m == 144 || c.m == 16 ? Layout::col_major : Layout::row_major;
    c.device = c.m % 2 == 1;
    if (c.m == 272) c.live_m = 256;
    cases.push_back(c);
  }
  return cases;
}

// Every packing walk (pack() in or_and_mma.cuh) on views at odd addresses, so that their aligned
// loads re-align (load_bytes): A row-major and Bᵀ of B transposed (k contiguous: along k), B
// row-major and A column-major (rows contiguous: bits transposes them in shared memory, int8
// walks across rows), with K and the row lengths multiples of 4 (only the offset misaligns) and odd.
std::vector<Case> unaligned_cases(BooleanMma route) {
  const index_t e = route == BooleanMma::bits ? 32 : 4;
  std::vector<Case> cases;
  int i = 0;
  for (index_t offset : {1, 2, 3}) {
    for (const auto& s : {std::array<index_t, 3>{144, 132, 40 * e}, std::array<index_t, 3>{129, 130, 33 * e - 1},
                          std::array<index_t, 3>{20, 257, 4 * e + 3}}) {
      Case c{s[0], s[1], s[2]};
      c.device = true, c.offset = offset, c.pad = offset == 2 ? 1 : 0;
      c.op_b = i % 2 ? Op::T : Op::N;
      c.layout_a = i % 4 >= 2 ? Layout::col_major : Layout::row_major;
      c.random_beta = i % 3 == 2;
      cases.push_back(c);
      ++i;
    }
  }
  // A batch whose members begin at every address mod 4 (make_operand spaces them extent + 3 apart).
  Case batched{129, 33, 33 * e + 1};
  batched.product = Product::batched, batched.batch = 4, batched.device = true, batched.offset = 1;
  cases.push_back(batched);
  return cases;
}

TEST(CudaOrAndTensorCores, TailsFringesAndUnalignedViews) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(13);
  for (BooleanMma route : {BooleanMma::int8, BooleanMma::bits}) {
    Context ctx = cuda_context("", BorderPolicy::automatic);
    ctx.boolean_mma = route;
    SCOPED_TRACE(std::string("route ") + std::string(to_string(route)));
    for (const Case& c : tail_and_fringe_cases(route)) check_case<OrAnd>(ctx, c, rng);
    for (const Case& c : unaligned_cases(route)) check_case<OrAnd>(ctx, c, rng);
  }
}

// K beyond 2²⁴ (where f32 counts would stop being exact): an entry whose one shared k is the last,
// an entry whose every k is shared (count K), and entries with none.
TEST(CudaOrAndTensorCores, LongK) {
  RINGMM_SKIP_WITHOUT_GPU();
  const index_t k = (index_t(1) << 24) + 5;
  std::vector<std::uint8_t> a(std::size_t(2 * k), 0), b(std::size_t(k * 2), 0);  // A 2×K, B K×2 row-major
  a[std::size_t(k - 1)] = 1;                                                     // A(0, K−1)
  for (index_t kk = 0; kk < k; ++kk) a[std::size_t(k + kk)] = 7, b[std::size_t(kk * 2 + 1)] = 1;  // A(1, ·), B(·, 1)
  b[std::size_t((k - 1) * 2)] = 255;                                             // B(K−1, 0)
  for (BooleanMma route : {BooleanMma::int8, BooleanMma::bits}) {
    Context ctx = cuda_context("", BorderPolicy::automatic);
    ctx.boolean_mma = route;
    DeviceCopy<std::uint8_t> da(a), db(b), dc(std::vector<std::uint8_t>(4, 0xa5));
    gemm<OrAnd>(ctx, Op::N, MatrixView<const std::uint8_t>{da.ptr, 2, k, k, Layout::row_major}, Op::N,
                MatrixView<const std::uint8_t>{db.ptr, k, 2, 2, Layout::row_major},
                MatrixView<std::uint8_t>{dc.ptr, 2, 2, 2, Layout::row_major});
    std::vector<std::uint8_t> c(4);
    dc.to_host(c);
    // C(0,0): the last k; C(0,1): A(0,K−1)·B(K−1,1) = 1; C(1,0): A(1,K−1)·B(K−1,0); C(1,1): every k.
    EXPECT_EQ(c, (std::vector<std::uint8_t>{1, 1, 1, 1})) << to_string(route);
    // Without the last k nothing is shared in row 0.
    gemm<OrAnd>(ctx, Op::N, MatrixView<const std::uint8_t>{da.ptr, 2, k - 1, k, Layout::row_major}, Op::N,
                MatrixView<const std::uint8_t>{db.ptr, k - 1, 2, 2, Layout::row_major},
                MatrixView<std::uint8_t>{dc.ptr, 2, 2, 2, Layout::row_major});
    dc.to_host(c);
    EXPECT_EQ(c, (std::vector<std::uint8_t>{0, 0, 0, 1})) << to_string(route);
  }
}

// ---- refusals -------------------------------------------------------------------------------

template <class S> void expect_refusal(typename S::value_type bad, const std::string& subject, bool device) {
  using T = typename S::value_type;
  std::mt19937_64 rng(5);
  const index_t n = 40;
  auto a = make_operand<S>(n, n, Layout::row_major, 0, 1, false, rng, n, false);
  auto b = make_operand<S>(n, n, Layout::row_major, 0, 1, false, rng, n, false);
  auto c = make_operand<S>(n, n, Layout::row_major, 0, 1, false, rng, n, false);
  T alpha = S::one(), beta = S::one();
  if (subject == "A") a.storage[17] = bad;
  if (subject == "B") b.storage[n * n - 1] = bad;
  if (subject == "C") c.storage[3] = bad;
  if (subject == "alpha") alpha = bad;
  if (subject == "beta") beta = bad;
  const auto c_before = c.storage;
  auto attempt = [&](MatrixView<const T> av, MatrixView<const T> bv, MatrixView<T> cv) {
    try {
      gemm<S>(cuda_context("", BorderPolicy::automatic), Op::N, av, Op::N, bv, cv, alpha, beta);
      ADD_FAILURE() << "accepted a bad " << subject;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::value_out_of_range) << e.what();
      EXPECT_EQ(e.subject(), subject) << e.what();
    }
  };
  if (device) {
    DeviceCopy<T> da(a.storage), db(b.storage), dc(c.storage);
    attempt({da.ptr, n, n, n, Layout::row_major}, {db.ptr, n, n, n, Layout::row_major}, {dc.ptr, n, n, n, Layout::row_major});
    dc.to_host(c.storage);
  } else {
    attempt(a.view, b.view, c.view);
  }
  EXPECT_TRUE(ringmm::testing::same_bits(c_before, c.storage)) << "C changed by a refused call (" << subject << ")";
}

TEST(CudaEngineRefusals, IntegerTropicalOutOfRange) {
  RINGMM_SKIP_WITHOUT_GPU();
  for (bool device : {false, true}) {
    for (const char* subject : {"A", "B", "C", "alpha", "beta"}) {
      expect_refusal<MaxPlus<std::int32_t>>(std::int32_t(1) << 29, subject, device);
      expect_refusal<MinPlus<std::int32_t>>(-(std::int32_t(1) << 29), subject, device);
      expect_refusal<MaxPlus<i16x2>>({0, 5000}, subject, device);
      expect_refusal<MinPlus<i16x2>>({-16383, 0}, subject, device);  // max-plus's sentinel is not min-plus's
    }
  }
}

// The device scan reads compact operands as one flat run; a refused value is still named by its
// row, column and batch member, for row- and column-major members alike.
TEST(CudaEngineRefusals, CompactBatchesNameTheRefusedElement) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<std::int32_t>;
  const index_t rows = 5, cols = 4, batch = 3;
  for (Layout layout : {Layout::row_major, Layout::col_major}) {
    std::vector<std::int32_t> a(std::size_t(rows * cols * batch), 1), b(std::size_t(cols * cols * batch), 2);
    std::vector<std::int32_t> c(std::size_t(rows * cols * batch), 0);
    const index_t i = 2, j = 3, member = 1;
    const index_t at = member * rows * cols + (layout == Layout::row_major ? i * cols + j : j * rows + i);
    a[std::size_t(at)] = std::int32_t(1) << 29;
    DeviceCopy<std::int32_t> da(a), db(b), dc(c);
    const index_t ld_a = layout == Layout::row_major ? cols : rows;
    try {
      gemm_batched<S>(cuda_context("", BorderPolicy::automatic), Op::N, MatrixView<const std::int32_t>{da.ptr, rows, cols, ld_a, layout},
                      rows * cols, Op::N, MatrixView<const std::int32_t>{db.ptr, cols, cols, cols, Layout::row_major},
                      cols * cols, MatrixView<std::int32_t>{dc.ptr, rows, cols, cols, Layout::row_major}, rows * cols, batch);
      ADD_FAILURE() << "accepted an out-of-range A";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::value_out_of_range) << e.what();
      EXPECT_NE(std::string(e.what()).find("element (2, 3) of batch member 1"), std::string::npos) << e.what();
    }
  }
}

// A compact operand of 12.6 million elements, beside a small B in the same launch of the device
// scan (each of its threads reads several vectors of A): of several refused values, the first in
// the order of the batch's rows is named, wherever the scan's threads meet them.
TEST(CudaEngineRefusals, LargeScansNameTheFirstRefusedElement) {
  RINGMM_SKIP_WITHOUT_GPU();
  using S = MaxPlus<std::int32_t>;
  const index_t edge = 128, batch = 768, size = edge * edge;
  std::vector<std::int32_t> a(std::size_t(size * batch), 1), b(std::size_t(size), 2), c(std::size_t(size * batch), 0);
  DeviceCopy<std::int32_t> db(b), dc(c);
  const std::int32_t bad = std::int32_t(1) << 29;
  // Refused positions, and the one the message names: (i, j) of member m at m·size + i·edge + j.
  const std::vector<std::pair<std::vector<index_t>, std::string>> cases = {
      {{size * batch - 1, 5 * size * 100 + 7, 3 * size * 61 + 1234}, "element (9, 82) of batch member 183"},
      {{size * batch - 1}, "element (127, 127) of batch member 767"},
      {{size * 400 + 3 * edge + 5, size * 400 + 3 * edge + 6}, "element (3, 5) of batch member 400"}};
  for (const auto& [positions, named] : cases) {
    std::vector<std::int32_t> with = a;
    for (index_t at : positions) with[std::size_t(at)] = bad;
    DeviceCopy<std::int32_t> da(with);
    try {
      gemm_batched<S>(cuda_context("", BorderPolicy::automatic), Op::N,
                      MatrixView<const std::int32_t>{da.ptr, edge, edge, edge, Layout::row_major}, size, Op::N,
                      MatrixView<const std::int32_t>{db.ptr, edge, edge, edge, Layout::row_major}, 0,
                      MatrixView<std::int32_t>{dc.ptr, edge, edge, edge, Layout::row_major}, size, batch);
      ADD_FAILURE() << "accepted an out-of-range A";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::value_out_of_range) << e.what();
      EXPECT_NE(std::string(e.what()).find(named), std::string::npos) << e.what();
    }
  }
  std::vector<std::int32_t> after(c.size());
  dc.to_host(after);
  EXPECT_EQ(after, c) << "a refused call wrote C";
}

TEST(CudaEngineRefusals, MaxTimesOutsideItsDomain) {
  RINGMM_SKIP_WITHOUT_GPU();
  for (bool device : {false, true}) {
    for (const char* subject : {"A", "B", "C", "alpha", "beta"}) {
      expect_refusal<MaxTimes<float>>(-0.5f, subject, device);
      expect_refusal<MaxTimes<double>>(std::numeric_limits<double>::infinity(), subject, device);
    }
  }
}

TEST(CudaEngineRefusals, PlusTimesI32Overflow) {
  RINGMM_SKIP_WITHOUT_GPU();
  for (bool device : {false, true}) expect_refusal<PlusTimes<std::int32_t>>(std::int32_t(1) << 30, "A", device);
}

// Host operands that would take the host pipeline are checked before its first panel is written.
TEST(CudaEngineRefusals, HostPipelineWritesNothingOnRefusal) {
  RINGMM_SKIP_WITHOUT_GPU();
  const HostPipelineSettings small(0, 16, 4096);  // 40 rows: three panels
  for (const char* subject : {"A", "B", "C", "alpha", "beta"}) {
    expect_refusal<MaxPlus<std::int32_t>>(std::int32_t(1) << 29, subject, false);
    expect_refusal<MaxTimes<float>>(-0.5f, subject, false);
  }
}

TEST(CudaEngineRefusals, UnknownConfiguration) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 0.0f);
  try {
    gemm<MaxPlus<float>>(cuda_context("no-such-config", BorderPolicy::automatic), Op::N,
                         row_major<const float>(a.data(), 2, 2), Op::N, row_major<const float>(b.data(), 2, 2),
                         row_major(c.data(), 2, 2));
    ADD_FAILURE() << "accepted an unknown configuration";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument);
    EXPECT_EQ(e.subject(), "cuda_config");
  }
  EXPECT_EQ(c, std::vector<float>(4, 0.0f));
}

// A semiring the library does not ship, called from C++ rather than CUDA code: the engine template
// is not visible here, so the CUDA backend refuses it and says how to get the GPU path
// (user_semiring_test.cu takes that path).
struct UserMinPlus {
  using value_type = float;
  static constexpr float zero() { return std::numeric_limits<float>::infinity(); }
  static constexpr float one() { return 0.0f; }
  static float add(float a, float b) { return a < b ? a : b; }
  static float mul(float a, float b) { return a + b; }
};

TEST(CudaEngineRefusals, UserSemiringOutsideCudaCode) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 0.0f);
  try {
    gemm<UserMinPlus>(cuda_context("", BorderPolicy::automatic), Op::N, row_major<const float>(a.data(), 2, 2), Op::N,
                      row_major<const float>(b.data(), 2, 2), row_major(c.data(), 2, 2));
    ADD_FAILURE() << "ran a user-defined semiring on the CUDA backend from C++ code";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_EQ(e.subject(), "semiring");
    EXPECT_NE(std::string(e.what()).find("nvcc"), std::string::npos) << e.what();
  }
  EXPECT_EQ(c, std::vector<float>(4, 0.0f));
}

}  // namespace
