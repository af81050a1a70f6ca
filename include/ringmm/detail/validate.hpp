// Argument checks shared by every entry point: they run before any work and throw ringmm::Error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>
#include <string>

#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm::detail {

// A view must describe memory that can exist: its extent in bytes must fit in index_t (that is
// ptrdiff_t, the bound on any array's size), or offsets computed inside the kernels would wrap.
template <class T> void check_addressable(const MatrixView<T>& v, const std::string& name) {
  const std::optional<index_t> extent = v.checked_extent();
  if (extent && checked_mul(*extent, sizeof(T))) return;
  const double bytes =
      ((double(v.rows) - 1) * double(v.row_stride()) + (double(v.cols) - 1) * double(v.col_stride()) + 1) * double(sizeof(T));
  throw Error(Errc::invalid_argument, name,
              "a " + std::to_string(v.rows) + "x" + std::to_string(v.cols) + " view with leading dimension " +
                  std::to_string(v.ld) + " spans " + bytes_text(bytes) + ", more than any array can hold (" +
                  bytes_text(double(std::numeric_limits<index_t>::max())) + ")");
}

template <class T> void validate_view(const MatrixView<T>& v, const std::string& name) {
  if (v.rows < 0 || v.cols < 0)
    throw Error(Errc::invalid_argument, name, "negative size " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  const index_t contiguous = v.layout == Layout::row_major ? v.cols : v.rows;
  if (v.ld < 1 || v.ld < contiguous)
    throw Error(Errc::invalid_leading_dim, "ld" + name,
                "leading dimension " + std::to_string(v.ld) + " must be >= max(1, " + std::to_string(contiguous) + ")");
  check_addressable(v, name);
  if (v.data == nullptr && !v.empty())
    throw Error(Errc::null_pointer, name, "null data pointer for a " + std::to_string(v.rows) + "x" +
                                              std::to_string(v.cols) + " matrix");
}

// Do two views share an element? Exact when both use the same leading dimension and layout
// (sub-blocks of one array); otherwise any overlap of their address ranges counts.
template <class T, class U>
bool views_overlap(const MatrixView<T>& x, const MatrixView<U>& y, index_t x_span, index_t y_span) {
  if (x.empty() || y.empty()) return false;
  const auto xb = reinterpret_cast<std::uintptr_t>(x.data), yb = reinterpret_cast<std::uintptr_t>(y.data);
  const std::uintptr_t xe = xb + std::uintptr_t(x_span) * sizeof(T), ye = yb + std::uintptr_t(y_span) * sizeof(U);
  if (xe <= yb || ye <= xb) return false;
  if (sizeof(T) != sizeof(U) || x.ld != y.ld || x.layout != y.layout || x_span != x.extent() || y_span != y.extent())
    return true;
  const std::intptr_t diff = std::intptr_t(yb) - std::intptr_t(xb);
  if (diff % std::intptr_t(sizeof(T)) != 0) return true;
  const index_t off = diff / index_t(sizeof(T));
  // Position of y's origin in x's (major, minor) coordinates; ld exceeds both minor extents.
  index_t major = off / x.ld, minor = off % x.ld;
  if (minor < 0) { minor += x.ld; major -= 1; }
  const bool rm = x.layout == Layout::row_major;
  const index_t x_major = rm ? x.rows : x.cols, x_minor = rm ? x.cols : x.rows;
  const index_t y_major = rm ? y.rows : y.cols, y_minor = rm ? y.cols : y.rows;
  const bool spills = minor + y_minor > x.ld;  // y's lines wrap into x's next line
  const bool majors_meet = major < x_major && major + y_major + (spills ? 1 : 0) > 0;
  const bool minors_meet = minor < x_minor || spills;
  return majors_meet && minors_meet;
}

// Elements from the first member's first element to one past the last member's last, for a
// validated view and batch >= 1. Kernels address member b at b·stride, so a span that does not
// fit in index_t bytes is refused here rather than wrapping there.
template <class T> index_t batch_span(const MatrixView<T>& v, index_t batch, index_t stride) {
  if (v.empty()) return 0;
  const std::optional<index_t> offset = checked_mul(batch - 1, stride);
  const index_t extent = v.extent();
  if (offset && *offset <= std::numeric_limits<index_t>::max() - extent && checked_mul(*offset + extent, sizeof(T)))
    return *offset + extent;
  const double bytes = ((double(batch) - 1) * double(stride) + double(extent)) * double(sizeof(T));
  throw Error(Errc::invalid_argument, "batch",
              std::to_string(batch) + " members " + std::to_string(stride) + " elements apart, each a " +
                  std::to_string(v.rows) + "x" + std::to_string(v.cols) + " view, span " + bytes_text(bytes) +
                  ", more than any array can hold (check the batch count and the strides)");
}

}  // namespace ringmm::detail
