// hmm_viterbi and hmm_forward: argument checks, the backend choice, and the CPU implementation
// (one gemm_argmax or log-plus product per step on host memory; ringmm/hmm.hpp).
#include "ringmm/hmm.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ringmm/config.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/cpu/log_plus.hpp"
#include "ringmm/error.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm {

namespace detail {

template <class T> void check_hmm_shape(const HmmModel<T>& model) {
  if (model.batch < 0) throw Error(Errc::invalid_argument, "batch", "batch " + std::to_string(model.batch) + " is negative");
  if (model.states < 1) throw Error(Errc::invalid_argument, "states", "an HMM needs at least one state, got " + std::to_string(model.states));
  if (model.steps < 1) throw Error(Errc::invalid_argument, "steps", "an HMM needs at least one step, got " + std::to_string(model.steps));
  if (model.states > std::numeric_limits<std::int32_t>::max() || model.steps > std::numeric_limits<std::int32_t>::max())
    throw Error(Errc::unsupported, "states", "states and steps must fit in int32 (paths are int32)");
  if (!checked_mul(model.steps, model.batch, model.states, sizeof(std::int32_t)) || !checked_mul(model.states, model.states, sizeof(T)))
    throw Error(Errc::invalid_argument, "emit", "T×B×S = " + std::to_string(model.steps) + "×" + std::to_string(model.batch) + "×" +
                                                    std::to_string(model.states) + " elements do not fit in memory's address range");
  if (!model.init) throw Error(Errc::null_pointer, "init", "null");
  if (!model.trans) throw Error(Errc::null_pointer, "trans", "null");
  if (!model.emit && model.batch > 0) throw Error(Errc::null_pointer, "emit", "null");
}

}  // namespace detail

namespace {

// NaN and +∞ are refused; −∞ (forbidden) and finite values pass.
template <class T> void check_log_values(const T* x, index_t count, const char* name) {
  for (index_t e = 0; e < count; ++e)
    if (!(x[e] < std::numeric_limits<T>::infinity()))
      throw Error(Errc::value_out_of_range, name,
                  "element " + std::to_string(e) + " is " + (std::isnan(x[e]) ? "NaN" : "+inf") +
                      "; log-probabilities must be finite or -inf");
}

template <class T> void check_model_values(const HmmModel<T>& m) {
  check_log_values(m.init, m.states, "init");
  check_log_values(m.trans, m.states * m.states, "trans");
  check_log_values(m.emit, m.steps * m.batch * m.states, "emit");
}

Context on_cpu(const Context& ctx) {
  Context cpu = ctx;
  cpu.backend = Backend::cpu;
  return cpu;
}

int team(const Context& ctx, double work) {
  const int threads = ctx.cpu_threads > 0 ? ctx.cpu_threads : omp_get_max_threads();
  return int(std::clamp(work / 32768.0, 1.0, double(threads)));
}

// δ_0 = π + E_0, then per step: v = δ ⊗ A (the product `step` computes), δ = v + E_t.
template <class T, class Step> std::vector<T> run_steps(const Context& ctx, const HmmModel<T>& m, Step&& step) {
  const index_t b = m.batch, s = m.states, block = b * s;
  std::vector<T> delta(static_cast<std::size_t>(block)), next(static_cast<std::size_t>(block));
  for (index_t r = 0; r < b; ++r)
    for (index_t x = 0; x < s; ++x) delta[std::size_t(r * s + x)] = m.init[x] + m.emit[r * s + x];
  for (index_t t = 1; t < m.steps; ++t) {
    step(t, row_major<const T>(delta.data(), b, s), row_major(next.data(), b, s));
    const T* e = m.emit + t * block;
#pragma omp parallel for num_threads(team(ctx, double(block))) schedule(static)
    for (index_t x = 0; x < block; ++x) next[std::size_t(x)] += e[x];
    std::swap(delta, next);
  }
  return delta;
}

template <class T>
void viterbi_cpu(const Context& ctx, const HmmModel<T>& m, std::int32_t* path, T* score, std::int32_t* backpointers) {
  const index_t b = m.batch, s = m.states, block = b * s;
  std::vector<std::int32_t> own;
  if (!backpointers) {
    own.resize(std::size_t((m.steps - 1) * block));
    backpointers = own.data();
  }
  const Context cpu = on_cpu(ctx);
  const MatrixView<const T> trans = row_major<const T>(m.trans, s, s);
  const std::vector<T> last = run_steps<T>(ctx, m, [&](index_t t, MatrixView<const T> delta, MatrixView<T> next) {
    gemm_argmax<MaxPlus<T>>(cpu, Op::N, delta, Op::N, trans, next, row_major(backpointers + (t - 1) * block, b, s));
  });
  const index_t steps = m.steps;
#pragma omp parallel for num_threads(team(ctx, double(b * steps))) schedule(static)
  for (index_t r = 0; r < b; ++r) {
    const T* d = last.data() + r * s;
    const index_t best = std::max_element(d, d + s) - d;  // the first of equal maxima
    std::int32_t* p = path + r * steps;
    score[r] = d[best];
    if (d[best] == -std::numeric_limits<T>::infinity()) {
      std::fill(p, p + steps, -1);
      continue;
    }
    p[steps - 1] = std::int32_t(best);
    for (index_t t = steps - 1; t > 0; --t) p[t - 1] = backpointers[((t - 1) * b + r) * s + p[t]];
  }
}

// Each step is the log-plus product α ⊗ A, by the shift trick (cpu/log_plus.hpp) where it pays
// (the shape is the same every step, so is the choice) and by streaming otherwise, as gemm would
// run it; the trick's factors of A, exp(A − column maxima), are computed once for every step.
template <class T> void forward_cpu(const Context& ctx, const HmmModel<T>& m, T* loglik) {
  using traits = semiring_traits<LogPlus<T>>;
  const Context cpu = on_cpu(ctx);
  const index_t s = m.states;
  const MatrixView<const T> trans = row_major<const T>(m.trans, s, s);
  const detail::Problem<LogPlus<T>> shape{{nullptr, m.batch, s, s, 1}, {m.trans, s, s, s, 1}, {nullptr, m.batch, s, s, 1},
                                          LogPlus<T>::one(), LogPlus<T>::zero()};
  const bool shift = m.steps > 1 && cpu::log_plus_shift_pays(shape);
  std::vector<cpu::log_plus_detail::Sum> trans_factors(shift ? std::size_t(s * s) : 0);
  std::vector<T> col_max(shift ? std::size_t(s) : 0);
  cpu::ShiftedLines<T> factors;
  if (shift)  // the columns of A are the rows of Aᵀ
    factors = cpu::shift_lines<T>({m.trans, s, s, 1, s}, trans_factors.data(), col_max.data(),
                                  ctx.cpu_threads > 0 ? ctx.cpu_threads : omp_get_max_threads());
  const std::vector<T> last = run_steps<T>(ctx, m, [&](index_t, MatrixView<const T> alpha, MatrixView<T> next) {
    if (!shift) return gemm<LogPlus<T>>(cpu, Op::N, alpha, Op::N, trans, next);
    const auto p = detail::make_problem<LogPlus<T>>(Op::N, alpha, Op::N, trans, next, LogPlus<T>::one(), LogPlus<T>::zero());
    cpu::log_plus_shift_gemm<T>(cpu, p, &factors);
  });
  for (index_t r = 0; r < m.batch; ++r) {
    auto acc = traits::initial();
    for (index_t x = 0; x < m.states; ++x) acc = traits::fma(acc, last[std::size_t(r * m.states + x)], T(0));
    loglik[r] = traits::finalize(acc);
  }
}

}  // namespace

