// Distributed matrices and SUMMA over MPI (and NCCL for device buffers): library ringmm::dist.
//
//   C ← α ⊗ (op(A) ⊗ op(B)) ⊕ β ⊗ C   with A, B, C spread over a pr × pc process grid
//
// Layout: 2D block-cyclic with square nb × nb blocks. Global block (bi, bj) lives on process
// (bi mod pr, bj mod pc); each rank stores its blocks row-major, packed in global order, with
// leading dimension max(1, local_cols). Any global size works: the last block row / column may
// be short and a rank may own nothing.
//
// Every collective call first checks that all ranks agree on its parameters (one MPI_Allreduce
// of min and max per parameter) and that no rank has a local problem; a disagreement throws the
// same ringmm::Error on every rank (Errc::distributed_mismatch naming the parameter), never a hang.
// See docs/distributed.md.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ringmm/apsp.hpp"
#include "ringmm/context.hpp"
#include "ringmm/error.hpp"
#include "ringmm/matrix.hpp"
#include "ringmm/npy.hpp"
#include "ringmm/types.hpp"

namespace ringmm::dist {

// ---- process grid ------------------------------------------------------------------------------

// The pr × pc factorisation of p with pr ≤ pc and pr as close to √p as possible (6 → 2×3).
std::pair<int, int> near_square_grid(int processes);

// A pr × pc grid over a communicator; rank r sits at (r / pc, r mod pc). Holds its own duplicate
// of the communicator and the row and column communicators (rank within a row = process column).
// Construction is collective over `comm`: all ranks must pass the same shape.
class Grid {
 public:
  Grid(MPI_Comm comm, int prow, int pcol);
  explicit Grid(MPI_Comm comm);  // near_square_grid(size of comm)
  ~Grid();
  Grid(const Grid&) = delete;
  Grid& operator=(const Grid&) = delete;

  int rows() const { return prow_; }
  int cols() const { return pcol_; }
  int row() const { return my_row_; }
  int col() const { return my_col_; }
  int rank() const { return rank_; }
  int size() const { return prow_ * pcol_; }
  MPI_Comm comm() const { return comm_; }
  MPI_Comm row_comm() const { return row_comm_; }  // the pc ranks of my process row
  MPI_Comm col_comm() const { return col_comm_; }  // the pr ranks of my process column
  int rank_of(int row, int col) const { return row * pcol_ + col; }

  // Per-grid state of the device path (NCCL communicators), created on first use.
  struct DeviceState;
  DeviceState* device_state() const { return device_.get(); }
  void set_device_state(std::shared_ptr<DeviceState> state) const { device_ = std::move(state); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL, row_comm_ = MPI_COMM_NULL, col_comm_ = MPI_COMM_NULL;
  int prow_ = 1, pcol_ = 1, my_row_ = 0, my_col_ = 0, rank_ = 0;
  mutable std::shared_ptr<DeviceState> device_;
};

// ---- block-cyclic layout along one dimension ---------------------------------------------------

struct BlockCyclic {
  index_t n = 0;   // global extent
  index_t nb = 1;  // block size
  int procs = 1;   // processes along this dimension

  index_t blocks() const { return (n + nb - 1) / nb; }
  int owner(index_t global) const { return int((global / nb) % procs); }
  index_t to_local(index_t global) const { return (global / nb / procs) * nb + global % nb; }
  index_t to_global(int proc, index_t local) const { return ((local / nb) * procs + proc) * nb + local % nb; }
  // Number of indices that process `proc` owns.
  index_t local_size(int proc) const;
};

// ---- layout of one distributed matrix ---------------------------------------------------------

// Where the blocks of a rows × cols matrix with nb × nb blocks lie on a grid, seen from one rank:
// the one copy of the layout logic, the base of DistMatrix (host memory) and of DeviceDistMatrix
// (device memory, ringmm/dist_device.hpp). Construction is local (no communication).
class DistLayout {
 public:
  DistLayout() = default;
  DistLayout(const Grid& grid, index_t rows, index_t cols, index_t nb);

