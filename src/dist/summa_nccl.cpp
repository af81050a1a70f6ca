// The device path of SUMMA: one rank per GPU, local A, B, C resident on the device, panels moved by
// NCCL on row and column communicators (the MPI of the GPU machines is not CUDA-aware), local
// multiplies by ringmm::gemm on the CUDA backend. Communication for step s + 1 runs on its own
// stream while step s multiplies; events order the two streams.
//
// Tested on the H100 (1×1) and on two H200s (1×2, 2×1): docs/distributed.md, "GPU runs".
#include <algorithm>
#include <cstring>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "nccl_loader.hpp"
#include "ringmm/gemm.hpp"
#include "summa_device.hpp"

namespace ringmm::dist {

// Named rather than anonymous: the device path's lambdas capture these types, and a template
// with external linkage may not hold members of an anonymous namespace (-Wsubobject-linkage).
namespace nccl_support {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(Errc::device_error, what, cudaGetErrorString(status));
}

void check_nccl(ncclResult_t status, const char* what) {
  if (status != ncclSuccess) throw Error(Errc::device_error, what, detail::nccl().error_string(status));
}

// A device allocation released on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) {
    if (bytes > 0 && cudaMalloc(&ptr_, bytes) != cudaSuccess)
      throw Error(Errc::out_of_memory, "dist::gemm", "cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T> T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// A CUDA event for ordering streams (no timing).
class Event {
 public:
  Event() { check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  operator cudaEvent_t() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace nccl_support
using namespace nccl_support;

// The grid's device, streams and NCCL communicators, made once per grid.
struct Grid::DeviceState {
  int device = 0;
  cudaStream_t comm_stream = nullptr, compute_stream = nullptr;
  ncclComm_t row = nullptr, col = nullptr;

  ~DeviceState() {
    if (row) detail::nccl().comm_destroy(row);
    if (col) detail::nccl().comm_destroy(col);
    if (comm_stream) cudaStreamDestroy(comm_stream);
    if (compute_stream) cudaStreamDestroy(compute_stream);
  }
};

namespace detail {

namespace {

// One rank per GPU: the rank's index among the ranks of its node picks the device, unless the
// rank sees only one.
Grid::DeviceState& device_state(const Grid& grid) {
  if (grid.device_state()) return *grid.device_state();
  auto state = std::make_shared<Grid::DeviceState>();
  std::optional<Error> problem;
  try {
    MPI_Comm node;
    MPI_Comm_split_type(grid.comm(), MPI_COMM_TYPE_SHARED, grid.rank(), MPI_INFO_NULL, &node);
    int node_rank = 0, node_size = 0;
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    // A launcher that gives each rank one visible GPU (per-task CUDA_VISIBLE_DEVICES) leaves device 0.
    state->device = devices == 1 ? 0 : node_rank;
    // NCCL refuses two ranks on one GPU ("invalid usage"): compare the devices' UUIDs first, so
    // that a node with fewer GPUs than ranks gets an error that says so.
    cudaDeviceProp prop{};
    if (state->device < devices) check_cuda(cudaGetDeviceProperties(&prop, state->device), "cudaGetDeviceProperties");
    std::vector<cudaUUID_t> uuids(static_cast<std::size_t>(node_size));
    MPI_Allgather(&prop.uuid, sizeof(cudaUUID_t), MPI_BYTE, uuids.data(), sizeof(cudaUUID_t), MPI_BYTE, node);
    MPI_Comm_free(&node);
    const bool shared = std::any_of(uuids.begin(), uuids.end(), [&](const cudaUUID_t& u) {
      return &u != &uuids[std::size_t(node_rank)] && std::memcmp(&u, &prop.uuid, sizeof u) == 0;
    });
    if (node_size > devices && devices != 1 || shared)
      throw Error(Errc::invalid_argument, "ranks",
                  std::to_string(node_size) + " ranks share a node with " + std::to_string(devices) +
                      " GPU(s) they can tell apart; the device path runs one rank per GPU");
    check_cuda(cudaSetDevice(state->device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&state->comm_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaStreamCreateWithFlags(&state->compute_stream, cudaStreamNonBlocking), "cudaStreamCreate");
    nccl();  // loaded here, where a rank that cannot load it stops every rank, not only itself
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);

  // NCCL communicators from MPI: the first rank of each row / column makes the id and broadcasts it.
  ncclUniqueId row_id{}, col_id{};
  if (grid.col() == 0) check_nccl(nccl().get_unique_id(&row_id), "ncclGetUniqueId");
  if (grid.row() == 0) check_nccl(nccl().get_unique_id(&col_id), "ncclGetUniqueId");
  MPI_Bcast(&row_id, sizeof row_id, MPI_BYTE, 0, grid.row_comm());
  MPI_Bcast(&col_id, sizeof col_id, MPI_BYTE, 0, grid.col_comm());
  check_nccl(nccl().comm_init_rank(&state->row, grid.cols(), row_id, grid.col()), "ncclCommInitRank (row)");
  check_nccl(nccl().comm_init_rank(&state->col, grid.rows(), col_id, grid.row()), "ncclCommInitRank (column)");
  grid.set_device_state(state);
  return *state;
}

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

}  // namespace

template <class S>
void summa_device(const Grid& grid, const Plan& plan, const DistMatrix<typename S::value_type>& a,
                  const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                  typename S::value_type alpha, typename S::value_type beta, const Options& options, Stats& stats) {
  using T = typename S::value_type;
  constexpr bool accumulate_apart = semiring_traits<S>::checks_inputs;
  Grid::DeviceState& dev = device_state(grid);
  check_cuda(cudaSetDevice(dev.device), "cudaSetDevice");
  const index_t m = plan.m_local, n = plan.n_local, nb = plan.nb;
  const std::size_t elem = sizeof(T);

  // Staging: the local parts go to the device once; C comes back at the end.
  double t0 = MPI_Wtime();
  const std::size_t a_elems = std::size_t(a.local_rows() * a.ld()), b_elems = std::size_t(b.local_rows() * b.ld());
  const std::size_t c_elems = std::size_t(m * c.ld());
  DeviceBuffer d_a(a_elems * elem), d_b(b_elems * elem), d_c(c_elems * elem);
  DeviceBuffer a_panel0(std::size_t(m * nb) * elem), a_panel1(std::size_t(m * nb) * elem);
  DeviceBuffer b_panel0(std::size_t(nb * n) * elem), b_panel1(std::size_t(nb * n) * elem);
  DeviceBuffer acc(accumulate_apart ? c_elems * elem : 0), part(accumulate_apart ? c_elems * elem : 0);
  T* a_panel[2] = {a_panel0.as<T>(), a_panel1.as<T>()};
  T* b_panel[2] = {b_panel0.as<T>(), b_panel1.as<T>()};
  check_cuda(cudaMemcpy(d_a.as<T>(), a.local().data, a_elems * elem, cudaMemcpyHostToDevice), "copy A to device");
  check_cuda(cudaMemcpy(d_b.as<T>(), b.local().data, b_elems * elem, cudaMemcpyHostToDevice), "copy B to device");
  check_cuda(cudaMemcpy(d_c.as<T>(), c.local().data, c_elems * elem, cudaMemcpyHostToDevice), "copy C to device");
  stats.staging_seconds = MPI_Wtime() - t0;

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
      check_cuda(cudaMemcpy2DAsync(a_panel[slot], std::size_t(st.width) * elem, d_a.as<T>() + st.a_offset,
                                   std::size_t(a.ld()) * elem, std::size_t(st.width) * elem, std::size_t(m),
                                   cudaMemcpyDeviceToDevice, dev.comm_stream),
                 "pack A panel");
    if (plan.my_row == st.b_owner && n > 0)
      check_cuda(cudaMemcpyAsync(b_panel[slot], d_b.as<T>() + st.b_offset * b.ld(), std::size_t(st.width * n) * elem,
                                 cudaMemcpyDeviceToDevice, dev.comm_stream),
                 "pack B panel");
    // Grouped so that the row and the column operations of one step cannot wait on each other.
    if (plan.variant == Variant::broadcast) check_nccl(nccl().group_start(), "ncclGroupStart");
    move_panel(a_panel[slot], std::size_t(m * st.width) * elem, st.a_owner, plan.my_col, plan.left(), plan.right(),
               plan.pc, plan.variant, dev.row, dev.comm_stream);
    move_panel(b_panel[slot], std::size_t(st.width * n) * elem, st.b_owner, plan.my_row, plan.up(), plan.down(),
               plan.pr, plan.variant, dev.col, dev.comm_stream);
    if (plan.variant == Variant::broadcast) check_nccl(nccl().group_end(), "ncclGroupEnd");
    check_cuda(cudaEventRecord(moved[slot], dev.comm_stream), "cudaEventRecord");
  };

  const index_t steps = plan.steps();
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  MPI_Barrier(grid.comm());
  t0 = MPI_Wtime();
  post(0);
  for (index_t s = 0; s < steps; ++s) {
    if (s + 1 < steps) post(s + 1);
    const int slot = int(s % 2);
    const Step st = plan.step(s);
    check_cuda(cudaStreamWaitEvent(dev.compute_stream, moved[slot], 0), "cudaStreamWaitEvent");
    if (m > 0 && n > 0) {
      const MatrixView<const T> ap{a_panel[slot], m, st.width, std::max<index_t>(1, st.width), Layout::row_major};
      const MatrixView<const T> bp{b_panel[slot], st.width, n, n, Layout::row_major};
      if constexpr (accumulate_apart) {
        T* target = s == 0 ? acc.as<T>() : part.as<T>();
        gemm<S>(ctx, Op::N, ap, Op::N, bp, MatrixView<T>{target, m, n, n, Layout::row_major}, S::one(), S::zero());
        if (s > 0) device_accumulate<S>(acc.as<T>(), part.as<T>(), m * n, dev.compute_stream);
      } else {
        gemm<S>(ctx, Op::N, ap, Op::N, bp, MatrixView<T>{d_c.as<T>(), m, n, c.ld(), Layout::row_major}, alpha,
                s == 0 ? beta : S::one());
      }
    }
    check_cuda(cudaEventRecord(used[slot], dev.compute_stream), "cudaEventRecord");
  }
  if constexpr (accumulate_apart) device_epilogue<S>(d_c.as<T>(), acc.as<T>(), m * n, alpha, beta, dev.compute_stream);
  check_cuda(cudaStreamSynchronize(dev.compute_stream), "SUMMA loop");
  check_cuda(cudaStreamSynchronize(dev.comm_stream), "SUMMA communication");
  stats.seconds = MPI_Wtime() - t0;
  stats.steps = steps;

  t0 = MPI_Wtime();
  check_cuda(cudaMemcpy(c.local().data, d_c.as<T>(), c_elems * elem, cudaMemcpyDeviceToHost), "copy C to host");
  stats.staging_seconds += MPI_Wtime() - t0;
}

#define RINGMM_DIST_DEVICE(S)                                                                                       \
  template void summa_device<S>(const Grid&, const Plan&, const DistMatrix<typename S::value_type>&,                \
                                const DistMatrix<typename S::value_type>&, DistMatrix<typename S::value_type>&,     \
                                typename S::value_type, typename S::value_type, const Options&, Stats&);
#define RINGMM_BUILTIN(semiring, dtype, S) RINGMM_DIST_DEVICE(::ringmm::S)
#include "ringmm/builtins.def"

}  // namespace detail
}  // namespace ringmm::dist
