// User-defined semirings run through the blocked kernel: the structs below give only value_type,
// zero, one, add and mul (semiring_traits supplies fma, finalize and scale).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>

#include "ringmm/cpu/blocked.hpp"
#include "ringmm_testing.hpp"

namespace {

using ringmm::index_t;
using ringmm::Layout;
using ringmm::Op;

// min-max over floats (minimax paths): ⊕ = min, ⊗ = max.
struct MinMax {
  using value_type = float;
  static constexpr float zero() { return std::numeric_limits<float>::infinity(); }
  static constexpr float one() { return -std::numeric_limits<float>::infinity(); }
  static float add(float a, float b) { return a < b ? a : b; }
  static float mul(float a, float b) { return a > b ? a : b; }
};

// Shortest distance together with the number of shortest paths: a struct element type.
struct Counted {
  float dist;
  std::uint32_t count;
  friend bool operator==(Counted x, Counted y) { return x.dist == y.dist && x.count == y.count; }
};
struct CountedMinPlus {
  using value_type = Counted;
  static constexpr Counted zero() { return {std::numeric_limits<float>::infinity(), 0}; }
  static constexpr Counted one() { return {0.0f, 1}; }
  static Counted add(Counted a, Counted b) {
    if (a.dist < b.dist) return a;
    if (b.dist < a.dist) return b;
    return {a.dist, a.count + b.count};
  }
  static Counted mul(Counted a, Counted b) {
    if (a.count == 0 || b.count == 0) return zero();
    return {a.dist + b.dist, a.count * b.count};
  }
};

float small_float(std::mt19937_64& rng) { return float(int(rng() % 41) - 20) / 4.0f; }
Counted small_counted(std::mt19937_64& rng) {
  if (rng() % 10 == 0) return CountedMinPlus::zero();
  return {float(rng() % 8), std::uint32_t(1 + rng() % 3)};  // few distinct distances: many ties
}

template <class S, class Gen>
void check_user_semiring(index_t m, index_t n, index_t k, Op op_a, Layout lc, int threads, Gen gen) {
  using T = typename S::value_type;
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " threads " + std::to_string(threads));
  std::mt19937_64 rng(std::uint64_t(m * 31 + n * 7 + k));
  ringmm::testing::HostMatrix<T> a(op_a == Op::N ? m : k, op_a == Op::N ? k : m, Layout::col_major, 2);
  ringmm::testing::HostMatrix<T> b(k, n, Layout::row_major, 1);
  ringmm::testing::HostMatrix<T> c(m, n, lc, 3), expected(m, n, lc, 3);
  for (auto& x : a.storage) x = gen(rng);
  for (auto& x : b.storage) x = gen(rng);
  for (auto& x : c.storage) x = gen(rng);
  expected = c;
  const T alpha = gen(rng), beta = gen(rng);
  auto problem = [&](auto& out) {
    return ringmm::detail::make_problem<S>(op_a, a.cview(), Op::N, b.cview(), out.view, alpha, beta);
  };
  ringmm::cpu::reference_gemm<S>(problem(expected));
  ringmm::cpu::blocked_gemm<S>(problem(c), threads);
  index_t bad = 0;
  for (std::size_t i = 0; i < c.storage.size(); ++i) bad += !(c.storage[i] == expected.storage[i]);
  EXPECT_EQ(bad, 0);

  // The public entry point sends user-defined semirings to the blocked kernel as well.
  ringmm::testing::HostMatrix<T> via_api = expected;
  c = expected;
  ringmm::Context ctx;
  ctx.backend = ringmm::Backend::cpu;
  ctx.cpu_threads = threads;
  ringmm::gemm<S>(ctx, op_a, a.cview(), Op::N, b.cview(), via_api.view, alpha, beta);
  ringmm::cpu::reference_gemm<S>(problem(c));
  bad = 0;
  for (std::size_t i = 0; i < c.storage.size(); ++i) bad += !(c.storage[i] == via_api.storage[i]);
  EXPECT_EQ(bad, 0);
}

TEST(UserSemiring, MinMaxFloat) {
  for (int threads : {1, 2})
    for (auto [m, n, k] : {std::tuple<index_t, index_t, index_t>{1, 1, 1}, {7, 33, 129}, {130, 70, 600}})
      check_user_semiring<MinMax>(m, n, k, threads == 1 ? Op::N : Op::T, Layout::row_major, threads, small_float);
}

TEST(UserSemiring, CountedShortestPathsStructElement) {
  for (int threads : {1, 2})
    for (auto [m, n, k] : {std::tuple<index_t, index_t, index_t>{1, 1, 1}, {7, 33, 129}, {130, 70, 600}})
      check_user_semiring<CountedMinPlus>(m, n, k, threads == 1 ? Op::T : Op::N, Layout::col_major, threads,
                                          small_counted);
}

}  // namespace
