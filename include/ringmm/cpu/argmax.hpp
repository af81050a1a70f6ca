// The CPU argmax product: C ← α ⊗ (A ⊗ B) ⊕ β ⊗ C and, beside it, K*(i, j) = the k of the term
// that won the ⊕-sum, for semirings whose ⊕ selects (semiring_traits::selects).
//
//   ties       the smallest k wins: k runs upwards and a term replaces the running winner only
//              when it is strictly better (semiring_traits::better)
//   all 0̄      an entry whose result is 0̄ (every term 0̄, or α = 0̄) gets index −1
//   β ≠ 0̄      K* is read as well as written: where β ⊗ C wins (ties included: it stands for
//              terms of an earlier part of K, as in SUMMA's panels) the incoming index stays
//
// Rows are processed in groups that share each row of B as it streams by; OpenMP spreads the
// groups over threads; the loop is built per instruction set (cpu/multiversion.hpp). Argmax needs
// the compare and two selects per update that the plain kernel avoids, so it is a separate,
// simpler kernel. An int64 K* runs it over parts of K (detail::argmax_by_parts, with ArgmaxParts
// below).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/cpu/multiversion.hpp"
#include "ringmm/detail/argmax.hpp"
#include "ringmm/error.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cpu {

namespace argmax_detail {

constexpr index_t rows_per_group = 4;  // rows of A that share each row of B

// best[j], winner[j] ← the better of themselves and the term a ⊗ b[j·stride] at index k. A
// separate function so that the contiguous case (stride 1) vectorises to compares and blends.
template <class S>
RINGMM_CPU_INLINE void update_row(element_t<S>* best, std::int32_t* winner, element_t<S> a, const element_t<S>* b,
                                  index_t stride, index_t n, index_t k) {
  const auto index = std::int32_t(k);
#pragma omp simd
  for (index_t j = 0; j < n; ++j) {
    const element_t<S> term = S::mul(a, b[j * stride]);
    const bool wins = semiring_traits<S>::better(term, best[j]);
    best[j] = wins ? term : best[j];
    winner[j] = wins ? index : winner[j];
  }
}

// One thread's share of the product: the groups of rows (over the batch) that OpenMP's loop hands
// it. Called inside the parallel region; the loop is an orphaned `omp for`.
template <class S> RINGMM_CPU_INLINE void run_team(const detail::Problem<S>& p) {
  using T = element_t<S>;
  using traits = semiring_traits<S>;
  const index_t m = p.m(), n = p.n(), k = p.k();
  const index_t groups = (m + rows_per_group - 1) / rows_per_group;
  const bool reads_c = !(p.beta == scalar_t<S>(S::zero()));
  std::vector<T> best(std::size_t(rows_per_group * n));
  std::vector<std::int32_t> winner(std::size_t(rows_per_group * n));
#pragma omp for schedule(dynamic, 1)
  for (index_t item = 0; item < groups * p.batch; ++item) {
    const index_t bt = item / groups, i0 = (item % groups) * rows_per_group;
    const index_t rows = std::min(rows_per_group, m - i0);
    const T* a = p.a.p + bt * p.stride_a;
    const T* b = p.b.p + bt * p.stride_b;
    std::fill(best.begin(), best.end(), S::zero());
    std::fill(winner.begin(), winner.end(), -1);
    for (index_t kk = 0; kk < k; ++kk) {
      const T* b_row = b + kk * p.b.rs;
      for (index_t r = 0; r < rows; ++r) {
        const T a_ik = a[(i0 + r) * p.a.rs + kk * p.a.cs];
        if (p.b.cs == 1) update_row<S>(best.data() + r * n, winner.data() + r * n, a_ik, b_row, 1, n, p.k_offset + kk);
        else update_row<S>(best.data() + r * n, winner.data() + r * n, a_ik, b_row, p.b.cs, n, p.k_offset + kk);
      }
    }
    T* c = p.c.p + bt * p.stride_c;
    std::int32_t* ks = p.k_star.p + bt * p.stride_k;
    for (index_t r = 0; r < rows; ++r)
      for (index_t j = 0; j < n; ++j) {
        const index_t i = i0 + r;
        const std::size_t at = std::size_t(r * n + j);
        detail::argmax_store<S>(traits::finalize(best[at]), winner[at], p.alpha, p.beta, reads_c,
                                c + i * p.c.rs + j * p.c.cs, ks + i * p.k_star.rs + j * p.k_star.cs);
      }
  }
}

template <class S> void run_team_generic(const detail::Problem<S>& p) { run_team<S>(p); }
#if RINGMM_CPU_MULTIVERSION
template <class S> RINGMM_CPU_TARGET_AVX2 void run_team_avx2(const detail::Problem<S>& p) { run_team<S>(p); }
template <class S> RINGMM_CPU_TARGET_AVX512 void run_team_avx512(const detail::Problem<S>& p) { run_team<S>(p); }
#endif

}  // namespace argmax_detail

