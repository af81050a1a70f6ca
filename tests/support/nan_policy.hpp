// The NaN policy's test matrix (README "NaN"): products whose inputs carry NaN at the first, a
// middle and the last k, and, where ⊗ is +, the infinity opposite 0̄ meeting a 0̄; an oracle that
// computes every entry with C's fmax/fmin (IEEE maxNum/minNum) and plain + and ×, independently
// of the library's code; and a check of each backend's result against it. Each backend's test
// runs these products on its own paths (borders, split-K, batches, Aᵀ·A, SUMMA).
#pragma once

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ringmm_testing.hpp"

namespace ringmm::testing {

// ⊕ and ⊗ of S as the policy defines them: max and min are std::fmax and std::fmin.
template <class S> typename S::value_type oracle_add(typename S::value_type x, typename S::value_type y) {
  switch (S::kind) {
    case SemiringKind::plus_times: return x + y;
    case SemiringKind::min_plus:
    case SemiringKind::min_max: return std::fmin(x, y);
    default: return std::fmax(x, y);
  }
}
template <class S> typename S::value_type oracle_mul(typename S::value_type x, typename S::value_type y) {
  switch (S::kind) {
    case SemiringKind::max_plus:
    case SemiringKind::min_plus: return x + y;
    case SemiringKind::max_min: return std::fmin(x, y);
    case SemiringKind::min_max: return std::fmax(x, y);
    default: return x * y;
  }
}

struct NanSpec {
  index_t m, n, k;
  Op op_a = Op::N, op_b = Op::N;
  Layout layout = Layout::row_major;  // of A, B and C
  index_t batch = 1;
  bool syrk = false;    // C = op(A)ᵀ·op(A) with op(A) k×n (M = N), B unused
  bool reads_c = true;  // β = 1̄ (C is an input, one of its entries NaN), else β = 0̄ and C all NaN
  std::uint64_t seed = 1;
};

inline std::string describe(const NanSpec& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " ops " +
         std::string(to_string(s.op_a)) + std::string(to_string(s.op_b)) +
         (s.layout == Layout::col_major ? " col-major" : " row-major") + " batch " + std::to_string(s.batch) +
         (s.syrk ? " syrk" : "") + (s.reads_c ? " beta=1" : " beta=0");
}

// One product's operands, members `stride_*` apart in one buffer each.
template <class S> struct NanProduct {
  using T = typename S::value_type;
  NanSpec spec;
  std::vector<T> a, b, c;
  MatrixView<T> av, bv, cv;  // member 0
  index_t stride_a = 0, stride_b = 0, stride_c = 0;
  T alpha = S::one(), beta = S::zero();

  // The problem over member buffers a, b and the given C storage (the reference's or a result).
  detail::Problem<S> problem(std::vector<T>& c_storage) const {
    MatrixView<T> c_view = cv;
    c_view.data = c_storage.data();
    const MatrixView<const T> a_view{a.data(), av.rows, av.cols, av.ld, av.layout};
    const MatrixView<const T> b_view{b.data(), bv.rows, bv.cols, bv.ld, bv.layout};
    detail::Problem<S> p = spec.syrk ? detail::make_problem<S>(spec.op_a == Op::N ? Op::T : Op::N, a_view, spec.op_a,
                                                              a_view, c_view, alpha, beta)
                                     : detail::make_problem<S>(spec.op_a, a_view, spec.op_b, b_view, c_view, alpha, beta);
    p.batch = spec.batch;
    p.stride_a = stride_a, p.stride_b = spec.syrk ? stride_a : stride_b, p.stride_c = stride_c;
    p.symmetric = spec.syrk;
    return p;
  }
};

template <class S> NanProduct<S> make_nan_product(const NanSpec& s) {
  using T = typename S::value_type;
  constexpr T nan = std::numeric_limits<T>::quiet_NaN();
  NanProduct<S> x;
  x.spec = s;
  std::mt19937_64 rng(s.seed);
  auto alloc = [&](std::vector<T>& buf, MatrixView<T>& v, index_t& stride, index_t rows, index_t cols) {
    const index_t ld = std::max<index_t>(1, s.layout == Layout::row_major ? cols : rows);
    stride = std::max<index_t>(1, rows * cols) + 5;  // members not back to back
    buf.assign(std::size_t(stride * s.batch), poison<T>());
    v = {buf.data(), rows, cols, ld, s.layout};
    for (index_t bt = 0; bt < s.batch; ++bt)
      for (index_t i = 0; i < rows; ++i)
        for (index_t j = 0; j < cols; ++j)
          buf[std::size_t(bt * stride + i * v.row_stride() + j * v.col_stride())] = random_value<S>(rng, s.k);
  };
  // op(A) is m×k (syrk: the k×n matrix X of C = Xᵀ·X); op(B) is k×n.
  const index_t x_rows = s.syrk ? s.k : s.m, x_cols = s.syrk ? s.n : s.k;
  const bool a_t = s.op_a == Op::T;
  alloc(x.a, x.av, x.stride_a, a_t ? x_cols : x_rows, a_t ? x_rows : x_cols);
  if (!s.syrk) alloc(x.b, x.bv, x.stride_b, s.op_b == Op::N ? s.k : s.n, s.op_b == Op::N ? s.n : s.k);
  alloc(x.c, x.cv, x.stride_c, s.m, s.n);
  x.beta = s.reads_c ? S::one() : S::zero();

  // Plant at op(A)(i, kk) and op(B)(kk, j), skipping positions outside the shapes.
  auto at = [](std::vector<T>& buf, const MatrixView<T>& v, index_t bt, index_t stride, index_t r, index_t c) -> T* {
    if (r < 0 || c < 0 || r >= v.rows || c >= v.cols) return nullptr;
    return &buf[std::size_t(bt * stride + r * v.row_stride() + c * v.col_stride())];
  };
  auto plant_a = [&](index_t bt, index_t i, index_t kk, T value) {
    // syrk: i indexes X's columns and kk its rows.
    const index_t r = s.syrk ? kk : i, c = s.syrk ? i : kk;
    if (T* e = a_t ? at(x.a, x.av, bt, x.stride_a, c, r) : at(x.a, x.av, bt, x.stride_a, r, c)) *e = value;
  };
  auto plant_b = [&](index_t bt, index_t kk, index_t j, T value) {
    if (s.syrk) return plant_a(bt, j, kk, value);
    T* e = s.op_b == Op::N ? at(x.b, x.bv, bt, x.stride_b, kk, j) : at(x.b, x.bv, bt, x.stride_b, j, kk);
    if (e) *e = value;
  };
  const bool plus = S::kind == SemiringKind::max_plus || S::kind == SemiringKind::min_plus;
  const T opposite = -S::zero();  // the infinity that makes NaN with 0̄ under +
  for (index_t bt = 0; bt < s.batch; ++bt) {
    if (s.k > 0) {
      plant_a(bt, 1, 0, nan);                // first term of row 1
      plant_a(bt, 2, s.k - 1, nan);          // last term of row 2
      plant_b(bt, s.k / 2, 3 + bt, nan);     // a middle term of a column that moves with the member
      if (plus) {
        plant_a(bt, 4, s.k - 1, opposite);   // meets the 0̄ of columns 0 and 5 at the last k
        plant_b(bt, s.k - 1, 0, S::zero());
        plant_b(bt, s.k - 1, 5, S::zero());
        plant_a(bt, 6, 0, S::zero());        // a 0̄ at the first k meets column 7's infinity
        plant_b(bt, 0, 7, opposite);
      }
    }
    if (T* e = at(x.c, x.cv, bt, x.stride_c, 0, 1)) *e = nan;
    if (!s.reads_c)  // β = 0̄: C is never read, so NaN in it must not show
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j) *at(x.c, x.cv, bt, x.stride_c, i, j) = nan;
  }
  return x;
}

