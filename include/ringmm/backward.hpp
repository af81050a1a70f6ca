// Backward products: the gradients of C = A ⊗ B with respect to A and B, given G = dL/dC, for
// the automatic differentiation of semiring products (the Python package's autograd).
//
//   log_plus_backward   C_ij = log Σ_k exp(a_ik + b_kj):  P_ikj = exp(a_ik + b_kj − c_ij) (the
//                       softmax over k), dA_ik = Σ_j G_ij·P_ikj, dB_kj = Σ_i G_ij·P_ikj
//   argmax_backward     selecting semirings (max-plus, min-plus, max-min, max-times, min-max):
//                       each G_ij goes to the one term that won, k = K*_ij from gemm_argmax:
//                       dA_ik += G_ij·∂(a⊗b)/∂a, dB_kj += G_ij·∂(a⊗b)/∂b
//
// Scope: C = A ⊗ B with α = 1̄, β = 0̄ (no accumulation, no gradients for α, β), op = N (pass a
// transposed view's transpose yourself). Every operand is a MatrixView of either layout with any
// leading dimension; dA and dB are overwritten (never read). f32 and f64. Backends: the CPU (host
// memory) and CUDA (device memory, every operand: src/cuda/backward.cu, the same arithmetic with
// cuBLAS for the GEMMs, queued on ctx.cuda_stream; the value check is its one host wait, which
// Context::trust_inputs skips for log_plus_backward).
// Backend::automatic runs on CUDA when a device is present and A is device memory, else on the
// CPU. Both backends are deterministic (no atomics: every sum runs in a fixed order). Arguments
// are checked before any work; a refused call writes nothing.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ringmm/config.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/context.hpp"
#include "ringmm/cpu/log_plus_shift.hpp"
#include "ringmm/detail/log_plus_shift.hpp"
#include "ringmm/detail/validate.hpp"
#include "ringmm/error.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm {

