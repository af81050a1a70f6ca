// SUMMA: agreement, argument and value checks, then the host path (panels moved by MPI, local
// multiplies by ringmm::gemm on the CPU) or the device path (summa_nccl.cpp).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "mpi_util.hpp"
#include "ringmm/detail/input_check.hpp"
#include "ringmm/dist.hpp"
#include "ringmm/gemm.hpp"
#include "ringmm/semiring.hpp"
#include "summa_checks.hpp"
#include "summa_device.hpp"
#include "summa_plan.hpp"

namespace ringmm::dist {

namespace {

// One panel's journey for one step: a broadcast (one request), or a ring hop (receive from the
// previous rank, then forward to the next one as soon as the receive completes).
struct Transfer {
  MPI_Request incoming = MPI_REQUEST_NULL;  // Ibcast or Irecv
  MPI_Request outgoing = MPI_REQUEST_NULL;  // ring Isend
  bool forward_pending = false;
  void* buffer = nullptr;
  int count = 0;
  int next = 0, tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype elem = MPI_DATATYPE_NULL;

  void forward() {
    MPI_Isend(buffer, count, elem, next, tag, comm, &outgoing);
    forward_pending = false;
  }
  // Called between chunks of the local multiply: MPI progresses nonblocking calls only inside MPI.
  void progress() {
    int done = 0;
    if (incoming != MPI_REQUEST_NULL) MPI_Test(&incoming, &done, MPI_STATUS_IGNORE);
    if (forward_pending && incoming == MPI_REQUEST_NULL) forward();
    if (outgoing != MPI_REQUEST_NULL) MPI_Test(&outgoing, &done, MPI_STATUS_IGNORE);
  }
  void finish_incoming() {
    MPI_Wait(&incoming, MPI_STATUS_IGNORE);
    if (forward_pending) forward();
  }
  void finish_outgoing() { MPI_Wait(&outgoing, MPI_STATUS_IGNORE); }
};

template <class S> class HostSumma {
  using T = typename S::value_type;
  // Partial results can leave the accepted input domain, so they are never fed back as C.
  static constexpr bool accumulate_apart = semiring_traits<S>::checks_inputs;

 public:
  // k_star: the argmax's index matrix (gemm_argmax), null for plain products. The local
  // multiplies run on the CPU (the device path is summa_nccl.cpp).
  HostSumma(const Grid& grid, const detail::Plan& plan, const DistMatrix<T>& a, const DistMatrix<T>& b,
            DistMatrix<T>& c, T alpha, T beta, const Options& options, DistMatrix<std::int32_t>* k_star = nullptr)
      : grid_(grid), plan_(plan), a_(a), b_(b), c_(c), k_star_(k_star), alpha_(alpha), beta_(beta), elem_(sizeof(T)) {
    ctx_ = options.context;
    ctx_.backend = Backend::cpu;
    for (int slot = 0; slot < 2; ++slot) {
      a_panel_[slot].resize(std::size_t(std::max<index_t>(1, plan.m_local * plan.nb)));
      b_panel_[slot].resize(std::size_t(std::max<index_t>(1, plan.nb * plan.n_local)));
    }
    if (apart_) {
      acc_.resize(std::size_t(std::max<index_t>(1, plan.m_local * plan.n_local)));
      part_.resize(acc_.size());
      if (k_star_) acc_k_.resize(acc_.size()), part_k_.resize(acc_.size());
    }
  }

  void run(Stats& stats) {
    const index_t steps = plan_.steps();
    post(0, stats);
    for (index_t s = 0; s < steps; ++s) {
      const int slot = int(s % 2), next = 1 - slot;
      if (s + 1 < steps) {
        // The next slot held step s − 1: its forwards must be out before it is refilled.
        a_move_[next].finish_outgoing();
        b_move_[next].finish_outgoing();
        post(s + 1, stats);
      }
      a_move_[slot].finish_incoming();
      b_move_[slot].finish_incoming();
      multiply(s);
    }
    for (int slot = 0; slot < 2; ++slot) {
      a_move_[slot].finish_outgoing();
      b_move_[slot].finish_outgoing();
    }
    if (apart_) finish_epilogue();
    stats.steps = steps;
  }

 private:
  // Starts moving the panels of step s into slot s mod 2: the owner packs, then broadcast or ring.
  void post(index_t s, Stats& stats) {
    const detail::Step st = plan_.step(s);
    const int slot = int(s % 2);
    const detail::Traffic traffic = detail::step_traffic(plan_, st, sizeof(T));
    stats.bytes_sent += traffic.sent;
    stats.bytes_received += traffic.received;
    const int tag = int(s % 30000);

    T* a_buf = a_panel_[slot].data();
    if (plan_.my_col == st.a_owner) {
      const MatrixView<const T> src = a_.local();
      for (index_t i = 0; i < plan_.m_local; ++i)
        std::memcpy(a_buf + i * st.width, &src(i, st.a_offset), std::size_t(st.width) * sizeof(T));
    }
    start_move(a_move_[slot], a_buf, plan_.m_local * st.width, st.a_owner, plan_.my_col, plan_.left(), plan_.right(),
               plan_.pc, grid_.row_comm(), tag);

    T* b_buf = b_panel_[slot].data();
    if (plan_.my_row == st.b_owner && st.width * plan_.n_local > 0)
      std::memcpy(b_buf, &b_.local()(st.b_offset, 0), std::size_t(st.width * plan_.n_local) * sizeof(T));
    start_move(b_move_[slot], b_buf, st.width * plan_.n_local, st.b_owner, plan_.my_row, plan_.up(), plan_.down(),
               plan_.pr, grid_.col_comm(), tag);
  }

  void start_move(Transfer& t, T* buf, index_t count, int owner, int me, int prev, int next, int group,
                  MPI_Comm comm, int tag) {
    t = Transfer{};
    if (group == 1 || count == 0) return;  // count is the same on every rank of the group
    t.buffer = buf;
    t.count = int(count);
    t.comm = comm;
    t.elem = elem_.get();
    t.next = next;
    t.tag = tag;
    if (plan_.variant == Variant::broadcast) {
      MPI_Ibcast(buf, t.count, t.elem, owner, comm, &t.incoming);
    } else if (me == owner) {
      t.forward();
    } else {
      MPI_Irecv(buf, t.count, t.elem, prev, tag, comm, &t.incoming);
      t.forward_pending = next != owner;
    }
  }

  // C (or the separate accumulator) ⊕= A panel ⊗ B panel, in row chunks so that the transfers of
  // the next step progress while this one computes.
  void multiply(index_t s) {
    const detail::Step st = plan_.step(s);
    const int slot = int(s % 2);
    const index_t m = plan_.m_local, n = plan_.n_local;
    if (m == 0 || n == 0) return;
    const index_t chunk = std::max<index_t>(1, (m + chunks_per_step - 1) / chunks_per_step);
    const MatrixView<const T> b_panel{b_panel_[slot].data(), st.width, n, std::max<index_t>(1, n), Layout::row_major};
    for (index_t i0 = 0; i0 < m; i0 += chunk) {
      const index_t rows = std::min(chunk, m - i0);
      const MatrixView<const T> a_panel{a_panel_[slot].data() + i0 * st.width, rows, st.width,
                                        std::max<index_t>(1, st.width), Layout::row_major};
      if (apart_) {
        // Integer tropical: partial results can leave the accepted input range, so each step's
        // product goes to `part` and is ⊕-ed into `acc`; α and β are applied once at the end.
        // Argmax products too, so that the winner is chosen among unscaled terms, as on one node
        // (an α of max-min could otherwise turn a later winner into a tie).
        T* target = (s == 0 ? acc_.data() : part_.data()) + i0 * n;
        const MatrixView<T> out{target, rows, n, n, Layout::row_major};
        if (k_star_) {
          if constexpr (semiring_traits<S>::selects) {
            std::int32_t* target_k = (s == 0 ? acc_k_.data() : part_k_.data()) + i0 * n;
            gemm_argmax<S>(ctx_, Op::N, a_panel, Op::N, b_panel, out, MatrixView<std::int32_t>{target_k, rows, n, n, Layout::row_major},
                           S::one(), S::zero(), s * plan_.nb);
            // A later panel's term replaces the carried one only when strictly better.
            if (s > 0)
              for (index_t e = 0; e < rows * n; ++e) {
                const std::size_t at = std::size_t(i0 * n + e);
                if (semiring_traits<S>::better(target[e], acc_[at])) acc_[at] = target[e], acc_k_[at] = target_k[e];
              }
          }
        } else {
          gemm<S>(ctx_, Op::N, a_panel, Op::N, b_panel, out, S::one(), S::zero());
          if (s > 0)
            for (index_t e = 0; e < rows * n; ++e) acc_[std::size_t(i0 * n + e)] = S::add(acc_[std::size_t(i0 * n + e)], target[e]);
        }
      } else {
        // α ⊗ (x ⊕ y) = α ⊗ x ⊕ α ⊗ y, so each step adds α ⊗ (its product); β applies at step 0.
        MatrixView<T> c_rows{&c_.local()(i0, 0), rows, n, c_.ld(), Layout::row_major};
        gemm<S>(ctx_, Op::N, a_panel, Op::N, b_panel, c_rows, alpha_, s == 0 ? beta_ : S::one());
      }
      for (Transfer* t : {&a_move_[0], &a_move_[1], &b_move_[0], &b_move_[1]}) t->progress();
    }
  }

  void finish_epilogue() {
    using traits = semiring_traits<S>;
    const MatrixView<T> c = c_.local();
    const bool reads_c = !(beta_ == S::zero());
    for (index_t i = 0; i < c.rows; ++i)
      for (index_t j = 0; j < c.cols; ++j) {
        const std::size_t at = std::size_t(i * c.cols + j);
        if (!k_star_) {
          c(i, j) = traits::epilogue(alpha_, acc_[at], beta_, &c(i, j));
          continue;
        }
        if constexpr (traits::selects) {
          // gemm_argmax's epilogue: −1 for 0̄, and β ⊗ C keeps its index where it wins or ties.
          std::int32_t& k = k_star_->local()(i, j);
          T result = traits::scale(alpha_, acc_[at]);
          std::int32_t index = result == S::zero() ? -1 : acc_k_[at];
          if (reads_c) {
            const T incoming = traits::scale(beta_, c(i, j));
            if (traits::keeps_incoming(result, incoming)) index = k;
            result = S::add(result, incoming);
          }
          c(i, j) = result;
          k = index;
        }
      }
  }

  static constexpr index_t chunks_per_step = 4;
  const Grid& grid_;
  const detail::Plan& plan_;
  const DistMatrix<T>& a_;
  const DistMatrix<T>& b_;
  DistMatrix<T>& c_;
  DistMatrix<std::int32_t>* k_star_;
  const bool apart_ = accumulate_apart || k_star_ != nullptr;
  T alpha_, beta_;
  Context ctx_;
  detail::ElementType elem_;
  std::vector<T> a_panel_[2], b_panel_[2], acc_, part_;
  std::vector<std::int32_t> acc_k_, part_k_;  // the argmax's indexes beside acc_ and part_
  Transfer a_move_[2], b_move_[2];
};

// Which backend runs the local multiplies, decided alike on every rank.
Backend agree_on_backend(const Grid& grid, Backend requested) {
  int has_device = requested == Backend::cpu ? 0 : int(cuda_device_available());
  MPI_Allreduce(MPI_IN_PLACE, &has_device, 1, MPI_INT, MPI_MIN, grid.comm());
#if RINGMM_HAVE_NCCL
  constexpr bool nccl = true;
#else
  constexpr bool nccl = false;
#endif
  if (requested == Backend::cuda) {
    if (!nccl)
      throw Error(Errc::backend_unavailable, "backend",
                  "the distributed cuda path needs NCCL, which this build of ringmm::dist lacks");
    if (!has_device)
      throw Error(Errc::backend_unavailable, "backend", "cuda requested but at least one rank has no CUDA device");
    return Backend::cuda;
  }
  return nccl && has_device ? Backend::cuda : Backend::cpu;
}

}  // namespace

namespace {

// gemm and gemm_argmax (k_star not null): one collective call.
template <class S>
Stats summa(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
            const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
            DistMatrix<std::int32_t>* k_star, typename S::value_type alpha, typename S::value_type beta,
            const Options& options) {
  using T = typename S::value_type;
  const char* call = k_star ? "dist::gemm_argmax" : "dist::gemm";
  // 1. Agreement, grids and shapes: every rank reaches the same verdict before any data moves.
  const index_t m = c.rows(), n = c.cols();
  const index_t k = detail::check_product<S>(grid, call, op_a, a, op_b, b, c, k_star, alpha, beta, options);

  // 2. Values and backend, agreed.
  detail::check_values<S>(grid, a.local(), b.local(), MatrixView<const T>(c.local()), alpha, beta, k,
                          [](auto& operand) { ringmm::detail::scan_on_host(operand); },
                          [](const auto* address) { return *address; });
  Stats stats;
  stats.backend = agree_on_backend(grid, options.context.backend);
  stats.updates = double(m) * double(n) * double(k);
  stats.variant = resolve_variant(options.variant, grid.rows(), grid.cols());

  if (k == 0) {  // no panels: C ← α ⊗ 0̄ ⊕ β ⊗ C; K* keeps its index where β ⊗ C wins, else −1
    using traits = semiring_traits<S>;
    const MatrixView<T> cl = c.local();
    for (index_t i = 0; i < cl.rows; ++i)
      for (index_t j = 0; j < cl.cols; ++j) {
        const T result = traits::epilogue(alpha, S::zero(), beta, &cl(i, j));
        if constexpr (traits::selects) {
          if (k_star) {
            // gemm_argmax's rule: the incoming index stays where β ⊗ C wins or ties, else −1.
            const bool keeps = !(beta == S::zero()) &&
                               traits::keeps_incoming(traits::scale(alpha, S::zero()), traits::scale(beta, cl(i, j)));
            if (!keeps) k_star->local()(i, j) = -1;
          }
        }
        cl(i, j) = result;
      }
    return stats;
  }

#if RINGMM_HAVE_NCCL
  // The device path of host matrices: to the devices, the device-resident SUMMA, C (and K*) back.
  if (stats.backend == Backend::cuda) {
    detail::summa_via_devices<S>(grid, op_a, a, op_b, b, c, k_star, alpha, beta, options, stats);
    return stats;
  }
#endif

  // 3. Transposed operands are redistributed once (blocks move to their transposed owners).
  std::optional<DistMatrix<T>> a_t, b_t;
  if (op_a == Op::T) a_t = transpose(grid, a, &stats.bytes_sent);
  if (op_b == Op::T) b_t = transpose(grid, b, &stats.bytes_sent);
  const DistMatrix<T>& a_n = a_t ? *a_t : a;
  const DistMatrix<T>& b_n = b_t ? *b_t : b;

  // Host panels, local products on the CPU.
  const detail::Plan plan = detail::make_plan(grid, c, k, options.variant);
  HostSumma<S>(grid, plan, a_n, b_n, c, alpha, beta, options, k_star).run(stats);
  return stats;
}

}  // namespace

template <class S>
Stats gemm(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
           const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
           typename S::value_type alpha, typename S::value_type beta, const Options& options) {
  return summa<S>(grid, op_a, a, op_b, b, c, nullptr, alpha, beta, options);
}

template <class S>
Stats gemm_argmax(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
                  const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                  DistMatrix<std::int32_t>& k_star, typename S::value_type alpha, typename S::value_type beta,
                  const Options& options) {
  if constexpr (!semiring_traits<S>::selects)
    throw ringmm::detail::argmax_needs_selection();
  else
    return summa<S>(grid, op_a, a, op_b, b, c, &k_star, alpha, beta, options);
}

#define RINGMM_DIST_GEMM(S)                                                                                        \
  template Stats gemm<S>(const Grid&, Op, const DistMatrix<typename S::value_type>&, Op,                             \
                         const DistMatrix<typename S::value_type>&, DistMatrix<typename S::value_type>&,             \
                         typename S::value_type, typename S::value_type, const Options&);                  \
  template Stats gemm_argmax<S>(const Grid&, Op, const DistMatrix<typename S::value_type>&, Op,                      \
                                const DistMatrix<typename S::value_type>&, DistMatrix<typename S::value_type>&,      \
                                DistMatrix<std::int32_t>&, typename S::value_type, typename S::value_type,           \
                                const Options&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_DIST_GEMM(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace ringmm::dist
