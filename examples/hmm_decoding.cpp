// Decoding many sequences at once with an HMM: the occasionally dishonest casino. Two states
// (fair die, loaded die that shows 6 half of the time); hmm_viterbi finds each sequence's most
// likely states, hmm_forward its log-likelihood. Emissions are precomputed log-scores, laid out
// step-major (T×B×S), so any observation model fits.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "ringmm/ringmm.hpp"

int main() {
  const ringmm::index_t states = 2, batch = 4, steps = 60;
  const std::vector<double> init = {std::log(0.5), std::log(0.5)};
  const std::vector<double> trans = {std::log(0.95), std::log(0.05),   // fair → fair, fair → loaded
                                     std::log(0.10), std::log(0.90)};  // loaded → fair, loaded → loaded
  auto emission = [](int state, int face) { return state == 0 ? std::log(1.0 / 6) : std::log(face == 6 ? 0.5 : 0.1); };

  // Rolls: every sequence switches to the loaded die for steps 20..39.
  std::mt19937 rng(7);
  std::vector<int> rolls(std::size_t(batch * steps));
  std::vector<double> emit(std::size_t(steps * batch * states));
  for (ringmm::index_t b = 0; b < batch; ++b)
    for (ringmm::index_t t = 0; t < steps; ++t) {
      const bool loaded = t >= 20 && t < 40;
      const int face = loaded && rng() % 2 ? 6 : int(rng() % 6) + 1;
      rolls[std::size_t(b * steps + t)] = face;
      for (int s = 0; s < states; ++s) emit[std::size_t((t * batch + b) * states + s)] = emission(s, face);
    }

  const ringmm::HmmModel<double> model{batch, states, steps, init.data(), trans.data(), emit.data()};
  std::vector<std::int32_t> path(std::size_t(batch * steps));
  std::vector<double> score(static_cast<std::size_t>(batch)), loglik(static_cast<std::size_t>(batch));
  ringmm::Context ctx;
  ctx.backend = ringmm::Backend::cpu;  // host arrays (the CUDA backend takes device arrays)
  ringmm::hmm_viterbi(ctx, model, path.data(), score.data());
  ringmm::hmm_forward(ctx, model, loglik.data());

  for (ringmm::index_t b = 0; b < batch; ++b) {
    std::printf("rolls  ");
    for (ringmm::index_t t = 0; t < steps; ++t) std::printf("%d", rolls[std::size_t(b * steps + t)]);
    std::printf("\nstates ");
    for (ringmm::index_t t = 0; t < steps; ++t) std::printf("%c", path[std::size_t(b * steps + t)] ? 'L' : 'F');
    std::printf("\nbest path log-score %.3f, log-likelihood %.3f\n\n", score[std::size_t(b)], loglik[std::size_t(b)]);
  }
  // The best path is one of the paths the likelihood sums over.
  for (ringmm::index_t b = 0; b < batch; ++b)
    if (!(score[std::size_t(b)] <= loglik[std::size_t(b)])) return 1;
  return 0;
}
