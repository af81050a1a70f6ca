// hmm_viterbi and hmm_forward on the CUDA backend against the CPU backend (label gpu; skips
// without a device): random models with forbidden transitions and ties, T = 1, S = 1, B = 1, a
// size past one block of the final kernels, log-probability models and models with positive
// values (the two fused f32 forms), refused values and host memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "cuda_testing.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

Context with(Backend backend) {
  Context ctx;
  ctx.backend = backend;
  return ctx;
}

template <class T> struct Model {
  index_t batch, states, steps;
  std::vector<T> init, trans, emit;
};

// Which arrays get 3 added to their values, making most of them positive.
enum class Shift { none, all, init, trans, emit };

// Values in [−4, 0] (log-probabilities), coarse ones multiples of 1/4 (ties), shifted by 3 in the
// arrays `shift` names; `zeros` makes a fifth of them +0 or −0.
template <class T>
Model<T> random_model(index_t b, index_t s, index_t t, std::mt19937_64& rng, double forbid, bool coarse,
                      Shift shift = Shift::none, bool zeros = false) {
  Model<T> m{b, s, t, std::vector<T>(static_cast<std::size_t>(s)), std::vector<T>(static_cast<std::size_t>(s * s)),
             std::vector<T>(static_cast<std::size_t>(t * b * s))};
  std::uniform_real_distribution<double> u(-4, 0), p(0, 1);
  auto value = [&](Shift array) {
    if (zeros && p(rng) < 0.2) return p(rng) < 0.5 ? T(0) : -T(0);
    const double v = coarse ? std::floor(u(rng)) / 4 : u(rng);
    return T(shift == Shift::all || shift == array ? v + 3 : v);
  };
  for (T& x : m.init) x = p(rng) < forbid ? -std::numeric_limits<T>::infinity() : value(Shift::init);
  for (T& x : m.trans) x = p(rng) < forbid ? -std::numeric_limits<T>::infinity() : value(Shift::trans);
  for (T& x : m.emit) x = value(Shift::emit);
  return m;
}

template <class T> class CudaHmm : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CudaHmm, Floats);

struct Case {
  index_t b, s, t;
  double forbid;
  bool coarse;
  bool shifted_trans = false;  // trans one element past an aligned address: the fused step's scalar form
  Shift shift = Shift::none;   // positive values: f32 takes viterbi_step.cuh's vector form
  bool zeros = false;          // +0 and −0 among the values
};

// The fused step's kernel for a case (hmm.hpp: FusedViterbiForm).
template <class T> detail::FusedViterbiForm expected_form(const Case& c) {
  if (!std::is_same_v<T, float> || c.s % 16 != 0 || c.shifted_trans) return detail::FusedViterbiForm::scalar;
  return c.shift == Shift::none ? detail::FusedViterbiForm::log_probability : detail::FusedViterbiForm::vector;
}

