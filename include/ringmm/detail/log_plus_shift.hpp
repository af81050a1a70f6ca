// The shift trick for log-plus products, the scalar part every user of it shares (the CPU's
// ringmm/cpu/log_plus.hpp explains the method and its error):
//
//   C_ij = r_i + c_j + log S_ij,   S_ij = Σ_k exp(a_ik − r_i)·exp(b_kj − c_j)
//
// with r_i the maximum of row i of op(A), c_j that of column j of op(B), and S one plus-times
// GEMM over the shifted exponentials ("factors") in the precision `Sum`. The implementations
// built on these functions:
//   CPU   ringmm/cpu/log_plus_shift.hpp  maxima and factors (shift_rows)
//         ringmm/cpu/log_plus.hpp        the product: factors (or the caller's), GEMM, finish
//                                        (log_plus_shift_gemm; the HMM forward passes the
//                                        transition matrix's factors, computed once)
//         ringmm/backward.hpp            log_plus_backward: the same factors, the weights below
//   CUDA  ringmm/cuda/log_plus.cuh       maxima and factors (shift_rows), the GEMM (factor_gemm),
//                                        finish and repair kernels
//         src/cuda/hmm.cu                the forward algorithm: the transition factors by
//                                        shift_rows, per step a fused shift of α and a fused
//                                        finish that adds the emissions
//         src/cuda/backward.cu           log_plus_backward: shift_rows, factor_gemm, the weights
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::detail {

template <class S> inline constexpr bool is_log_plus = false;
template <class T> inline constexpr bool is_log_plus<LogPlus<T>> = true;

// Factors below exp(−flush_gap) are flushed to 0, so that every product of two factors is a
// normal number: subnormals carry fewer digits and slow GEMMs down. 354 in f64, 43 in f32.
template <class Sum> Sum shift_flush_gap() { return std::floor(-std::log(std::numeric_limits<Sum>::min()) / 2); }

// The smallest S_ij the trick keeps; entries below it are recomputed by streaming. The flushed
// terms sum to less than K·exp(−flush_gap), at most ε·S_ij above the second bound; the first keeps
// the trick's own error, ε·(ln K − ln S_ij), within ε·(ln K + 14).
template <class Sum> Sum shift_threshold(index_t k) {
  return std::max(Sum(0x1p-20), Sum(k) * std::exp(-shift_flush_gap<Sum>()) / std::numeric_limits<Sum>::epsilon());
}

// Whether the trick pays on this shape: it spends M·K + K·N + M·N exponentials and logarithms
// (and a GEMM, whose multiply-adds cost far less) where streaming spends M·N·K updates of about
// three exponentials each (on one Zen 4 thread the trick measured 2.5× faster at 2³, 5× at 8³,
// 19× at 64³). Below 512 updates both take a few microseconds, and streaming, whose sums are
// exact to rounding, is kept.
template <class T> bool log_plus_shift_pays(const Problem<LogPlus<T>>& p) {
  const double m = double(p.m()), n = double(p.n()), k = double(p.k());
  return m * n * k >= 512 && 2 * m * n * k >= m * k + k * n + m * n;
}

// How one entry is finished: from the GEMM's sum, as 0̄ (its row or column is all −∞, so every
// term is), or by streaming.
enum class ShiftedEntry { shifted, zero, recompute };

template <class T, class Sum> RINGMM_HD ShiftedEntry classify_shifted(T r, T c, Sum sum, Sum threshold) {
  if (r == LogPlus<T>::zero() || c == LogPlus<T>::zero()) return ShiftedEntry::zero;
  return sum >= threshold ? ShiftedEntry::shifted : ShiftedEntry::recompute;
}

// exp and log in the precision E, the result widened to Sum. The factors' exponentials and the
// sums' logarithms need only the inputs' accuracy (the GEMM's long sums are what needs f64), so a
// caller may take E = float for f32 inputs (the CUDA product does: it halves its FP64-bound
// passes); E = Sum computes them in full.
template <class E, class Sum> RINGMM_HD Sum shift_exp(Sum d) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<E, float>) return Sum(::expf(float(d)));
  else return Sum(::exp(double(d)));
#else
  return Sum(std::exp(E(d)));
#endif
}
template <class E, class Sum> RINGMM_HD Sum shift_log(Sum s) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<E, float>) return Sum(::logf(float(s)));
  else return Sum(::log(double(s)));
#else
  return Sum(std::log(E(s)));
#endif
}

// A factor: exp(d) for d = x − (the maximum of its line), 0 below exp(−flush) and for the NaN of
// a line of −∞ (−∞ − −∞), which the comparison sends to 0.
template <class E, class Sum> RINGMM_HD Sum shift_factor(Sum d, Sum flush) { return d >= -flush ? shift_exp<E, Sum>(d) : Sum(0); }

// An entry the trick keeps (ShiftedEntry::shifted): r + c + log S, summed in Sum and rounded once.
template <class T, class E, class Sum> RINGMM_HD T shifted_value(T r, T c, Sum sum) {
  return T(Sum(r) + Sum(c) + shift_log<E, Sum>(sum));
}

// ---- the backward product (ringmm/backward.hpp) ----------------------------------------------
//
// P_ikj = exp(a_ik − r_i)·exp(b_kj − c_j)·F_ij with F_ij = exp(r_i + c_j − C_ij): the factors
// above, and the weights W_ij = G_ij·F_ij of two plus-times GEMMs.

// F_ij past 2^20 (the smallest S_ij the forward keeps, shift_threshold's floor) is too large for
// W: those entries sum their P_ikj directly. 20·ln 2.
inline constexpr double backward_direct_log_f = 13.862943611198906;

// How entry (i, j) of the backward product contributes: not at all (C_ij, r_i or c_j is −∞: no
// terms), through W (log_f = log F_ij, set), or directly.
enum class WeightEntry { none, weighted, direct };

template <class T, class Sum> RINGMM_HD WeightEntry classify_weight(T c_ij, T r, T c, Sum& log_f) {
  if (c_ij == LogPlus<T>::zero() || r == LogPlus<T>::zero() || c == LogPlus<T>::zero()) return WeightEntry::none;
  log_f = Sum(r) + Sum(c) - Sum(c_ij);
  return log_f > Sum(backward_direct_log_f) ? WeightEntry::direct : WeightEntry::weighted;
}

// P_ikj computed directly, exp(a_ik + b_kj − C_ij); 0 for a term of −∞.
template <class T, class Sum> RINGMM_HD Sum direct_weight(T a, T b, T c_ij) {
  const Sum d = Sum(a) + Sum(b) - Sum(c_ij);
  return d > -std::numeric_limits<Sum>::infinity() ? shift_exp<Sum, Sum>(d) : Sum(0);
}

}  // namespace ringmm::detail
