// The process grid, the block-cyclic index map and the agreement checks every collective runs first.
#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "ringmm/dist.hpp"

namespace ringmm::dist {

namespace {
int comm_size(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}
}  // namespace

std::pair<int, int> near_square_grid(int processes) {
  if (processes < 1) throw Error(Errc::invalid_argument, "processes", "need at least one process");
  int prow = int(std::sqrt(double(processes)));
  while (prow > 1 && processes % prow != 0) --prow;
  return {prow, processes / prow};
}

index_t BlockCyclic::local_size(int proc) const {
  const index_t nblocks = blocks();
  if (proc >= nblocks) return 0;
  const index_t mine = (nblocks - proc + procs - 1) / procs;
  index_t size = mine * nb;
  if ((nblocks - 1) % procs == proc) size -= nblocks * nb - n;  // my last block is the short one
  return size;
}

void check_agreement(MPI_Comm comm, const std::vector<Param>& params, const std::string& call) {
  // Every rank must pass the same number of parameters before the element-wise reduction is safe.
  std::int64_t count[2] = {std::int64_t(params.size()), -std::int64_t(params.size())};
  MPI_Allreduce(MPI_IN_PLACE, count, 2, MPI_INT64_T, MPI_MIN, comm);
  if (count[0] != -count[1])
    throw Error(Errc::distributed_mismatch, call,
                "ranks entered different collective calls (" + std::to_string(count[0]) + " vs " +
                    std::to_string(-count[1]) + " parameters)");
  const std::size_t n = params.size();
  std::vector<std::int64_t> bounds(2 * n);  // min of value, min of −value (= −max)
  for (std::size_t i = 0; i < n; ++i) {
    bounds[i] = params[i].value;
    bounds[n + i] = params[i].value == INT64_MIN ? INT64_MAX : -params[i].value;
  }
  MPI_Allreduce(MPI_IN_PLACE, bounds.data(), int(2 * n), MPI_INT64_T, MPI_MIN, comm);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t lo = bounds[i], hi = -bounds[n + i];
    if (lo == hi) continue;
    // The lowest ranks holding the smallest and the largest value say what they have.
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    int holders[2] = {params[i].value == lo ? rank : INT_MAX, params[i].value == hi ? rank : INT_MAX};
    MPI_Allreduce(MPI_IN_PLACE, holders, 2, MPI_INT, MPI_MIN, comm);
    std::string shown[2];
    for (int h = 0; h < 2; ++h) {
      shown[h] = params[i].shown.empty() ? std::to_string(params[i].value) : params[i].shown;
      int length = int(shown[h].size());
      MPI_Bcast(&length, 1, MPI_INT, holders[h], comm);
      shown[h].resize(std::size_t(length));
      MPI_Bcast(shown[h].data(), length, MPI_CHAR, holders[h], comm);
    }
    throw Error(Errc::distributed_mismatch, params[i].name,
                "ranks disagree on " + params[i].name + " in " + call + ": rank " + std::to_string(holders[0]) +
                    " has " + shown[0] + ", rank " + std::to_string(holders[1]) + " has " + shown[1]);
  }
}

void throw_if_any(MPI_Comm comm, const std::optional<Error>& local) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  int first = local ? rank : INT_MAX;
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == INT_MAX) return;
  // The lowest failing rank's error travels to everyone: code, subject, message.
  std::string subject, message;
  int header[3] = {0, 0, 0};
  if (rank == first) {
    subject = local->subject();
    message = local->what();
    if (!subject.empty() && message.rfind(subject + ": ", 0) == 0) message.erase(0, subject.size() + 2);
    header[0] = int(local->code());
    header[1] = int(subject.size());
    header[2] = int(message.size());
  }
  MPI_Bcast(header, 3, MPI_INT, first, comm);
  subject.resize(std::size_t(header[1]));
  message.resize(std::size_t(header[2]));
  MPI_Bcast(subject.data(), header[1], MPI_CHAR, first, comm);
  MPI_Bcast(message.data(), header[2], MPI_CHAR, first, comm);
  throw Error(Errc(header[0]), subject, message);
}

Grid::Grid(MPI_Comm comm, int prow, int pcol) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank_);
  check_agreement(comm, {{"grid rows", prow}, {"grid cols", pcol}}, "Grid");
  if (prow < 1 || pcol < 1 || std::int64_t(prow) * pcol != size)
    throw Error(Errc::invalid_argument, "grid",
                "a " + std::to_string(prow) + "x" + std::to_string(pcol) + " grid needs " +
                    std::to_string(std::int64_t(prow) * pcol) + " ranks but the communicator has " +
                    std::to_string(size));
  prow_ = prow;
  pcol_ = pcol;
  my_row_ = rank_ / pcol;
  my_col_ = rank_ % pcol;
  MPI_Comm_dup(comm, &comm_);
  MPI_Comm_split(comm_, my_row_, my_col_, &row_comm_);
  MPI_Comm_split(comm_, my_col_, my_row_, &col_comm_);
}

Grid::Grid(MPI_Comm comm)
    : Grid(comm, near_square_grid(comm_size(comm)).first, near_square_grid(comm_size(comm)).second) {}

Grid::~Grid() {
  device_.reset();  // NCCL communicators go before the MPI ones they were made from
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (MPI_Comm* c : {&col_comm_, &row_comm_, &comm_})
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

std::string_view to_string(Variant v) {
  switch (v) {
    case Variant::broadcast: return "broadcast";
    case Variant::ring: return "ring";
    case Variant::automatic: return "auto";
  }
  return "?";
}

Variant parse_variant(std::string_view text, std::string_view what) {
  for (Variant v : {Variant::broadcast, Variant::ring, Variant::automatic})
    if (text == to_string(v)) return v;
  throw Error(Errc::invalid_argument, std::string(what),
              "unknown value '" + std::string(text) + "' (valid: auto, broadcast, ring)");
}

Variant resolve_variant(Variant v, int rows, int cols) {
  if (v != Variant::automatic) return v;
  return rows <= 2 && cols <= 2 ? Variant::ring : Variant::broadcast;
}

double lower_bound_words(index_t m, index_t n, index_t k, int processes) {
  return (double(m) * double(k) + double(k) * double(n)) / std::sqrt(double(processes));
}

}  // namespace ringmm::dist
