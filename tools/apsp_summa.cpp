// ringmm apsp --summa: all-pairs shortest paths distributed over the ranks of mpirun
// (dist::apsp). Rank 0 reads the graph, scatters it in the block-cyclic layout, gathers the
// results and writes them; every rank parses the same command line and reaches the same verdict,
// and only rank 0 prints.
#include <mpi.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "apsp.hpp"
#include "args.hpp"
#include "mpi_tools.hpp"
#include "ringmm/dist.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

template <class T> std::vector<T> gather_on_root(const dist::Grid& grid, const dist::DistMatrix<T>& x) {
  std::vector<T> whole(grid.rank() == 0 ? std::size_t(x.rows() * x.cols()) : 0);
  dist::gather<T>(grid, x, MatrixView<T>{whole.data(), x.rows(), x.cols(), std::max<index_t>(1, x.cols()), Layout::row_major}, 0);
  return whole;
}

template <class T> int run_summa(ApspRequest& req, const dist::Grid& grid, index_t block) {
  const bool root = grid.rank() == 0;
  // Root loads the graph; its failure (a missing file, an unsupported type, no room) is everyone's.
  std::vector<T> weights;
  std::string summary;
  std::int64_t n = 0;
  std::optional<Error> problem;
  if (root) {
    try {
      index_t vertices = 0;
      weights = load_graph<T>(req, vertices, summary);
      n = vertices;
    } catch (const Error& e) {
      problem = e;
    }
  }
  dist::throw_if_any(grid.comm(), problem);
  MPI_Bcast(&n, 1, MPI_INT64_T, 0, grid.comm());
  check_route(req, n);

  dist::DistMatrix<T> graph(grid, n, n, block), dist(grid, n, n, block);
  dist::DistMatrix<std::int32_t> next(grid, n, n, block);
  dist::scatter<T>(grid, MatrixView<const T>{weights.data(), n, n, std::max<index_t>(1, n), Layout::row_major}, graph, 0);
  weights = {};
  dist::Options options;
  options.context = req.ctx;
  options.context.cpu_threads = req.ctx.cpu_threads > 0 ? req.ctx.cpu_threads : default_threads(grid.comm());
  dist::Stats stats;
  std::vector<double> times;
  for (int rep = 0; rep < req.reps; ++rep) {
    dist = graph;
    MPI_Barrier(grid.comm());  // every rank starts together; the slowest rank's time counts
    const double start = MPI_Wtime();
    try {
      stats = dist::apsp<T>(grid, dist, next, req.options, options);
    } catch (const CycleError&) {
      throw;
    } catch (const Error& e) {
      throw naming_the_graph(e, req);
    }
    double slowest = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
    times.push_back(slowest);
  }
  std::sort(times.begin(), times.end());
  const double solve = times[times.size() / 2];
  std::uint64_t received = stats.bytes_received, received_max = 0, received_sum = 0;
  MPI_Allreduce(&received, &received_max, 1, MPI_UINT64_T, MPI_MAX, grid.comm());
  MPI_Allreduce(&received, &received_sum, 1, MPI_UINT64_T, MPI_SUM, grid.comm());

  const std::vector<T> dist_all = req.out_path || req.route ? gather_on_root(grid, dist) : std::vector<T>{};
  const std::vector<std::int32_t> next_all = req.next_path || req.route ? gather_on_root(grid, next) : std::vector<std::int32_t>{};
  if (root) {
    const double rate = n > 0 && solve > 0 ? double(n) * double(n) * double(n) / solve : 0;
    std::cout << "graph     " << graph_name(req) << ": " << summary << "\n"
              << "paths     " << (req.options.longest ? "longest (max-plus " : "shortest (min-plus ")
              << to_string(dtype_of<T>::value) << ")\n"
              << "grid      " << grid.rows() << "x" << grid.cols() << ", block " << block << ", " << stats.steps
              << " rounds, backend " << to_string(stats.backend) << " (" << options.context.cpu_threads
              << " CPU threads per rank)\n"
              << "time      solve " << fixed(solve * 1e3, 3) << " ms (slowest rank"
              << (req.reps > 1 ? ", median of " + std::to_string(req.reps) : "") << ")\n"
              << "rate      " << (rate > 0 ? scientific(rate) + " updates/s (n^3 / solve time)" : "-") << "\n"
              << "received  per rank max " << fixed(double(received_max) / 1e6, 3) << " MB, mean "
              << fixed(double(received_sum) / grid.size() / 1e6, 3) << " MB\n";
  }
  problem.reset();
  if (root) {
    try {
      write_outputs<T>(req, n, dist_all.data(), next_all.data());
    } catch (const Error& e) {
      problem = e;
    }
  }
  dist::throw_if_any(grid.comm(), problem);
  if (root) print_route<T>(req, n, dist_all.data(), next_all.data());
  return 0;
}

}  // namespace

int apsp_summa_command(const Args& args) {
  MpiSession session;
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    agree_on_command_line(args, "ringmm apsp");
    ApspRequest req = parse_apsp(args);
    if (req.prow == 0) std::tie(req.prow, req.pcol) = dist::near_square_grid(size);
    if (req.prow * req.pcol != size)
      throw UsageError("--grid", std::to_string(req.prow) + "x" + std::to_string(req.pcol) + " needs " +
                                     std::to_string(req.prow * req.pcol) + " ranks but mpirun started " + std::to_string(size));
    // The Floyd–Warshall block is the layout's block (dist::apsp); the CPU solver's default.
    const index_t block = req.options.block > 0 ? req.options.block : apsp_default_block(Backend::cpu);
    const dist::Grid grid(MPI_COMM_WORLD, req.prow, req.pcol);
    std::optional<DType> npy_dtype;
    if (is_npy(req)) {
      req.npy_graph = dist::read_npy_on_root(grid, *req.graph_path);  // dtype and shape everywhere, data on root
      npy_dtype = req.npy_graph->dtype;
    }
    return apsp_type(req, npy_dtype) == DType::f32 ? run_summa<float>(req, grid, block) : run_summa<double>(req, grid, block);
  } catch (const UsageError& e) {
    if (rank == 0) print_error("apsp", e.what());
    return 2;
  } catch (const Error& e) {
    // Every error above is reached alike on every rank (agreement checks); rank 0 reports it.
    if (rank == 0) print_error("apsp", describe(e));
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
}

}  // namespace ringmm::tools
