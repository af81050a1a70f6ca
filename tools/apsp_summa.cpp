// ringmm apsp --summa: all-pairs shortest paths distributed over the ranks of mpirun
// (dist::apsp), on the ranks' GPUs (device-resident blocks) or on their CPUs. Rank 0 reads a graph
// file and scatters it in the block-cyclic layout (each rank makes its own blocks of a --bench
// graph), gathers the results and writes them; every rank parses the same command line and
// reaches the same verdict, and only rank 0 prints.
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
#if RINGMM_HAVE_NCCL
#include "ringmm/dist_device.hpp"
#endif
#include "support.hpp"

namespace ringmm::tools {

namespace {

template <class T> std::vector<T> gather_on_root(const dist::Grid& grid, const dist::DistMatrix<T>& x) {
  std::vector<T> whole(grid.rank() == 0 ? std::size_t(x.rows() * x.cols()) : 0);
  dist::gather<T>(grid, x, MatrixView<T>{whole.data(), x.rows(), x.cols(), std::max<index_t>(1, x.cols()), Layout::row_major}, 0);
  return whole;
}

// The graph in the block-cyclic layout: a file is read by root and scattered; each rank makes its
// own blocks of the --bench graph (no rank holds all of it).
template <class T>
dist::DistMatrix<T> distributed_graph(ApspRequest& req, const dist::Grid& grid, index_t block, std::string& summary) {
  const bool root = grid.rank() == 0;
  Weights<T> weights;
  std::int64_t n = req.bench_vertices;
  if (req.graph_path) {
    // Root loads the graph; its failure (a missing file, an unsupported type, no room) is everyone's.
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
  } else {
    summary = std::to_string(n) + " vertices, density " + fixed(req.bench_density, 3) + ", seed " + std::to_string(req.seed);
  }
  check_route(req, n);
  dist::DistMatrix<T> graph(grid, n, n, block);
  if (req.graph_path) {
    dist::scatter<T>(grid, MatrixView<const T>{weights.data(), n, n, std::max<index_t>(1, n), Layout::row_major}, graph, 0);
  } else {
    const MatrixView<T> local = graph.local();
#pragma omp parallel for schedule(static)
    for (index_t li = 0; li < local.rows; ++li)
      for (index_t lj = 0; lj < local.cols; ++lj)
        local(li, lj) = bench_weight<T>(graph.row_map().to_global(grid.row(), li), graph.col_map().to_global(grid.col(), lj),
                                        n, req.bench_density, req.seed);
  }
  return graph;
}

// One timed solve (slowest rank after a barrier) of `graph` into dist and next: on the host
// matrices, or, with the cuda backend, on device-resident copies (the copies to and from the
// devices are not timed), which hold the results afterwards.
template <class T> class Solver {
 public:
  Solver(const dist::Grid& grid, const dist::DistMatrix<T>& graph, const dist::Options& options)
      : grid_(grid), graph_(graph), options_(options), dist_(grid, graph.rows(), graph.cols(), graph.block()),
        next_(grid, graph.rows(), graph.cols(), graph.block()) {
#if RINGMM_HAVE_NCCL
    if (options.context.backend == Backend::cuda) next_dev_.emplace(grid, graph.rows(), graph.cols(), graph.block());
#endif
  }

  double solve(const ApspOptions& apsp, dist::Stats& stats) {
#if RINGMM_HAVE_NCCL
    if (next_dev_) {
      dist_dev_ = dist::to_device(grid_, graph_);
      return timed([&] { return dist::apsp<T>(grid_, dist_dev_, *next_dev_, apsp, options_); }, stats);
    }
#endif
    dist_ = graph_;
    return timed([&] { return dist::apsp<T>(grid_, dist_, next_, apsp, options_); }, stats);
  }

  // The results of the last solve, in host memory.
  const dist::DistMatrix<T>& dist() {
#if RINGMM_HAVE_NCCL
    if (next_dev_) dist::to_host(grid_, dist_dev_, dist_);
#endif
    return dist_;
  }
  const dist::DistMatrix<std::int32_t>& next() {
#if RINGMM_HAVE_NCCL
    if (next_dev_) dist::to_host(grid_, *next_dev_, next_);
#endif
    return next_;
  }

 private:
  template <class Call> double timed(Call&& call, dist::Stats& stats) {
    MPI_Barrier(grid_.comm());  // every rank starts together; the slowest rank's time counts
    const double start = MPI_Wtime();
    stats = call();
    double slowest = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, grid_.comm());
    return slowest;
  }

