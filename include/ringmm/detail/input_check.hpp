// The input policy's one check (semiring_traits: valid_input, input_domain, bounds_sums), shared by
// the CPU path (scan on the host), the CUDA path (the same scan_value in a device kernel) and
// SUMMA (a scan per rank, agreed across ranks). It runs before any work: a refused call writes
// nothing.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::detail {

template <class S>
inline constexpr bool scans_inputs = semiring_traits<S>::checks_inputs || semiring_traits<S>::bounds_sums;

// What a scan of one operand found. Positions count the operand's elements member by member,
// row by row (so a device scan can keep the first one with an atomic minimum).
struct ValueScan {
  static constexpr unsigned long long none = ~0ull;
  unsigned long long first_bad = none;   // position of the first value outside the domain
  unsigned long long max_magnitude = 0;  // largest |x|, for semirings that bound their sums
};

// Adds one value at `position` to a scan.
template <class S>
RINGMM_HD void scan_value(ValueScan& s, typename semiring_traits<S>::element x, unsigned long long position) {
  using traits = semiring_traits<S>;
  if constexpr (traits::checks_inputs) {
    if (!traits::valid_input(x) && position < s.first_bad) s.first_bad = position;
  }
  if constexpr (traits::bounds_sums) {
    static_assert(std::is_integral_v<typename traits::element>, "bounds_sums is for integer rings");
    const long long v = (long long)x;
    const unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    if (mag > s.max_magnitude) s.max_magnitude = mag;
  }
}

inline void merge_scans(ValueScan& into, const ValueScan& from) {
  if (from.first_bad < into.first_bad) into.first_bad = from.first_bad;
  if (from.max_magnitude > into.max_magnitude) into.max_magnitude = from.max_magnitude;
}

// One operand as the check sees it: `members` matrices of `view`'s shape, `stride` apart
// (lower_only: only i ≥ j is read, as for Aᵀ·A's C).
template <class S> struct CheckedOperand {
  const char* name;   // "A", "B", "C"
  const char* scope;  // appended to the position, e.g. " of this rank's local block"
  Strided<const typename semiring_traits<S>::element> view;
  index_t stride = 0;
  index_t members = 1;
  bool lower_only = false;
  ValueScan scan{};
};

// Scans the operand's rows, split over OpenMP's threads once it holds a million elements (on one
// thread a 4096² operand takes about as long to scan as the GPU takes to multiply it).
template <class S> void scan_on_host(CheckedOperand<S>& x) {
  const auto& v = x.view;
  const index_t members = x.stride == 0 ? 1 : x.members, lines = members * v.rows;
  using traits = semiring_traits<S>;
  // A row in two passes the compiler vectorises (all valid? the largest magnitude), and a third
  // for the position only in a row that holds a bad value: scan_value's verdict, at memory speed.
  auto scan_lines = [&](index_t first, index_t last, ValueScan& scan) {
    for (index_t line = first; line < last; ++line) {
      const index_t b = line / v.rows, i = line % v.rows;
      const index_t cols = x.lower_only ? std::min(i + 1, v.cols) : v.cols, cs = v.cs;
      const auto* row = v.p + b * x.stride + i * v.rs;
      const unsigned long long position = (unsigned long long)(line * v.cols);
      if constexpr (traits::checks_inputs) {
        unsigned invalid = 0;  // bits, not a bool: GCC vectorises integer ors, not boolean ands
        if (cs == 1)          // the common layout, apart so that the loop vectorises
          for (index_t j = 0; j < cols; ++j) invalid |= unsigned(!traits::valid_input(row[j]));
        else
          for (index_t j = 0; j < cols; ++j) invalid |= unsigned(!traits::valid_input(row[j * cs]));
        if (invalid)
          for (index_t j = 0; j < cols; ++j) scan_value<S>(scan, row[j * cs], position + (unsigned long long)j);
      }
      if constexpr (traits::bounds_sums) {
        unsigned long long largest = scan.max_magnitude;
        for (index_t j = 0; j < cols; ++j) {
          const long long value = (long long)row[j * cs];
          const unsigned long long magnitude = value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value;
          largest = magnitude > largest ? magnitude : largest;
        }
        scan.max_magnitude = largest;
      }
    }
  };
  if (lines * v.cols < (index_t(1) << 20)) return scan_lines(0, lines, x.scan);
#pragma omp parallel
  {
    ValueScan mine;
    const index_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    scan_lines(lines * t / threads, lines * (t + 1) / threads, mine);
#pragma omp critical(ringmm_scan_on_host)
    merge_scans(x.scan, mine);
  }
}