// `actual` (C's storage after the product under test) against the oracle: the same NaN entries,
// and every other entry equal to the oracle's (within the tolerance for plus-times, whose sums
// the oracle adds in another order).
template <class S>
::testing::AssertionResult follows_nan_policy(const NanProduct<S>& x, std::vector<typename S::value_type>& actual) {
  using T = typename S::value_type;
  std::vector<T> expected = x.c;
  detail::Problem<S> p = x.problem(expected);
  index_t nan_terms = 0;  // terms with a NaN operand
  for (index_t bt = 0; bt < p.batch; ++bt)
    for (index_t i = 0; i < p.m(); ++i)
      for (index_t j = 0; j < p.n(); ++j) {
        if (p.symmetric && j > i) continue;
        T acc = S::zero();
        for (index_t k = 0; k < p.k(); ++k) {
          const T a = p.a.p[bt * p.stride_a + i * p.a.rs + k * p.a.cs], b = p.b.p[bt * p.stride_b + k * p.b.rs + j * p.b.cs];
          nan_terms += std::isnan(a) || std::isnan(b);
          acc = oracle_add<S>(acc, oracle_mul<S>(a, b));
        }
        T& out = expected[std::size_t(bt * x.stride_c + i * p.c.rs + j * p.c.cs)];
        T result = oracle_mul<S>(p.alpha, acc);
        if (!(p.beta == S::zero())) result = oracle_add<S>(result, oracle_mul<S>(p.beta, out));
        out = result;
        if (p.symmetric) expected[std::size_t(bt * x.stride_c + j * p.c.rs + i * p.c.cs)] = result;
      }
  if (x.spec.k > 2 && x.spec.m > 3 && x.spec.n > 3 && nan_terms == 0)
    return ::testing::AssertionFailure() << "no term has a NaN operand: the case tests nothing";
  const detail::Strided<T> e{expected.data(), p.m(), p.n(), p.c.rs, p.c.cs};
  const detail::Strided<T> a{actual.data(), p.m(), p.n(), p.c.rs, p.c.cs};
  const detail::Strided<const T> before{x.c.data(), p.m(), p.n(), p.c.rs, p.c.cs};
  return matrices_match<S>(p, e, a, &before);
}

