// The CPU backend for the built-in semirings: OpenBLAS for plus-times f32/f64 where it is compiled
// in, the shift trick over plus-times for log-plus products large enough to pay for it, the blocked
// semiring kernel for everything else.
#include <climits>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "ringmm/cpu/blocked.hpp"
#include "ringmm/cpu/log_plus.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

#if RINGMM_HAVE_BLAS
#include <cblas.h>
#endif

namespace ringmm::detail {

#if RINGMM_HAVE_BLAS
namespace {

// How BLAS sees one operand in a given storage order: its transpose flag and leading dimension.
struct BlasOperand {
  CBLAS_TRANSPOSE trans;
  int ld;
};

bool fits_int(index_t x) { return x >= 0 && x <= INT_MAX; }

// An R×C strided operand as BLAS storage in `order`: untransposed when its unit stride runs along
// the order's contiguous direction, transposed when it runs across; nothing when neither (or the
// leading dimension is below what BLAS accepts).
template <class T> std::optional<BlasOperand> as_blas(const Strided<T>& x, CBLAS_ORDER order) {
  const bool row = order == CblasRowMajor;
  const index_t along = row ? x.cs : x.rs, across = row ? x.rs : x.cs;   // unit stride, leading dim
  const index_t contiguous = row ? x.cols : x.rows, other = row ? x.rows : x.cols;
  if (along == 1 && across >= std::max<index_t>(1, contiguous) && fits_int(across))
    return BlasOperand{CblasNoTrans, int(across)};
  if (across == 1 && along >= std::max<index_t>(1, other) && fits_int(along))
    return BlasOperand{CblasTrans, int(along)};
  return std::nullopt;
}

// The storage order in which C is plain (untransposed) BLAS storage.
template <class T> std::optional<std::pair<CBLAS_ORDER, int>> c_order(const Strided<T>& c) {
  for (CBLAS_ORDER order : {CblasRowMajor, CblasColMajor}) {
    const auto op = as_blas(c, order);
    if (op && op->trans == CblasNoTrans) return std::pair{order, op->ld};
  }
  return std::nullopt;
}

// Runs OpenBLAS's thread count at `threads` (0 = its own default) for the life of the guard.
class BlasThreads {
 public:
  explicit BlasThreads(int threads) : saved_(openblas_get_num_threads()), changed_(threads > 0) {
    if (changed_) openblas_set_num_threads(threads);
  }
  ~BlasThreads() {
    if (changed_) openblas_set_num_threads(saved_);
  }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

 private:
  int saved_;
  bool changed_;
};

template <class T> void blas_gemm(CBLAS_ORDER order, BlasOperand a, BlasOperand b, int m, int n, int k, T alpha,
                                  const T* pa, const T* pb, T beta, T* pc, int ldc) {
  if constexpr (std::is_same_v<T, float>) cblas_sgemm(order, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, ldc);
  else cblas_dgemm(order, a.trans, b.trans, m, n, k, alpha, pa, a.ld, pb, b.ld, beta, pc, ldc);
}

template <class T> void blas_syrk(CBLAS_ORDER order, BlasOperand a, int n, int k, T alpha, const T* pa, T beta, T* pc,
                                  int ldc) {
  if constexpr (std::is_same_v<T, float>) cblas_ssyrk(order, CblasLower, a.trans, n, k, alpha, pa, a.ld, beta, pc, ldc);
  else cblas_dsyrk(order, CblasLower, a.trans, n, k, alpha, pa, a.ld, beta, pc, ldc);
}

// Plus-times f32/f64 through BLAS. Returns false (having done nothing) when the problem's
// layout or sizes are not expressible as a BLAS call; the blocked kernel then takes it.
template <class T> bool try_blas(const Context& ctx, const Problem<PlusTimes<T>>& p) {
  if (p.k() == 0 || !fits_int(p.m()) || !fits_int(p.n()) || !fits_int(p.k())) return false;
  const auto c = c_order(p.c);
  if (!c) return false;
  const auto [order, ldc] = *c;
  const auto a = as_blas(p.a, order);
  const auto b = as_blas(p.b, order);
  if (!a || !b) return false;
  // syrk needs B = Aᵀ (what ringmm::syrk builds); BLAS then reads and writes C's lower triangle only.
  const bool syrk_shaped = p.a.p == p.b.p && p.a.rs == p.b.cs && p.a.cs == p.b.rs;
  if (p.symmetric && !syrk_shaped) return false;

  const BlasThreads threads(ctx.cpu_threads);
  const int m = int(p.m()), n = int(p.n()), k = int(p.k());
  for (index_t bt = 0; bt < p.batch; ++bt) {
    const T* pa = p.a.p + bt * p.stride_a;
    const T* pb = p.b.p + bt * p.stride_b;
    T* pc = p.c.p + bt * p.stride_c;
    if (p.symmetric) {
      blas_syrk(order, *a, n, k, p.alpha, pa, p.beta, pc, ldc);
      for (index_t i = 0; i < p.m(); ++i)
        for (index_t j = i + 1; j < p.n(); ++j) pc[i * p.c.rs + j * p.c.cs] = pc[j * p.c.rs + i * p.c.cs];
    } else {
      blas_gemm(order, *a, *b, m, n, k, p.alpha, pa, pb, p.beta, pc, ldc);
    }
  }
  return true;
}

}  // namespace
#endif

template <class S> void cpu_run(const Context& ctx, const Problem<S>& p) {
  using T = typename S::value_type;
#if RINGMM_HAVE_BLAS
  if constexpr (std::is_same_v<S, PlusTimes<T>> && (std::is_same_v<T, float> || std::is_same_v<T, double>)) {
    if (ctx.vendor_blas && try_blas(ctx, p)) return;
  }
#endif
  if constexpr (std::is_same_v<S, LogPlus<T>>) {
    if (cpu::log_plus_shift_pays(p)) {
      cpu::log_plus_shift_gemm(ctx, p);
      return;
    }
  }
  cpu::blocked_gemm<S>(p, ctx.cpu_threads, ctx.cpu_isa);
}

#define RINGMM_INSTANTIATE(S) template void cpu_run<S>(const Context&, const Problem<S>&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_INSTANTIATE(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace ringmm::detail