  index_t rows() const { return rows_; }
  index_t cols() const { return cols_; }
  index_t block() const { return nb_; }
  int grid_rows() const { return row_map_.procs; }
  int grid_cols() const { return col_map_.procs; }
  int grid_row() const { return my_row_; }
  int grid_col() const { return my_col_; }
  const BlockCyclic& row_map() const { return row_map_; }
  const BlockCyclic& col_map() const { return col_map_; }
  index_t local_rows() const { return local_rows_; }
  index_t local_cols() const { return local_cols_; }
  index_t ld() const { return std::max<index_t>(1, local_cols_); }
  // Elements of the local storage (row-major, leading dimension ld()).
  index_t local_size() const { return local_rows_ * ld(); }
  // Element (i, j) of the global matrix when this rank owns it, and where it is stored.
  bool owns(index_t i, index_t j) const { return row_map_.owner(i) == my_row_ && col_map_.owner(j) == my_col_; }
  index_t local_offset(index_t i, index_t j) const { return row_map_.to_local(i) * ld() + col_map_.to_local(j); }
  // Built for this grid's shape and for this rank's place in it.
  bool fits(const Grid& grid) const {
    return grid_rows() == grid.rows() && grid_cols() == grid.cols() && my_row_ == grid.row() && my_col_ == grid.col();
  }
  const DistLayout& layout() const { return *this; }