// Runs x's product through the public API on `ctx`, with A, B and C at the given (host or device)
// addresses laid out as x's buffers.
template <class S>
void run_public(const Context& ctx, const NanProduct<S>& x, const typename S::value_type* a,
                const typename S::value_type* b, typename S::value_type* c) {
  using T = typename S::value_type;
  const MatrixView<const T> av{a, x.av.rows, x.av.cols, x.av.ld, x.av.layout};
  const MatrixView<const T> bv{b, x.bv.rows, x.bv.cols, x.bv.ld, x.bv.layout};
  const MatrixView<T> cv{c, x.cv.rows, x.cv.cols, x.cv.ld, x.cv.layout};
  if (x.spec.syrk)
    syrk<S>(ctx, x.spec.op_a, av, cv, x.alpha, x.beta);
  else if (x.spec.batch > 1)
    gemm_batched<S>(ctx, x.spec.op_a, av, x.stride_a, x.spec.op_b, bv, x.stride_b, cv, x.stride_c, x.spec.batch,
                    x.alpha, x.beta);
  else
    gemm<S>(ctx, x.spec.op_a, av, x.spec.op_b, bv, cv, x.alpha, x.beta);
}

// A spread of shapes and products for one backend's paths: odd shapes, transposes, both layouts,
// a long K (several CPU chunks, CUDA split-K), batches and Aᵀ·A, with C read and unread.
inline std::vector<NanSpec> nan_specs() {
  std::vector<NanSpec> specs;
  std::uint64_t seed = 1;
  auto add = [&](NanSpec s) {
    s.seed = seed++;
    specs.push_back(s);
  };
  add({8, 9, 1});
  add({33, 17, 7, Op::T, Op::N});
  add({129, 127, 65, Op::N, Op::T, Layout::col_major});
  add({130, 131, 200, Op::T, Op::T, Layout::row_major, 1, false, false});
  add({9, 10, 5000, Op::N, Op::N});  // long K: CPU chunks, CUDA split-K
  add({40, 37, 33, Op::N, Op::N, Layout::row_major, 3});
  add({45, 45, 20, Op::N, Op::N, Layout::row_major, 1, true});
  add({70, 70, 129, Op::T, Op::N, Layout::col_major, 1, true, false});
  add({7, 8, 0});  // no terms: only C can be NaN
  return specs;
}

}  // namespace ringmm::testing

namespace ringmm::testing {

// The argmax's index where β ⊗ C is NaN: a C entry that is NaN, or β and C whose ⊗ is NaN (∞ + −∞,
// ∞ × 0), counts as 0̄, so every entry's value and index come from the product's terms: the first
// k of the best term, −1 where all are 0̄. `run` computes gemm_argmax<S>(A, B, C, K*, 1̄, β) on
// host buffers (row-major m×k, k×n, m×n, m×n) on the backend under test. Returns "" or what
// differed. For the float pairs whose ⊕ selects.
template <class S, class Run> std::string check_nan_incoming_argmax(index_t m, index_t n, index_t k, Run run) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  constexpr T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  std::mt19937_64 rng(std::uint64_t(m * 131 + n * 17 + k));
  const auto a = random_matrix<S>(m, k, Layout::row_major, 0, rng, k);
  const auto b = random_matrix<S>(k, n, Layout::row_major, 0, rng, k);
  std::vector<T> want(std::size_t(m * n));
  std::vector<std::int32_t> want_k(std::size_t(m * n), -1);
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      T best = S::zero();
      for (index_t kk = 0; kk < k; ++kk)
        if (const T term = traits::finalize(S::mul(a(i, kk), b(kk, j))); traits::better(term, best)) {
          best = term;
          want_k[std::size_t(i * n + j)] = std::int32_t(kk);
        }
      want[std::size_t(i * n + j)] = best;
    }
  // (β, C) pairs the semiring accepts whose β ⊗ C is NaN: C NaN under β = 1̄, and the infinities
  // that meet 0̄. (In max-min and min-max a NaN operand of ⊗ yields the other: none qualifies.)
  std::vector<std::pair<T, T>> cases;
  for (T beta : {S::one(), inf, -inf})
    for (T c : {nan, inf, -inf, T(0)})
      if (std::isnan(traits::scale(beta, c)) && traits::valid_input(beta) && (std::isnan(c) || traits::valid_input(c)))
        cases.emplace_back(beta, c);
  if (cases.empty()) return "no (beta, C) pair of this semiring makes a NaN";
  for (const auto& [beta, c_in] : cases) {
    std::vector<T> c(std::size_t(m * n), c_in);
    std::vector<std::int32_t> ks(std::size_t(m * n), 999);  // an incoming index that must not stay
    run(a.storage.data(), b.storage.data(), c.data(), ks.data(), beta);
    for (std::size_t e = 0; e < c.size(); ++e)
      if (!(c[e] == want[e]) || ks[e] != want_k[e])
        return "beta " + std::to_string(double(beta)) + ", C " + std::to_string(double(c_in)) + ": entry " +
               std::to_string(e) + " is (" + std::to_string(double(c[e])) + ", " + std::to_string(ks[e]) +
               "), expected (" + std::to_string(double(want[e])) + ", " + std::to_string(want_k[e]) + ")";
  }
  return "";
}

}  // namespace ringmm::testing
