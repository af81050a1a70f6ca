// Shared test helpers: random semiring data, poisoned outputs, exact or bounded comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "measure/random_data.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"

namespace ringmm::testing {

// A context that runs on the CPU backend with `threads` threads (0: OpenMP's default).
inline Context cpu_context(int threads = 0, CpuIsa isa = CpuIsa::automatic) {
  Context ctx;
  ctx.backend = Backend::cpu;
  ctx.cpu_threads = threads;
  ctx.cpu_isa = isa;
  return ctx;
}

// The instruction sets this CPU runs, narrowest first: the CPU kernels' builds a test can force.
inline std::vector<CpuIsa> cpu_isa_levels() {
  std::vector<CpuIsa> levels;
  for (CpuIsa isa : {CpuIsa::generic, CpuIsa::avx2, CpuIsa::avx512})
    if (int(isa) <= int(detected_cpu_isa())) levels.push_back(isa);
  return levels;
}

// An owning host matrix with a view; `pad` extra elements per leading-dimension line.
template <class T> struct HostMatrix {
  std::vector<T> storage;
  MatrixView<T> view;
  HostMatrix() = default;
  HostMatrix(index_t rows, index_t cols, Layout layout, index_t pad = 0) {
    const index_t ld = std::max<index_t>(1, (layout == Layout::row_major ? cols : rows) + pad);
    const index_t lines = layout == Layout::row_major ? rows : cols;
    storage.resize(std::size_t(std::max<index_t>(1, lines * ld)));
    view = {storage.data(), rows, cols, ld, layout};
  }
  HostMatrix(const HostMatrix& o) : storage(o.storage), view(o.view) { view.data = storage.data(); }
  HostMatrix& operator=(const HostMatrix& o) {
    storage = o.storage;
    view = o.view;
    view.data = storage.data();
    return *this;
  }
  MatrixView<const T> cview() const { return {storage.data(), view.rows, view.cols, view.ld, view.layout}; }
  T& operator()(index_t i, index_t j) { return view(i, j); }
  T operator()(index_t i, index_t j) const { return view(i, j); }
};

// A value no kernel produces from our random data: shows unwritten elements.
template <class T> T poison() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else if constexpr (std::is_same_v<T, i16x2>) return {std::int16_t(0x7bad), std::int16_t(-0x7bad)};
  else if constexpr (std::is_same_v<T, std::uint8_t>) return 0xa5;
  else return T(0x7eadbeef);
}

// Random valid inputs for semiring S (measure/random_data.hpp), with more variety than the
// benchmarks' data: 1̄ among the tropical specials and or-and true bytes other than 1.
// `k` is the inner dimension, used to keep or-and products from saturating to all-true.
template <class S> typename S::value_type random_value(std::mt19937_64& rng, index_t k = 64) {
  return measure::random_value<S>(rng, k, measure::Variety{.one_among_specials = true, .any_nonzero_true = true});
}

template <class S>
HostMatrix<typename S::value_type> random_matrix(index_t rows, index_t cols, Layout layout, index_t pad,
                                                 std::mt19937_64& rng, index_t k = 64) {
  HostMatrix<typename S::value_type> m(rows, cols, layout, pad);
  for (auto& x : m.storage) x = poison<typename S::value_type>();  // padding keeps poison: must not be read into results
  for (index_t i = 0; i < rows; ++i)
    for (index_t j = 0; j < cols; ++j) m(i, j) = random_value<S>(rng, k);
  return m;
}

template <class T> std::string show(T x) {
  std::ostringstream os;
  if constexpr (std::is_same_v<T, i16x2>) os << "(" << x.lo << "," << x.hi << ")";
  else if constexpr (std::is_same_v<T, std::uint8_t>) os << int(x);
  else os << x;
  return os.str();
}

// NaN must meet NaN; otherwise exact semirings must match bit for bit, rounded ones (float plus-times, log-plus)
// within the semiring's semiring_traits::within_tolerance, given (where the bound needs it) the magnitude
// |α|·(|A||B|)ᵢⱼ + |β|·|Cᵢⱼ| computed in double.

