// log-plus products for the tests of every backend: shapes, operands (members in one buffer, gaps
// and padding poisoned), data built to break the shift trick, and a long-double reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ringmm_testing.hpp"

namespace ringmm::testing::log_plus {

template <class T> using LP = LogPlus<T>;

struct Shape {
  index_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  Layout layout = Layout::row_major;  // of A, B and C
  index_t pad = 0;                    // extra elements per leading-dimension line
  index_t batch = 1;
  bool share_a = false;  // stride_a = 0
  bool syrk = false;     // C = op(A)ᵀ-style product: op(B) is op(A) transposed (M = N)
  bool scalars = false;  // α, β finite and C read; else α = 1̄, β = 0̄ and C poisoned

  std::string describe() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " ops " +
           std::string(to_string(op_a)) + std::string(to_string(op_b)) +
           (layout == Layout::row_major ? " row-major" : " col-major") + " pad " + std::to_string(pad) + " batch " +
           std::to_string(batch) + (share_a ? " sharedA" : "") + (syrk ? " syrk" : "") + (scalars ? " scalars" : "");
  }
};

// Values of op(A)(i, k) and op(B)(k, j) for batch member b.
template <class T> using Fill = std::function<T(index_t b, index_t row, index_t col)>;

// One product's operands, members `stride_*` apart in one buffer each, gaps and padding poisoned.
template <class T> struct Product {
  Shape s;
  std::vector<T> a, b, c;
  MatrixView<T> av, bv, cv;  // member 0
  index_t stride_a = 0, stride_b = 0, stride_c = 0;
  T alpha = LP<T>::one(), beta = LP<T>::zero();
  mutable std::vector<long double> expected;  // reference(*this), computed once for every path

  detail::Problem<LP<T>> problem(std::vector<T>& c_storage) const {
    MatrixView<T> c_view = cv;
    c_view.data = c_storage.data();
    const MatrixView<const T> a_view{a.data(), av.rows, av.cols, av.ld, av.layout};
    const MatrixView<const T> b_view{b.data(), bv.rows, bv.cols, bv.ld, bv.layout};
    auto p = s.syrk ? detail::make_problem<LP<T>>(s.op_a == Op::N ? Op::T : Op::N, a_view, s.op_a, a_view, c_view, alpha, beta)
                    : detail::make_problem<LP<T>>(s.op_a, a_view, s.op_b, b_view, c_view, alpha, beta);
    p.batch = s.batch;
    p.stride_a = stride_a, p.stride_b = s.syrk ? stride_a : stride_b, p.stride_c = stride_c;
    p.symmetric = s.syrk;
    return p;
  }
};

// syrk: op(A) is the stored k×n matrix X read so that C = Xᵀ·X; `fa` gives op(A) = Xᵀ's (i, k).
template <class T> Product<T> make_product(const Shape& s, const Fill<T>& fa, const Fill<T>& fb, std::mt19937_64& rng) {
  Product<T> x;
  x.s = s;
  auto alloc = [&](std::vector<T>& buf, MatrixView<T>& v, index_t& stride, index_t rows, index_t cols, bool shared) {
    const index_t ld = std::max<index_t>(1, (s.layout == Layout::row_major ? cols : rows) + s.pad);
    const index_t span = std::max<index_t>(1, (s.layout == Layout::row_major ? rows : cols) * ld);
    stride = shared ? 0 : span + 3;
    buf.assign(std::size_t((shared ? 0 : s.batch - 1) * stride + span), poison<T>());
    v = {buf.data(), rows, cols, ld, s.layout};
  };
  const bool a_t = s.syrk ? s.op_a == Op::N : s.op_a == Op::T;  // stored A is op(A) transposed
  alloc(x.a, x.av, x.stride_a, a_t ? s.k : s.m, a_t ? s.m : s.k, s.share_a);
  if (!s.syrk) alloc(x.b, x.bv, x.stride_b, s.op_b == Op::N ? s.k : s.n, s.op_b == Op::N ? s.n : s.k, false);
  alloc(x.c, x.cv, x.stride_c, s.m, s.n, false);
  for (index_t bt = 0; bt < (s.share_a ? 1 : s.batch); ++bt)
    for (index_t i = 0; i < s.m; ++i)
      for (index_t k = 0; k < s.k; ++k) x.a[std::size_t(bt * x.stride_a + (a_t ? k * x.av.row_stride() + i * x.av.col_stride()
                                                                              : i * x.av.row_stride() + k * x.av.col_stride()))] =
          fa(bt, i, k);
  if (!s.syrk) {
    const bool b_t = s.op_b == Op::T;
    for (index_t bt = 0; bt < s.batch; ++bt)
      for (index_t k = 0; k < s.k; ++k)
        for (index_t j = 0; j < s.n; ++j) x.b[std::size_t(bt * x.stride_b + (b_t ? j * x.bv.row_stride() + k * x.bv.col_stride()
                                                                                 : k * x.bv.row_stride() + j * x.bv.col_stride()))] =
            fb(bt, k, j);
  }
  if (s.scalars) {
    std::uniform_real_distribution<double> u(-3, 3);
    x.alpha = T(u(rng)), x.beta = T(u(rng));
    for (index_t bt = 0; bt < s.batch; ++bt)
      for (index_t i = 0; i < s.m; ++i)
        for (index_t j = 0; j < s.n; ++j)
          x.c[std::size_t(bt * x.stride_c + i * x.cv.row_stride() + j * x.cv.col_stride())] =
              (i + j) % 11 == 3 ? LP<T>::zero() : T(u(rng) * 10);
  }
  return x;
}