template <class T>
void hmm_viterbi(const Context& ctx, const HmmModel<T>& model, std::int32_t* path, T* score, std::int32_t* backpointers,
                 ViterbiStep step) {
  detail::check_hmm_shape(model);
  if (model.batch > 0 && !path) throw Error(Errc::null_pointer, "path", "null");
  if (model.batch > 0 && !score) throw Error(Errc::null_pointer, "score", "null");
  if (detail::wants_cuda(ctx)) {
    if constexpr (config::cuda)
      if (detail::hmm_viterbi_cuda(ctx, model, path, score, backpointers, step, ctx.backend == Backend::cuda)) return;
  }
  check_model_values(model);
  if (model.batch == 0) return;
  viterbi_cpu(ctx, model, path, score, backpointers);
}

template <class T> void hmm_forward(const Context& ctx, const HmmModel<T>& model, T* loglik) {
  detail::check_hmm_shape(model);
  if (model.batch > 0 && !loglik) throw Error(Errc::null_pointer, "loglik", "null");
  if (detail::wants_cuda(ctx)) {
    if constexpr (config::cuda)
      if (detail::hmm_forward_cuda(ctx, model, loglik, ctx.backend == Backend::cuda)) return;
  }
  check_model_values(model);
  if (model.batch == 0) return;
  forward_cpu(ctx, model, loglik);
}

#define RINGMM_HMM_INSTANTIATE(T)                                                                                 \
  template void hmm_viterbi<T>(const Context&, const HmmModel<T>&, std::int32_t*, T*, std::int32_t*, ViterbiStep); \
  template void hmm_forward<T>(const Context&, const HmmModel<T>&, T*);                                         \
  template void detail::check_hmm_shape<T>(const HmmModel<T>&);
RINGMM_HMM_INSTANTIATE(float)
RINGMM_HMM_INSTANTIATE(double)
#undef RINGMM_HMM_INSTANTIATE

}  // namespace ringmm