TYPED_TEST(CudaHmm, MatchesTheCpu) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(41);
  // S a multiple of 16 takes a fused f32 form of its own: viterbi_logprob.cuh where every value is
  // ≤ 0, viterbi_step.cuh's vector form where some are positive (in any one of the three arrays:
  // the value check must see each; checked through fused_viterbi_form_cuda). 16 and 48 leave most of
  // a 64-column tile empty, 80 a ragged second one; 0.9 forbids whole columns of A (backpointer
  // −1); 70, 129 and 130 sequences leave a ragged row tile, and B not a multiple of 4 a ragged
  // vector of δᵀ (viterbi_logprob.cuh's pitch).
  const Case cases[] = {{1, 1, 1, 0, false},
                        {1, 1, 7, 0, false},
                        {3, 5, 1, 0, false},
                        {4, 7, 12, 0.2, true},
                        {9, 300, 6, 0.1, false},
                        {70, 65, 9, 0.3, true},
                        {257, 130, 20, 0.05, false},
                        {1, 16, 3, 0, true},
                        {9, 16, 6, 0.9, true},
                        {33, 48, 5, 0, true},
                        {70, 64, 9, 0.3, true},
                        {129, 512, 4, 0.1, false},
                        {4, 16, 5, 0, true},
                        {8, 48, 7, 0.9, true},
                        {68, 64, 9, 0.3, true},
                        {130, 80, 6, 0.1, false},
                        {67, 32, 8, 0.2, true, false, Shift::none, true},
                        {200, 512, 3, 0.05, true},
                        {9, 16, 6, 0.9, true, false, Shift::all},
                        {33, 48, 5, 0, true, false, Shift::init},
                        {70, 64, 9, 0.3, true, false, Shift::trans},
                        {129, 512, 4, 0.1, false, false, Shift::emit},
                        {68, 32, 5, 0.1, true, false, Shift::all},
                        {70, 64, 9, 0.3, true, true}};
  for (const Case& c : cases) {
    const Model<T> m = random_model<T>(c.b, c.s, c.t, rng, c.forbid, c.coarse, c.shift, c.zeros);
    const HmmModel<T> host{c.b, c.s, c.t, m.init.data(), m.trans.data(), m.emit.data()};
    std::vector<std::int32_t> want_path(static_cast<std::size_t>(c.b * c.t)), path(want_path.size(), 77);
    std::vector<T> want_score(static_cast<std::size_t>(c.b)), score(want_score.size()), want_ll(want_score.size()), ll(want_score.size());
    hmm_viterbi<T>(with(Backend::cpu), host, want_path.data(), want_score.data());
    hmm_forward<T>(with(Backend::cpu), host, want_ll.data());

    std::vector<T> trans_copy(m.trans);
    if (c.shifted_trans) trans_copy.insert(trans_copy.begin(), T(0));
    DeviceCopy<T> init(m.init), trans(trans_copy), emit(m.emit), d_score(score), d_ll(ll);
    DeviceCopy<std::int32_t> d_path(path);
    const HmmModel<T> device{c.b, c.s, c.t, init.ptr, trans.ptr + (c.shifted_trans ? 1 : 0), emit.ptr};
    const std::string what = "B=" + std::to_string(c.b) + " S=" + std::to_string(c.s) + " T=" + std::to_string(c.t) +
                             (c.shifted_trans ? " (trans unaligned)" : "") + (c.shift != Shift::none ? " (positive values)" : "") +
                             (c.zeros ? " (signed zeros)" : "");
    EXPECT_EQ(detail::fused_viterbi_form_cuda<T>(with(Backend::cuda), device, nullptr), expected_form<T>(c)) << what;
    // Both step kernels, and the backpointers of each step against the CPU's.
    std::vector<std::int32_t> want_bp(static_cast<std::size_t>((c.t - 1) * c.b * c.s) + 1), bp(want_bp.size());
    hmm_viterbi<T>(with(Backend::cpu), host, want_path.data(), want_score.data(), want_bp.data());
    for (const ViterbiStep step : {ViterbiStep::fused, ViterbiStep::gemm_argmax}) {
      const std::string how = what + (step == ViterbiStep::fused ? " fused" : " gemm_argmax");
      DeviceCopy<std::int32_t> d_bp(std::vector<std::int32_t>(bp.size(), 55));
      hmm_viterbi<T>(with(Backend::cuda), device, d_path.ptr, d_score.ptr, d_bp.ptr, step);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      d_path.to_host(path);
      d_score.to_host(score);
      d_bp.to_host(bp);
      EXPECT_EQ(path, want_path) << how;
      EXPECT_EQ(score, want_score) << how;  // max-plus sums are exact: equal (a zero's sign may differ)
      bp.back() = want_bp.back();           // one past the backpointers (T = 1 has none)
      EXPECT_EQ(bp, want_bp) << how;
    }
    hmm_forward<T>(with(Backend::automatic), device, d_ll.ptr);  // device memory: automatic picks CUDA
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    d_ll.to_host(ll);
    const double tol = std::is_same_v<T, float> ? 1e-4 : 1e-10;
    for (index_t b = 0; b < c.b; ++b) {
      if (std::isinf(double(want_ll[b]))) EXPECT_EQ(ll[b], want_ll[b]) << what;
      else EXPECT_NEAR(double(ll[b]), double(want_ll[b]), tol * (1 + std::fabs(double(want_ll[b])))) << what << " sequence " << b;
    }
  }
}

