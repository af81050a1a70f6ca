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

// Refuse input values outside the semiring's accepted range (see the integer policy in
// semiring.hpp and PlusTimes<int32_t>). Host memory only: the CUDA backend checks device data.
template <class S> void check_host_values(const Problem<typename S::value_type>& p) {
  using T = typename S::value_type;
  // lower_only: for syrk only C's lower triangle is read, so only it is checked.
  auto scan = [&](const Strided<const T>& x, index_t stride, const char* name, auto&& visit, bool lower_only = false) {
    for (index_t b = 0; b < p.batch; ++b)
      for (index_t i = 0; i < x.rows; ++i)
        for (index_t j = 0; j < (lower_only ? std::min(i + 1, x.cols) : x.cols); ++j)
          visit(x.p[b * stride + i * x.rs + j * x.cs], name);
  };
  const bool reads_c = !(p.beta == S::zero());
  const Strided<const T> c{p.c.p, p.c.rows, p.c.cols, p.c.rs, p.c.cs};
  if constexpr (semiring_traits<S>::checks_input_range) {
    auto check = [](T x, const char* name) {
      if (!S::valid_input(x))
        throw Error(Errc::value_out_of_range, name,
                    "integer tropical inputs must be the 0̄ sentinel or finite within the policy range "
                    "(see ringmm/semiring.hpp)");
    };
    check(p.alpha, "alpha");
    check(p.beta, "beta");
    scan(p.a, p.stride_a, "A", check);
    scan(p.b, p.stride_b, "B", check);
    if (reads_c) scan(c, p.stride_c, "C", check, p.symmetric);
  } else if constexpr (std::is_same_v<S, PlusTimes<std::int32_t>>) {
    // Every partial sum is bounded by |α|·K·max|A|·max|B| + |β|·max|C|; refuse if that can overflow.
    double max_a = 0, max_b = 0, max_c = 0;
    auto track = [](double& m) { return [&m](std::int32_t x, const char*) { m = std::max(m, std::fabs(double(x))); }; };
    scan(p.a, p.stride_a, "A", track(max_a));
    scan(p.b, p.stride_b, "B", track(max_b));
    if (reads_c) scan(c, p.stride_c, "C", track(max_c), p.symmetric);
    const double bound = std::fabs(double(p.alpha)) * double(p.k()) * max_a * max_b +
                         (reads_c ? std::fabs(double(p.beta)) * max_c : 0.0);
    if (bound > 2147483647.0)
      throw Error(Errc::value_out_of_range, "A",
                  "plus-times i32 product could overflow int32 (bound " + std::to_string(bound) +
                      "); ringmm refuses rather than wrap around");
  }
}

}  // namespace ringmm::detail
