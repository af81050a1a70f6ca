// log-plus products on the CPU by the shift trick, with the streaming kernel where it fails.
//
//   C_ij = log Σ_k exp(a_ik + b_kj) = r_i + c_j + log S_ij,   S_ij = Σ_k exp(a_ik − r_i)·exp(b_kj − c_j)
//
// with r_i the maximum of row i of op(A) and c_j that of column j of op(B). Both factors are at
// most 1, so S = A'·B' is one plus-times GEMM (OpenBLAS, or ringmm's kernel) over exponentials
// computed once per element of A and B: M·K + K·N + M·N transcendental functions instead of the
// streaming kernel's M·N·K.
//
// The factors and the GEMM are f64 for f32 inputs too. An f32 GEMM's sums lose up to ε/2 per term
// where many terms sit near one unit in the last place of the sum (one dominant term and
// thousands e^16 below it): measured 1.6·10⁻⁵ through OpenBLAS's SGEMM and 4·10⁻⁴ through ringmm's
// own kernel at K = 8192, against log-plus's f32 bound of 2·10⁻⁵. In f64 the f32 results keep
// only the roundings of the last step, r_i + c_j + log S_ij (measured 5·10⁻⁸ there). For f64
// inputs that loss is K·ε/2 at worst (2.7·10⁻¹³ at K = 8192 through ringmm's kernel, which sums
// along all of K; OpenBLAS restarts every few hundred k): within the f64 bound up to K ≈ 30 000.
//
// The trick fails where an entry's largest term lies far below r_i + c_j: r_i and c_j sit at
// different k, and no k brings both near their maxima. S_ij is then small, and the shifted
// exponents carry rounding errors of ε·(their size): the weighted mean of those sizes is at most
// ln K − ln S_ij, so an entry loses about ε·(ln K − ln S_ij) in absolute accuracy; past the
// exponent range, terms underflow and S_ij loses all its digits (or is 0 where the true sum is
// not). Every entry with S_ij below threshold(K) is recomputed exactly by the streaming
// accumulator (LogPlus::fma), so the trick's own error stays within ε·(ln K + 14), ε of f64.
//
// The steps, each its own function: the maxima and factors (cpu/log_plus_shift.hpp, shared with
// the backward product), the GEMM (log_plus_detail::factor_gemm) and the finish, which takes the
// logarithms and adds the maxima back (detail::shifted_value, as on CUDA) or streams the entry.
// A caller that multiplies by one B many times (the HMM forward: α_t ⊗ A every step) computes
// B's factors once and passes them to log_plus_shift_gemm.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include <omp.h>

#include "ringmm/context.hpp"
#include "ringmm/cpu/blocked.hpp"
#include "ringmm/cpu/log_plus_shift.hpp"
#include "ringmm/detail/log_plus_shift.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cpu {

namespace log_plus_detail {

// Bytes of workspace a chunk of batch members may take (at least one member is always taken).
constexpr std::size_t chunk_bytes = std::size_t(256) << 20;

using Entry = detail::ShiftedEntry;
template <class T> Entry classify(T r, T c, Sum sum, Sum threshold) { return detail::classify_shifted(r, c, sum, threshold); }

// sum_b = A'_b·B'_b (M×N row-major, members M·N apart) for `members` members, through the CPU
// backend's plus-times (vendor BLAS per ctx): fa holds the rows of A' (M×K row-major, members
// stride_fa apart), fb the columns of B' (N×K row-major, stride_fb apart; 0 for one B' for all).
inline void factor_gemm(const Context& ctx, const Sum* fa, index_t stride_fa, const Sum* fb, index_t stride_fb, Sum* sum,
                        index_t m, index_t n, index_t k, index_t members, bool symmetric) {
  detail::Problem<PlusTimes<Sum>> product{{fa, m, k, k, 1}, {fb, k, n, 1, k}, {sum, m, n, n, 1}, Sum(1), Sum(0), members,
                                          stride_fa, stride_fb, m * n, symmetric};
  detail::cpu_run<PlusTimes<Sum>>(ctx, product);
}

// Finishes member `member` of p from its maxima r (M), c (N) and sums s (M×N row-major):
// C ← α ⊗ (r + c + log S) ⊕ β ⊗ C, 0̄ for a row or column of −∞, and the entries whose S is below
// tau recomputed by the streaming accumulator. Returns how many were.
template <class T>
index_t finish(const detail::Problem<LogPlus<T>>& p, index_t member, const T* r, const T* c, const Sum* s, Sum tau,
               int threads) {
  using S = LogPlus<T>;
  using traits = semiring_traits<S>;
  const index_t m = p.m(), n = p.n(), k = p.k();
  T* out = p.c.p + member * p.stride_c;
  auto cols_of = [&](index_t i) { return p.symmetric ? i + 1 : n; };  // Aᵀ·A: the lower triangle
  const detail::Strided<const T> am{p.a.p + member * p.stride_a, m, k, p.a.rs, p.a.cs};
  const detail::Strided<const T> bm{p.b.p + member * p.stride_b, k, n, p.b.rs, p.b.cs};
  // Counted first (compares only), as the work they add decides the team. Recomputing entry by
  // entry measured as fast as the blocked streaming kernel on a whole member even with every
  // entry flagged: both spend their time in exp.
  index_t recompute = 0;
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < cols_of(i); ++j) recompute += classify(r[i], c[j], s[i * n + j], tau) == Entry::recompute;
  // Rows handed out a few at a time: the entries recomputed (K updates each) may crowd in some.
#pragma omp parallel for num_threads(team_for(double(m * n + recompute * k), threads)) schedule(dynamic, 4)
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < cols_of(i); ++j) {
      accumulator_t<S> acc = traits::initial();
      switch (classify(r[i], c[j], s[i * n + j], tau)) {
        case Entry::shifted: acc = LogSumExp<T>(detail::shifted_value<T, T>(r[i], c[j], s[i * n + j])); break;
        case Entry::zero: break;
        case Entry::recompute:
          for (index_t kk = 0; kk < k; ++kk) acc = traits::fma(acc, am(i, kk), bm(kk, j));
          break;
      }
      T* cij = out + i * p.c.rs + j * p.c.cs;
      *cij = traits::epilogue(p.alpha, acc, p.beta, cij);
    }
  if (p.symmetric) blocked_detail::mirror_lower(p.c, out, 0, 1);
  return recompute;
}

}  // namespace log_plus_detail

