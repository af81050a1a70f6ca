// gemm_argmax with an int64 K*, shared by tests/cpu/argmax_int64_test.cpp and
// tests/cuda/argmax_int64_test.cpp: cases, their operands, the call (with parts of K as short as
// the case says, so that a small K runs as several parts), and an oracle that applies the
// documented rules entry by entry, independently of every kernel.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ringmm_testing.hpp"

namespace ringmm::testing {

struct WideCase {
  index_t m, n, k;
  Op op_a, op_b;
  Layout layout;  // of every operand, K* included
  index_t pad, batch;
  bool shared_a;      // one A for every member (stride 0)
  index_t part;       // the longest part of K one int32 product takes
  bool beta;          // β = 1̄ (C and K* are read) or 0̄
  index_t k_offset;
  bool few_values = true;  // operands drawn from three values and 0̄: ties everywhere

  std::string name() const {
    return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " batch " + std::to_string(batch) +
           " part " + std::to_string(part) + (beta ? " beta" : "") + " offset " + std::to_string(k_offset);
  }
};

// `members` rows×cols matrices (layout, pad) one after another; padding holds poison.
template <class T> struct Stack {
  std::vector<T> data;
  MatrixView<T> first;  // member 0's view; member b starts `stride` elements further
  index_t stride = 0;

  std::size_t offset(index_t member, index_t i, index_t j) const {
    return std::size_t(member * stride + (first.layout == Layout::row_major ? i * first.ld + j : j * first.ld + i));
  }
  T& at(index_t member, index_t i, index_t j) { return data[offset(member, i, j)]; }
  T at(index_t member, index_t i, index_t j) const { return data[offset(member, i, j)]; }
  template <class U> MatrixView<U> over(U* p) const { return {p, first.rows, first.cols, first.ld, first.layout}; }
};

template <class T> Stack<T> stack_of(index_t rows, index_t cols, Layout layout, index_t pad, index_t members) {
  const HostMatrix<T> shape(rows, cols, layout, pad);
  Stack<T> s;
  s.stride = index_t(shape.storage.size());
  s.data.assign(std::size_t(s.stride * members), poison<T>());
  s.first = {s.data.data(), rows, cols, shape.view.ld, layout};
  return s;
}

// Random valid values of S; with `pool`, only its values.
template <class S>
Stack<typename S::value_type> random_stack(index_t rows, index_t cols, Layout layout, index_t pad, index_t members,
                                           std::mt19937_64& rng, const std::vector<typename S::value_type>& pool,
                                           index_t k) {
  auto s = stack_of<typename S::value_type>(rows, cols, layout, pad, members);
  for (index_t b = 0; b < members; ++b)
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < cols; ++j)
        s.at(b, i, j) = pool.empty() ? random_value<S>(rng, k) : pool[std::size_t(rng() % pool.size())];
  return s;
}

template <class S> struct WideOperands {
  using T = typename S::value_type;
  Stack<T> a, b, c;             // c: C's incoming values (read when β ≠ 0̄)
  Stack<std::int64_t> k_star;   // its incoming indexes, many past 2³¹ − 1
  index_t stride_a = 0;         // 0 for a shared A
  T alpha{}, beta{};
};

// A finite α other than 0̄: α is applied after the ⊕-sum, so it must not move the winner.
template <class S> typename S::value_type random_alpha(std::mt19937_64& rng) {
  using T = typename S::value_type;
  for (;;) {
    const T x = random_value<S>(rng);
    if (x == S::zero()) continue;
    if constexpr (std::is_floating_point_v<T>)
      if (!std::isfinite(x)) continue;
    return x;
  }
}

template <class S> WideOperands<S> wide_operands(const WideCase& w, std::mt19937_64& rng, bool random_alpha_value) {
  using T = typename S::value_type;
  std::vector<T> pool;
  if (w.few_values) pool = {random_value<S>(rng, w.k), random_value<S>(rng, w.k), random_value<S>(rng, w.k), S::zero()};
  WideOperands<S> x;
  const index_t ar = w.op_a == Op::N ? w.m : w.k, ac = w.op_a == Op::N ? w.k : w.m;
  const index_t br = w.op_b == Op::N ? w.k : w.n, bc = w.op_b == Op::N ? w.n : w.k;
  x.a = random_stack<S>(ar, ac, w.layout, w.pad, w.shared_a ? 1 : w.batch, rng, pool, w.k);
  x.b = random_stack<S>(br, bc, w.layout, w.pad, w.batch, rng, pool, w.k);
  x.c = random_stack<S>(w.m, w.n, w.layout, w.pad, w.batch, rng, {}, w.k);
  if constexpr (std::is_integral_v<T>)  // β ⊗ C must stay within the input domain
    for (T& v : x.c.data) v = v == S::zero() || v == poison<T>() ? v : T(v / 2);
  x.k_star = stack_of<std::int64_t>(w.m, w.n, w.layout, w.pad, w.batch);
  for (auto& v : x.k_star.data) v = (std::int64_t(1) << 33) + std::int64_t(rng() % 1000000) - 5;
  x.stride_a = w.shared_a ? 0 : x.a.stride;
  x.alpha = random_alpha_value ? random_alpha<S>(rng) : T(S::one());
  x.beta = w.beta ? T(S::one()) : T(S::zero());
  return x;
}

