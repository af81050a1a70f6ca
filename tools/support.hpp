// Helpers shared by the subcommands: a parallel run of the reference product, comparison against
// it, and the names of things as the tool prints them. Random data, timing and records come from
// ringmm_measure (tools/measure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "args.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"

namespace ringmm::tools {

// ---- reference and comparison -----------------------------------------------------------------

// The reference product split into row bands run in parallel: same per-element arithmetic as
// cpu::reference_gemm, so tropical and integer results are bit-identical to it. Not for syrk.
template <class S> void parallel_reference(const Problem<S>& p) {
  constexpr index_t band = 16;
  const index_t bands = (p.m() + band - 1) / band;
#pragma omp parallel for schedule(dynamic)
  for (index_t t = 0; t < bands; ++t) {
    auto part = p;
    const index_t r0 = t * band, rows = std::min(band, p.m() - r0);
    part.a.p += r0 * p.a.rs;
    part.a.rows = rows;
    part.c.p += r0 * p.c.rs;
    part.c.rows = rows;
    cpu::reference_gemm<S>(part);
  }
}

template <class T> std::string show_value(T x) {
  std::ostringstream os;
  if constexpr (std::is_same_v<T, i16x2>) os << "(" << x.lo << ", " << x.hi << ")";
  else if constexpr (std::is_same_v<T, std::uint8_t>) os << int(x);
  else os << x;
  return os.str();
}

struct CheckResult {
  bool pass = true;
  bool exact = true;   // exact comparison (tropical, integer) or within the rounding bound
  std::string detail;  // on failure: how many differ and the first difference
};

// Compares row-major M×N results of a gemm problem `p` (its inputs, α, β): exact semirings must
// match bit for bit, rounded ones (semiring_traits::exact) lie within_tolerance, with the sum's
// magnitude (where the bound needs it) taken as |α|·K·max_k|A_ik|·max_k|B_kj| + |β|·|C0_ij|.
// `c_before` is C before the call (or null).
template <class S>
CheckResult compare_results(const Problem<S>& p, const std::vector<typename S::value_type>& expected,
                            const std::vector<typename S::value_type>& actual, const typename S::value_type* c_before) {
  using T = typename S::value_type;
  CheckResult result;
  result.exact = semiring_traits<S>::exact;
  std::vector<double> row_max, col_max;
  if constexpr (std::is_floating_point_v<T>) {
    if (semiring_traits<S>::bounded_by_magnitude) {
      row_max.assign(std::size_t(p.m()), 0.0);
    col_max.assign(std::size_t(p.n()), 0.0);
    for (index_t i = 0; i < p.m(); ++i)
      for (index_t k = 0; k < p.k(); ++k) row_max[i] = std::max(row_max[i], std::fabs(double(p.a(i, k))));
    for (index_t k = 0; k < p.k(); ++k)
      for (index_t j = 0; j < p.n(); ++j) col_max[j] = std::max(col_max[j], std::fabs(double(p.b(k, j))));
    }
  }
  std::int64_t bad = 0;
  std::ostringstream first;
  for (index_t i = 0; i < p.m(); ++i) {
    for (index_t j = 0; j < p.n(); ++j) {
      const std::size_t at = std::size_t(i * p.n() + j);
      const T e = expected[at], a = actual[at];
      bool ok = e == a;
      if constexpr (std::is_floating_point_v<T>) {
        ok = ok || (std::isnan(e) && std::isnan(a));  // the NaN policy: NaN where the reference has NaN
        if (!ok && !result.exact) {
          double magnitude = 0;
          if constexpr (semiring_traits<S>::bounded_by_magnitude) {
            magnitude = std::fabs(double(p.alpha)) * double(p.k()) * row_max[i] * col_max[j];
            if (c_before && p.beta != T(0)) magnitude += std::fabs(double(p.beta)) * std::fabs(double(c_before[at]));
          }
          ok = semiring_traits<S>::within_tolerance(double(e), double(a), p.k(), magnitude);
        }
      }
      if (!ok && bad++ == 0)
        first << "first at (" << i << ", " << j << "): expected " << show_value(e) << ", got " << show_value(a);
    }
  }
  if (bad) {
    result.pass = false;
    result.detail = std::to_string(bad) + " of " + std::to_string(p.m() * p.n()) + " elements differ from the reference; " +
                    first.str();
  }
  return result;
}

// ---- the options of a product ------------------------------------------------------------------

// What every product command (multiply, summa) reads the same way: --semiring (plus-times when
// absent), --type (checked against the semiring; "b1" only where `b1_allowed`), --transa,
// --transb, --check, --alpha and --beta (which needs --c, `has_c`).
struct ProductOptions {
  SemiringKind kind = SemiringKind::plus_times;
  std::optional<DType> type;  // absent: the operands' own
  bool b1 = false;            // --type b1: bit-packed operands
  bool trans_a = false, trans_b = false, check = false;
  std::optional<double> alpha, beta;
};
ProductOptions parse_product_options(const Options& opt, bool has_c, bool b1_allowed);

// ---- names ------------------------------------------------------------------------------------


// Independent products per element: 2 for the packed i16x2 lanes, else 1. Rates count each lane.
constexpr int lanes(DType t) { return t == DType::i16x2 ? 2 : 1; }

// "f32, f64, i32": the element types `kind` is built for.
std::string supported_types(SemiringKind kind);
// "max-plus is not available for element type u8 (supported: f32, f64, i32, i16x2)".
std::string unsupported_message(SemiringKind kind, DType type);
// The CPU model (from /proc/cpuinfo) and the first GPU's name (empty without one).
std::string cpu_model();
// This machine's physical memory in bytes (0 where the system does not say): what the commands
// check a result's size against before allocating it.
double machine_memory_bytes();
std::string gpu_name();
// The semiring/type pairs chosen by --semiring and --type, each a comma-separated list of names
// or "all" (the defaults name what an absent option means): every supported pair of the two
// lists, in order. A single named pair the library does not ship is a UsageError; lists keep only
// their supported pairs.
std::vector<std::pair<SemiringKind, DType>> selected_pairs(const Options& opt, const std::string& default_semirings = "all",
                                                           const std::string& default_types = "all");
// The same from the two lists' texts.
std::vector<std::pair<SemiringKind, DType>> selected_pairs(const std::string& semirings, const std::string& types);
// Throws UsageError unless `path` ends in .json or .csv (measure::write_records); call it before
// a long run.
void check_results_path(const std::string& path, const std::string& option);
// UTC time of now as 2026-01-31T12:00:00Z.
std::string utc_timestamp();
// "%.*f" and "%.3e" formatting without iostream state.
std::string fixed(double x, int digits);
std::string scientific(double x);

}  // namespace ringmm::tools