template <class S>
::testing::AssertionResult matrices_match(const detail::Problem<S>& p,
                                          const detail::Strided<typename S::value_type>& expected_c,
                                          const detail::Strided<typename S::value_type>& actual_c,
                                          const detail::Strided<const typename S::value_type>* c_before = nullptr) {
  using T = typename S::value_type;
  index_t bad = 0;
  std::ostringstream first;
  for (index_t bt = 0; bt < p.batch; ++bt) {
    for (index_t i = 0; i < p.m(); ++i) {
      for (index_t j = 0; j < p.n(); ++j) {
        const T e = expected_c.p[bt * p.stride_c + i * expected_c.rs + j * expected_c.cs];
        const T a = actual_c.p[bt * p.stride_c + i * actual_c.rs + j * actual_c.cs];
        bool ok;
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(e) || std::isnan(a)) {  // the NaN policy: NaN where the reference has NaN
            ok = std::isnan(e) && std::isnan(a);
            if (!ok && bad++ == 0)
              first << "first mismatch at batch " << bt << " (" << i << ", " << j << "): expected " << show(e)
                    << ", got " << show(a);
            continue;
          }
        }
        if constexpr (semiring_traits<S>::exact) {
          ok = e == a;
        } else {
          double mag = 0;
          if constexpr (semiring_traits<S>::bounded_by_magnitude) {
            for (index_t k = 0; k < p.k(); ++k)
              mag += std::fabs(double(p.a.p[bt * p.stride_a + i * p.a.rs + k * p.a.cs])) *
                     std::fabs(double(p.b.p[bt * p.stride_b + k * p.b.rs + j * p.b.cs]));
            mag *= std::fabs(double(p.alpha));
            if (c_before && p.beta != T(0))
              mag += std::fabs(double(p.beta)) * std::fabs(double(c_before->p[bt * p.stride_c + i * c_before->rs + j * c_before->cs]));
          }
          ok = semiring_traits<S>::within_tolerance(double(e), double(a), p.k(), mag);
        }
        if (!ok && bad++ == 0)
          first << "first mismatch at batch " << bt << " (" << i << ", " << j << "): expected " << show(e) << ", got "
                << show(a);
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " mismatched elements; " << first.str();
}

// Every built-in semiring (builtins.def) as a gtest type list, and test names read off the registry:
// TYPED_TEST_SUITE(Suite, BuiltinSemirings, SemiringNames) names the cases MaxPlus_f32, OrAnd_u8, ...
template <class L> struct as_gtest_types;
template <class... S> struct as_gtest_types<type_list<S...>> {
  using type = ::testing::Types<S...>;
};
using BuiltinSemirings = as_gtest_types<builtin_semirings>::type;

// The built-in pairs for which Keep<S>::value holds, as a gtest type list.
template <template <class> class Keep, class L> struct keep_only;
template <template <class> class Keep> struct keep_only<Keep, type_list<>> {
  using type = type_list<>;
};
template <template <class> class Keep, class S, class... Rest> struct keep_only<Keep, type_list<S, Rest...>> {
  template <class L> struct prepend;
  template <class... X> struct prepend<type_list<X...>> {
    using type = type_list<S, X...>;
  };
  using rest = typename keep_only<Keep, type_list<Rest...>>::type;
  using type = std::conditional_t<Keep<S>::value, typename prepend<rest>::type, rest>;
};
// The float pairs the NaN policy is about: all but log-plus, which refuses NaN (LogPlus::valid_input;
// named here because nvcc cannot compare a NaN in a constant expression).
template <class S>
struct takes_nan : std::bool_constant<std::is_floating_point_v<typename S::value_type> && S::kind != SemiringKind::log_plus> {};
template <class S> struct selects_one_term : std::bool_constant<semiring_traits<S>::selects> {};
using FloatSemirings = as_gtest_types<keep_only<takes_nan, builtin_semirings>::type>::type;
using SelectingSemirings = as_gtest_types<keep_only<selects_one_term, builtin_semirings>::type>::type;
// The float pairs whose ⊕ selects and whose ⊗ (+ or ×) makes NaN of non-NaN inputs (∞ + −∞, ∞ × 0).
template <class S>
struct selects_with_nan_products
    : std::bool_constant<takes_nan<S>::value && selects_one_term<S>::value && S::kind != SemiringKind::max_min &&
                         S::kind != SemiringKind::min_max> {};
using NanProductSelectingSemirings = as_gtest_types<keep_only<selects_with_nan_products, builtin_semirings>::type>::type;

// "MaxPlus_f32" for max-plus over f32.
template <class S> std::string semiring_test_name() {
  std::string name;
  bool upper = true;
  for (char ch : to_string(S::kind)) {
    if (ch == '-') {
      upper = true;
      continue;
    }
    name += upper ? char(ch - 'a' + 'A') : ch;
    upper = false;
  }
  return name + "_" + std::string(to_string(dtype_of<typename S::value_type>::value));
}
struct SemiringNames {
  template <class S> static std::string GetName(int) { return semiring_test_name<S>(); }
};

// Element-wise equality of two whole buffers (for "C was not touched" checks).
template <class T> bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

}  // namespace ringmm::testing
