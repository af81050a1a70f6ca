// The device path of SUMMA: one rank per GPU, local A, B, C resident on the device
// (DeviceDistMatrix), panels moved by NCCL on row and column communicators (the MPI of the GPU
// machines is not CUDA-aware), local multiplies by ringmm::gemm (gemm_argmax for the argmax
// SUMMA) on the CUDA backend. Communication for step s + 1 runs on its own stream while step s
// multiplies; events order the two streams.
// Host matrices take the same loop: to the devices, the loop, C back (summa_via_devices).
//
// The loop was tested on the H100 (1×1) and on two H200s (1×2, 2×1) while it still staged host
// matrices itself: docs/distributed.md, "GPU runs".
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "device_ops.hpp"
#include "device_support.hpp"
#include "ringmm/dist_device.hpp"
#include "ringmm/gemm.hpp"
#include "summa_checks.hpp"
#include "summa_device.hpp"
#include "summa_plan.hpp"
#include "transpose_plan.hpp"

namespace ringmm::dist {

Grid::DeviceState::~DeviceState() {
  for (ncclComm_t comm : {row, col, all, row_panels, col_panels})
    if (comm) detail::nccl().comm_destroy(comm);
  if (comm_stream) cudaStreamDestroy(comm_stream);
  if (compute_stream) cudaStreamDestroy(compute_stream);
}

namespace detail {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(Errc::device_error, what, cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw Error(Errc::device_error, what, nccl().error_string(status));
}

Grid::DeviceState& device_state(const Grid& grid) {
  if (Grid::DeviceState* known = grid.device_state()) {
    check_cuda(cudaSetDevice(known->device), "cudaSetDevice");
    return *known;
  }
  auto state = std::make_shared<Grid::DeviceState>();
  std::optional<Error> problem;
  MPI_Comm node;
  MPI_Comm_split_type(grid.comm(), MPI_COMM_TYPE_SHARED, grid.rank(), MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 0;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  cudaDeviceProp prop{};
  int devices = 0;
  try {
    std::string why;
    if (!cuda_device_available(&why))
      throw Error(Errc::backend_unavailable, "device", "rank " + std::to_string(grid.rank()) + " has no CUDA device: " + why);
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    // A launcher that gives each rank one visible GPU (per-task CUDA_VISIBLE_DEVICES) leaves device 0.
    state->device = devices == 1 ? 0 : node_rank;
    if (state->device < devices) check_cuda(cudaGetDeviceProperties(&prop, state->device), "cudaGetDeviceProperties");
  } catch (const Error& e) {
    problem = e;
  }
  // NCCL refuses two ranks on one GPU ("invalid usage"): compare the devices' UUIDs first, so
  // that a node with fewer GPUs than ranks gets an error that says so.
  std::vector<cudaUUID_t> uuids(static_cast<std::size_t>(node_size));
  MPI_Allgather(&prop.uuid, sizeof(cudaUUID_t), MPI_BYTE, uuids.data(), sizeof(cudaUUID_t), MPI_BYTE, node);
  MPI_Comm_free(&node);
  try {
    if (!problem) {
      const bool shared = std::any_of(uuids.begin(), uuids.end(), [&](const cudaUUID_t& u) {
        return &u != &uuids[std::size_t(node_rank)] && std::memcmp(&u, &prop.uuid, sizeof u) == 0;
      });
      if ((node_size > devices && devices != 1) || shared)
        throw Error(Errc::invalid_argument, "ranks",
                    std::to_string(node_size) + " ranks share a node with " + std::to_string(devices) +
                        " GPU(s) they can tell apart; the device path runs one rank per GPU");
      check_cuda(cudaSetDevice(state->device), "cudaSetDevice");
      // Communication first: an NCCL kernel queued behind a product's thread blocks would wait for
      // that product's last wave, and the panel it moves would then be late for the next product.
      int least = 0, greatest = 0;
      check_cuda(cudaDeviceGetStreamPriorityRange(&least, &greatest), "cudaDeviceGetStreamPriorityRange");
      check_cuda(cudaStreamCreateWithPriority(&state->comm_stream, cudaStreamNonBlocking, greatest), "cudaStreamCreate");
      check_cuda(cudaStreamCreateWithFlags(&state->compute_stream, cudaStreamNonBlocking), "cudaStreamCreate");
      nccl();  // loaded here, where a rank that cannot load it stops every rank, not only itself
    }
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);

  // NCCL communicators from MPI: the first rank of each group makes the id and broadcasts it.
  ncclUniqueId row_id{}, col_id{}, all_id{};
  if (grid.col() == 0) check_nccl(nccl().get_unique_id(&row_id), "ncclGetUniqueId");
  if (grid.row() == 0) check_nccl(nccl().get_unique_id(&col_id), "ncclGetUniqueId");
  if (grid.rank() == 0) check_nccl(nccl().get_unique_id(&all_id), "ncclGetUniqueId");
  MPI_Bcast(&row_id, sizeof row_id, MPI_BYTE, 0, grid.row_comm());
  MPI_Bcast(&col_id, sizeof col_id, MPI_BYTE, 0, grid.col_comm());
  MPI_Bcast(&all_id, sizeof all_id, MPI_BYTE, 0, grid.comm());
  check_nccl(nccl().comm_init_rank(&state->row, grid.cols(), row_id, grid.col()), "ncclCommInitRank (row)");
  check_nccl(nccl().comm_init_rank(&state->col, grid.rows(), col_id, grid.row()), "ncclCommInitRank (column)");
  check_nccl(nccl().comm_init_rank(&state->all, grid.size(), all_id, grid.rank()), "ncclCommInitRank (grid)");
  {
    ncclUniqueId row_panels_id{}, col_panels_id{};
    if (grid.col() == 0) check_nccl(nccl().get_unique_id(&row_panels_id), "ncclGetUniqueId");
    if (grid.row() == 0) check_nccl(nccl().get_unique_id(&col_panels_id), "ncclGetUniqueId");
    MPI_Bcast(&row_panels_id, sizeof row_panels_id, MPI_BYTE, 0, grid.row_comm());
    MPI_Bcast(&col_panels_id, sizeof col_panels_id, MPI_BYTE, 0, grid.col_comm());
    // NCCL_MAX_CTAS in the environment overrides the limit (NCCL reads it over the config).
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.maxCTAs = panel_ctas;
    check_nccl(nccl().comm_init_rank_config(&state->row_panels, grid.cols(), row_panels_id, grid.col(), &config),
               "ncclCommInitRankConfig (row panels)");
    check_nccl(nccl().comm_init_rank_config(&state->col_panels, grid.rows(), col_panels_id, grid.row(), &config),
               "ncclCommInitRankConfig (column panels)");
  }
  // NCCL connects a communicator's peers at its first collective of each protocol, which takes
  // hundreds of milliseconds on several GPUs: a small and a large broadcast on each communicator
  // here, so that the set-up pays for it and no timed call does.
  {
    constexpr std::size_t small = 4096, large = std::size_t(16) << 20;
    const DeviceBuffer warm(large, "dist device set-up");
    for (ncclComm_t comm : {state->row, state->col, state->all, state->row_panels, state->col_panels})
      for (std::size_t bytes : {small, large})
        check_nccl(nccl().broadcast(warm.as<void>(), warm.as<void>(), bytes, ncclUint8, 0, comm, state->comm_stream),
                   "ncclBroadcast (warm-up)");
    check_cuda(cudaStreamSynchronize(state->comm_stream), "NCCL warm-up");
  }
  grid.set_device_state(state);
  return *state;
}

namespace {

// Moves one panel for one step on the communication stream: a broadcast from the owner, or a
// ring hop (receive from the previous rank, then forward to the next unless it is the owner).
void move_panel(void* buf, std::size_t bytes, int owner, int me, int prev, int next, int group, Variant variant,
                ncclComm_t comm, cudaStream_t stream) {
  if (group == 1 || bytes == 0) return;
  if (variant == Variant::broadcast) {
    check_nccl(nccl().broadcast(buf, buf, bytes, ncclUint8, owner, comm, stream), "ncclBroadcast");
    return;
  }
  if (me != owner) check_nccl(nccl().recv(buf, bytes, ncclUint8, prev, comm, stream), "ncclRecv");
  if (next != owner) check_nccl(nccl().send(buf, bytes, ncclUint8, next, comm, stream), "ncclSend");
}

// The transpose of a device-resident matrix: dist::transpose's blocks (transpose_plan), packed
// transposed on the device and exchanged by grouped NCCL sends and receives.
template <class T>
DeviceDistMatrix<T> transpose_on_devices(const Grid& grid, Grid::DeviceState& dev, const DeviceDistMatrix<T>& in,
                                         std::uint64_t& bytes_sent) {
  DeviceDistMatrix<T> out(grid, in.cols(), in.rows(), in.block());
  const TransposePlan plan = transpose_plan(grid, in);
  const std::size_t elem = sizeof(T);
  std::optional<DeviceBuffer> send, receive;
  std::optional<Error> problem;
  try {
    send.emplace(std::size_t(plan.send_total) * elem, "dist::gemm (transpose)");
    receive.emplace(std::size_t(plan.recv_total) * elem, "dist::gemm (transpose)");
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);
  const cudaStream_t stream = dev.comm_stream;
  const MatrixView<const T> src = in.local();
  for (const MovedBlock& b : plan.sends)
    device_transpose_block<T>(send->as<T>() + b.offset, src.data + b.row0 * src.ld + b.col0, b.rows, b.cols, src.ld, stream);
  const std::size_t me = std::size_t(grid.rank());
  if (plan.send_counts[me] > 0)
    check_cuda(cudaMemcpyAsync(receive->as<T>() + plan.recv_offsets[me], send->as<T>() + plan.send_offsets[me],
                               std::size_t(plan.send_counts[me]) * elem, cudaMemcpyDeviceToDevice, stream),
               "transpose (own blocks)");
  check_nccl(nccl().group_start(), "ncclGroupStart");
  for (std::size_t r = 0; r < plan.send_counts.size(); ++r) {
    if (r == me) continue;
    if (plan.send_counts[r] > 0) {
      check_nccl(nccl().send(send->as<T>() + plan.send_offsets[r], std::size_t(plan.send_counts[r]) * elem, ncclUint8,
                             int(r), dev.all, stream),
                 "ncclSend (transpose)");
      bytes_sent += std::uint64_t(plan.send_counts[r]) * elem;
    }
    if (plan.recv_counts[r] > 0)
      check_nccl(nccl().recv(receive->as<T>() + plan.recv_offsets[r], std::size_t(plan.recv_counts[r]) * elem, ncclUint8,
                             int(r), dev.all, stream),
                 "ncclRecv (transpose)");
  }
  check_nccl(nccl().group_end(), "ncclGroupEnd");
  const MatrixView<T> dst = out.local();
  for (const MovedBlock& b : plan.receives)
    check_cuda(cudaMemcpy2DAsync(dst.data + b.row0 * dst.ld + b.col0, std::size_t(dst.ld) * elem,
                                 receive->as<T>() + b.offset, std::size_t(b.cols) * elem, std::size_t(b.cols) * elem,
                                 std::size_t(b.rows), cudaMemcpyDeviceToDevice, stream),
               "transpose (unpack)");
  check_cuda(cudaStreamSynchronize(stream), "transpose");
  return out;
}

// The SUMMA loop over device views: `a` is M×K and `b` K×N in the plan's layout (transposes
// already applied), `c` M×N, and for gemm_argmax `k_star` M×N (null data otherwise). Fills the
// traffic fields of `stats`.
template <class S>
void summa_loop(const Grid& grid, Grid::DeviceState& dev, const Plan& plan, MatrixView<const typename S::value_type> a,
                MatrixView<const typename S::value_type> b, MatrixView<typename S::value_type> c,
                MatrixView<std::int32_t> k_star, typename S::value_type alpha, typename S::value_type beta,
                const Options& options, Stats& stats) {
  using T = typename S::value_type;
  // Integer tropical types accumulate apart from C, as partial results can leave the accepted
  // input range; argmax products too, so that the winner is chosen among unscaled terms and α
  // and β apply once at the end, as in a one-GPU product.
  const bool argmax = k_star.data != nullptr;
  const bool accumulate_apart = semiring_traits<S>::checks_inputs || argmax;
  const index_t m = plan.m_local, n = plan.n_local, nb = plan.nb;
  const std::size_t elem = sizeof(T), c_elems = std::size_t(m * n), index_bytes = argmax ? c_elems * sizeof(std::int32_t) : 0;

  // Panels (two slots each) and the accumulator apart from C (with its indexes for the argmax).
  std::optional<DeviceBuffer> panels, acc, part, acc_k, part_k;
  std::optional<Error> problem;
  try {
    panels.emplace(2 * std::size_t(m * nb + nb * n) * elem);
    acc.emplace(accumulate_apart ? c_elems * elem : 0);
    part.emplace(accumulate_apart ? c_elems * elem : 0);
    acc_k.emplace(index_bytes);
    part_k.emplace(index_bytes);
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);
  T* a_panel[2] = {panels->as<T>(), panels->as<T>() + m * nb};
  T* b_panel[2] = {panels->as<T>() + 2 * m * nb, panels->as<T>() + 2 * m * nb + nb * n};

  Event moved[2], used[2];  // a slot's panels arrived / a slot's last multiply finished
  Context ctx = options.context;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = dev.compute_stream;

  auto post = [&](index_t s) {
    const Step st = plan.step(s);
    const int slot = int(s % 2);
    const Traffic traffic = step_traffic(plan, st, elem);
    stats.bytes_sent += traffic.sent;
    stats.bytes_received += traffic.received;
    if (s >= 2) check_cuda(cudaStreamWaitEvent(dev.comm_stream, used[slot], 0), "cudaStreamWaitEvent");
    if (plan.my_col == st.a_owner && m > 0)
      check_cuda(cudaMemcpy2DAsync(a_panel[slot], std::size_t(st.width) * elem, a.data + st.a_offset,
                                   std::size_t(a.ld) * elem, std::size_t(st.width) * elem, std::size_t(m),
                                   cudaMemcpyDeviceToDevice, dev.comm_stream),
                 "pack A panel");
    if (plan.my_row == st.b_owner && n > 0)
      check_cuda(cudaMemcpyAsync(b_panel[slot], b.data + st.b_offset * b.ld, std::size_t(st.width * n) * elem,
                                 cudaMemcpyDeviceToDevice, dev.comm_stream),
                 "pack B panel");
    // Grouped so that the row and the column operations of one step cannot wait on each other.
    if (plan.variant == Variant::broadcast) check_nccl(nccl().group_start(), "ncclGroupStart");
    move_panel(a_panel[slot], std::size_t(m * st.width) * elem, st.a_owner, plan.my_col, plan.left(), plan.right(),
               plan.pc, plan.variant, dev.row_panels, dev.comm_stream);
    move_panel(b_panel[slot], std::size_t(st.width * n) * elem, st.b_owner, plan.my_row, plan.up(), plan.down(),
               plan.pr, plan.variant, dev.col_panels, dev.comm_stream);
    if (plan.variant == Variant::broadcast) check_nccl(nccl().group_end(), "ncclGroupEnd");
    check_cuda(cudaEventRecord(moved[slot], dev.comm_stream), "cudaEventRecord");
  };

  const index_t steps = plan.steps();
  // The transposes' and uploads' work (other streams, the grid-wide communicator) finishes first:
  // NCCL kernels of two communicators in flight at once can wait on each other across ranks.
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  post(0);
  for (index_t s = 0; s < steps; ++s) {
    if (s + 1 < steps) post(s + 1);
    const int slot = int(s % 2);
    const Step st = plan.step(s);
    check_cuda(cudaStreamWaitEvent(dev.compute_stream, moved[slot], 0), "cudaStreamWaitEvent");
    if (m > 0 && n > 0) {
      const MatrixView<const T> ap{a_panel[slot], m, st.width, std::max<index_t>(1, st.width), Layout::row_major};
      const MatrixView<const T> bp{b_panel[slot], st.width, n, n, Layout::row_major};
      if (argmax) {
        if constexpr (semiring_traits<S>::selects) {
          // Indexes count from the panel's first column of K; a later panel's winner replaces the
          // running one only when strictly better, so ties keep the smallest k.
          T* target = s == 0 ? acc->as<T>() : part->as<T>();
          std::int32_t* target_k = s == 0 ? acc_k->as<std::int32_t>() : part_k->as<std::int32_t>();
          gemm_argmax<S>(ctx, Op::N, ap, Op::N, bp, MatrixView<T>{target, m, n, n, Layout::row_major},
                         MatrixView<std::int32_t>{target_k, m, n, n, Layout::row_major}, S::one(), S::zero(), s * nb);
          if (s > 0)
            device_take_better<S>(acc->as<T>(), acc_k->as<std::int32_t>(), part->as<T>(), part_k->as<std::int32_t>(),
                                  m * n, dev.compute_stream);
        }
      } else if (accumulate_apart) {
        T* target = s == 0 ? acc->as<T>() : part->as<T>();
        gemm<S>(ctx, Op::N, ap, Op::N, bp, MatrixView<T>{target, m, n, n, Layout::row_major}, S::one(), S::zero());
        if (s > 0) device_accumulate<S>(acc->as<T>(), part->as<T>(), m * n, dev.compute_stream);
      } else {
        gemm<S>(ctx, Op::N, ap, Op::N, bp, MatrixView<T>{c.data, m, n, c.ld, Layout::row_major}, alpha,
                s == 0 ? beta : S::one());
      }
    }
    check_cuda(cudaEventRecord(used[slot], dev.compute_stream), "cudaEventRecord");
  }
  if (argmax)
    device_argmax_epilogue<S>(c.data, k_star.data, acc->as<T>(), acc_k->as<std::int32_t>(), m * n, alpha, beta,
                              dev.compute_stream);
  else if (accumulate_apart)
    device_epilogue<S>(c.data, acc->as<T>(), m * n, alpha, beta, dev.compute_stream);
  check_cuda(cudaStreamSynchronize(dev.compute_stream), "SUMMA loop");
  check_cuda(cudaStreamSynchronize(dev.comm_stream), "SUMMA communication");
  stats.steps = steps;
}

// The checked product on device-resident matrices (K = the agreed inner dimension; k_star: the
// argmax's indexes, or null): transposes on the devices, then the loop. C stays on the devices.
template <class S>
void resident_product(const Grid& grid, Op op_a, const DeviceDistMatrix<typename S::value_type>& a, Op op_b,
                      const DeviceDistMatrix<typename S::value_type>& b, DeviceDistMatrix<typename S::value_type>& c,
                      DeviceDistMatrix<std::int32_t>* k_star, index_t k, typename S::value_type alpha,
                      typename S::value_type beta, const Options& options, Stats& stats) {
  using T = typename S::value_type;
  Grid::DeviceState& dev = device_state(grid);
  const MatrixView<std::int32_t> k_view = k_star ? k_star->local() : MatrixView<std::int32_t>{};
  if (k == 0) {  // no panels: C ← α ⊗ 0̄ ⊕ β ⊗ C (K*: the incoming index where β ⊗ C wins, else −1)
    const index_t count = c.local_rows() * c.local_cols();
    if (k_star) device_argmax_epilogue<S>(c.local().data, k_view.data, nullptr, nullptr, count, alpha, beta, dev.compute_stream);
    else device_epilogue<S>(c.local().data, nullptr, count, alpha, beta, dev.compute_stream);
    check_cuda(cudaStreamSynchronize(dev.compute_stream), "dist::gemm (K = 0)");
    return;
  }
  // Transposed operands are redistributed once (blocks move to their transposed owners).
  std::optional<DeviceDistMatrix<T>> a_t, b_t;
  if (op_a == Op::T) a_t = transpose_on_devices(grid, dev, a, stats.bytes_sent);
  if (op_b == Op::T) b_t = transpose_on_devices(grid, dev, b, stats.bytes_sent);
  const MatrixView<const T> a_n = a_t ? a_t->local() : a.local(), b_n = b_t ? b_t->local() : b.local();
  summa_loop<S>(grid, dev, make_plan(grid, c, k, options.variant), a_n, b_n, c.local(), k_view, alpha, beta, options,
                stats);
}

// dist::gemm and dist::gemm_argmax (k_star not null) on device-resident matrices: one collective
// call, checked as the host matrices' calls are.
template <class S>
Stats resident_call(const Grid& grid, const char* call, Op op_a, const DeviceDistMatrix<typename S::value_type>& a,
                    Op op_b, const DeviceDistMatrix<typename S::value_type>& b,
                    DeviceDistMatrix<typename S::value_type>& c, DeviceDistMatrix<std::int32_t>* k_star,
                    typename S::value_type alpha, typename S::value_type beta, const Options& options) {
  using T = typename S::value_type;
  Grid::DeviceState& dev = device_state(grid);
  // This rank's own complaints, agreed with the rest in check_product.
  std::optional<Error> problem;
  if (options.context.backend == Backend::cpu)
    problem = Error(Errc::invalid_argument, "backend",
                    "device-resident matrices multiply on their devices (backend automatic or cuda), not on the cpu");
  else if (&c == &a || &c == &b)
    problem = Error(Errc::invalid_argument, "C", "C must be neither A nor B (their panels are read while C is written)");
  const auto on_other_device = [&](int device, const char* name) {
    if (!problem && device != dev.device)
      problem = Error(Errc::invalid_argument, name,
                      "matrix lives on device " + std::to_string(device) + ", but rank " + std::to_string(grid.rank()) +
                          " of this grid runs on device " + std::to_string(dev.device));
  };
  on_other_device(a.device(), "A");
  on_other_device(b.device(), "B");
  on_other_device(c.device(), "C");
  if (k_star) on_other_device(k_star->device(), "K*");
  const index_t k = check_product<S>(grid, call, op_a, a, op_b, b, c, k_star, alpha, beta, options, problem);

  check_values<S>(
      grid, a.local(), b.local(), MatrixView<const T>(c.local()), alpha, beta, k,
      [&](auto& operand) {
        operand.scan = device_scan<S>(operand.view.p, operand.view.rows, operand.view.cols, operand.view.rs,
                                      dev.compute_stream);
      },
      [](const T* address) {
        T value{};
        check_cuda(cudaMemcpy(&value, address, sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
        return value;
      });
  Stats stats;
  stats.backend = Backend::cuda;
  stats.updates = double(c.rows()) * double(c.cols()) * double(k);
  stats.variant = resolve_variant(options.variant, grid.rows(), grid.cols());
  resident_product<S>(grid, op_a, a, op_b, b, c, k_star, k, alpha, beta, options, stats);
  return stats;
}

}  // namespace

template <class S>
void summa_via_devices(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
                       const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                       DistMatrix<std::int32_t>* k_star, typename S::value_type alpha, typename S::value_type beta,
                       const Options& options, Stats& stats) {
  using T = typename S::value_type;
  const DeviceDistMatrix<T> a_dev = to_device(grid, a), b_dev = to_device(grid, b);
  DeviceDistMatrix<T> c_dev = to_device(grid, c);
  std::optional<DeviceDistMatrix<std::int32_t>> k_dev;
  if (k_star) k_dev = to_device(grid, *k_star);  // its incoming indexes matter where β ⊗ C wins
  resident_product<S>(grid, op_a, a_dev, op_b, b_dev, c_dev, k_dev ? &*k_dev : nullptr,
                      op_a == Op::N ? a.cols() : a.rows(), alpha, beta, options, stats);
  to_host(grid, c_dev, c);
  if (k_star) to_host(grid, *k_dev, *k_star);
  // C and K* cross twice (up and back), A and B once.
  const auto local_bytes = [](const DistLayout& x, std::size_t elem) {
    return std::uint64_t(x.local_rows()) * std::uint64_t(x.local_cols()) * elem;
  };
  stats.staged_bytes = local_bytes(a, sizeof(T)) + local_bytes(b, sizeof(T)) + 2 * local_bytes(c, sizeof(T)) +
                       (k_star ? 2 * local_bytes(*k_star, sizeof(std::int32_t)) : 0);
}

}  // namespace detail

template <class S>
Stats gemm(const Grid& grid, Op op_a, const DeviceDistMatrix<typename S::value_type>& a, Op op_b,
           const DeviceDistMatrix<typename S::value_type>& b, DeviceDistMatrix<typename S::value_type>& c,
           typename S::value_type alpha, typename S::value_type beta, const Options& options) {
  return detail::resident_call<S>(grid, "dist::gemm", op_a, a, op_b, b, c, nullptr, alpha, beta, options);
}

template <class S>
Stats gemm_argmax(const Grid& grid, Op op_a, const DeviceDistMatrix<typename S::value_type>& a, Op op_b,
                  const DeviceDistMatrix<typename S::value_type>& b, DeviceDistMatrix<typename S::value_type>& c,
                  DeviceDistMatrix<std::int32_t>& k_star, typename S::value_type alpha, typename S::value_type beta,
                  const Options& options) {
  if constexpr (!semiring_traits<S>::selects)
    throw ringmm::detail::argmax_needs_selection();
  else
    return detail::resident_call<S>(grid, "dist::gemm_argmax", op_a, a, op_b, b, c, &k_star, alpha, beta, options);
}

#define RINGMM_DIST_DEVICE(S)                                                                                       \
  template void detail::summa_via_devices<S>(const Grid&, Op, const DistMatrix<typename S::value_type>&, Op,        \
                                             const DistMatrix<typename S::value_type>&,                             \
                                             DistMatrix<typename S::value_type>&, DistMatrix<std::int32_t>*,        \
                                             typename S::value_type, typename S::value_type, const Options&, Stats&); \
  template Stats gemm<S>(const Grid&, Op, const DeviceDistMatrix<typename S::value_type>&, Op,                      \
                         const DeviceDistMatrix<typename S::value_type>&, DeviceDistMatrix<typename S::value_type>&, \
                         typename S::value_type, typename S::value_type, const Options&);                           \
  template Stats gemm_argmax<S>(const Grid&, Op, const DeviceDistMatrix<typename S::value_type>&, Op,               \
                                const DeviceDistMatrix<typename S::value_type>&,                                    \
                                DeviceDistMatrix<typename S::value_type>&, DeviceDistMatrix<std::int32_t>&,         \
                                typename S::value_type, typename S::value_type, const Options&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_DIST_DEVICE(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace ringmm::dist
