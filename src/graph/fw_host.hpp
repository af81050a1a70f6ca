// The pieces of blocked Floyd–Warshall (src/graph/apsp.cpp) that the distributed solver
// (src/dist/apsp.cpp) runs on its own blocks, so that both give the same results bit for bit:
// the weight policy, the initial distances and successors, phase 1 and the successor gather.
#pragma once

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

// Phase 1 on the host: closes the kb × kb diagonal block `dist` (row stride ld_dist) in place,
// next[i][j] ← next[i][k] on each strict improvement (its entries are global vertices). Blocks
// above 64 vertices are closed by blocked Floyd–Warshall on sub-blocks, with products on the CPU
// (ctx.cpu_threads threads). T is float or double.
template <class T>
void close_diagonal_on_host(const Context& ctx, T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next,
                            index_t kb, bool longest);

// The successor gather after an argmax product: next[i][j] ← next_col[i][k(i, j)] wherever
// k(i, j) ≥ 0 (the winning column of the panel), which is then reset to −1. `rows` × `cols`.
void host_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, int threads);

}  // namespace ringmm::graph