// −0 and +0 as the maximum in different runs of 8 k (viterbi_logprob.cuh compares bit patterns
// within a run): from state 0 every term is −0, from state 8 every term is +0, all others −1. The
// two are equal, so state 0 must win, as on the CPU.
TEST(CudaHmmSignedZeros, AnEarlierMinusZeroKeepsItsTie) {
  RINGMM_SKIP_WITHOUT_GPU();
  constexpr index_t b = 4, s = 16, t = 3;
  const float minus_zero = -0.0f;
  std::vector<float> init(s, -1.0f), trans(s * s, -1.0f), emit(t * b * s, minus_zero);
  init[0] = minus_zero, init[8] = 0.0f;
  for (index_t c = 0; c < s; ++c) trans[0 * s + c] = minus_zero, trans[8 * s + c] = 0.0f;
  const HmmModel<float> host{b, s, t, init.data(), trans.data(), emit.data()};
  std::vector<std::int32_t> want_path(b * t), want_bp((t - 1) * b * s), path(want_path.size()), bp(want_bp.size());
  std::vector<float> want_score(b), score(b);
  hmm_viterbi<float>(with(Backend::cpu), host, want_path.data(), want_score.data(), want_bp.data());
  EXPECT_EQ(want_bp[0], 0);  // the CPU's tie rule, which the GPU must follow
  DeviceCopy<float> d_init(init), d_trans(trans), d_emit(emit), d_score(score);
  DeviceCopy<std::int32_t> d_path(path), d_bp(bp);
  const HmmModel<float> device{b, s, t, d_init.ptr, d_trans.ptr, d_emit.ptr};
  EXPECT_EQ(detail::fused_viterbi_form_cuda<float>(with(Backend::cuda), device, d_bp.ptr), detail::FusedViterbiForm::log_probability);
  hmm_viterbi<float>(with(Backend::cuda), device, d_path.ptr, d_score.ptr, d_bp.ptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  d_path.to_host(path);
  d_score.to_host(score);
  d_bp.to_host(bp);
  EXPECT_EQ(bp, want_bp);
  EXPECT_EQ(path, want_path);
  EXPECT_EQ(score, want_score);  // as floats: a zero's sign may differ
}

TEST(CudaHmmArguments, RefusesNaNAndHostMemory) {
  RINGMM_SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(2);
  Model<float> m = random_model<float>(3, 4, 5, rng, 0, false);
  m.emit[17] = std::numeric_limits<float>::quiet_NaN();
  DeviceCopy<float> init(m.init), trans(m.trans), emit(m.emit), score(std::vector<float>(3, 9.0f));
  DeviceCopy<std::int32_t> path(std::vector<std::int32_t>(15, 9));
  try {
    hmm_viterbi<float>(with(Backend::cuda), {3, 4, 5, init.ptr, trans.ptr, emit.ptr}, path.ptr, score.ptr);
    ADD_FAILURE() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.subject(), "emit");
    EXPECT_NE(std::string(e.what()).find("element 17"), std::string::npos) << e.what();
  }
  std::vector<std::int32_t> back(15);
  path.to_host(back);
  for (std::int32_t x : back) EXPECT_EQ(x, 9);
  // Host arrays on Backend::cuda are refused, naming the first.
  std::vector<std::int32_t> host_path(15);
  std::vector<float> host_score(3);
  EXPECT_THROW(hmm_viterbi<float>(with(Backend::cuda), {3, 4, 5, m.init.data(), m.trans.data(), m.emit.data()},
                                  host_path.data(), host_score.data()),
               Error);
}

}  // namespace
}  // namespace ringmm::testing