// gemm_argmax with an int32 K* on the CPU: groups of rows that share each row of B as it streams
// by, spread over `threads` OpenMP threads (0 = OpenMP's default), with the widest build `isa`
// allows (Context::cpu_isa).
template <class S> void argmax_gemm(const detail::Problem<S>& p, int threads, CpuIsa isa = CpuIsa::automatic) {
  static_assert(semiring_traits<S>::selects, "argmax products need a semiring whose ⊕ selects one term");
  const CpuIsa level = resolved_cpu_isa(isa);  // refuses a level the CPU lacks, even for an empty product
  void (*team_run)(const detail::Problem<S>&) = argmax_detail::run_team_generic<S>;
#if RINGMM_CPU_MULTIVERSION
  if (level == CpuIsa::avx512) team_run = argmax_detail::run_team_avx512<S>;
  if (level == CpuIsa::avx2) team_run = argmax_detail::run_team_avx2<S>;
#endif
  const index_t items = (p.m() + argmax_detail::rows_per_group - 1) / argmax_detail::rows_per_group * p.batch;
  const int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel num_threads(int(std::max<index_t>(1, std::min<index_t>(team, items))))
  team_run(p);
}

// The CPU's side of detail::argmax_by_parts (an int64 K*): scratch in host memory, the kernel
// above for each part, and the element rules over every entry.
template <class S> class ArgmaxParts {
 public:
  using Scratch = detail::ArgmaxScratch<element_t<S>>;
  ArgmaxParts(int threads, CpuIsa isa) : threads_(threads > 0 ? threads : omp_get_max_threads()), isa_(isa) {}

  Scratch scratch(index_t entries) {
    try {
      sum_.resize(std::size_t(entries));
      part_.resize(std::size_t(entries));
      winner_.resize(std::size_t(entries));
    } catch (const std::bad_alloc&) {
      throw Error(Errc::out_of_memory, "K*",
                  "no host memory for the scratch of " + std::to_string(entries) + " entries an int64 K* needs");
    }
    return {sum_.data(), part_.data(), winner_.data()};
  }
  void product(const detail::Problem<S>& part) { argmax_gemm<S>(part, threads_, isa_); }
  void take(const Scratch& s, index_t entries, index_t first_k, bool first) const {
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t e = 0; e < entries; ++e) detail::take_part_index(s.winner[e], s.part[e], first_k, first);
  }
  void store(const detail::Problem<S>& p, const Scratch& s) const {
    const index_t m = p.m(), n = p.n();
    const bool reads_c = !(p.beta == scalar_t<S>(S::zero()));
#pragma omp parallel for num_threads(threads_) schedule(static)
    for (index_t e = 0; e < m * n * p.batch; ++e) {
      const index_t bt = e / (m * n), i = e / n % m, j = e % n;
      detail::argmax_store<S>(s.sum[e], s.winner[e], p.alpha, p.beta, reads_c,
                              p.c.p + bt * p.stride_c + i * p.c.rs + j * p.c.cs,
                              p.k_star_wide.p + bt * p.stride_k + i * p.k_star_wide.rs + j * p.k_star_wide.cs);
    }
  }

 private:
  int threads_;
  CpuIsa isa_;
  std::vector<element_t<S>> sum_;
  std::vector<std::int32_t> part_;
  std::vector<std::int64_t> winner_;
};

// gemm_argmax with an int64 K* on the CPU.
template <class S> void argmax_gemm_wide(const detail::Problem<S>& p, int threads, CpuIsa isa = CpuIsa::automatic) {
  ArgmaxParts<S> backend(threads, isa);
  detail::argmax_by_parts<S>(p, backend);
}

}  // namespace ringmm::cpu
