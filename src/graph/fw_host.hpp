// The pieces of blocked Floyd–Warshall (src/graph/apsp.cpp) that the distributed solver
// (src/dist/apsp.cpp) runs on its own blocks, so that both give the same results bit for bit:
// the weight policy, the initial distances and successors, the column strip's steps and the
// successor gather.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "fw_buffers.hpp"
#include "ringmm/context.hpp"
#include "ringmm/error.hpp"

namespace ringmm::graph {

// 0̄ of the semiring: +∞ for shortest paths (min-plus), −∞ for longest (max-plus).
template <class T> constexpr T zero_of(bool longest) {
  return longest ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
}

// NaN and −∞ are refused as weights (+∞ means "no edge").
template <class T> bool refused_weight(T w) { return std::isnan(w) || w == -std::numeric_limits<T>::infinity(); }

// The error for a refused weight at (i, j), the same from every backend and from every rank.
template <class T> Error refused_weight_error(index_t i, index_t j, T w) {
  const std::string shown = std::isnan(w) ? "NaN" : std::isinf(w) ? (w > 0 ? "+inf" : "-inf") : std::to_string(double(w));
  return Error(Errc::value_out_of_range, "weights",
               "weight (" + std::to_string(i) + ", " + std::to_string(j) + ") is " + shown +
                   " (a weight is a number; +inf means no edge)");
}

// Entry (i, j) before the first round, from an accepted weight w in `dist`: +∞ becomes 0̄, the
// diagonal starts at 1̄ = 0 unless a self-loop makes a cycle of the wrong sign; the successor is
// j where there is an edge, i on the diagonal and −1 elsewhere.
template <class T> void initial_entry(index_t i, index_t j, bool longest, T& dist, std::int32_t& next) {
  const T none = zero_of<T>(longest);
  if (std::isinf(dist)) dist = none;
  if (i == j) dist = improves(dist, T(0), longest) ? dist : T(0);
  next = i == j ? std::int32_t(i) : (dist == none ? -1 : std::int32_t(j));
}

// The sub-block size of the host's column strips: the CPU backend's and the distributed solver's,
// which must agree for their results to agree bit for bit.
inline constexpr index_t host_sub_block = 64;

// Step a of a round (src/graph/apsp.cpp): classic Floyd–Warshall inside the sb × sb diagonal
// sub-block `dist` (row stride ld_dist), next[i][j] ← next[i][k] on each strict improvement (its
// entries are global vertices), and row k as it stood at iteration k into snapshot[k][·] (sb × sb).
template <class T>
void host_diagonal(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t sb, bool longest, T* snapshot) {
  for (index_t k = 0; k < sb; ++k) {
    std::copy_n(dist + k * ld_dist, sb, snapshot + k * sb);
    for (index_t i = 0; i < sb; ++i) {
      const T dik = dist[i * ld_dist + k];
      const std::int32_t via = next[i * ld_next + k];
      for (index_t j = 0; j < sb; ++j) {
        const T term = dik + snapshot[k * sb + j];
        if (improves(term, dist[i * ld_dist + j], longest)) {
          dist[i * ld_dist + j] = term;
          next[i * ld_next + j] = via;
        }
      }
    }
  }
}

// Step b: rows 0 … rows−1 of the strip `dist` / `next` (sb columns: the sub-block's), except the
// sub-block's own rows skip … skip+sb−1 (none when skip < 0), relaxed in classic order through the
// snapshot: for k = 0 … sb−1, d[i][j] ← d[i][k] + snapshot[k][j] on a strict improvement.
template <class T>
void host_relax(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t rows, index_t sb,
                const T* snapshot, bool longest, index_t skip, int threads);

// The successor gather after an argmax product: next[i][j] ← next_col[i][k(i, j)] wherever
// k(i, j) ≥ 0 (the winning column of the panel), which is then reset to −1. `rows` × `cols`.
void host_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, int threads);

}  // namespace ringmm::graph