namespace backward_detail {

inline std::string dims(index_t rows, index_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

template <class T> void expect_shape(const MatrixView<T>& v, index_t rows, index_t cols, const char* name, const char* why) {
  detail::validate_view(v, name);
  if (v.rows != rows || v.cols != cols)
    throw Error(Errc::dimension_mismatch, name, std::string("is ") + dims(v.rows, v.cols) + " but " + why + " needs " + dims(rows, cols));
}

// Outputs must overlap neither the inputs nor each other: they are written while inputs are read.
template <class Out, class In> void refuse_overlap(const MatrixView<Out>& out, const char* out_name, const MatrixView<In>& in, const char* in_name) {
  if (out.empty() || in.empty()) return;
  const char* o = reinterpret_cast<const char*>(out.data);
  const char* i = reinterpret_cast<const char*>(in.data);
  const char* o_end = o + out.extent() * index_t(sizeof(Out));
  const char* i_end = i + in.extent() * index_t(sizeof(In));
  if (o < i_end && i < o_end) throw Error(Errc::aliasing, out_name, std::string(out_name) + " overlaps " + in_name);
}

// The views both backward products check first: A ⊗ B's shapes chain, `forward` (C or K*), dC,
// dA and dB have the shapes they must, and dA and dB overlap neither each other nor an input.
template <class T, class F>
void check_views(const MatrixView<const T>& a, const MatrixView<const T>& b, const MatrixView<F>& forward,
                 const char* forward_name, const MatrixView<const T>& grad_c, const MatrixView<T>& grad_a,
                 const MatrixView<T>& grad_b) {
  detail::validate_view(a, "A");
  detail::validate_view(b, "B");
  const index_t m = a.rows, k = a.cols, n = b.cols;
  if (b.rows != k)
    throw Error(Errc::dimension_mismatch, "B", "A is " + dims(m, k) + " but B is " + dims(b.rows, n) + ": inner dimensions differ");
  expect_shape(forward, m, n, forward_name, "A ⊗ B");
  expect_shape(grad_c, m, n, "dC", "A ⊗ B");
  expect_shape(grad_a, m, k, "dA", "A");
  expect_shape(grad_b, k, n, "dB", "B");
  refuse_overlap(grad_a, "dA", grad_b, "dB");
  for (const auto& [in, name] : {std::pair{a, "A"}, std::pair{b, "B"}, std::pair{grad_c, "dC"}}) {
    refuse_overlap(grad_a, "dA", in, name);
    refuse_overlap(grad_b, "dB", in, name);
  }
  refuse_overlap(grad_a, "dA", forward, forward_name);
  refuse_overlap(grad_b, "dB", forward, forward_name);
}

// The first element of v for which bad(x) holds, as an error naming v, or nothing.
template <class T, class Bad> void refuse_values(const MatrixView<const T>& v, const char* name, const char* domain, Bad bad) {
  for (index_t i = 0; i < v.rows; ++i)
    for (index_t j = 0; j < v.cols; ++j)
      if (bad(v(i, j)))
        throw Error(Errc::value_out_of_range, name,
                    "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is " + std::to_string(double(v(i, j))) +
                        "; " + name + " must hold " + domain);
}

inline int team(const Context& ctx, double work) {
  const int threads = ctx.cpu_threads > 0 ? ctx.cpu_threads : omp_get_max_threads();
  return int(std::clamp(work / 32768.0, 1.0, double(threads)));
}

}  // namespace backward_detail

namespace detail {
// The CUDA backend (src/cuda/backward.cu; absent without CUDA, detail/cuda_backend.hpp), after the shape
// checks. They return false, having done nothing, when `required` is false and A is host memory.
template <class T>
bool log_plus_backward_cuda(const Context& ctx, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c,
                            MatrixView<const T> grad_c, MatrixView<T> grad_a, MatrixView<T> grad_b, bool required);
template <class S>
bool argmax_backward_cuda(const Context& ctx, MatrixView<const element_t<S>> a, MatrixView<const element_t<S>> b,
                          MatrixView<const std::int32_t> k_star, MatrixView<const element_t<S>> grad_c,
                          MatrixView<element_t<S>> grad_a, MatrixView<element_t<S>> grad_b, bool required);

// The pairs with an argmax backward: the built-in float pairs whose ⊕ selects one term.
template <class S>
inline constexpr bool has_argmax_backward =
    is_builtin_v<S> && semiring_traits<S>::selects && std::is_floating_point_v<element_t<S>>;

// Instantiated explicitly, with builtin_semirings, in the unit that defines argmax_backward_cuda:
// returning the address of argmax_backward_cuda<S> for every pair with an argmax backward
// instantiates them all there, so that no list of pairs is kept beside the registry.
template <class S> constexpr auto argmax_backward_instance() {
  if constexpr (has_argmax_backward<S>) return std::tuple{&argmax_backward_cuda<S>};
  else return std::tuple{};
}
template <class... S> auto instantiate_argmax_backward_cuda(type_list<S...>) {
  return std::tuple_cat(argmax_backward_instance<S>()...);
}
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// log-plus.
//
// With row maxima r_i = max_k a_ik and column maxima s_j = max_k b_kj,
//
//   P_ikj = exp(a_ik − r_i) · exp(b_kj − s_j) · F_ij,   F_ij = exp(r_i + s_j − c_ij)
//
// so dA = E_A ⊙ (W·E_Bᵀ) and dB = E_B ⊙ (E_Aᵀ·W) with E_A = exp(A − r), E_B = exp(B − s) (every
// factor ≤ 1) and W = G ⊙ F: two plus-times GEMMs (in f64 for f32 inputs too, through ringmm's
// plus-times: OpenBLAS or cuBLAS where they are built in). Every term is ≤ c_ij, so c_ij ≤ r_i + s_j +
// log K and F_ij ≥ 1/K; but F_ij has no upper bound: where no k brings both a_ik and b_kj near
// their maxima (the case where the forward shift trick fails), F_ij is huge, the factors
// exp(a − r)·exp(b − s) of the terms that matter underflow, and W overflows. Entries with
// F_ij > 2^20 (the forward's own threshold) are left out of W and their P_ikj computed directly,
// exp(a_ik + b_kj − c_ij), for every k (K exponentials per such entry).
//
// −∞: an entry with c_ij = −∞ (its row of A or its column of B all −∞, or no k with both finite)
// has no terms and passes no gradient, whatever G_ij; an a_ik = −∞ gets gradient 0. Never NaN.
// C must be the forward result (as gemm<LogPlus<T>> returns it; a C computed otherwise only
// changes the weights P). A and B: finite or −∞; C: finite or −∞; G: finite.
//
// r, s, E_A and E_B are the forward shift trick's maxima and factors (cpu/log_plus_shift.hpp's
// shift_rows; the classification of entries and the direct weights: detail/log_plus_shift.hpp):
// backward_detail::log_plus_backward_shifted takes them precomputed.
namespace backward_detail {

// The CPU's log-plus backward after the checks, from the shift trick's factors: fa those of A's
// rows (r and E_A, M×K row-major), fb those of B's columns (s and E_Bᵀ, N×K row-major), as
// cpu::shift_lines computes them (one member each).
template <class T>
void log_plus_backward_shifted(const Context& ctx, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c,
                               MatrixView<const T> grad_c, MatrixView<T> grad_a, MatrixView<T> grad_b,
                               const cpu::ShiftedLines<T>& fa, const cpu::ShiftedLines<T>& fb) {
  using Sum = cpu::log_plus_detail::Sum;
  const index_t m = a.rows, k = a.cols, n = b.cols;
  const T* row_max = fa.max;
  const T* col_max = fb.max;
  const Sum* ea = fa.factors;   // E_A, M×K
  const Sum* ebt = fb.factors;  // E_Bᵀ, N×K

  // W, and the entries computed directly (F too large), row by row.
  std::vector<Sum> w(std::size_t(m * n));
  std::vector<std::vector<index_t>> direct_in_row(static_cast<std::size_t>(m));
#pragma omp parallel for num_threads(team(ctx, double(m * n))) schedule(static)
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      Sum& w_ij = w[std::size_t(i * n + j)];
      w_ij = 0;
      Sum log_f = 0;
      switch (detail::classify_weight(c(i, j), row_max[i], col_max[j], log_f)) {
        case detail::WeightEntry::none: break;
        case detail::WeightEntry::direct: direct_in_row[i].push_back(j); break;
        case detail::WeightEntry::weighted: w_ij = Sum(grad_c(i, j)) * std::exp(log_f); break;
      }
    }