// "max-plus i32", or "the semiring" for a user-defined one without a kind.
template <class S> std::string semiring_name() {
  if constexpr (requires { S::kind; } && requires { dtype_of<typename S::value_type>::value; })
    return std::string(to_string(S::kind)) + " " + std::string(to_string(dtype_of<typename S::value_type>::value));
  else
    return "the semiring";
}

template <class T> std::string value_text(T x) {
  if constexpr (std::is_same_v<T, i16x2>) return "(" + std::to_string(x.lo) + ", " + std::to_string(x.hi) + ")";
  else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", double(x));
    return buf;
  } else return std::to_string(x);
}

// subject: the argument ("A", "alpha"); what: the value's place ("element (3, 4)", "alpha").
template <class S>
Error outside_domain(const std::string& subject, const std::string& what, typename semiring_traits<S>::element x) {
  return Error(Errc::value_out_of_range, subject,
               what + " = " + value_text(x) + " is outside the inputs " + semiring_name<S>() + " accepts (" +
                   semiring_traits<S>::input_domain() + ")");
}

// α and β are checked like elements.
template <class S> void check_scalars(typename semiring_traits<S>::scalar alpha, typename semiring_traits<S>::scalar beta) {
  using traits = semiring_traits<S>;
  if constexpr (traits::checks_inputs) {
    if (!traits::valid_input(alpha)) throw outside_domain<S>("alpha", "alpha", alpha);
    if (!traits::valid_input(beta)) throw outside_domain<S>("beta", "beta", beta);
  }
}

// Refuses the call when a scan found a value outside the domain (naming the operand, the position
// and the value, which `read(address)` fetches from wherever the operand lives), or when sums
// could wrap around. `operands` are A, B and, when it is read, C; k is the inner dimension.
template <class S, std::size_t N, class Read>
void check_scans(const CheckedOperand<S> (&operands)[N], std::size_t count, typename semiring_traits<S>::scalar alpha,
                 typename semiring_traits<S>::scalar beta, index_t k, Read&& read) {
  using traits = semiring_traits<S>;
  for (std::size_t o = 0; o < count; ++o) {
    const CheckedOperand<S>& x = operands[o];
    if (x.scan.first_bad == ValueScan::none) continue;
    const index_t pos = index_t(x.scan.first_bad), per = x.view.rows * x.view.cols;
    const index_t b = pos / per, i = pos % per / x.view.cols, j = pos % x.view.cols;
    std::string where = "element (" + std::to_string(i) + ", " + std::to_string(j) + ")";
    if (x.members > 1 && x.stride != 0) where += " of batch member " + std::to_string(b);
    throw outside_domain<S>(x.name, where + x.scope, read(x.view.p + b * x.stride + i * x.view.rs + j * x.view.cs));
  }
  if constexpr (traits::bounds_sums) {
    using T = typename traits::element;
    // Every partial sum is bounded by |α|·K·max|A|·max|B| + |β|·max|C|.
    const double mag_a = double(operands[0].scan.max_magnitude), mag_b = double(operands[1].scan.max_magnitude);
    const double mag_c = count > 2 ? double(operands[2].scan.max_magnitude) : 0.0;
    const double bound = std::fabs(double(alpha)) * double(k) * mag_a * mag_b + std::fabs(double(beta)) * mag_c;
    const double limit = double(std::numeric_limits<T>::max());
    if (bound > limit) {
      char text[256];
      std::snprintf(text, sizeof text,
                    "%s sums could overflow: |alpha|*K*max|A|*max|B| + |beta|*max|C| = %.0f*%lld*%.0f*%.0f + %.0f*%.0f "
                    "= %.4g exceeds %.0f; ringmm refuses rather than wrap around",
                    semiring_name<S>().c_str(), std::fabs(double(alpha)), (long long)k, mag_a, mag_b,
                    count > 2 ? std::fabs(double(beta)) : 0.0, mag_c, bound, limit);
      throw Error(Errc::value_out_of_range, "A", text);
    }
  }
}

// The whole check for a problem in host memory.
template <class S> void check_host_inputs(const Problem<S>& p) {
  if constexpr (scans_inputs<S>) {
    check_scalars<S>(p.alpha, p.beta);
    const bool reads_c = !(p.beta == typename semiring_traits<S>::scalar(S::zero()));
    CheckedOperand<S> ops[3] = {{"A", "", p.a, p.stride_a, p.batch},
                                {"B", "", p.b, p.stride_b, p.batch},
                                {"C", "", {p.c.p, p.c.rows, p.c.cols, p.c.rs, p.c.cs}, p.stride_c, p.batch, p.symmetric}};
    const std::size_t count = reads_c ? 3 : 2;
    for (std::size_t o = 0; o < count; ++o) scan_on_host(ops[o]);
    check_scans(ops, count, p.alpha, p.beta, p.k(), [](const auto* address) { return *address; });
  }
}

}  // namespace ringmm::detail
