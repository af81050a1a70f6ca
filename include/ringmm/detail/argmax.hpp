// What every backend's argmax product shares: the epilogue of one entry, and the product with an
// int64 K* as int32 products over parts of K.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ringmm/detail/problem.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::detail {

// The refusal of an argmax product whose ⊕ does not select one term (plus-times, or-and, log-plus),
// for code instantiated for every pair: gemm_argmax refuses those pairs at compile time already.
inline Error argmax_needs_selection() {
  return Error(Errc::unsupported, "semiring", "argmax products need a semiring whose ⊕ selects one term");
}

// β ⊗ C's side of one entry's epilogue (argmax_store with β ≠ 0̄): whether the entry keeps its
// incoming index, β ⊗ C winning or tying, since it stands for terms of an earlier part of K
// (semiring_traits::keeps_incoming), and the value C takes. Where it keeps it, the entry needs no
// winner, so a backend may skip looking for one.
template <class S> struct Incoming {
  bool kept;
  element_t<S> c;
};
template <class S>
RINGMM_HD Incoming<S> argmax_incoming(element_t<S> sum, scalar_t<S> alpha, scalar_t<S> beta, element_t<S> c) {
  using traits = semiring_traits<S>;
  const element_t<S> result = traits::scale(alpha, sum), incoming = traits::scale(beta, c);
  return {traits::keeps_incoming(result, incoming), S::add(result, incoming)};
}

// The epilogue of one entry: `sum` is the finalized ⊕-sum of its terms and `winner` the k (k
// offset included) of the first best one, or −1 where none won. α applies here, a 0̄ result
// gets −1, and with β ≠ 0̄ (reads_c) argmax_incoming decides.
template <class S, class I>
RINGMM_HD void argmax_store(element_t<S> sum, I winner, scalar_t<S> alpha, scalar_t<S> beta, bool reads_c,
                            element_t<S>* c, I* k_star) {
  using traits = semiring_traits<S>;
  element_t<S> result = traits::scale(alpha, sum);
  I index = (result == S::zero() || winner < 0) ? I(-1) : winner;
  if (reads_c) {
    const Incoming<S> in = argmax_incoming<S>(sum, alpha, beta, *c);
    if (in.kept) index = *k_star;
    result = in.c;
  }
  *c = result;
  *k_star = index;
}

// One entry of a part's int32 index taken into the running int64 winner: a part that won says
// so with its k (from 0), which becomes first_k + k; the first part also passes on its −1. The
// part's index is reset to −1, which the next part (β = 1̄) keeps wherever the earlier parts stay
// ahead.
RINGMM_HD void take_part_index(std::int64_t& winner, std::int32_t& part, index_t first_k, bool first) {
  if (part >= 0) winner = first_k + part;
  else if (first) winner = -1;
  part = -1;
}

// The scratch of argmax_by_parts: compact row-major buffers in the backend's memory.
template <class T> struct ArgmaxScratch {
  T* sum;                // the running ⊕-sum
  std::int32_t* part;    // this part's winning k, from 0 (−1: it did not win)
  std::int64_t* winner;  // the winning k over the parts so far
};

// An argmax product whose K* is int64 (p.k_star_wide), by any backend's int32 product: over
// consecutive parts of K of at most p.k_part terms, each with α = 1̄ into a running ⊕-sum, the
// first with β = 0̄ and the later ones with β = 1̄, so that a part replaces the running winner
// only where it is strictly better and ties stay with the smaller k. α and the caller's β ⊗ C and
// K* come once at the end (argmax_store), as in a one-part product: applied per part, α could
// make unequal sums equal (max-min's min with α, rounding) and move the winner.
//
// Backend (host loops on the CPU, kernels on the GPU, over p's memory) provides
//   Scratch scratch(index_t entries)   an ArgmaxScratch of `entries` each, alive while the
//                                      backend is
//   void product(const Problem<S>&)    the int32 argmax product
//   void take(const Scratch&, index_t entries, index_t first_k, bool first)
//                                      take_part_index over every entry
//   void store(const Problem<S>& p, const Scratch&)
//                                      argmax_store of every entry into p's C and K*
template <class S, class Backend> void argmax_by_parts(const Problem<S>& p, Backend& backend) {
  const index_t m = p.m(), n = p.n(), k = p.k();
  if (m == 0 || n == 0 || p.batch == 0) return;
  const index_t entries = m * n * p.batch;
  const auto scratch = backend.scratch(entries);
  Problem<S> part = p;
  part.c = {scratch.sum, m, n, n, 1};
  part.stride_c = m * n;
  part.k_star = {scratch.part, m, n, n, 1};
  part.k_star_wide = {};
  part.stride_k = m * n;
  part.k_offset = 0;
  part.alpha = S::one();
  // One part at least: K = 0 still sets every sum to 0̄ and every winner to −1.
  for (index_t k0 = 0; k0 == 0 || k0 < k; k0 += p.k_part) {
    const index_t len = std::min(p.k_part, k - k0);
    part.a = {p.a.p + k0 * p.a.cs, m, len, p.a.rs, p.a.cs};
    part.b = {p.b.p + k0 * p.b.rs, len, n, p.b.rs, p.b.cs};
    part.beta = k0 == 0 ? S::zero() : S::one();
    backend.product(part);
    backend.take(scratch, entries, p.k_offset + k0, k0 == 0);
  }
  backend.store(p, scratch);
}

}  // namespace ringmm::detail
