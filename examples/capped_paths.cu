// A semiring of your own on the GPU: which towns can be reached on one tank of fuel.
//
// CappedMinPlus is min-plus whose ⊗ gives up on a route longer than the tank holds: the sum
// becomes +∞ ("out of reach"). Squaring the road matrix D ← D ⊗ D until it settles leaves the
// shortest distance between every pair of towns when it is within one tank, and +∞ otherwise.
//
// The struct is all it takes: compiled as CUDA (this is a .cu file), ringmm::gemm<CappedMinPlus>
// instantiates ringmm's CUDA engine for it (ringmm/cuda/gemm.cuh), and Backend::automatic runs it
// on the GPU when there is one. The same source compiled as C++ would run it on the CPU. Its
// functions are RINGMM_HD (host and device); valid_input makes every backend refuse inputs the
// semiring is not made for (negative or over-long roads) before any work.
//
// Build: part of the ringmm build when CUDA is on; on its own, add this file to a CUDA target
// and target_link_libraries(app PRIVATE ringmm::ringmm).
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "ringmm/ringmm.hpp"

struct CappedMinPlus {
  using value_type = float;
  static constexpr float tank = 300.0f;  // km on one tank
  RINGMM_HD static constexpr float zero() { return std::numeric_limits<float>::infinity(); }
  RINGMM_HD static constexpr float one() { return 0.0f; }
  RINGMM_HD static float add(float a, float b) { return a < b ? a : b; }
  RINGMM_HD static float mul(float a, float b) {
    const float route = a + b;
    return route <= tank ? route : zero();
  }
  static constexpr bool valid_input(float x) { return x == zero() || (x >= 0.0f && x <= tank); }
  static std::string input_domain() { return "road lengths in [0, 300] km, or +inf for no road"; }
};

int main() {
  using S = CappedMinPlus;
  const ringmm::index_t n = 7;
  const float no = S::zero();
  const char* towns[n] = {"Ashford", "Bexley", "Crayford", "Dartford", "Erith", "Farnham", "Godstone"};
  // Road lengths in km (symmetric), 0 on the diagonal.
  std::vector<float> roads = {0,   120, no,  no,  no,  no,  250,  //
                              120, 0,   90,  no,  no,  no,  no,   //
                              no,  90,  0,   110, no,  no,  no,   //
                              no,  no,  110, 0,   70,  no,  no,   //
                              no,  no,  no,  70,  0,   260, no,   //
                              no,  no,  no,  no,  260, 0,   80,   //
                              250, no,  no,  no,  no,  80,  0};

  // D ← D ⊗ D on the GPU when there is one, and on the CPU to compare.
  auto closure = [&](ringmm::Backend backend) {
    ringmm::Context ctx;
    ctx.backend = backend;
    std::vector<float> d = roads, next(d.size());
    for (int step = 1; step < n - 1; step *= 2) {
      ringmm::gemm<S>(ctx, ringmm::Op::N, ringmm::row_major<const float>(d.data(), n, n), ringmm::Op::N,
                      ringmm::row_major<const float>(d.data(), n, n), ringmm::row_major(next.data(), n, n));
      d.swap(next);
    }
    return d;
  };
  const std::vector<float> reach = closure(ringmm::Backend::automatic);
  const std::vector<float> check = closure(ringmm::Backend::cpu);

  std::printf("within one tank (%g km) of %s:\n", S::tank, towns[0]);
  for (ringmm::index_t j = 1; j < n; ++j) {
    if (reach[j] == no) std::printf("  %-9s out of reach\n", towns[j]);
    else std::printf("  %-9s %g km\n", towns[j], reach[j]);
  }
  // Crayford is 210 km via Bexley; Farnham 330 km via Godstone is past the tank.
  const bool ok = reach == check && reach[2] == 210.0f && reach[5] == no;
  if (!ok) std::printf("mismatch against the CPU backend\n");
  return ok ? 0 : 1;
}
