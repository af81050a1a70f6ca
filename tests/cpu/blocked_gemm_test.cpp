// The CPU backend (OpenBLAS for plus-times f32/f64, the shift trick for large log-plus products,
// the blocked kernel for the rest) and the blocked kernel itself, for every built-in semiring and type, against cpu::reference_gemm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ringmm/cpu/blocked.hpp"
#include "ringmm_testing.hpp"

namespace ringmm {
namespace {

using testing::HostMatrix;

template <class S> using T_of = typename S::value_type;

// One checked product: shapes, ops, layouts, padding, scalars, batch and threads.
struct Case {
  index_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  Layout la = Layout::row_major, lb = Layout::row_major, lc = Layout::row_major;
  index_t pad = 0;          // extra elements per leading-dimension line, every operand
  bool scalars = false;     // non-trivial α and β (else α = 1̄, β = 0̄ over a poisoned C)
  index_t batch = 1;
  bool share_a = false;     // stride_a = 0: one A for every member
  int threads = 0;
  bool syrk = false;        // C ← α ⊗ (op(A)ᵀ ⊗ op(A)) ⊕ β ⊗ C; op_a says which

  std::string describe() const {
    auto l = [](Layout x) { return x == Layout::row_major ? "R" : "C"; };
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " op" +
           std::string(to_string(op_a)) + std::string(to_string(op_b)) + " layout " + l(la) + l(lb) + l(lc) +
           " pad " + std::to_string(pad) + (scalars ? " scalars" : "") + " batch " + std::to_string(batch) +
           (share_a ? " sharedA" : "") + " threads " + std::to_string(threads) + (syrk ? " syrk" : "");
  }
};

// A random value that is neither 0̄ nor 1̄, for α and β.
template <class S> T_of<S> nontrivial(std::mt19937_64& rng) {
  for (;;) {
    const T_of<S> x = testing::random_value<S>(rng);
    if (!(x == S::zero()) && !(x == S::one())) return x;
  }
}

// A batch of `batch` matrices, member b at offset b·stride, padding and gaps poisoned.
template <class S> struct Batch {
  HostMatrix<T_of<S>> storage;  // one tall matrix holding every member's lines
  MatrixView<T_of<S>> first;    // member 0
  index_t stride = 0;
};

template <class S>
Batch<S> random_batch(index_t rows, index_t cols, Layout layout, index_t pad, index_t batch, bool shared,
                      std::mt19937_64& rng, index_t k, bool fill) {
  using T = T_of<S>;
  const index_t ld = std::max<index_t>(1, (layout == Layout::row_major ? cols : rows) + pad);
  const index_t lines = layout == Layout::row_major ? rows : cols;
  const index_t members = shared ? 1 : batch;
  const index_t stride = shared ? 0 : lines * ld + 3;  // a gap of 3 poisoned elements between members
  Batch<S> out;
  out.stride = stride;
  out.storage.storage.assign(std::size_t(std::max<index_t>(1, (members - 1) * stride + lines * ld)), testing::poison<T>());
  out.first = {out.storage.storage.data(), rows, cols, ld, layout};
  if (fill)
    for (index_t b = 0; b < members; ++b) {
      MatrixView<T> v = out.first;
      v.data += b * stride;
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < cols; ++j) v(i, j) = testing::random_value<S>(rng, k);
    }
  return out;
}

// Storage positions that belong to some member of C (the rest must keep their poison).
template <class T> std::vector<bool> covered(const MatrixView<T>& first, index_t stride, index_t batch, std::size_t size) {
  std::vector<bool> in(size, false);
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < first.rows; ++i)
      for (index_t j = 0; j < first.cols; ++j) in[std::size_t(b * stride + i * first.row_stride() + j * first.col_stride())] = true;
  return in;
}

// backend: the public API (BLAS for plus-times f32/f64); blocked: cpu::blocked_gemm (the widest
// instruction set this CPU has); generic / avx2: the blocked kernel built for that instruction set.
enum class Path { backend, blocked, generic, avx2 };