  // dA = E_A ⊙ (W·E_Bᵀ), dB = E_B ⊙ (E_Aᵀ·W), both M×K / K×N row-major in f64.
  Context cpu = ctx;
  cpu.backend = Backend::cpu;
  std::vector<Sum> da(std::size_t(m * k)), db(std::size_t(k * n));
  gemm<PlusTimes<Sum>>(cpu, Op::N, row_major<const Sum>(w.data(), m, n), Op::N, row_major<const Sum>(ebt, n, k),
                       row_major(da.data(), m, k));
  gemm<PlusTimes<Sum>>(cpu, Op::T, row_major<const Sum>(ea, m, k), Op::N, row_major<const Sum>(w.data(), m, n),
                       row_major(db.data(), k, n));
  for (std::size_t x = 0; x < da.size(); ++x) da[x] *= ea[x];
  for (index_t kk = 0; kk < k; ++kk)
    for (index_t j = 0; j < n; ++j) db[std::size_t(kk * n + j)] *= ebt[std::size_t(j * k + kk)];

  // The direct entries: dA by rows, dB by columns, each in a fixed order (deterministic).
  auto weight = [&](index_t i, index_t kk, index_t j) { return detail::direct_weight<T, Sum>(a(i, kk), b(kk, j), c(i, j)); };
  index_t direct = 0;
  for (const auto& row : direct_in_row) direct += index_t(row.size());
  if (direct > 0) {
#pragma omp parallel for num_threads(team(ctx, double(direct * k))) schedule(dynamic, 4)
    for (index_t i = 0; i < m; ++i)
      for (const index_t j : direct_in_row[i])
        for (index_t kk = 0; kk < k; ++kk) da[std::size_t(i * k + kk)] += Sum(grad_c(i, j)) * weight(i, kk, j);
    std::vector<std::vector<index_t>> direct_in_col(static_cast<std::size_t>(n));
    for (index_t i = 0; i < m; ++i)
      for (const index_t j : direct_in_row[i]) direct_in_col[j].push_back(i);
#pragma omp parallel for num_threads(team(ctx, double(direct * k))) schedule(dynamic, 4)
    for (index_t j = 0; j < n; ++j)
      for (const index_t i : direct_in_col[j])
        for (index_t kk = 0; kk < k; ++kk) db[std::size_t(kk * n + j)] += Sum(grad_c(i, j)) * weight(i, kk, j);
  }
  for (index_t i = 0; i < m; ++i)
    for (index_t kk = 0; kk < k; ++kk) grad_a(i, kk) = T(da[std::size_t(i * k + kk)]);
  for (index_t kk = 0; kk < k; ++kk)
    for (index_t j = 0; j < n; ++j) grad_b(kk, j) = T(db[std::size_t(kk * n + j)]);
}

}  // namespace backward_detail

template <class T>
void log_plus_backward(const Context& ctx, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c,
                       MatrixView<const T> grad_c, MatrixView<T> grad_a, MatrixView<T> grad_b) {
  static_assert(std::is_floating_point_v<T>, "log_plus_backward takes f32 or f64");
  using namespace backward_detail;
  using Sum = cpu::log_plus_detail::Sum;
  check_views(a, b, c, "C", grad_c, grad_a, grad_b);
  const index_t m = a.rows, k = a.cols, n = b.cols;
  if (detail::wants_cuda(ctx)) {
    if constexpr (config::cuda)
      if (detail::log_plus_backward_cuda<T>(ctx, a, b, c, grad_c, grad_a, grad_b, ctx.backend == Backend::cuda)) return;
  }
  if (!ctx.trust_inputs) {
    const T inf = std::numeric_limits<T>::infinity();
    auto not_log = [inf](T x) { return !(x < inf); };  // NaN or +∞
    refuse_values<T>(a, "A", "finite values or −∞", not_log);
    refuse_values<T>(b, "B", "finite values or −∞", not_log);
    refuse_values<T>(c, "C", "finite values or −∞ (the forward product)", not_log);
    refuse_values<T>(grad_c, "dC", "finite values", [](T x) { return !std::isfinite(x); });
  }
  if (m == 0 || k == 0 || n == 0) {  // no terms: every gradient is 0
    for (index_t i = 0; i < m; ++i)
      for (index_t kk = 0; kk < k; ++kk) grad_a(i, kk) = T(0);
    for (index_t kk = 0; kk < k; ++kk)
      for (index_t j = 0; j < n; ++j) grad_b(kk, j) = T(0);
    return;
  }
  const int threads = ctx.cpu_threads > 0 ? ctx.cpu_threads : omp_get_max_threads();
  std::vector<Sum> ea(std::size_t(m * k)), ebt(std::size_t(k * n));
  std::vector<T> row_max(static_cast<std::size_t>(m)), col_max(static_cast<std::size_t>(n));
  const detail::Strided<const T> sa = detail::apply_op(Op::N, a), sb = detail::apply_op(Op::T, b);
  const auto fa = cpu::shift_lines<T>(sa, ea.data(), row_max.data(), threads);
  const auto fb = cpu::shift_lines<T>(sb, ebt.data(), col_max.data(), threads);
  log_plus_backward_shifted<T>(ctx, a, b, c, grad_c, grad_a, grad_b, fa, fb);
}

// ---------------------------------------------------------------------------------------------
// Selecting semirings: the gradient follows the winning term, k = K*_ij (gemm_argmax's index
// matrix; −1, an entry of 0̄, passes nothing). The partials of the winning term a ⊗ b:
//
//   max-plus, min-plus   ⊗ = +     ∂/∂a = 1, ∂/∂b = 1
//   max-times            ⊗ = ×     ∂/∂a = b, ∂/∂b = a
//   max-min              ⊗ = min   all of G_ij to the smaller operand; a tie goes to A
//   min-max              ⊗ = max   all of G_ij to the larger operand; a tie goes to A
//
// Sums run in f64 in a fixed order (dA row by row over j, dB column by column over i), so the
// result is deterministic for any thread count. K* entries outside [−1, K) are refused.
template <class S>
void argmax_backward(const Context& ctx, MatrixView<const element_t<S>> a, MatrixView<const element_t<S>> b,
                     MatrixView<const std::int32_t> k_star, MatrixView<const element_t<S>> grad_c,
                     MatrixView<element_t<S>> grad_a, MatrixView<element_t<S>> grad_b) {
  using T = element_t<S>;
  using namespace backward_detail;
  static_assert(semiring_traits<S>::selects && detail::has_kind<S>::value,
                "argmax_backward takes the built-in selecting semirings (max-plus, min-plus, max-min, max-times, min-max)");
  static_assert(std::is_floating_point_v<T>, "argmax_backward takes f32 or f64");
  constexpr SemiringKind kind = S::kind;
  check_views(a, b, k_star, "K*", grad_c, grad_a, grad_b);
  const index_t m = a.rows, k = a.cols, n = b.cols;
  if (detail::wants_cuda(ctx)) {
    if constexpr (is_builtin_v<S> && config::cuda) {
      if (detail::argmax_backward_cuda<S>(ctx, a, b, k_star, grad_c, grad_a, grad_b, ctx.backend == Backend::cuda)) return;
    } else if (ctx.backend == Backend::cuda) {
      throw Error(Errc::unsupported, "semiring", "argmax_backward runs on CUDA for the built-in pairs only");
    }
  }
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j)
      if (k_star(i, j) < -1 || k_star(i, j) >= k)
        throw Error(Errc::value_out_of_range, "K*",
                    "element (" + std::to_string(i) + ", " + std::to_string(j) + ") is " + std::to_string(k_star(i, j)) +
                        ", not an index in [-1, " + std::to_string(k) + ")");