// log Σₖ exp(aᵢₖ + bₖⱼ) in long double, two passes (maximum, then the shifted sum), then the
// epilogue; only C's lower triangle is read for syrk.
template <class T> std::vector<long double> reference(const Product<T>& x) {
  std::vector<T> scratch = x.c;
  const auto p = x.problem(scratch);
  std::vector<long double> out(std::size_t(p.batch * p.m() * p.n()));
  for (index_t bt = 0; bt < p.batch; ++bt)
    for (index_t i = 0; i < p.m(); ++i)
      for (index_t j = 0; j < p.n(); ++j) {
        auto term = [&](index_t k) {
          return (long double)p.a.p[bt * p.stride_a + i * p.a.rs + k * p.a.cs] +
                 (long double)p.b.p[bt * p.stride_b + k * p.b.rs + j * p.b.cs];
        };
        long double mx = -INFINITY;
        for (index_t k = 0; k < p.k(); ++k) mx = std::max(mx, term(k));
        long double v = mx;
        if (mx > -INFINITY) {
          long double sum = 0;
          for (index_t k = 0; k < p.k(); ++k) sum += std::exp(term(k) - mx);
          v = mx + std::log(sum);
        }
        v += (long double)p.alpha;
        if (p.beta != LP<T>::zero()) {
          const index_t ci = p.symmetric && j > i ? j : i, cj = p.symmetric && j > i ? i : j;
          const long double cb = (long double)p.beta + (long double)x.c[std::size_t(bt * x.stride_c + ci * p.c.rs + cj * p.c.cs)];
          const long double hi = std::max(v, cb), lo = std::min(v, cb);
          if (lo > -INFINITY) v = hi + std::log1p(std::exp(lo - hi));
          else v = hi;
        }
        out[std::size_t((bt * p.m() + i) * p.n() + j)] = v;
      }
  return out;
}

// Random log-probabilities with 5 % −∞ (and 1̄ = 0) among them, the tests' usual data.
template <class T> Fill<T> log_probabilities(std::mt19937_64& rng) {
  return [&rng](index_t, index_t, index_t) { return random_value<LP<T>>(rng); };
}
// The same without −∞: log u for u uniform in (0, 1].
template <class T> Fill<T> finite_log_probabilities(std::mt19937_64& rng) {
  return [&rng](index_t, index_t, index_t) { return T(std::log(1.0 - std::uniform_real_distribution<double>(0, 1)(rng))); };
}

// Row i's maximum at k = 2i mod K, column j's at k = 2j + 1 mod K: they never meet, and every
// other entry is −gap, so every term of every entry lies ≥ gap below rᵢ + cⱼ = 0 (two terms at
// −gap, the rest at −2·gap). With `rows` of the rows built this way (the rest finite
// log-probabilities, which meet every column's maximum), the trick must flag exactly those rows.
template <class T> Product<T> split_maxima(const Shape& s, T gap, index_t rows, std::mt19937_64& rng) {
  auto random = finite_log_probabilities<T>(rng);
  const Fill<T> fa = [=](index_t b, index_t i, index_t k) { return i >= rows ? random(b, i, k) : k == (2 * i) % s.k ? T(0) : -gap; };
  const Fill<T> fb = [=](index_t, index_t k, index_t j) { return k == (2 * j + 1) % s.k ? T(0) : -gap; };
  return make_product<T>(s, fa, fb, rng);
}

}  // namespace ringmm::testing::log_plus
