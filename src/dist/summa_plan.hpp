// The SUMMA schedule shared by the host (MPI) and device (NCCL) paths.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// Step s multiplies the s-th k block: columns [s·nb, s·nb + width) of A (M×K, after any
// transpose) and the same rows of B (K×N). The A panel starts at process column s mod pc, at local
// column (s / pc)·nb; the B panel at process row s mod pr, at local row (s / pr)·nb.
struct Step {
  index_t width = 0;
  int a_owner = 0;  // process column holding the A panel
  index_t a_offset = 0;
  int b_owner = 0;  // process row holding the B panel
  index_t b_offset = 0;
};

struct Plan {
  index_t m_local = 0, n_local = 0, k = 0, nb = 1;
  int pr = 1, pc = 1, my_row = 0, my_col = 0;
  Variant variant = Variant::broadcast;

  index_t steps() const { return (k + nb - 1) / nb; }
  Step step(index_t s) const {
    return {std::min(nb, k - s * nb), int(s % pc), (s / pc) * nb, int(s % pr), (s / pr) * nb};
  }
  // Ring neighbours: panels enter from the left (up) and leave to the right (down).
  int left() const { return (my_col + pc - 1) % pc; }
  int right() const { return (my_col + 1) % pc; }
  int up() const { return (my_row + pr - 1) % pr; }
  int down() const { return (my_row + 1) % pr; }
};

inline Plan make_plan(const Grid& grid, const DistLayout& c, index_t k, Variant variant) {
  Plan plan;
  plan.m_local = c.local_rows();
  plan.n_local = c.local_cols();
  plan.k = k;
  plan.nb = c.block();
  plan.pr = grid.rows();
  plan.pc = grid.cols();
  plan.my_row = grid.row();
  plan.my_col = grid.col();
  plan.variant = resolve_variant(variant, plan.pr, plan.pc);
  return plan;
}

// Panel traffic of one step for this rank, identical for host and device transports. Broadcast:
// each non-owner receives the panel once; the owner is charged the q − 1 copies a flat broadcast
// sends (MPI's tree may spread them over the group, so the mean over ranks is exact, not the split).
// Ring: exactly what this rank hands to send calls.
struct Traffic {
  std::uint64_t sent = 0, received = 0;
};
inline Traffic step_traffic(const Plan& plan, const Step& st, std::size_t elem) {
  Traffic t;
  const std::uint64_t a_bytes = std::uint64_t(plan.m_local * st.width) * elem;
  const std::uint64_t b_bytes = std::uint64_t(st.width * plan.n_local) * elem;
  auto account = [&](std::uint64_t bytes, int me, int owner, int group, int next) {
    if (group == 1) return;
    if (me != owner) t.received += bytes;
    if (plan.variant == Variant::broadcast) {
      if (me == owner) t.sent += bytes * std::uint64_t(group - 1);
    } else if (next != owner) {
      t.sent += bytes;
    }
  };
  account(a_bytes, plan.my_col, st.a_owner, plan.pc, plan.right());
  account(b_bytes, plan.my_row, st.b_owner, plan.pr, plan.down());
  return t;
}

}  // namespace ringmm::dist::detail
