// The naive reference product: the oracle every test compares against. Deliberately simple.
#pragma once

#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cpu {

template <class S> void reference_gemm(const detail::Problem<S>& p) {
  using T = typename S::value_type;
  using traits = semiring_traits<S>;
  for (index_t bt = 0; bt < p.batch; ++bt) {
    const T* a = p.a.p + bt * p.stride_a;
    const T* b = p.b.p + bt * p.stride_b;
    T* c = p.c.p + bt * p.stride_c;
    for (index_t i = 0; i < p.m(); ++i) {
      for (index_t j = 0; j < p.n(); ++j) {
        if (p.symmetric && j > i) continue;
        accumulator_t<S> acc = traits::initial();
        for (index_t k = 0; k < p.k(); ++k) acc = traits::fma(acc, a[i * p.a.rs + k * p.a.cs], b[k * p.b.rs + j * p.b.cs]);
        T* out = c + i * p.c.rs + j * p.c.cs;
        *out = traits::epilogue(p.alpha, acc, p.beta, out);
      }
    }
    if (p.symmetric)
      for (index_t i = 0; i < p.m(); ++i)
        for (index_t j = i + 1; j < p.n(); ++j) c[i * p.c.rs + j * p.c.cs] = c[j * p.c.rs + i * p.c.cs];
  }
}

}  // namespace ringmm::cpu
