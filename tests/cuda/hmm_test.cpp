// hmm_viterbi and hmm_forward on the CUDA backend against the CPU backend (label gpu; skips
// without a device): random models with forbidden transitions and ties, T = 1, S = 1, B = 1, a
// size past one block of the final kernels, log-probability models and models with positive
// values (the two fused f32 forms), refused values and host memory.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
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

// Values in [−4, 0] (log-probabilities), coarse ones multiples of 1/4 (ties); `shift` is added to
// every finite value (> 0: most values positive), and `zeros` makes a fifth of them +0 or −0.
template <class T>
Model<T> random_model(index_t b, index_t s, index_t t, std::mt19937_64& rng, double forbid, bool coarse, double shift = 0,
                      bool zeros = false) {
  Model<T> m{b, s, t, std::vector<T>(static_cast<std::size_t>(s)), std::vector<T>(static_cast<std::size_t>(s * s)),
             std::vector<T>(static_cast<std::size_t>(t * b * s))};
  std::uniform_real_distribution<double> u(-4, 0), p(0, 1);
  auto value = [&] {
    if (zeros && p(rng) < 0.2) return p(rng) < 0.5 ? T(0) : -T(0);
    return T((coarse ? std::floor(u(rng)) / 4 : u(rng)) + shift);
  };
  for (T& x : m.init) x = p(rng) < forbid ? -std::numeric_limits<T>::infinity() : value();
  for (T& x : m.trans) x = p(rng) < forbid ? -std::numeric_limits<T>::infinity() : value();
  for (T& x : m.emit) x = value();
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
  double shift = 0;            // 3: most values positive, so f32 takes viterbi_step.cuh's vector form
  bool zeros = false;          // +0 and −0 among the values
};

TYPED_TEST(CudaHmm, MatchesTheCpu) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = TypeParam;
  std::mt19937_64 rng(41);
  // S a multiple of 16 takes a fused f32 form of its own: viterbi_logprob.cuh where every value is
  // ≤ 0, viterbi_step.cuh's vector form where some are positive (shift 3). 16 and 48 leave most of
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
                        {67, 32, 8, 0.2, true, false, 0, true},
                        {200, 512, 3, 0.05, true},
                        {9, 16, 6, 0.9, true, false, 3},
                        {33, 48, 5, 0, true, false, 3},
                        {70, 64, 9, 0.3, true, false, 3},
                        {129, 512, 4, 0.1, false, false, 3},
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
                             (c.shifted_trans ? " (trans unaligned)" : "") + (c.shift > 0 ? " (positive values)" : "") +
                             (c.zeros ? " (signed zeros)" : "");
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
      EXPECT_EQ(score, want_score) << how;  // max-plus sums are exact: the same bits
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
