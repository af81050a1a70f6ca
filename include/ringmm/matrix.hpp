// Matrix views: a pointer with rows, cols, a leading dimension and a layout. Views never own.
#pragma once

#include <cstddef>
#include <type_traits>

#include "ringmm/types.hpp"

namespace ringmm {

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
  // Elements from the first to one past the last addressed element (0 when empty).
  index_t extent() const {
    if (empty()) return 0;
    return (rows - 1) * row_stride() + (cols - 1) * col_stride() + 1;
  }
  operator MatrixView<const T>() const
    requires(!std::is_const_v<T>)
  {
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