 private:
  index_t rows_ = 0, cols_ = 0, nb_ = 1;
  BlockCyclic row_map_, col_map_;
  int my_row_ = 0, my_col_ = 0;
  index_t local_rows_ = 0, local_cols_ = 0;
};

// ---- distributed matrix ------------------------------------------------------------------------

// This rank's part of a rows × cols matrix in the grid's block-cyclic layout, in host memory.
// Construction is local (no communication): every rank builds its own with the same global shape
// and block.
template <class T> class DistMatrix : public DistLayout {
 public:
  DistMatrix() = default;
  DistMatrix(const Grid& grid, index_t rows, index_t cols, index_t nb);

  MatrixView<T> local() { return {storage_.data(), local_rows(), local_cols(), ld(), Layout::row_major}; }
  MatrixView<const T> local() const { return {storage_.data(), local_rows(), local_cols(), ld(), Layout::row_major}; }
  T& global(index_t i, index_t j) { return storage_[std::size_t(local_offset(i, j))]; }

 private:
  std::vector<T> storage_;
};

// Collective. Root's `global` (rows × cols of `out`, any layout; ignored on other ranks) is cut
// into blocks and sent to their owners.
template <class T> void scatter(const Grid& grid, MatrixView<const T> global, DistMatrix<T>& out, int root = 0);
// Collective. Assembles the matrix on root into `global` (rows × cols, any layout; ignored elsewhere).
template <class T> void gather(const Grid& grid, const DistMatrix<T>& in, MatrixView<T> global, int root = 0);
// Collective. The transpose, in the same layout and block size (blocks are moved with one
// MPI_Alltoallv and transposed locally). `bytes_sent` (if given) is increased by this rank's share.
template <class T>
DistMatrix<T> transpose(const Grid& grid, const DistMatrix<T>& in, std::uint64_t* bytes_sent = nullptr);

// .npy through one rank: root reads the file; every rank learns its dtype and shape (the data
// stays on root). A missing or malformed file throws the same error, naming the file, everywhere.
npy::Matrix read_npy_on_root(const Grid& grid, const std::string& path, int root = 0);
// Collective. Gathers to root, which writes the file; a failed write throws on every rank.
template <class T> void write_npy(const Grid& grid, const DistMatrix<T>& m, const std::string& path, int root = 0);

// ---- SUMMA -------------------------------------------------------------------------------------

// How panels travel along a process row or column. `automatic` picks per grid: ring where every panel
// makes a single hop (at most 2 process rows and 2 columns), broadcast otherwise; on four H200s the
// ring won on 2×2 and lost on 1×4, where it forwards each panel through three ranks (docs/distributed.md).
enum class Variant { broadcast, ring, automatic };
std::string_view to_string(Variant v);  // "broadcast", "ring", "auto"
Variant parse_variant(std::string_view text, std::string_view what = "variant");
// The variant a call on a rows × cols grid uses: `v` itself unless it is `automatic`.
Variant resolve_variant(Variant v, int rows, int cols);

struct Options {
  Variant variant = Variant::automatic;
  // Local multiply: cpu, cuda (every rank needs a device; NCCL moves the panels), or automatic
  // (cuda when this build has NCCL and every rank has a device, else cpu). Context::cpu_threads
  // and cuda_config are passed on to the local ringmm::gemm.
  Context context;
};

// What one collective call did on this rank. It holds no timings: the caller times the call (as
// `ringmm summa` does, slowest rank after a barrier).
struct Stats {
  std::uint64_t staged_bytes = 0;    // this rank: host ↔ device copies of its local A, B, C (the
                                     // device path of host matrices; 0 for device-resident ones)
  std::uint64_t bytes_sent = 0;      // this rank: panel bytes it sent (see docs: broadcast attribution)
  std::uint64_t bytes_received = 0;  // this rank: panel bytes it received (exact for both variants)
  index_t steps = 0;                 // panel steps (k blocks)
  Variant variant = Variant::broadcast;  // how the panels travelled (Options::variant, resolved)
  Backend backend = Backend::cpu;    // where the local multiplies ran
  double updates = 0;                // M·N·K for the whole product
};

// The 2D lower bound on words one rank must receive, (M·K + K·N)/√p (2n²/√p for square n).
double lower_bound_words(index_t m, index_t n, index_t k, int processes);

// Collective SUMMA. op(A) is M×K, op(B) K×N, C M×N, all with the same block size on `grid`.
// Instantiated for every built-in semiring (builtins.def).
template <class S>
Stats gemm(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
           const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
           typename S::value_type alpha, typename S::value_type beta, const Options& options = {});

// Collective SUMMA with the argmax (ringmm::gemm_argmax), for semirings whose ⊕ selects one term:
// K* (C's shape and block size, int32) receives the global k of each entry's winning term, the
// smallest among equal ones (panels run in k order, and a panel's tie keeps the index carried in),
// or −1 where the result is 0̄; with β ≠ 0̄ it is read as C is. Panels move as in gemm: with the
// cuda backend through the devices (NCCL), on the CPU over host panels and MPI. Other semirings
// throw Errc::unsupported.
template <class S>
Stats gemm_argmax(const Grid& grid, Op op_a, const DistMatrix<typename S::value_type>& a, Op op_b,
                  const DistMatrix<typename S::value_type>& b, DistMatrix<typename S::value_type>& c,
                  DistMatrix<std::int32_t>& k_star, typename S::value_type alpha, typename S::value_type beta,
                  const Options& options = {});

// ---- all-pairs shortest paths ------------------------------------------------------------------

// Collective blocked Floyd–Warshall with successors: ringmm::apsp's algorithm and semantics
// (ringmm/apsp.hpp) on a matrix in the block-cyclic layout, with equal results (bit for bit, as
// ringmm::apsp on the CPU with ApspOptions::block = the layout's block). The Floyd–Warshall block
// is the layout's block, so each round's diagonal block lives on one rank, its column panel on one
// process column and its row panel on one process row: the process column updates the column
// strip (the owner closes the diagonal sub-blocks and broadcasts their snapshots), the panels are
// broadcast along process rows and columns, and every rank updates its own blocks with one local
// argmax product.
//
// `dist` holds the weights on entry (+inf = no edge) and the distances on return; `next` (same
// shape, block size and grid, int32) receives the successors. apsp.block must be 0 or dist's
// block size. Local products run on options.context's backend (automatic = cpu: the local
// matrices stay on the host); the strip's diagonal and relax steps and the gathers on the CPU. The panels are broadcast
// (options.variant must be broadcast). NaN and −∞ weights are refused before any work (the first
// in row-major order is named); a negative cycle (positive with longest) throws CycleError with
// the same vertices on every rank, after which dist and next are unspecified. T is float or double.
template <class T>
Stats apsp(const Grid& grid, DistMatrix<T>& dist, DistMatrix<std::int32_t>& next, const ApspOptions& apsp = {},
           const Options& options = {});

// ---- agreement ---------------------------------------------------------------------------------

// One parameter of a collective call, compared across ranks.
struct Param {
  std::string name;    // what an error names: "A.rows", "semiring", "--grid", ...
  std::int64_t value;  // compared across ranks (a fingerprint for types and strings)
  std::string shown;   // how an error shows this rank's value ("max-plus f32", "2.5"); empty: value
};
// Collective: throws Errc::distributed_mismatch on every rank, naming the first parameter
// whose value differs between ranks and two ranks that differ, with their values as shown.
void check_agreement(MPI_Comm comm, const std::vector<Param>& params, const std::string& call);
// Collective: if any rank passes an error, every rank throws the error of the lowest such rank.
void throw_if_any(MPI_Comm comm, const std::optional<Error>& local);

}  // namespace ringmm::dist