// What one call did, for tests and measurements.
struct ShiftStats {
  index_t recomputed = 0;  // entries the streaming accumulator recomputed
};

template <class T> bool log_plus_shift_pays(const detail::Problem<LogPlus<T>>& p) { return detail::log_plus_shift_pays(p); }

// C_b ← α ⊗ (A_b ⊗ B_b) ⊕ β ⊗ C_b for every member by the shift trick (header comment), on
// ctx.cpu_threads threads, the GEMM through the CPU backend's plus-times (vendor BLAS per ctx).
// Honours the whole detail::Problem contract. b_factors, when given, are op(B)'s column maxima
// and factors (lines = N, len = K, per member or one set for all), as shift_rows computes them
// from op(B)ᵀ: they are used instead of computing them again (bit for bit the same result).
template <class T>
ShiftStats log_plus_shift_gemm(const Context& ctx, const detail::Problem<LogPlus<T>>& p,
                               const ShiftedLines<T>* b_factors = nullptr) {
  using namespace log_plus_detail;
  ShiftStats stats;
  const index_t m = p.m(), n = p.n(), k = p.k();
  if (m == 0 || n == 0 || p.batch == 0) return stats;
  const int threads = ctx.cpu_threads > 0 ? ctx.cpu_threads : omp_get_max_threads();
  // Aᵀ·A (B is A transposed, member for member): B's factors are A's, transposed.
  const bool b_is_a = !b_factors && p.symmetric && p.a.p == p.b.p && p.a.rs == p.b.cs && p.a.cs == p.b.rs &&
                      p.stride_a == p.stride_b;
  const bool own_b = !b_factors && !b_is_a;
  const Sum tau = threshold(k);

  const std::size_t per_member = std::size_t(m * k + (own_b ? k * n : 0) + m * n) * sizeof(Sum);
  const index_t chunk = std::clamp<index_t>(index_t(chunk_bytes / per_member), 1, p.batch);
  std::vector<Sum> ea(std::size_t(chunk * m * k)), eb(own_b ? std::size_t(chunk * k * n) : 0), sum(std::size_t(chunk * m * n));
  std::vector<T> row_shift(std::size_t(chunk * m)), col_shift(own_b ? std::size_t(chunk * n) : 0);

  for (index_t b0 = 0; b0 < p.batch; b0 += chunk) {
    const index_t members = std::min(chunk, p.batch - b0);
    const detail::Strided<const T> a{p.a.p + b0 * p.stride_a, m, k, p.a.rs, p.a.cs};
    log_plus_detail::shift_rows(a, p.stride_a, members, ea.data(), row_shift.data(), threads);
    // Columns of op(B) are the rows of op(B)ᵀ: their factors are an N×K row-major matrix per member.
    const Sum* b_sums = ea.data();
    const T* c_shifts = row_shift.data();
    index_t b_sum_stride = m * k, c_shift_stride = m;
    if (b_factors) {
      b_sums = b_factors->factors + b0 * b_factors->factor_stride;
      c_shifts = b_factors->max + b0 * b_factors->max_stride;
      b_sum_stride = b_factors->factor_stride, c_shift_stride = b_factors->max_stride;
    } else if (own_b) {
      const detail::Strided<const T> bt{p.b.p + b0 * p.stride_b, n, k, p.b.cs, p.b.rs};
      log_plus_detail::shift_rows(bt, p.stride_b, members, eb.data(), col_shift.data(), threads);
      b_sums = eb.data(), c_shifts = col_shift.data();
      b_sum_stride = n * k, c_shift_stride = n;
    }
    factor_gemm(ctx, ea.data(), m * k, b_sums, b_sum_stride, sum.data(), m, n, k, members, p.symmetric);
    for (index_t bt_i = 0; bt_i < members; ++bt_i)
      stats.recomputed += finish(p, b0 + bt_i, row_shift.data() + bt_i * m, c_shifts + bt_i * c_shift_stride,
                                 sum.data() + bt_i * m * n, tau, threads);
  }
  return stats;
}

}  // namespace ringmm::cpu