// detail::gemm_argmax_batched_in_parts on the case's operands at these addresses (host or device
// copies of x's buffers); c and k are written.
template <class S>
void run_wide(const Context& ctx, const WideCase& w, const WideOperands<S>& x, const typename S::value_type* a,
              const typename S::value_type* b, typename S::value_type* c, std::int64_t* k) {
  detail::gemm_argmax_batched_in_parts<S>(ctx, w.op_a, x.a.over(a), x.stride_a, w.op_b, x.b.over(b), x.b.stride,
                                          x.c.over(c), x.c.stride, x.k_star.over(k), x.k_star.stride, w.batch, x.alpha,
                                          x.beta, w.k_offset, w.part);
}

// C and K* as the rules make them, from x's inputs: the first k whose term (finalized) is
// strictly better than every earlier one, α after the ⊕-sum, −1 for a 0̄ result, and with β ≠ 0̄
// the incoming index wherever β ⊗ C is not beaten. Padding stays as it was.
template <class S> void expected_outputs(const WideCase& w, const WideOperands<S>& x, Stack<typename S::value_type>& c,
                                         Stack<std::int64_t>& k_star) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  c = x.c, k_star = x.k_star;
  auto a_at = [&](index_t bt, index_t i, index_t kk) {
    const index_t member = w.shared_a ? 0 : bt;
    return w.op_a == Op::N ? x.a.at(member, i, kk) : x.a.at(member, kk, i);
  };
  auto b_at = [&](index_t bt, index_t kk, index_t j) { return w.op_b == Op::N ? x.b.at(bt, kk, j) : x.b.at(bt, j, kk); };
  for (index_t bt = 0; bt < w.batch; ++bt)
    for (index_t i = 0; i < w.m; ++i)
      for (index_t j = 0; j < w.n; ++j) {
        T best = S::zero();
        std::int64_t winner = -1;
        for (index_t kk = 0; kk < w.k; ++kk) {
          const T term = traits::finalize(S::mul(a_at(bt, i, kk), b_at(bt, kk, j)));
          if (traits::better(term, best)) best = term, winner = kk;
        }
        T result = traits::scale(x.alpha, best);
        std::int64_t index = result == S::zero() ? -1 : w.k_offset + winner;
        if (w.beta) {
          const T incoming = traits::scale(x.beta, x.c.at(bt, i, j));
          if (!traits::better(result, incoming)) index = x.k_star.at(bt, i, j);
          result = S::add(result, incoming);
        }
        c.at(bt, i, j) = result;
        k_star.at(bt, i, j) = index;
      }
}

// Element by element, bit for bit (padding included: it must stay untouched).
template <class T>
::testing::AssertionResult same_elements(const std::vector<T>& expected, const std::vector<T>& actual) {
  if (expected.size() != actual.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (std::size_t e = 0; e < expected.size(); ++e)
    if (std::memcmp(&expected[e], &actual[e], sizeof(T)) != 0)
      return ::testing::AssertionFailure() << "element " << e << ": expected " << show(expected[e]) << ", got "
                                           << show(actual[e]);
  return ::testing::AssertionSuccess();
}

// Cases over several parts of a small K: part borders between equal terms (few_values), one-term
// parts, a last part shorter than the others, K = 0, transposes, padding, shared A, β reading
// incoming indexes past 2³¹ − 1, k offsets past 2³¹ − 1 and up to the int64 limit.
inline std::vector<WideCase> wide_cases() {
  const index_t past_int32 = index_t(3) << 31, int64_max = std::numeric_limits<std::int64_t>::max();
  return {
      {5, 6, 33, Op::N, Op::N, Layout::row_major, 0, 1, false, 7, false, 0},
      {9, 4, 33, Op::T, Op::N, Layout::col_major, 2, 3, false, 7, true, past_int32},
      {7, 11, 33, Op::N, Op::T, Layout::row_major, 1, 2, true, 1, true, 0},
      {16, 3, 40, Op::T, Op::T, Layout::col_major, 0, 1, false, 40, false, index_t(INT32_MAX) - 5},
      {3, 17, 33, Op::N, Op::N, Layout::row_major, 3, 4, false, 32, true, 5'000'000'000},
      {4, 5, 0, Op::N, Op::N, Layout::row_major, 0, 2, false, 7, true, 0},
      {6, 6, 14, Op::N, Op::N, Layout::col_major, 0, 1, false, 7, true, int64_max - 14},
      {130, 70, 50, Op::N, Op::N, Layout::row_major, 0, 2, false, 16, true, past_int32, false},
      {33, 65, 300, Op::T, Op::N, Layout::row_major, 2, 1, false, 100, false, 7, false},
  };
}

}  // namespace ringmm::testing
