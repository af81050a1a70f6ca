// All-pairs shortest paths with routes: blocked Floyd–Warshall whose block updates are min-plus
// argmax products (gemm_argmax), so that the successor matrix comes out with the distances.
//
//   dist(i, j)  the length of a shortest i→j path; 0̄ of the semiring (+∞, or −∞ with longest)
//               where j is unreachable from i; dist(i, i) = 0.
//   next(i, j)  the vertex after i on that path; −1 where j is unreachable; next(i, i) = i.
//
// Weights: +∞ means "no edge" in both modes; a self-loop counts only when it makes a cycle
// (negative for shortest paths, positive for longest). NaN and −∞ weights are refused.
// longest = true computes longest paths over max-plus: exact for DAGs, and for any graph without
// a positive cycle (then it gives the longest walks, which are paths).
// A graph with a negative cycle (a positive one with longest) throws CycleError naming the
// vertices that lie on one; nothing is returned.
//
// Backends: Backend::cpu runs the blocked CPU argmax kernel; Backend::cuda keeps everything on the
// device (one upload, one download) and runs each round's column strip as small kernels and
// products, then one n×b·b×n argmax product. Successors are taken as classic Floyd–Warshall takes
// them, so they lead to j on graphs with zero-weight cycles too. The distributed version,
// ringmm::dist::apsp (ringmm/dist.hpp), runs the same rounds on a block-cyclic matrix over MPI,
// with the panels broadcast along the process grid, and gives the CPU backend's results bit for bit.
#pragma once

#include <cstdint>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/error.hpp"
#include "ringmm/matrix.hpp"

namespace ringmm {

struct ApspOptions {
  bool longest = false;  // max-plus longest paths instead of min-plus shortest paths
  index_t block = 0;     // vertices per Floyd–Warshall block; 0 = the backend's default
};

// The default block size of a backend (what block = 0 picks).
index_t apsp_default_block(Backend backend);

template <class T> struct ApspResult {
  index_t vertices = 0;
  std::vector<T> dist;             // n×n row-major
  std::vector<std::int32_t> next;  // n×n row-major
  Backend backend = Backend::cpu;  // where it ran
  index_t block = 0;               // the block size used
};

// A negative cycle (positive with longest): vertices() lists those whose diagonal entry went
// below 0 (above with longest), that is, the vertices on a cycle of the wrong sign.
class CycleError : public Error {
 public:
  CycleError(bool longest, std::vector<index_t> vertices);
  const std::vector<index_t>& vertices() const noexcept { return vertices_; }

 private:
  std::vector<index_t> vertices_;
};

// Solves for a weight matrix held in host memory (any layout). T is float or double.
template <class T> ApspResult<T> apsp(const Context& ctx, MatrixView<const T> weights, const ApspOptions& options = {});

// In place: `dist` holds the weights on entry and the distances on return; `next` receives the
// successors. Both square, row-major, n×n; on Backend::cuda both may be device pointers (then
// nothing crosses to the host but the diagonal). After an error their contents are unspecified.
template <class T>
void apsp_in_place(const Context& ctx, MatrixView<T> dist, MatrixView<std::int32_t> next, const ApspOptions& options = {});

// The vertices of the path i → … → j read from a successor matrix (host memory): {i} when i = j,
// empty when j is unreachable. Throws invalid_argument for i or j out of range and format_error when
// the matrix does not lead from i to j in at most n steps (not a successor matrix).
std::vector<index_t> route(MatrixView<const std::int32_t> next, index_t i, index_t j);

}  // namespace ringmm
