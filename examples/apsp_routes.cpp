// All-pairs shortest paths with routes: ringmm::apsp returns the distances and the successor
// matrix, and ringmm::route reads a path out of it. Runs on the GPU when there is one.
// Build: part of the ringmm build (examples/), or against an installed ringmm with
// find_package(ringmm) and target_link_libraries(app PRIVATE ringmm::ringmm).
#include <cstdio>
#include <limits>
#include <vector>

#include "ringmm/apsp.hpp"

int main() {
  const float no = std::numeric_limits<float>::infinity();  // no edge
  const ringmm::index_t n = 6;
  // A one-way street map: the weight of edge i → j is w[i][j]; the edge 3 → 1 is a downhill shortcut.
  const std::vector<float> w = {no, 7,  9,  no, no, 14,  //
                                no, no, 10, 15, no, no,  //
                                no, no, no, 11, no, 2,   //
                                no, -2, no, no, 6,  no,  //
                                no, no, no, no, no, 9,   //
                                no, no, no, no, 9,  no};
  ringmm::Context ctx;  // automatic backend
  const auto result = ringmm::apsp<float>(ctx, ringmm::row_major(w.data(), n, n));
  const auto next = ringmm::row_major<const std::int32_t>(result.next.data(), n, n);
  for (ringmm::index_t to : {1, 4, 5}) {
    const std::vector<ringmm::index_t> path = ringmm::route(next, 0, to);
    std::printf("0 to %lld, length %g:", (long long)to, result.dist[std::size_t(to)]);
    for (ringmm::index_t v : path) std::printf(" %lld", (long long)v);
    std::printf("\n");
  }
  // Nothing leaves vertex 4 but the edge to 5, and 5 only returns to 4: vertex 0 is unreachable.
  std::printf("4 to 0: %s\n", ringmm::route(next, 4, 0).empty() ? "no path" : "a path?");
  return result.dist[1] == 7 && ringmm::route(next, 4, 0).empty() ? 0 : 1;
}
