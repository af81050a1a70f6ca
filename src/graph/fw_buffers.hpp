// The working set of blocked Floyd–Warshall (src/graph/apsp.cpp) and the CUDA launchers of its
// small steps (apsp_cuda.cu). Host and device runs use the same layout, so one driver serves both.
#pragma once

#include <cstdint>

#include "ringmm/types.hpp"

namespace ringmm::graph {

template <class T> struct FwBuffers {
  index_t n = 0, block = 0;  // vertices; vertices per round (the panels' width b)
  index_t sub_block = 0;     // vertices per sub-block of a round's column strip (s ≤ b)
  bool longest = false;      // max-plus instead of min-plus
  T* dist = nullptr;         // n×n, row stride ld_dist
  index_t ld_dist = 0;
  std::int32_t* next = nullptr;  // n×n, row stride ld_next
  index_t ld_next = 0;
  T* col = nullptr;                   // n×b copy of columns of dist: the strip dist[:, K] or a sub-block's
  std::int32_t* next_col = nullptr;   // n×b copy of the same columns of next
  T* row = nullptr;                   // b×n copy of rows of dist: the row panel dist[K, :] or dist[Ks, K]
  std::int32_t* k_col = nullptr;      // n×b winners of the strip's products (−1 = kept)
  std::int32_t* k_all = nullptr;      // n×n winners of the full product (−1 = kept)
  T* snapshot = nullptr;              // s×s: row k of a sub-block's diagonal as it stood at iteration k
};

// A term improves on acc: strictly smaller (shortest) or larger (longest); NaN never does.
template <class T> RINGMM_HD bool improves(T term, T acc, bool longest) { return longest ? term > acc : term < acc; }

#if defined(RINGMM_APSP_CUDA)
// The largest sub-block the CUDA diagonal kernel closes in shared memory (distances and successors:
// 192 KiB for f64), and the relax kernel's snapshot (128 KiB for f64).
inline constexpr index_t cuda_sub_block = 128;

// The CUDA steps, each launched on `stream` (a cudaStream_t) without synchronising.
// prepare: +∞ → 0̄, diagonal, initial successors; the row-major position of the first NaN or
// refused weight goes to *bad (an atomic minimum; initialise it to ~0).
template <class T> void cuda_prepare(const FwBuffers<T>& b, unsigned long long* bad, void* stream);
// Steps a and b of a round (apsp.cpp) on a sub-block of sb ≤ cuda_sub_block vertices, with
// fw_host.hpp's arguments (host_diagonal, host_relax; the snapshot in device memory): the
// single-GPU solver passes its whole matrix, the distributed one (src/dist) a rank's blocks.
template <class T>
void cuda_diagonal(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t sb, bool longest, T* snapshot,
                   void* stream);
template <class T>
void cuda_relax(T* dist, index_t ld_dist, std::int32_t* next, index_t ld_next, index_t rows, index_t sb,
                const T* snapshot, bool longest, index_t skip, void* stream);
// dist and next's columns c0 … c0+width−1 into col and next_col (row stride b.block); dist's rows
// r0 … r0+rows−1, columns c0 … c0+cols−1, into row (row stride cols).
template <class T> void cuda_copy_columns(const FwBuffers<T>& b, index_t c0, index_t width, void* stream);
template <class T>
void cuda_copy_rows(const FwBuffers<T>& b, index_t r0, index_t rows, index_t c0, index_t cols, void* stream);
// next[i][j] = next_col[i][k(i, j)] where k(i, j) ≥ 0, then k(i, j) = −1; `rows` × `cols`.
void cuda_gather(std::int32_t* next, index_t ld_next, std::int32_t* k, index_t ld_k, index_t rows, index_t cols,
                 const std::int32_t* next_col, index_t ld_col, void* stream);
#endif

}  // namespace ringmm::graph
