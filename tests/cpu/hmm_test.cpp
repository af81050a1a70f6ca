// hmm_viterbi and hmm_forward on the CPU against a direct O(T·B·S²) reference: random models,
// ties (the smallest previous state wins), forbidden (−∞) transitions and starts, sequences with
// no path, T = 1, S = 1, B = 1, f32 and f64, and refused arguments that write nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "ringmm/hmm.hpp"
#include "ringmm_testing.hpp"

namespace ringmm::testing {
namespace {

template <class T> constexpr T minus_inf = -std::numeric_limits<T>::infinity();

template <class T> struct Model {
  index_t batch, states, steps;
  std::vector<T> init, trans, emit;
  HmmModel<T> view() const { return {batch, states, steps, init.data(), trans.data(), emit.data()}; }
};

// Random log-probabilities; `forbid` of the transitions and starts are −∞; `coarse` rounds every
// value to a multiple of 1/4 (from a few levels), so that sums tie often.
template <class T> Model<T> random_model(index_t b, index_t s, index_t t, std::mt19937_64& rng, double forbid = 0, bool coarse = false) {
  Model<T> m{b, s, t, std::vector<T>(std::size_t(s)), std::vector<T>(std::size_t(s * s)), std::vector<T>(std::size_t(t * b * s))};
  std::uniform_real_distribution<double> u(-4, 0), p(0, 1);
  auto value = [&] { return coarse ? T(std::floor(u(rng)) / 4) : T(u(rng)); };
  for (T& x : m.init) x = p(rng) < forbid ? minus_inf<T> : value();
  for (T& x : m.trans) x = p(rng) < forbid ? minus_inf<T> : value();
  for (T& x : m.emit) x = value();
  return m;
}

// The reference: δ in the plain triple loop, the first strictly better s wins; traceback.
template <class T> void reference_viterbi(const Model<T>& m, std::vector<std::int32_t>& path, std::vector<T>& score) {
  const index_t B = m.batch, S = m.states, T_ = m.steps;
  path.assign(std::size_t(B * T_), -1);
  score.assign(std::size_t(B), 0);
  std::vector<std::int32_t> bp(std::size_t(T_ * B * S), -1);
  for (index_t b = 0; b < B; ++b) {
    std::vector<T> d(static_cast<std::size_t>(S)), nd(static_cast<std::size_t>(S));
    for (index_t s = 0; s < S; ++s) d[s] = m.init[s] + m.emit[b * S + s];
    for (index_t t = 1; t < T_; ++t) {
      for (index_t s2 = 0; s2 < S; ++s2) {
        T best = minus_inf<T>;
        std::int32_t arg = -1;
        for (index_t s = 0; s < S; ++s)
          if (d[s] + m.trans[s * S + s2] > best) best = d[s] + m.trans[s * S + s2], arg = std::int32_t(s);
        nd[s2] = best + m.emit[(t * B + b) * S + s2];
        bp[std::size_t((t * B + b) * S + s2)] = arg;
      }
      d.swap(nd);
    }
    index_t last = 0;
    for (index_t s = 1; s < S; ++s)
      if (d[s] > d[last]) last = s;
    score[b] = d[last];
    if (d[last] == minus_inf<T>) continue;
    path[std::size_t(b * T_ + T_ - 1)] = std::int32_t(last);
    for (index_t t = T_ - 1; t > 0; --t)
      path[std::size_t(b * T_ + t - 1)] = bp[std::size_t((t * B + b) * S + path[std::size_t(b * T_ + t)])];
  }
}

// The forward algorithm in long double.
template <class T> std::vector<long double> reference_forward(const Model<T>& m) {
  const index_t B = m.batch, S = m.states;
  std::vector<long double> out(static_cast<std::size_t>(B));
  auto lse = [](const std::vector<long double>& v) {
    long double top = -INFINITY;
    for (long double x : v) top = std::max(top, x);
    if (top == -INFINITY) return top;
    long double sum = 0;
    for (long double x : v) sum += std::exp(x - top);
    return top + std::log(sum);
  };
  for (index_t b = 0; b < B; ++b) {
    std::vector<long double> a(static_cast<std::size_t>(S)), terms(static_cast<std::size_t>(S));
    for (index_t s = 0; s < S; ++s) a[s] = (long double)m.init[s] + m.emit[b * S + s];
    for (index_t t = 1; t < m.steps; ++t) {
      std::vector<long double> na(static_cast<std::size_t>(S));
      for (index_t s2 = 0; s2 < S; ++s2) {
        for (index_t s = 0; s < S; ++s) terms[s] = a[s] + m.trans[s * S + s2];
        na[s2] = lse(terms) + m.emit[(t * B + b) * S + s2];
      }
      a.swap(na);
    }
    out[b] = lse(a);
  }
  return out;
}

template <class T> class Hmm : public ::testing::Test {};
using Floats = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Hmm, Floats);

struct Case {
  index_t b, s, t;
  double forbid;
  bool coarse;
};
const Case cases[] = {{1, 1, 1, 0, false},  {1, 1, 9, 0, false},   {3, 1, 4, 0, false},  {1, 5, 1, 0, false},
                      {4, 7, 12, 0, false}, {5, 6, 10, 0, true},   {6, 9, 15, 0.3, false}, {3, 4, 8, 0.6, true},
                      {17, 33, 20, 0.1, false}, {2, 40, 6, 0.2, true}};

template <class T> std::string name_of(const Case& c) {
  return "B=" + std::to_string(c.b) + " S=" + std::to_string(c.s) + " T=" + std::to_string(c.t) + " forbid " +
         std::to_string(c.forbid) + (c.coarse ? " (ties)" : "");
}

TYPED_TEST(Hmm, ViterbiMatchesTheReference) {
  using T = TypeParam;
  std::mt19937_64 rng(31);
  for (const Case& c : cases)
    for (int threads : {1, 2}) {
      const Model<T> m = random_model<T>(c.b, c.s, c.t, rng, c.forbid, c.coarse);
      std::vector<std::int32_t> path(std::size_t(c.b * c.t), 12345), want_path;
      std::vector<T> score(std::size_t(c.b), T(12345)), want_score;
      hmm_viterbi<T>(cpu_context(threads), m.view(), path.data(), score.data());
      reference_viterbi(m, want_path, want_score);
      EXPECT_EQ(path, want_path) << name_of<T>(c);
      for (index_t b = 0; b < c.b; ++b) EXPECT_EQ(score[b], want_score[b]) << name_of<T>(c) << " sequence " << b;
    }
}

TYPED_TEST(Hmm, ForwardMatchesTheReference) {
  using T = TypeParam;
  std::mt19937_64 rng(32);
  const double tol = std::is_same_v<T, float> ? 2e-4 : 1e-10;
  for (const Case& c : cases) {
    const Model<T> m = random_model<T>(c.b, c.s, c.t, rng, c.forbid, c.coarse);
    std::vector<T> loglik(std::size_t(c.b), T(12345));
    hmm_forward<T>(cpu_context(), m.view(), loglik.data());
    const auto want = reference_forward(m);
    for (index_t b = 0; b < c.b; ++b) {
      if (want[b] == -INFINITY) {
        EXPECT_EQ(loglik[b], minus_inf<T>) << name_of<T>(c);
        continue;
      }
      EXPECT_NEAR(double(loglik[b]), double(want[b]), tol * (1 + std::fabs(double(want[b])))) << name_of<T>(c) << " sequence " << b;
    }
  }
}

// A chain 0 → 1 → 2 → ... forced by −∞ transitions; from state 0, two equal ways back.
TYPED_TEST(Hmm, ForbiddenTransitionsTiesAndNoPath) {
  using T = TypeParam;
  const index_t S = 4, steps = 5, B = 3;
  Model<T> m{B, S, steps, std::vector<T>(S, minus_inf<T>), std::vector<T>(S * S, minus_inf<T>),
             std::vector<T>(std::size_t(steps * B * S), T(0))};
  m.init[0] = 0;
  for (index_t s = 0; s + 1 < S; ++s) m.trans[s * S + s + 1] = T(-1);
  m.trans[(S - 1) * S + 0] = T(-1);  // 3 → 0
  m.trans[(S - 1) * S + 1] = T(-1);  // 3 → 1 as well: a tie at step 4 lands on state 0 or 1
  // Sequence 2: emissions forbid every state at step 2: no path.
  for (index_t s = 0; s < S; ++s) m.emit[(2 * B + 2) * S + s] = minus_inf<T>;
  std::vector<std::int32_t> path(std::size_t(B * steps), 77);
  std::vector<T> score(std::size_t(B), T(77));
  hmm_viterbi<T>(cpu_context(), m.view(), path.data(), score.data());
  const std::vector<std::int32_t> chain = {0, 1, 2, 3, 0};  // the final tie: states 0 and 1 both score −4; 0 wins
  for (index_t b = 0; b < 2; ++b) {
    EXPECT_EQ(std::vector<std::int32_t>(path.begin() + b * steps, path.begin() + (b + 1) * steps), chain);
    EXPECT_EQ(score[b], T(-4));
  }
  EXPECT_EQ(score[2], minus_inf<T>);
  for (index_t t = 0; t < steps; ++t) EXPECT_EQ(path[std::size_t(2 * steps + t)], -1);
  std::vector<T> loglik(static_cast<std::size_t>(B));
  hmm_forward<T>(cpu_context(), m.view(), loglik.data());
  EXPECT_NEAR(double(loglik[0]), -4 + std::log(2.0), 1e-6);
  EXPECT_EQ(loglik[2], minus_inf<T>);
}

TYPED_TEST(Hmm, CallerBackpointersHoldEveryStep) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  const Model<T> m = random_model<T>(3, 5, 6, rng);
  std::vector<std::int32_t> bp(std::size_t(5 * 3 * 5), -7), path(18), path2(18);
  std::vector<T> score(3), score2(3);
  hmm_viterbi<T>(cpu_context(), m.view(), path.data(), score.data(), bp.data());
  hmm_viterbi<T>(cpu_context(), m.view(), path2.data(), score2.data());
  EXPECT_EQ(path, path2);
  for (std::int32_t x : bp) EXPECT_TRUE(x >= 0 && x < 5);
  // The path follows the backpointers.
  for (index_t b = 0; b < 3; ++b)
    for (index_t t = 5; t > 0; --t)
      EXPECT_EQ(path[std::size_t(b * 6 + t - 1)], bp[std::size_t(((t - 1) * 3 + b) * 5 + path[std::size_t(b * 6 + t)])]);
}

