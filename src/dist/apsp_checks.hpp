// What dist::apsp does alike wherever the blocks live (host matrices: apsp.cpp; device-resident
// ones: apsp_devices.cpp): the checks of a call, where a round's vertices lie, the accounting of
// its broadcasts, and the reports of a refused weight and of cycles. Each check ends with every
// rank throwing the same error or none.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "fw_host.hpp"
#include "mpi_util.hpp"
#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// Agreement on the parameters, both matrices against the grid (and `local_problem`, a rank's own
// complaint), then shapes and the block. `call` names the call in disagreement messages.
template <class T>
void check_apsp(const Grid& grid, const char* call, const DistLayout& dist, const DistLayout& next, const ApspOptions& apsp,
                const Options& options, std::optional<Error> local_problem = std::nullopt) {
  check_agreement(grid.comm(),
                  {{"type", type_fingerprint<T>(), type_name<T>()},
                   {"longest", apsp.longest},
                   {"block", apsp.block},
                   {"grid rows", grid.rows()},
                   {"grid cols", grid.cols()},
                   {"dist.rows", dist.rows()},
                   {"dist.cols", dist.cols()},
                   {"dist.block", dist.block()},
                   {"next.rows", next.rows()},
                   {"next.cols", next.cols()},
                   {"next.block", next.block()},
                   {"variant", std::int64_t(options.variant), std::string(to_string(options.variant))},
                   {"backend", std::int64_t(options.context.backend), std::string(to_string(options.context.backend))}},
                  call);
  std::optional<Error> problem;
  if (!dist.fits(grid)) problem = Error(Errc::invalid_argument, "dist", "matrix was built for another process grid");
  else if (!next.fits(grid)) problem = Error(Errc::invalid_argument, "next", "matrix was built for another process grid");
  else problem = std::move(local_problem);
  throw_if_any(grid.comm(), problem);

  // Agreed values: every rank reaches the same verdict.
  const index_t n = dist.rows(), nb = dist.block();
  const auto shape = [](const DistLayout& m) { return std::to_string(m.rows()) + "x" + std::to_string(m.cols()); };
  if (dist.cols() != n) throw Error(Errc::dimension_mismatch, "dist", "an adjacency matrix must be square, got " + shape(dist));
  if (next.rows() != n || next.cols() != n)
    throw Error(Errc::dimension_mismatch, "next", "is " + shape(next) + " but dist is " + shape(dist));
  if (next.block() != nb)
    throw Error(Errc::invalid_argument, "next", "block size " + std::to_string(next.block()) + " differs from dist's " +
                                                    std::to_string(nb));
  if (n > std::numeric_limits<std::int32_t>::max())
    throw Error(Errc::unsupported, "dist", std::to_string(n) + " vertices do not fit the int32 successor matrix");
  if (apsp.block != 0 && apsp.block != nb)
    throw Error(Errc::invalid_argument, "block",
                "the Floyd-Warshall block (" + std::to_string(apsp.block) + ") must be 0 or the layout's block size (" +
                    std::to_string(nb) + "), so that each round's panels live on one process row and column");
  if (options.variant == Variant::ring)
    throw Error(Errc::unsupported, "variant", "dist::apsp broadcasts its panels; the ring variant is not implemented");
}

// Where round r's vertices K = [k0, k0 + kb) lie, seen from this rank.
struct RoundPlace {
  index_t k0 = 0, kb = 0;
  int row_owner = 0, col_owner = 0;  // the process row holding D[K,:], the process column holding D[:,K]
  bool in_row = false, in_col = false;
  index_t row0 = 0, col0 = 0;  // K's first local row and column, on the ranks that hold them
};
inline RoundPlace round_place(const Grid& grid, const DistLayout& dist, index_t r) {
  RoundPlace p;
  p.k0 = r * dist.block();
  p.kb = std::min(dist.block(), dist.rows() - p.k0);
  p.row_owner = dist.row_map().owner(p.k0);
  p.col_owner = dist.col_map().owner(p.k0);
  p.in_row = grid.row() == p.row_owner;
  p.in_col = grid.col() == p.col_owner;
  p.row0 = dist.row_map().to_local(p.k0);
  p.col0 = dist.col_map().to_local(p.k0);
  return p;
}

// A broadcast of `bytes` over a group of `size` ranks, counted as SUMMA counts its panels: the root
// is charged the size − 1 copies of a flat broadcast, every other rank what it receives.
inline void count_broadcast(Stats& stats, std::uint64_t bytes, int size, bool root) {
  if (size == 1) return;
  if (root) stats.bytes_sent += std::uint64_t(size - 1) * bytes;
  else stats.bytes_received += bytes;
}

// `first`: this rank's smallest row-major position (i·n + j) of a refused weight, or int64 max.
// The smallest over all ranks is thrown on every rank, with its value, which `read_local(i, j)`
// returns on the rank that owns (i, j).
template <class T, class ReadLocal>
void refuse_first_weight(const Grid& grid, const DistLayout& dist, std::int64_t first, ReadLocal&& read_local) {
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT64_T, MPI_MIN, grid.comm());
  if (first == std::numeric_limits<std::int64_t>::max()) return;
  const index_t i = first / dist.cols(), j = first % dist.cols();
  const int owner = grid.rank_of(dist.row_map().owner(i), dist.col_map().owner(j));
  T w{};
  if (grid.rank() == owner) w = read_local(i, j);
  MPI_Bcast(&w, int(sizeof(T)), MPI_BYTE, owner, grid.comm());
  throw graph::refused_weight_error(i, j, w);
}

// `mine`: the vertices whose diagonal entry this rank holds and which did not end at 0 (they lie
// on a cycle of the wrong sign). Gathered from every rank; every rank throws the same CycleError.
inline void report_cycles(const Grid& grid, const std::vector<std::int64_t>& mine, bool longest) {
  int count = int(mine.size());
  std::vector<int> counts(std::size_t(grid.size())), offsets(std::size_t(grid.size()));
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, grid.comm());
  int total = 0;
  for (int r = 0; r < grid.size(); ++r) offsets[r] = total, total += counts[r];
  if (total == 0) return;
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), offsets.data(), MPI_INT64_T, grid.comm());
  std::sort(all.begin(), all.end());
  throw CycleError(longest, std::vector<index_t>(all.begin(), all.end()));
}

}  // namespace ringmm::dist::detail