const char* path_name(Path path) {
  switch (path) {
    case Path::backend: return " [backend]";
    case Path::blocked: return " [blocked]";
    case Path::generic: return " [blocked generic]";
    case Path::avx2: return " [blocked avx2]";
  }
  return "";
}

// Whether this CPU can run the kernel built for `path`.
bool path_available(Path path) {
#if RINGMM_CPU_MULTIVERSION
  if (path == Path::avx2) return detected_cpu_isa() != CpuIsa::generic;
  return true;
#else
  return path != Path::avx2;
#endif
}

template <class S> void check_case(const Case& cs, Path path) {
  using T = T_of<S>;
  SCOPED_TRACE(cs.describe() + path_name(path));
  std::mt19937_64 rng(std::uint64_t(cs.m * 1000003 + cs.n * 1009 + cs.k * 7 + cs.pad + cs.batch * 31 + int(cs.op_a) * 2 +
                                    int(cs.op_b)));
  // Stored shapes of A and B before op is applied.
  const index_t a_rows = cs.syrk ? (cs.op_a == Op::N ? cs.k : cs.m) : (cs.op_a == Op::N ? cs.m : cs.k);
  const index_t a_cols = cs.syrk ? (cs.op_a == Op::N ? cs.m : cs.k) : (cs.op_a == Op::N ? cs.k : cs.m);
  const index_t b_rows = cs.op_b == Op::N ? cs.k : cs.n, b_cols = cs.op_b == Op::N ? cs.n : cs.k;
  auto a = random_batch<S>(a_rows, a_cols, cs.la, cs.pad, cs.batch, cs.share_a, rng, cs.k, true);
  auto b = random_batch<S>(b_rows, b_cols, cs.lb, cs.pad, cs.batch, false, rng, cs.k, true);
  const T alpha = cs.scalars ? nontrivial<S>(rng) : S::one();
  const T beta = cs.scalars ? nontrivial<S>(rng) : S::zero();
  // With β ≠ 0̄ C holds random values, else poison. For syrk the upper triangle is not symmetric to
  // the lower one, so a kernel that read it would disagree with the reference (which reads only
  // the lower triangle). It cannot hold poison: the API's value check scans all of C.
  auto c = random_batch<S>(cs.m, cs.n, cs.lc, cs.pad, cs.batch, false, rng, cs.k, cs.scalars);
  const std::vector<T> c_before = c.storage.storage;
  // The β·C term of the float rounding bound, taken from the triangle each element is built from.
  std::vector<T> c_bound = c_before;
  if (cs.syrk)
    for (index_t i = 0; i < cs.m; ++i)
      for (index_t j = i + 1; j < cs.n; ++j)
        c_bound[std::size_t(i * c.first.row_stride() + j * c.first.col_stride())] =
            c_bound[std::size_t(j * c.first.row_stride() + i * c.first.col_stride())];
  std::vector<T> expected = c_before;

  auto problem_for = [&](T* c_data) {
    MatrixView<T> cv = c.first;
    cv.data = c_data;
    auto p = cs.syrk ? detail::make_problem<S>(cs.op_a == Op::N ? Op::T : Op::N, a.first, cs.op_a, a.first, cv, alpha, beta)
                     : detail::make_problem<S>(cs.op_a, a.first, cs.op_b, b.first, cv, alpha, beta);
    p.batch = cs.batch;
    p.stride_a = a.stride;
    p.stride_b = cs.syrk ? a.stride : b.stride;
    p.stride_c = c.stride;
    p.symmetric = cs.syrk;
    return p;
  };
  cpu::reference_gemm<S>(problem_for(expected.data()));

  Context ctx;
  ctx.backend = Backend::cpu;
  ctx.cpu_threads = cs.threads;
  MatrixView<T> cv = c.first;
  namespace bd = cpu::blocked_detail;
  if (path == Path::blocked) {
    cpu::blocked_gemm<S>(problem_for(cv.data), cs.threads);
  } else if (path == Path::generic) {
    bd::run_isa<S, bd::IsaGeneric>(problem_for(cv.data), std::max(1, cs.threads), bd::run_team_generic<S>);
#if RINGMM_CPU_MULTIVERSION
  } else if (path == Path::avx2) {
    bd::run_isa<S, bd::IsaAvx2>(problem_for(cv.data), std::max(1, cs.threads), bd::run_team_avx2<S>);
#endif
  } else if (cs.syrk) {
    syrk<S>(ctx, cs.op_a, a.first, cv, alpha, beta);
  } else if (cs.batch == 1) {
    gemm<S>(ctx, cs.op_a, a.first, cs.op_b, b.first, cv, alpha, beta);
  } else {
    gemm_batched<S>(ctx, cs.op_a, a.first, a.stride, cs.op_b, b.first, b.stride, cv, c.stride, cs.batch, alpha, beta);
  }

  const auto p = problem_for(c.storage.storage.data());
  const auto pe = problem_for(expected.data());
  const detail::Strided<const T> before{c_bound.data(), cs.m, cs.n, p.c.rs, p.c.cs};
  EXPECT_TRUE(testing::matrices_match<S>(p, pe.c, p.c, &before));
  const auto in_c = covered(c.first, c.stride, cs.batch, c_before.size());
  index_t touched = 0;
  for (std::size_t i = 0; i < c_before.size(); ++i)
    if (!in_c[i] && std::memcmp(&c_before[i], &c.storage.storage[i], sizeof(T)) != 0) ++touched;
  EXPECT_EQ(touched, 0) << "elements outside C were written";
}