TEST(HmmArguments, RefusedCallsWriteNothing) {
  std::mt19937_64 rng(4);
  Model<float> m = random_model<float>(2, 3, 4, rng);
  std::vector<std::int32_t> path(8, 9);
  std::vector<float> score(2, 9.0f), loglik(2, 9.0f);
  auto expect_refused = [&](const HmmModel<float>& model, Errc code, const std::string& subject) {
    try {
      hmm_viterbi<float>(cpu_context(), model, path.data(), score.data());
      ADD_FAILURE() << "viterbi accepted a bad " << subject;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_EQ(e.subject(), subject) << e.what();
    }
    EXPECT_THROW(hmm_forward<float>(cpu_context(), model, loglik.data()), Error);
  };
  auto v = m.view();
  v.states = 0;
  expect_refused(v, Errc::invalid_argument, "states");
  v = m.view();
  v.steps = 0;
  expect_refused(v, Errc::invalid_argument, "steps");
  v = m.view();
  v.trans = nullptr;
  expect_refused(v, Errc::null_pointer, "trans");
  m.emit[5] = std::numeric_limits<float>::quiet_NaN();
  expect_refused(m.view(), Errc::value_out_of_range, "emit");
  m.emit[5] = 0;
  m.trans[2] = std::numeric_limits<float>::infinity();
  expect_refused(m.view(), Errc::value_out_of_range, "trans");
  m.trans[2] = 0;
  m.init[1] = std::numeric_limits<float>::infinity();
  expect_refused(m.view(), Errc::value_out_of_range, "init");
  for (std::int32_t x : path) EXPECT_EQ(x, 9);
  for (float x : score) EXPECT_EQ(x, 9.0f);
  for (float x : loglik) EXPECT_EQ(x, 9.0f);
  // No sequences: nothing to do.
  m.init[1] = 0;
  v = m.view();
  v.batch = 0;
  EXPECT_NO_THROW(hmm_viterbi<float>(cpu_context(), v, nullptr, nullptr));
}

}  // namespace
}  // namespace ringmm::testing
