// The shift trick's factors on the CPU (the method: ringmm/cpu/log_plus.hpp; the scalar math:
// ringmm/detail/log_plus_shift.hpp): the maxima of an operand's lines and the shifted
// exponentials of its elements, in f64. The log-plus product (cpu/log_plus.hpp), the HMM forward
// (src/cpu/hmm.cpp, through the product) and the log-plus backward (ringmm/backward.hpp) all take
// their factors from shift_rows, and can hand factors computed once to the product.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "ringmm/detail/log_plus_shift.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cpu {

namespace log_plus_detail {

// The type of the factors, the GEMM and S.
using Sum = double;

inline Sum flush_gap() { return detail::shift_flush_gap<Sum>(); }
inline Sum threshold(index_t k) { return detail::shift_threshold<Sum>(k); }

// Threads worth waking for `work` exponentials (or logarithms, or streaming updates): about 2^15
// each, 100 µs. Waking the team for less cost more than it saved, and on a loaded machine OpenMP's
// spinning threads then stole the cores from OpenBLAS's (a 64³ product measured 40 ms, not 60 µs).
inline int team_for(double work, int threads) { return int(std::clamp(work / 32768.0, 1.0, double(threads))); }

// Lines of a strided operand handled together, reading along memory, when consecutive lines are
// adjacent (x.rs < x.cs: the rows of a column-major A, the columns of a row-major B).
constexpr index_t line_tile = 32;

// For every member b and row i of x (R×C, members `stride` apart): shift[b·R + i] = the row's
// maximum, out[(b·R + i)·C + c] = exp(x_ic − shift) (detail::shift_factor: 0 below exp(−flush)
// and for rows of −∞). Either orientation of x is read along memory; the values do not depend on
// it (a maximum is exact, each factor one exponential).
template <class T>
void shift_rows(const detail::Strided<const T>& x, index_t stride, index_t members, Sum* out, T* shift, int threads) {
  const Sum flush = flush_gap();
  const index_t rows = x.rows, cols = x.cols;
  const int team = team_for(double(members * rows * cols), threads);
  if (x.rs >= x.cs || rows == 1) {
#pragma omp parallel for num_threads(team) schedule(static)
    for (index_t line = 0; line < members * rows; ++line) {
      const T* src = x.p + (line / rows) * stride + (line % rows) * x.rs;
      Sum* dst = out + line * cols;
      T m = LogPlus<T>::zero();
      for (index_t c = 0; c < cols; ++c) m = std::max(m, src[c * x.cs]);
      shift[line] = m;
      for (index_t c = 0; c < cols; ++c) dst[c] = detail::shift_factor<Sum>(Sum(src[c * x.cs]) - Sum(m), flush);
    }
    return;
  }
  const index_t tiles = (rows + line_tile - 1) / line_tile;
#pragma omp parallel for num_threads(team) schedule(static)
  for (index_t t = 0; t < members * tiles; ++t) {
    const index_t member = t / tiles, first = (t % tiles) * line_tile, count = std::min(line_tile, rows - first);
    const T* src = x.p + member * stride + first * x.rs;
    T* m = shift + member * rows + first;
    Sum* dst = out + (member * rows + first) * cols;
    for (index_t l = 0; l < count; ++l) m[l] = LogPlus<T>::zero();
    for (index_t c = 0; c < cols; ++c)
      for (index_t l = 0; l < count; ++l) m[l] = std::max(m[l], src[c * x.cs + l * x.rs]);
    for (index_t c = 0; c < cols; ++c)
      for (index_t l = 0; l < count; ++l)
        dst[l * cols + c] = detail::shift_factor<Sum>(Sum(src[c * x.cs + l * x.rs]) - Sum(m[l]), flush);
  }
}

}  // namespace log_plus_detail

// One operand's side of the trick, as shift_rows leaves it: for op(A) its rows, for op(B) its
// columns (the rows of op(B)ᵀ). `lines` maxima and lines × len factors (each line contiguous) per
// member, members max_stride and factor_stride apart (0: one set for every member).
template <class T> struct ShiftedLines {
  const T* max = nullptr;
  const log_plus_detail::Sum* factors = nullptr;
  index_t lines = 0, len = 0;
  index_t max_stride = 0, factor_stride = 0;
};

// Computes x's maxima and factors (one member) into the caller's storage and describes them.
template <class T>
ShiftedLines<T> shift_lines(const detail::Strided<const T>& x, log_plus_detail::Sum* factors, T* max, int threads) {
  log_plus_detail::shift_rows(x, 0, 1, factors, max, threads);
  return {max, factors, x.rows, x.cols, 0, 0};
}

}  // namespace ringmm::cpu
