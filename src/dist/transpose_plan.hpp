// Which blocks a distributed transpose moves, shared by dist::transpose (host memory, MPI) and its
// device twin for DeviceDistMatrix (device memory, NCCL): one walk, two transports.
#pragma once

#include <vector>

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// One block of this rank's matrix: its local origin and extent, the peer it goes to (or comes
// from) and its place in the send (receive) buffer, where it lies transposed: rows·cols elements,
// row-major as the result holds it.
struct MovedBlock {
  int peer = 0;
  index_t row0 = 0, col0 = 0, rows = 0, cols = 0;
  index_t offset = 0;
};

// Block (bi, bj) of the input, owned by (bi mod pr, bj mod pc), becomes block (bj, bi) of the
// result, owned by (bj mod pr, bi mod pc). Sends name blocks of the input, receives blocks of the
// result; sender and receiver list the blocks between them in the same order, so that each peer's
// blocks travel back to back in one message.
struct TransposePlan {
  std::vector<MovedBlock> sends, receives;
  std::vector<index_t> send_counts, send_offsets, recv_counts, recv_offsets;  // elements per peer rank
  index_t send_total = 0, recv_total = 0;
};

TransposePlan transpose_plan(const Grid& grid, const DistLayout& in);

}  // namespace ringmm::dist::detail
