// Shared by the CPU and CUDA tests of ringmm::apsp: random graphs, an independent O(n³)
// Floyd–Warshall in double, and a check that every route is a walk of real edges whose length is
// the reported distance (rather than comparing successor matrices, which ties make ambiguous).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ringmm/apsp.hpp"

namespace ringmm::testing {

constexpr double inf = std::numeric_limits<double>::infinity();

struct GraphSpec {
  index_t n = 0;
  double density = 0.3;      // probability of each edge i → j, i ≠ j
  int max_weight = 9;        // integer weights 1..max_weight: many equal-length alternatives
  bool negative = false;     // shift weights by integer potentials: negative edges, no negative cycle
  index_t isolated = 0;      // this many vertices (the last ones) get no edges at all
  bool dag = false;          // edges only forward in a random topological order
  double zeros = 0;          // the fraction of edges that weigh 0 (before potentials): zero-weight cycles
  bool undirected = false;   // each edge both ways with the same base weight: every 0 is a 2-cycle
  std::uint64_t seed = 1;
};

// Row-major n×n weights, +inf where there is no edge; the diagonal is +inf (no self-loops).
inline std::vector<double> random_graph(const GraphSpec& s) {
  std::mt19937_64 rng(s.seed);
  std::uniform_real_distribution<double> coin(0, 1);
  std::uniform_int_distribution<int> weight(1, s.max_weight), potential(-20, 20);
  std::vector<index_t> order(std::size_t(s.n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<index_t> rank(std::size_t(s.n));
  for (index_t r = 0; r < s.n; ++r) rank[order[r]] = r;
  std::vector<int> p(std::size_t(s.n));
  for (auto& x : p) x = s.negative ? potential(rng) : 0;
  std::vector<double> w(std::size_t(s.n * s.n), inf);
  for (index_t i = 0; i < s.n - s.isolated; ++i)
    for (index_t j = s.undirected ? i + 1 : 0; j < s.n - s.isolated; ++j) {
      if (i == j || coin(rng) >= s.density) continue;
      if (s.dag && rank[i] > rank[j]) continue;
      const bool zero = coin(rng) < s.zeros;
      const int base = zero ? 0 : s.dag && s.negative ? weight(rng) - s.max_weight / 2 : weight(rng);
      w[std::size_t(i * s.n + j)] = double(base + p[i] - p[j]);
      if (s.undirected) w[std::size_t(j * s.n + i)] = double(base + p[j] - p[i]);
    }
  return w;
}

// Floyd–Warshall in double, written plainly: min-plus, or max-plus with longest (−inf = no path).
inline std::vector<double> reference_distances(const std::vector<double>& w, index_t n, bool longest = false) {
  const double none = longest ? -inf : inf;
  std::vector<double> d(w);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      double& x = d[std::size_t(i * n + j)];
      if (x == inf) x = none;
      if (i == j) x = longest ? std::max(x, 0.0) : std::min(x, 0.0);
    }
  for (index_t k = 0; k < n; ++k)
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j) {
        const double via = d[std::size_t(i * n + k)] + d[std::size_t(k * n + j)];
        double& x = d[std::size_t(i * n + j)];
        if (longest ? via > x : via < x) x = via;
      }
  return d;
}

// Distances equal the reference exactly (integer weights), unreachable pairs hold 0̄ and −1, and
// every route, walked through the successors, is a path of edges of `w` from i to j, of at most
// n − 1 edges, whose length is the distance.
template <class T>
void expect_solution(const std::vector<double>& w, index_t n, const std::vector<T>& dist,
                     const std::vector<std::int32_t>& next, bool longest, const std::string& label) {
  const std::vector<double> expected = reference_distances(w, n, longest);
  const double none = longest ? -inf : inf;
  const MatrixView<const std::int32_t> nx{next.data(), n, n, std::max<index_t>(n, 1), Layout::row_major};
  int failures = 0;
  for (index_t i = 0; i < n && failures < 5; ++i)
    for (index_t j = 0; j < n && failures < 5; ++j) {
      const std::size_t at = std::size_t(i * n + j);
      const std::string where = label + " (" + std::to_string(i) + ", " + std::to_string(j) + ")";
      if (double(dist[at]) != expected[at]) {
        ADD_FAILURE() << where << ": distance " << dist[at] << ", expected " << expected[at];
        ++failures;
        continue;
      }
      if (expected[at] == none) {
        if (next[at] != -1) ADD_FAILURE() << where << ": unreachable but next = " << next[at], ++failures;
        continue;
      }
      std::vector<index_t> path;
      try {
        path = route(nx, i, j);
      } catch (const Error& e) {
        ADD_FAILURE() << where << ": " << e.what();
        ++failures;
        continue;
      }
      if (i == j) {
        if (path != std::vector<index_t>{i}) ADD_FAILURE() << where << ": route from a vertex to itself is not {i}", ++failures;
        continue;
      }
      double length = 0;
      bool edges_ok = path.size() >= 2 && index_t(path.size()) <= n && path.front() == i && path.back() == j;
      for (std::size_t s = 0; edges_ok && s + 1 < path.size(); ++s) {
        const double e = w[std::size_t(path[s] * n + path[s + 1])];
        edges_ok = path[s] != path[s + 1] && e != inf;
        length += e;
      }
      if (!edges_ok || length != expected[at]) {
        std::string hops;
        for (index_t v : path) hops += std::to_string(v) + " ";
        ADD_FAILURE() << where << ": route " << hops << (edges_ok ? "has length " + std::to_string(length) : "uses a missing edge")
                      << ", expected length " << expected[at];
        ++failures;
      }
    }
}

template <class T> std::vector<T> converted(const std::vector<double>& w) { return std::vector<T>(w.begin(), w.end()); }

// Distances and successors equal `want`'s (another solver's) bit for bit; the first differences
// are reported, `other` naming that solver.
template <class T>
void expect_same_bits(const ApspResult<T>& want, const std::vector<T>& dist, const std::vector<std::int32_t>& next, index_t n,
                      const std::string& label, const char* other) {
  int shown = 0;
  for (std::size_t at = 0; at < want.dist.size() && shown < 5; ++at)
    if (std::memcmp(&want.dist[at], &dist[at], sizeof(T)) != 0 || want.next[at] != next[at]) {
      ADD_FAILURE() << label << " (" << at / n << ", " << at % n << "): dist " << dist[at] << " next " << next[at] << ", "
                    << other << ": " << want.dist[at] << " next " << want.next[at];
      ++shown;
    }
}

}  // namespace ringmm::testing