// Pairs the backend sends past the blocked kernel: plus-times f32/f64 to BLAS, log-plus to the shift trick.
template <class S> constexpr bool has_own_backend_path = std::is_same_v<S, PlusTimes<float>> ||
                                                        std::is_same_v<S, PlusTimes<double>> ||
                                                        std::is_same_v<S, LogPlus<float>> || std::is_same_v<S, LogPlus<double>>;

// The backend path, and for the pairs the backend sends elsewhere the blocked kernel too.
template <class S> void check_both(const Case& cs) {
  check_case<S>(cs, Path::backend);
  if (has_own_backend_path<S>) check_case<S>(cs, Path::blocked);
}

// Every op(A) × op(B) × layout of A, B and C.
std::vector<Case> all_combinations(index_t m, index_t n, index_t k) {
  std::vector<Case> out;
  for (Op oa : {Op::N, Op::T})
    for (Op ob : {Op::N, Op::T})
      for (Layout la : {Layout::row_major, Layout::col_major})
        for (Layout lb : {Layout::row_major, Layout::col_major})
          for (Layout lc : {Layout::row_major, Layout::col_major}) {
            Case cs;
            cs.m = m, cs.n = n, cs.k = k, cs.op_a = oa, cs.op_b = ob, cs.la = la, cs.lb = lb, cs.lc = lc;
            out.push_back(cs);
          }
  return out;
}

template <class S> class CpuGemm : public ::testing::Test {};

TYPED_TEST_SUITE(CpuGemm, testing::BuiltinSemirings, testing::SemiringNames);

TYPED_TEST(CpuGemm, SmallShapesEveryOpAndLayout) {
  for (index_t size : {0, 1, 7, 33})
    for (const Case& cs : all_combinations(size, size, size)) check_both<TypeParam>(cs);
}

TYPED_TEST(CpuGemm, RectangularShapesEveryOpAndLayout) {
  for (auto [m, n, k] : {std::tuple<index_t, index_t, index_t>{33, 129, 7}, {1, 1000, 1}, {200, 3, 257}, {5, 0, 9}, {0, 4, 3}})
    for (const Case& cs : all_combinations(m, n, k)) check_both<TypeParam>(cs);
}

// 127 and 129 cross the register tiles and (for K) the cache chunks; a rotating quarter of the
// op/layout combinations keeps the run short.
TYPED_TEST(CpuGemm, TileEdgeSizes) {
  int i = 0;
  for (index_t size : {127, 129})
    for (Case cs : all_combinations(size, size, size))
      if (i++ % 4 == int(size % 4)) {
        cs.scalars = i % 3 == 0;
        check_both<TypeParam>(cs);
      }
}

