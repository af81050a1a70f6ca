// Hidden Markov models over many sequences at once: Viterbi (the best state path) and the forward
// algorithm (the log-likelihood), each step one (B×S)·(S×S) semiring product.
//
//   δ_0[b, s]  = π[s] + E_0[b, s]
//   δ_t[b, s'] = max_s (δ_{t−1}[b, s] + A[s, s']) + E_t[b, s']        (max-plus gemm_argmax)
//   α_t[b, s'] = log Σ_s exp(α_{t−1}[b, s] + A[s, s']) + E_t[b, s']    (log-plus gemm)
//
// Layouts (all dense, row-major, element type T = float or double, log domain):
//   init    π, S values: log P(state s at step 0)
//   trans   A, S×S: trans[s·S + s'] = log P(s' | s)
//   emit    E, T×B×S, step-major: emit[(t·B + b)·S + s] = log-score of step t's observation of
//           sequence b in state s. Each step is then one contiguous B×S block, the operand of
//           that step's product; precomputed scores keep the API independent of the observation
//           model.
//   path    B×T int32: path[b·T + t] = the state of sequence b at step t on its best path
//   score   B values: the best path's log-score (max_s δ_{T−1}[b, s])
//   loglik  B values: log Σ_s exp(α_{T−1}[b, s])
//   backpointers (optional workspace) (T−1)×B×S int32: backpointers[((t−1)·B + b)·S + s'] = the s
//           that won for δ_t[b, s']; null: allocated by the call (on the device for CUDA).
//
// Every sequence has the same length T (pad shorter ones on the caller's side). Values may be
// −∞ (a forbidden start, transition or emission); NaN and +∞ are refused. Ties: the smallest
// previous state wins at every step (gemm_argmax's rule), and the final state is the smallest s
// with the maximal δ_{T−1}. A sequence with no path of finite score gets score −∞ and path −1
// at every step; its forward log-likelihood is −∞.
//
// Backends: the CPU (host pointers), and CUDA (device pointers; every step runs on the stream of
// ctx with no host round trip; the call returns when the work is queued). Backend::automatic runs
// on CUDA when the library has it, a device is present and init points to device memory; else on
// the CPU. Arguments and values are checked before any work: a refused call writes nothing (on
// CUDA, the value check is the one synchronisation, before the first step).
#pragma once

#include <cstdint>

#include "ringmm/context.hpp"
#include "ringmm/types.hpp"

namespace ringmm {

template <class T> struct HmmModel {
  index_t batch = 0;   // B, sequences
  index_t states = 0;  // S
  index_t steps = 0;   // T
  const T* init = nullptr;
  const T* trans = nullptr;
  const T* emit = nullptr;
};

// How the CUDA backend computes a Viterbi step (the CPU backend always runs gemm_argmax):
//   fused        one kernel per step: the max-plus product, the argmax recovered per run of k,
//                the emission added. f32 models whose values are all ≤ 0 (log-probabilities)
//                take src/cuda/viterbi_logprob.cuh (the maximum on bit patterns, 1.5
//                instructions an update), others src/cuda/viterbi_step.cuh (FADD + FMNMX).
//   gemm_argmax  the library's gemm_argmax<MaxPlus<T>> and a kernel adding the emissions
// Both give the same paths, scores and backpointers.
enum class ViterbiStep { fused, gemm_argmax };

// Best paths and their scores.
template <class T>
void hmm_viterbi(const Context& ctx, const HmmModel<T>& model, std::int32_t* path, T* score,
                 std::int32_t* backpointers = nullptr, ViterbiStep step = ViterbiStep::fused);

// Forward log-likelihoods.
template <class T> void hmm_forward(const Context& ctx, const HmmModel<T>& model, T* loglik);

namespace detail {
// The CUDA implementations (src/cuda/hmm.cu; src/core/no_cuda.cpp without CUDA). They return
// false, having done nothing, when `required` is false and the model is in host memory.
template <class T>
bool hmm_viterbi_cuda(const Context& ctx, const HmmModel<T>& model, std::int32_t* path, T* score,
                      std::int32_t* backpointers, ViterbiStep step, bool required);
template <class T> bool hmm_forward_cuda(const Context& ctx, const HmmModel<T>& model, T* loglik, bool required);
// Which kernel ViterbiStep::fused runs on the CUDA backend for a device model and backpointer
// array (src/cuda/hmm.cu; the tests check the choice): src/cuda/viterbi_logprob.cuh (f32, every
// value ≤ 0, S a multiple of 16), src/cuda/viterbi_step.cuh's vector form (other f32 models with S
// a multiple of 16) or its scalar form; the f32 forms also need 16-byte-aligned arrays. Runs the
// value check (refusing NaN and +inf).
enum class FusedViterbiForm { log_probability, vector, scalar };
template <class T>
FusedViterbiForm fused_viterbi_form_cuda(const Context& ctx, const HmmModel<T>& model, const std::int32_t* backpointers);
// The checks of sizes and pointers every backend runs first.
template <class T> void check_hmm_shape(const HmmModel<T>& model);
}  // namespace detail

}  // namespace ringmm
