// Matrix views: a pointer with rows, cols, a leading dimension and a layout. Views never own.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <type_traits>

#include "ringmm/types.hpp"

namespace ringmm {

// The product of sizes, strides and element sizes, or nullopt when a factor is negative or the
// product does not fit in index_t. Every element or byte count formed from a shape, a file header
// or an API argument goes through this, so an absurd shape is refused instead of wrapping round
// to a small one. (Plain arithmetic rather than compiler builtins: nvcc also reads this header.)
template <class... I> constexpr std::optional<index_t> checked_mul(I... factors) {
  index_t product = 1;
  for (const index_t f : {index_t(factors)...}) {
    if (f < 0 || (f != 0 && product > std::numeric_limits<index_t>::max() / f)) return std::nullopt;
    product *= f;
  }
  return product;
}

template <class T> struct MatrixView {
  T* data = nullptr;
  index_t rows = 0;
  index_t cols = 0;
  index_t ld = 0;  // elements between consecutive rows (row-major) or columns (col-major)
  Layout layout = Layout::row_major;

  RINGMM_HD index_t row_stride() const { return layout == Layout::row_major ? ld : 1; }
  RINGMM_HD index_t col_stride() const { return layout == Layout::row_major ? 1 : ld; }
  RINGMM_HD T& operator()(index_t i, index_t j) const { return data[i * row_stride() + j * col_stride()]; }
  bool empty() const { return rows == 0 || cols == 0; }
  // Elements from the first to one past the last addressed element (0 when empty), or nullopt
  // when that count overflows index_t.
  std::optional<index_t> checked_extent() const {
    if (empty()) return 0;
    const auto last_row = checked_mul(rows - 1, row_stride());
    const auto last_col = checked_mul(cols - 1, col_stride());
    if (!last_row || !last_col || *last_row > std::numeric_limits<index_t>::max() - 1 - *last_col) return std::nullopt;
    return *last_row + *last_col + 1;
  }
  // The same, saturated at index_t's maximum so it never wraps; validate_view refuses such views.
  index_t extent() const { return checked_extent().value_or(std::numeric_limits<index_t>::max()); }
  // A template, so that MatrixView<const T> declares no conversion to itself (nvcc warning #554).
  template <class U = T>
    requires(!std::is_const_v<U>)
  operator MatrixView<const U>() const {
    return {data, rows, cols, ld, layout};
  }
};

// Compact views with the smallest legal leading dimension.
template <class T> MatrixView<T> row_major(T* data, index_t rows, index_t cols) {
  return {data, rows, cols, cols > 1 ? cols : 1, Layout::row_major};
}
template <class T> MatrixView<T> col_major(T* data, index_t rows, index_t cols) {
  return {data, rows, cols, rows > 1 ? rows : 1, Layout::col_major};
}

namespace detail {
// A matrix with op applied: element (i, j) of op(X) is p[i*rs + j*cs]. Every kernel sees this form.
template <class T> struct Strided {
  T* p = nullptr;
  index_t rows = 0, cols = 0;
  index_t rs = 0, cs = 0;
  RINGMM_HD T& operator()(index_t i, index_t j) const { return p[i * rs + j * cs]; }
};

template <class T> Strided<T> apply_op(Op op, const MatrixView<T>& v) {
  if (op == Op::N) return {v.data, v.rows, v.cols, v.row_stride(), v.col_stride()};
  return {v.data, v.cols, v.rows, v.col_stride(), v.row_stride()};
}
}  // namespace detail

}  // namespace ringmm