TYPED_TEST(CpuGemm, LeadingDimensionBeyondExtentAndScalars) {
  int i = 0;
  for (Case cs : all_combinations(37, 41, 150)) {
    cs.pad = 3 + i % 5;
    cs.scalars = true;
    if (i++ % 2 == 0) check_both<TypeParam>(cs);
  }
}

TYPED_TEST(CpuGemm, ZeroInnerDimensionAppliesTheEpilogue) {
  for (bool scalars : {false, true}) {
    Case cs;
    cs.m = 9, cs.n = 11, cs.k = 0, cs.scalars = scalars, cs.lc = Layout::col_major, cs.pad = 2;
    check_both<TypeParam>(cs);
  }
}

// Many K chunks and several column panels of B: N past the panel width, K past KC.
TYPED_TEST(CpuGemm, LongInnerDimensionSeveralPanels) {
  Case cs;
  cs.m = 9, cs.n = 600, cs.k = 7000, cs.op_a = Op::T, cs.lb = Layout::col_major, cs.scalars = true;
  check_both<TypeParam>(cs);
}

TYPED_TEST(CpuGemm, BatchedWithStrides) {
  for (bool share_a : {false, true})
    for (Op op : {Op::N, Op::T}) {
      Case cs;
      cs.m = 33, cs.n = 17, cs.k = 40, cs.batch = 5, cs.share_a = share_a, cs.op_a = op, cs.op_b = op, cs.pad = 1;
      cs.scalars = share_a;
      cs.lc = share_a ? Layout::col_major : Layout::row_major;
      check_both<TypeParam>(cs);
    }
  Case big;  // members large enough that the whole team works on each one in turn
  big.m = 130, big.n = 129, big.k = 140, big.batch = 3, big.threads = 2, big.scalars = true;
  check_both<TypeParam>(big);
}

TYPED_TEST(CpuGemm, SyrkLowerTriangleMirrored) {
  for (Op op : {Op::N, Op::T})
    for (Layout la : {Layout::row_major, Layout::col_major})
      for (Layout lc : {Layout::row_major, Layout::col_major})
        for (auto [n, k] : {std::pair<index_t, index_t>{1, 5}, {33, 40}, {131, 150}, {20, 0}}) {
          Case cs;
          cs.syrk = true, cs.op_a = op, cs.la = la, cs.lc = lc, cs.m = n, cs.n = n, cs.k = k;
          cs.scalars = la == lc;
          cs.pad = la == Layout::row_major ? 2 : 0;
          cs.threads = n > 100 ? 2 : 0;
          check_both<TypeParam>(cs);
        }
}

// The kernels built for narrower instruction sets than this CPU's widest (what other machines run).
TYPED_TEST(CpuGemm, EveryInstructionSet) {
  std::vector<Case> cases = all_combinations(13, 70, 800);  // K past KC of every configuration
  cases.resize(8);
  Case syrk;
  syrk.syrk = true, syrk.m = syrk.n = 45, syrk.k = 20, syrk.scalars = true, syrk.threads = 2;
  cases.push_back(syrk);
  Case batched;
  batched.m = 20, batched.n = 9, batched.k = 30, batched.batch = 4, batched.share_a = true, batched.threads = 2;
  cases.push_back(batched);
  for (Path path : {Path::generic, Path::avx2}) {
    if (!path_available(path)) continue;
    for (Case cs : cases) {
      cs.scalars = cs.scalars || cs.op_a == Op::T;
      check_case<TypeParam>(cs, path);
    }
  }
}

TYPED_TEST(CpuGemm, ThreadCounts) {
  for (int threads : {1, 2, 3}) {
    Case cs;
    cs.m = 150, cs.n = 161, cs.k = 300, cs.threads = threads, cs.scalars = threads == 2;
    cs.op_b = Op::T, cs.la = Layout::col_major;
    check_both<TypeParam>(cs);
  }
  Case many;  // a batch of small products split across the team
  many.m = 20, many.n = 24, many.k = 3000, many.batch = 6, many.threads = 2, many.share_a = true;
  check_both<TypeParam>(many);
}

}  // namespace
}  // namespace ringmm