  // The shares of G_ij that go to a and to b.
  auto partials = [](T x, T y) -> std::pair<double, double> {
    if constexpr (kind == SemiringKind::max_plus || kind == SemiringKind::min_plus) return {1.0, 1.0};
    else if constexpr (kind == SemiringKind::max_times) return {double(y), double(x)};
    else if constexpr (kind == SemiringKind::max_min) return x <= y ? std::pair{1.0, 0.0} : std::pair{0.0, 1.0};
    else return x >= y ? std::pair{1.0, 0.0} : std::pair{0.0, 1.0};  // min-max
  };
  std::vector<double> da(std::size_t(m * k), 0.0), db(std::size_t(k * n), 0.0);
#pragma omp parallel for num_threads(team(ctx, double(m * n))) schedule(static)
  for (index_t i = 0; i < m; ++i)
    for (index_t j = 0; j < n; ++j) {
      const std::int32_t w = k_star(i, j);
      if (w >= 0) da[std::size_t(i * k + w)] += double(grad_c(i, j)) * partials(a(i, w), b(w, j)).first;
    }
#pragma omp parallel for num_threads(team(ctx, double(m * n))) schedule(static)
  for (index_t j = 0; j < n; ++j)
    for (index_t i = 0; i < m; ++i) {
      const std::int32_t w = k_star(i, j);
      if (w >= 0) db[std::size_t(w * n + j)] += double(grad_c(i, j)) * partials(a(i, w), b(w, j)).second;
    }
  for (index_t i = 0; i < m; ++i)
    for (index_t kk = 0; kk < k; ++kk) grad_a(i, kk) = T(da[std::size_t(i * k + kk)]);
  for (index_t kk = 0; kk < k; ++kk)
    for (index_t j = 0; j < n; ++j) grad_b(kk, j) = T(db[std::size_t(kk * n + j)]);
}

}  // namespace ringmm
