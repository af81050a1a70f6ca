// The shift trick for log-plus products, the part both backends share (the CPU's
// ringmm/cpu/log_plus.hpp explains the method and its error; the CUDA one is
// ringmm/cuda/log_plus.cuh):
//
//   C_ij = r_i + c_j + log S_ij,   S_ij = Σ_k exp(a_ik − r_i)·exp(b_kj − c_j)
//
// with r_i the maximum of row i of op(A), c_j that of column j of op(B), and S one plus-times
// GEMM over the shifted exponentials ("factors") in the precision `Sum`.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

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

}  // namespace ringmm::detail
