// Argument checks shared by every entry point: they run before any work and throw ringmm::Error.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"

namespace ringmm::detail {

template <class T> void validate_view(const MatrixView<T>& v, const std::string& name) {
  if (v.rows < 0 || v.cols < 0)
    throw Error(Errc::invalid_argument, name, "negative size " + std::to_string(v.rows) + "x" + std::to_string(v.cols));
  const index_t contiguous = v.layout == Layout::row_major ? v.cols : v.rows;
  if (v.ld < 1 || v.ld < contiguous)
    throw Error(Errc::invalid_leading_dim, "ld" + name,
                "leading dimension " + std::to_string(v.ld) + " must be >= max(1, " + std::to_string(contiguous) + ")");
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

template <class T> index_t batch_span(const MatrixView<T>& v, index_t batch, index_t stride) {
  return v.empty() ? 0 : (batch - 1) * stride + v.extent();
}

}  // namespace ringmm::detail