  const dist::Grid& grid_;
  const dist::DistMatrix<T>& graph_;
  const dist::Options options_;
  dist::DistMatrix<T> dist_;
  dist::DistMatrix<std::int32_t> next_;
#if RINGMM_HAVE_NCCL
  dist::DeviceDistMatrix<T> dist_dev_;
  std::optional<dist::DeviceDistMatrix<std::int32_t>> next_dev_;
#endif
};

template <class T> int run_summa(ApspRequest& req, const dist::Grid& grid, Backend backend) {
  const bool root = grid.rank() == 0;
  // The Floyd–Warshall block is the layout's block (dist::apsp); the one-process solver's default.
  const index_t block = req.options.block > 0 ? req.options.block : apsp_default_block(backend);
  std::string summary;
  const dist::DistMatrix<T> graph = distributed_graph<T>(req, grid, block, summary);
  const index_t n = graph.rows();
  dist::Options options;
  options.context = req.ctx;
  options.context.backend = backend;
  options.context.cpu_threads = req.ctx.cpu_threads > 0 ? req.ctx.cpu_threads : default_threads(grid.comm());
  Solver<T> solver(grid, graph, options);
  dist::Stats stats;
  std::vector<double> times;
  for (int rep = 0; rep < req.reps; ++rep) {
    try {
      times.push_back(solver.solve(req.options, stats));
    } catch (const CycleError&) {
      throw;
    } catch (const Error& e) {
      throw naming_the_graph(e, req);
    }
  }
  std::sort(times.begin(), times.end());
  const double solve = times[times.size() / 2];
  std::uint64_t received = stats.bytes_received, received_max = 0, received_sum = 0;
  MPI_Allreduce(&received, &received_max, 1, MPI_UINT64_T, MPI_MAX, grid.comm());
  MPI_Allreduce(&received, &received_sum, 1, MPI_UINT64_T, MPI_SUM, grid.comm());

  const std::vector<T> dist_all = req.out_path || req.route ? gather_on_root(grid, solver.dist()) : std::vector<T>{};
  const std::vector<std::int32_t> next_all =
      req.next_path || req.route ? gather_on_root(grid, solver.next()) : std::vector<std::int32_t>{};
  if (root) {
    const double rate = n > 0 && solve > 0 ? double(n) * double(n) * double(n) / solve : 0;
    const std::string where = backend == Backend::cuda ? "one GPU per rank, matrices resident there"
                                                       : std::to_string(options.context.cpu_threads) + " CPU threads per rank";
    std::cout << "graph     " << graph_name(req) << ": " << summary << "\n"
              << "paths     " << (req.options.longest ? "longest (max-plus " : "shortest (min-plus ")
              << to_string(dtype_of<T>::value) << ")\n"
              << "grid      " << grid.rows() << "x" << grid.cols() << ", block " << block << ", " << stats.steps
              << " rounds, backend " << to_string(stats.backend) << " (" << where << ")\n"
              << "time      solve " << fixed(solve * 1e3, 3) << " ms (slowest rank"
              << (req.reps > 1 ? ", median of " + std::to_string(req.reps) : "") << ")\n"
              << "rate      "
              << (rate > 0 ? scientific(rate) + " updates/s (n^3 / solve time), " + scientific(rate / grid.size()) + " per rank"
                           : "-")
              << "\n"
              << "received  per rank max " << fixed(double(received_max) / 1e6, 3) << " MB, mean "
              << fixed(double(received_sum) / grid.size() / 1e6, 3) << " MB\n";
  }
  std::optional<Error> problem;
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
    // Taller than wide by default (main.cpp's help says why): 2 ranks 2x1, 8 ranks 4x2.
    if (req.prow == 0) std::tie(req.pcol, req.prow) = dist::near_square_grid(size);
    if (req.prow * req.pcol != size)
      throw UsageError("--grid", std::to_string(req.prow) + "x" + std::to_string(req.pcol) + " needs " +
                                     std::to_string(req.prow * req.pcol) + " ranks but mpirun started " + std::to_string(size));
    const dist::Grid grid(MPI_COMM_WORLD, req.prow, req.pcol);
    const Backend backend = ranks_backend(grid, req.ctx.backend, "ringmm apsp --summa");
    std::optional<DType> npy_dtype;
    if (is_npy(req)) {
      req.npy_graph = dist::read_npy_on_root(grid, *req.graph_path);  // dtype and shape everywhere, data on root
      npy_dtype = req.npy_graph->dtype;
    }
    return apsp_type(req, npy_dtype) == DType::f32 ? run_summa<float>(req, grid, backend) : run_summa<double>(req, grid, backend);
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
