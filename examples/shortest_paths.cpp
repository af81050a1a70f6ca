// All-pairs shortest paths by repeated min-plus squaring: D ← D ⊗ D, ⌈log2(n−1)⌉ times.
// Build: part of the ringmm build (examples/), or against an installed ringmm with
// find_package(ringmm) and target_link_libraries(app PRIVATE ringmm::ringmm).
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include "ringmm/ringmm.hpp"

int main() {
  using S = ringmm::MinPlus<float>;
  const ringmm::index_t n = 6;
  const float inf = S::zero();
  // A small directed graph: edge weights, +∞ where there is no edge, 0 on the diagonal.
  std::vector<float> dist = {0,   7,   9,   inf, inf, 14,   //
                             7,   0,   10,  15,  inf, inf,  //
                             9,   10,  0,   11,  inf, 2,    //
                             inf, 15,  11,  0,   6,   inf,  //
                             inf, inf, inf, 6,   0,   9,    //
                             14,  inf, 2,   inf, 9,   0};
  std::vector<float> next(dist.size());
  ringmm::Context ctx;  // automatic backend: the GPU when there is one
  for (int step = 1; step < n - 1; step *= 2) {
    ringmm::gemm<S>(ctx, ringmm::Op::N, ringmm::row_major<const float>(dist.data(), n, n), ringmm::Op::N,
                    ringmm::row_major<const float>(dist.data(), n, n), ringmm::row_major(next.data(), n, n));
    dist.swap(next);
  }
  std::printf("shortest distances from vertex 0:");
  for (ringmm::index_t j = 0; j < n; ++j) std::printf(" %g", dist[j]);
  std::printf("\n");
  return dist[4] == 20.0f ? 0 : 1;  // 0 → 2 → 5 → 4
}
