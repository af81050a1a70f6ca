// ringmm summa: distributed C = alpha ⊗ (op(A) ⊗ op(B)) ⊕ beta ⊗ C0 with SUMMA over MPI (and NCCL
// on GPUs), run under mpirun. Every rank parses the same command line and reaches the same verdict;
// only rank 0 prints.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/random_data.hpp"
#include "mpi_tools.hpp"
#include "ringmm/dist.hpp"
#include "ringmm/ringmm.hpp"
#if RINGMM_HAVE_NCCL
#include "ringmm/dist_device.hpp"
#endif
#include "support.hpp"

namespace ringmm::tools {

namespace {

constexpr const char* usage = R"(usage: mpirun -n P ringmm summa [options]

Distributed SUMMA over a pr x pc process grid in a 2D block-cyclic layout: broadcast
variant (panels broadcast along process rows and columns) or ring variant (panels passed hop by
hop around the rings); the panels of step k+1 travel while step k multiplies.

inputs (either files or a random problem):
  --a FILE.npy --b FILE.npy   read on rank 0 and scattered
  --c FILE.npy                C0 (then beta defaults to 1̄)
  --size N | M,N,K            random A, B generated in place on every rank (no files)
  --seed S                    seed of the random data (default 1)
output:
  --out FILE.npy              gather C to rank 0 and write it
  --results FILE.json         a machine-readable record of the run (rank 0 writes it)
  --check                     gather A, B, C and compare with the single-process reference
product:
  --semiring NAME             {semirings} (default: plus-times)
  --type T                    {types} (default: the dtype of --a, else f32;
                              u8 for or-and)
  --transa, --transb          use op(A) = Aᵀ / op(B) = Bᵀ (redistributed once before the loop)
  --alpha X, --beta X         scalars (inf / -inf are the tropical 0̄)
  --argmax                    also the index K* of each entry's winning term (dist::gemm_argmax; for
                              max-plus, min-plus, max-min, max-times, min-max): ties to the smallest
                              k, −1 where the result is 0̄; --check compares it too, --out writes C
distribution:
  --grid PRxPC                process grid (default: the near-square factorisation of P)
  --block NB                  block size of the block-cyclic layout, the panels' width (default 1024
                              when the ranks run on GPUs, 256 on the CPU)
  --variant auto|broadcast|ring  how panels travel (default auto: ring on grids of at most 2 process
                              rows and 2 columns, where each panel makes one hop; broadcast otherwise)
  --backend auto|cpu|cuda     local multiplies; cuda needs NCCL and one GPU per rank
  --threads N                 CPU threads per rank (default: cores / ranks on the node)
  --reps R                    timed repetitions after one warm-up; the median is reported (default 3);
                              a call of a second or more reports its time on stderr as it ends
  --resident                  keep A, B, C on the devices (needs --backend cuda or auto with a GPU per
                              rank): the initial distribution to the devices (a scatter from rank 0
                              through pinned buffers for --a/--b files; with --size, each rank's
                              generated part uploaded) is timed once and reported apart from the
                              products, which run with no host staging

Prints the time of the whole call (slowest rank, all ranks starting after a barrier: argument and
value checks, transposes and, for host matrices on CUDA, the host-device staging included; with
--resident also the distribution and the sum of both), updates/s in total and per rank, the bytes
each rank sent and received beside the 2D lower bound (M·K + K·N)/√P words, and the bytes staged.
)";

struct Request {
  std::optional<std::string> a_path, b_path, c_path, out_path, results_path;
  index_t m = 0, n = 0, k = 0;
  std::uint64_t seed = 1;
  SemiringKind kind = SemiringKind::plus_times;
  std::optional<DType> type;
  bool trans_a = false, trans_b = false, check = false, resident = false, argmax = false;
  std::optional<double> alpha, beta;
  int prow = 0, pcol = 0;  // 0: near-square
  index_t block = 0;  // 0: default_block of the backend the ranks run on
  dist::Variant variant = dist::Variant::automatic;
  Backend backend = Backend::automatic;
  int threads = 0;
  int reps = 3;
};

Request parse(const Args& args) {
  const Options opt(args, {{"a", true},       {"b", true},       {"c", true},        {"out", true},     {"results", true},
                           {"size", true},    {"seed", true},    {"semiring", true}, {"type", true},    {"transa", false},
                           {"transb", false}, {"alpha", true},   {"beta", true},     {"grid", true},    {"block", true},
                           {"variant", true}, {"backend", true}, {"threads", true},  {"reps", true},    {"check", false},
                           {"resident", false}, {"argmax", false}});
  Request req;
  req.a_path = opt.get("a");
  req.b_path = opt.get("b");
  req.c_path = opt.get("c");
  req.out_path = opt.get("out");
  req.results_path = opt.get("results");
  if (req.results_path && (req.results_path->size() < 5 || !req.results_path->ends_with(".json")))
    throw UsageError("--results", "expected a .json file name, got '" + *req.results_path + "'");
  if (opt.has("size")) {
    if (req.a_path || req.b_path || req.c_path) throw UsageError("--size", "give either --size or --a/--b files, not both");
    const std::vector<std::string> items = split_list(*opt.get("size"), "--size");
    if (items.size() != 1 && items.size() != 3) throw UsageError("--size", "expected N or M,N,K");
    std::vector<index_t> dims;
    for (const auto& item : items) dims.push_back(parse_integer(item, "--size", 0, index_t(1) << 40));
    req.m = dims[0];
    req.n = dims.size() == 3 ? dims[1] : dims[0];
    req.k = dims.size() == 3 ? dims[2] : dims[0];
  } else if (!req.a_path || !req.b_path) {
    throw UsageError(req.a_path ? "--b" : "--a", "missing: give --a and --b files, or --size for random matrices");
  }
  req.seed = std::uint64_t(opt.integer_or("seed", 1, 0, INT64_MAX));
  const ProductOptions product = parse_product_options(opt, req.c_path.has_value(), false);
  req.kind = product.kind, req.type = product.type, req.check = product.check;
  req.trans_a = product.trans_a, req.trans_b = product.trans_b, req.alpha = product.alpha, req.beta = product.beta;
  if (auto g = opt.get("grid")) std::tie(req.prow, req.pcol) = parse_grid(*g, "--grid");
  req.block = opt.integer_or("block", 0, 1, 1 << 24);
  req.variant = dist::parse_variant(opt.get_or("variant", "auto"), "--variant");
  req.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  req.threads = int(opt.integer_or("threads", 0, 0, 4096));
  req.reps = int(opt.integer_or("reps", 3, 1, 1000));
  req.resident = opt.flag("resident");
  req.argmax = opt.flag("argmax");
  if (req.resident && req.backend == Backend::cpu)
    throw UsageError("--resident", "keeps the matrices on the devices; it cannot run with --backend cpu");
#if !RINGMM_HAVE_NCCL
  if (req.resident) throw UsageError("--resident", "needs ringmm built with CUDA and NCCL");
#endif
  return req;
}

// The panels' width when --block is not given. On GPUs 1024: the local products of K = 1024 panels
// run within 3 % of one whole product's rate, C is read and written once per panel (a quarter of
// what 256 costs), and 2048 was slower on four H200s (docs/distributed.md). On the CPU 256.
index_t default_block(Backend backend) { return backend == Backend::cuda ? 1024 : 256; }

// Random data by global position, so that the matrix does not depend on the grid: each (row,
// block column) run of entries has its own seed, so rows fill in parallel.
template <class S>
void fill_random(dist::DistMatrix<typename S::value_type>& x, std::uint64_t seed, index_t k, int threads) {
  const MatrixView<typename S::value_type> v = x.local();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (index_t li = 0; li < v.rows; ++li) {
    std::mt19937_64 rng;
    const index_t gi = x.row_map().to_global(x.grid_row(), li);
    for (index_t lj = 0; lj < v.cols; ++lj) {
      const index_t gj = x.col_map().to_global(x.grid_col(), lj);
      if (lj == 0 || gj % x.block() == 0)
        rng.seed(seed * 0x9e3779b97f4a7c15ull ^ (std::uint64_t(gi) << 32) ^ std::uint64_t(gj / x.block()));
      v(li, lj) = measure::random_value<S>(rng, k);
    }
  }
}

template <class T> MatrixView<const T> dense_view(const npy::Matrix& m) {
  return {reinterpret_cast<const T*>(m.data.data()), m.rows, m.cols, std::max<index_t>(1, m.cols), Layout::row_major};
}

template <class T> std::vector<T> gather_all(const dist::Grid& grid, const dist::DistMatrix<T>& x) {
  std::vector<T> whole(grid.rank() == 0 ? std::size_t(x.rows() * x.cols()) : 0);
  dist::gather<T>(grid, x, MatrixView<T>{whole.data(), x.rows(), x.cols(), std::max<index_t>(1, x.cols()), Layout::row_major}, 0);
  return whole;
}

struct Summary {
  double seconds = 0;
  double staged_max = 0;  // host ↔ device bytes of the rank that copied most
  double distribution = 0;  // --resident: A, B, C to the devices, once (slowest rank)
  double sent_max = 0, sent_mean = 0, received_max = 0, received_mean = 0;
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

template <class S>
int run(const Request& req, const dist::Grid& grid, npy::Matrix& a_file, npy::Matrix& b_file,
        std::optional<npy::Matrix>& c_file) {
  using T = typename S::value_type;
  if constexpr (!semiring_traits<S>::selects) {
    if (req.argmax)
      throw UsageError("--argmax", std::string(to_string(S::kind)) + "'s ⊕ does not select one term; --argmax needs "
                                   "max-plus, min-plus, max-min, max-times or min-max");
  }
  const bool root = grid.rank() == 0;
  const Op op_a = req.trans_a ? Op::T : Op::N, op_b = req.trans_b ? Op::T : Op::N;
  const bool files = bool(req.a_path);
  const index_t a_rows = files ? a_file.rows : (req.trans_a ? req.k : req.m);
  const index_t a_cols = files ? a_file.cols : (req.trans_a ? req.m : req.k);
  const index_t b_rows = files ? b_file.rows : (req.trans_b ? req.n : req.k);
  const index_t b_cols = files ? b_file.cols : (req.trans_b ? req.k : req.n);
  const index_t m = req.trans_a ? a_cols : a_rows, k = req.trans_a ? a_rows : a_cols;
  const index_t kb = req.trans_b ? b_cols : b_rows, n = req.trans_b ? b_rows : b_cols;
  const std::string a_name = req.a_path.value_or("A"), b_name = req.b_path.value_or("B");
  if (k != kb)
    throw Error(Errc::dimension_mismatch, b_name,
                "op(B) is " + std::to_string(kb) + "x" + std::to_string(n) + " but op(A) from " + a_name + " is " +
                    std::to_string(m) + "x" + std::to_string(k) + " (inner dimensions differ)");
  if (c_file && (c_file->rows != m || c_file->cols != n))
    throw Error(Errc::dimension_mismatch, *req.c_path,
                "C0 is " + std::to_string(c_file->rows) + "x" + std::to_string(c_file->cols) + " but the product is " +
                    std::to_string(m) + "x" + std::to_string(n));
  const T alpha = req.alpha ? scalar_from_double<S>(*req.alpha, "--alpha") : S::one();
  const T beta = req.beta ? scalar_from_double<S>(*req.beta, "--beta") : (c_file ? S::one() : S::zero());

  dist::DistMatrix<T> a(grid, a_rows, a_cols, req.block), b(grid, b_rows, b_cols, req.block), c0(grid, m, n, req.block);
  if (files) {
    dist::scatter<T>(grid, dense_view<T>(a_file), a, 0);
    dist::scatter<T>(grid, dense_view<T>(b_file), b, 0);
    if (!req.resident) a_file.data = {}, b_file.data = {};  // --resident scatters them again, to the devices
    if (c_file) dist::scatter<T>(grid, dense_view<T>(*c_file), c0, 0);
  }
  dist::Options options;
  options.variant = req.variant;
  options.context.backend = req.backend;
  options.context.cpu_threads = req.threads > 0 ? req.threads : default_threads(grid.comm());
  if (!files) {
    fill_random<S>(a, req.seed, k, options.context.cpu_threads);
    fill_random<S>(b, req.seed + 1, k, options.context.cpu_threads);
  }
  options.context.on_notice = [root](std::string_view note) {
    if (root) std::cerr << "ringmm summa: note: " << note << "\n";
  };

  // One warm-up, then the timed repetitions; each rep starts from C0. Times are the slowest rank's.
  dist::DistMatrix<T> c = c0;
  // --argmax: the indexes, −1 coming in (an entry where β ⊗ C0 wins keeps it).
  dist::DistMatrix<std::int32_t> k_star0(grid, m, n, req.block);
  std::fill_n(k_star0.local().data, k_star0.local_rows() * k_star0.local_cols(), std::int32_t(-1));
  dist::DistMatrix<std::int32_t> k_star = k_star0;
  dist::Stats stats;
  std::vector<double> times;
  Summary sum;
  auto slowest = [&](double seconds) {
    MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, grid.comm());
    return seconds;
  };
  // One product's time: every rank starts after a barrier; the slowest rank's time counts.
  auto timed = [&](auto&& product) {
    MPI_Barrier(grid.comm());
    const double start = MPI_Wtime();
    stats = product();
    return slowest(MPI_Wtime() - start);
  };
  // Progress on stderr for calls of a second or more, so that a large run does not sit silent.
  auto report = [&](int rep, double seconds) {
    if (!root || seconds < 1.0) return;
    std::cerr << "ringmm summa: "
              << (rep == 0 ? std::string("warm-up") : "repetition " + std::to_string(rep) + " of " + std::to_string(req.reps))
              << " took " << fixed(seconds, 2) << " s\n";
  };
  if (req.resident) {
#if RINGMM_HAVE_NCCL
    // The initial distribution, timed once: from rank 0's files through pinned buffers, or each
    // rank's generated part uploaded.
    auto distribute = [&](const npy::Matrix* file, const dist::DistMatrix<T>& part) {
      if (!file) return dist::to_device(grid, part);
      dist::DeviceDistMatrix<T> d(grid, part.rows(), part.cols(), part.block());
      dist::scatter<T>(grid, dense_view<T>(*file), d, 0);
      return d;
    };
    // The grid's device set-up (CUDA context, NCCL communicators) was made once, by ranks_backend
    // before the layout, so that it is not counted as distribution.
    MPI_Barrier(grid.comm());
    const double start = MPI_Wtime();
    const dist::DeviceDistMatrix<T> a_dev = distribute(files ? &a_file : nullptr, a);
    const dist::DeviceDistMatrix<T> b_dev = distribute(files ? &b_file : nullptr, b);
    dist::DeviceDistMatrix<T> c_dev = distribute(c_file ? &*c_file : nullptr, c0);
    dist::DeviceDistMatrix<std::int32_t> k_dev = dist::to_device(grid, k_star0);
    sum.distribution = slowest(MPI_Wtime() - start);
    const bool reads_c = !(beta == S::zero());
    for (int rep = 0; rep <= req.reps; ++rep) {
      if (rep > 0 && reads_c) {  // untimed: each rep starts from C0 (and K*0)
        c_dev = dist::to_device(grid, c0);
        if (req.argmax) k_dev = dist::to_device(grid, k_star0);
      }
      const double seconds = timed([&] {
        if constexpr (semiring_traits<S>::selects)
          if (req.argmax) return dist::gemm_argmax<S>(grid, op_a, a_dev, op_b, b_dev, c_dev, k_dev, alpha, beta, options);
        return dist::gemm<S>(grid, op_a, a_dev, op_b, b_dev, c_dev, alpha, beta, options);
      });
      report(rep, seconds);
      if (rep > 0) times.push_back(seconds);
    }
    c = dist::to_host(grid, c_dev);
    if (req.argmax) k_star = dist::to_host(grid, k_dev);
#endif
  } else {
    for (int rep = 0; rep <= req.reps; ++rep) {
      c = c0;
      k_star = k_star0;
      const double seconds = timed([&] {
        if constexpr (semiring_traits<S>::selects)
          if (req.argmax) return dist::gemm_argmax<S>(grid, op_a, a, op_b, b, c, k_star, alpha, beta, options);
        return dist::gemm<S>(grid, op_a, a, op_b, b, c, alpha, beta, options);
      });
      report(rep, seconds);
      if (rep > 0) times.push_back(seconds);
    }
  }
  std::sort(times.begin(), times.end());
  sum.seconds = times[times.size() / 2];
  double traffic[3] = {double(stats.bytes_sent), double(stats.bytes_received), double(stats.staged_bytes)};
  double maxima[3], totals[2];
  MPI_Allreduce(traffic, maxima, 3, MPI_DOUBLE, MPI_MAX, grid.comm());
  MPI_Allreduce(traffic, totals, 2, MPI_DOUBLE, MPI_SUM, grid.comm());
  sum.sent_max = maxima[0];
  sum.received_max = maxima[1];
  sum.staged_max = maxima[2];
  sum.sent_mean = totals[0] / grid.size();
  sum.received_mean = totals[1] / grid.size();

  std::optional<CheckResult> check;
  if (req.check) {
    const std::vector<T> a_all = gather_all(grid, a), b_all = gather_all(grid, b), c0_all = gather_all(grid, c0);
    const std::vector<T> c_all = gather_all(grid, c);
    const std::vector<std::int32_t> k_all = req.argmax ? gather_all(grid, k_star) : std::vector<std::int32_t>{};
    int pass = 1;
    if (root) {
      std::vector<T> expected = c0_all;
      const MatrixView<const T> a_view{a_all.data(), a_rows, a_cols, std::max<index_t>(1, a_cols), Layout::row_major};
      const MatrixView<const T> b_view{b_all.data(), b_rows, b_cols, std::max<index_t>(1, b_cols), Layout::row_major};
      const MatrixView<T> expected_view{expected.data(), m, n, std::max<index_t>(1, n), Layout::row_major};
      const auto p = ringmm::make_problem<S>(op_a, a_view, op_b, b_view, expected_view, alpha, beta);
      if (!req.argmax) {
        parallel_reference<S>(p);
        check = compare_results<S>(p, expected, c_all, c0_all.data());
      } else if constexpr (semiring_traits<S>::selects) {
        // The single-process argmax on the CPU; its ⊕ selects, so C and K* must match exactly.
        std::vector<std::int32_t> expected_k(std::size_t(m * n), -1);
        Context cpu;
        cpu.backend = Backend::cpu;
        cpu.cpu_threads = options.context.cpu_threads;
        gemm_argmax<S>(cpu, op_a, a_view, op_b, b_view, expected_view,
                       MatrixView<std::int32_t>{expected_k.data(), m, n, std::max<index_t>(1, n), Layout::row_major}, alpha,
                       beta);
        check = compare_results<S>(p, expected, c_all, c0_all.data());
        std::size_t wrong = 0, first = 0;
        for (std::size_t e = 0; e < expected_k.size(); ++e)
          if (expected_k[e] != k_all[e] && wrong++ == 0) first = e;
        if (wrong > 0 && check->pass)
          *check = CheckResult{false, true, std::to_string(wrong) + " indexes of K* differ from the single-process argmax, the first at (" +
                                                std::to_string(first / std::size_t(std::max<index_t>(1, n))) + ", " +
                                                std::to_string(first % std::size_t(std::max<index_t>(1, n))) + "): " +
                                                std::to_string(k_all[first]) + " instead of " +
                                                std::to_string(expected_k[first])};
      }
      pass = check->pass;
    }
    MPI_Bcast(&pass, 1, MPI_INT, 0, grid.comm());
    if (!root) check = CheckResult{pass != 0, true, ""};
  }
  if (req.out_path && (!check || check->pass)) dist::write_npy<T>(grid, c, *req.out_path, 0);

  const double updates = stats.updates * lanes(dtype_of<T>::value);
  const double bound_bytes = dist::lower_bound_words(m, n, k, grid.size()) * double(sizeof(T));
  const double rate = sum.seconds > 0 ? updates / sum.seconds : 0;
  if (root) {
    std::cout << "semiring  " << to_string(S::kind) << " (" << to_string(dtype_of<T>::value) << ")"
              << (req.argmax ? ", with the argmax" : "") << "\n"
              << "shape     M=" << m << " N=" << n << " K=" << k << "  (op(A) " << to_string(op_a) << ", op(B) "
              << to_string(op_b) << ")\n"
              << "grid      " << grid.rows() << "x" << grid.cols() << ", block " << req.block << ", variant "
              << dist::to_string(stats.variant) << ", " << stats.steps << " steps\n"
              << "backend   " << to_string(stats.backend) << " (" << options.context.cpu_threads << " CPU threads per rank)\n"
              << "time      " << fixed(sum.seconds * 1e3, 3) << " ms (median of " << req.reps
              << ", slowest rank, the whole call)\n";
    if (req.resident)
      std::cout << "distribute " << fixed(sum.distribution * 1e3, 3) << " ms once (A, B, C0 to the devices: "
                << (files ? "scatter from rank 0 through pinned buffers" : "each rank's generated part uploaded")
                << "); time with it " << fixed((sum.seconds + sum.distribution) * 1e3, 3) << " ms\n";
    std::cout << "rate      " << (updates > 0 ? scientific(rate) + " updates/s, " + scientific(rate / grid.size()) + " per rank" : "-")
              << "\n"
              << "sent      per rank max " << fixed(sum.sent_max / 1e6, 3) << " MB, mean " << fixed(sum.sent_mean / 1e6, 3)
              << " MB\n"
              << "received  per rank max " << fixed(sum.received_max / 1e6, 3) << " MB, mean "
              << fixed(sum.received_mean / 1e6, 3) << " MB\n"
              << "bound     (M·K + K·N)/√P = " << fixed(bound_bytes / 1e6, 3) << " MB per rank; mean received / bound = "
              << (bound_bytes > 0 ? fixed(sum.received_mean / bound_bytes, 3) : std::string("-")) << "\n";
    if (sum.staged_max > 0)
      std::cout << "staged    per rank max " << fixed(sum.staged_max / 1e6, 3) << " MB (A, B and C between host and device)\n";
    if (check)
      std::cout << "check     " << (check->pass ? "PASS" : "FAIL") << (check->exact ? " (exact)" : " (within rounding bound)")
                << "\n";
    if (req.out_path && (!check || check->pass)) std::cout << "wrote     " << *req.out_path << "\n";
    if (req.results_path) {
      std::ofstream out(*req.results_path);
      out << "[{\"suite\": \"summa\", \"date\": \"" << utc_timestamp() << "\", \"device\": \""
          << json_escape(stats.backend == Backend::cuda ? gpu_name() : cpu_model()) << "\", \"backend\": \""
          << to_string(stats.backend) << "\", \"semiring\": \"" << to_string(S::kind) << "\", \"type\": \""
          << to_string(dtype_of<T>::value) << "\", \"product\": \"" << (req.argmax ? "argmax" : "gemm") << "\", \"m\": " << m << ", \"n\": " << n << ", \"k\": " << k
          << ", \"transa\": " << (req.trans_a ? "true" : "false") << ", \"transb\": " << (req.trans_b ? "true" : "false")
          << ", \"ranks\": " << grid.size() << ", \"grid_rows\": " << grid.rows() << ", \"grid_cols\": " << grid.cols()
          << ", \"block\": " << req.block << ", \"variant\": \"" << dist::to_string(stats.variant)
          << "\", \"reps\": " << req.reps << ", \"seconds\": " << sum.seconds << ", \"resident\": "
          << (req.resident ? "true" : "false") << ", \"distribution_seconds\": " << sum.distribution
          << ", \"staged_bytes_max\": " << sum.staged_max
          << ", \"updates_per_s\": " << rate
          << ", \"bytes_sent_max\": " << sum.sent_max << ", \"bytes_sent_mean\": " << sum.sent_mean
          << ", \"bytes_received_max\": " << sum.received_max << ", \"bytes_received_mean\": " << sum.received_mean
          << ", \"lower_bound_bytes\": " << bound_bytes << "}]\n";
      if (!out) print_error("summa", *req.results_path + ": could not write the results file");
    }
  }
  if (check && !check->pass) {
    if (root) print_error("summa", "--check: " + check->detail + (req.out_path ? "; " + *req.out_path + " not written" : ""));
    return 1;
  }
  return 0;
}

}  // namespace

int summa_command(const Args& args) {
  MpiSession session;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (std::find(args.begin(), args.end(), "--help") != args.end() || std::find(args.begin(), args.end(), "-h") != args.end()) {
    if (rank == 0) std::cout << usage_text(usage);
    return 0;
  }
  try {
    agree_on_command_line(args, "ringmm summa");
    Request req;
    try {
      req = parse(args);
    } catch (const UsageError& e) {
      const std::string text = e.what();
      throw Error(Errc::invalid_argument, e.subject(), text.substr(e.subject().size() + 2));
    }

    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (req.prow == 0) std::tie(req.prow, req.pcol) = dist::near_square_grid(size);
    if (req.prow * req.pcol != size)
      throw Error(Errc::invalid_argument, "--grid",
                  std::to_string(req.prow) + "x" + std::to_string(req.pcol) + " needs " + std::to_string(req.prow * req.pcol) +
                      " ranks but mpirun started " + std::to_string(size));
    const dist::Grid grid(MPI_COMM_WORLD, req.prow, req.pcol);
    req.backend = ranks_backend(grid, req.backend, "ringmm summa");
    if (req.resident && req.backend != Backend::cuda)
      throw Error(Errc::backend_unavailable, "--resident", "keeps the matrices on the devices, but not every rank has a GPU");
    if (req.block == 0) req.block = default_block(req.backend);

    npy::Matrix a_file, b_file;
    std::optional<npy::Matrix> c_file;
    DType element = req.type.value_or(req.kind == SemiringKind::or_and ? DType::u8 : DType::f32);
    if (req.a_path) {
      a_file = dist::read_npy_on_root(grid, *req.a_path);
      b_file = dist::read_npy_on_root(grid, *req.b_path);
      if (req.c_path) c_file = dist::read_npy_on_root(grid, *req.c_path);
      element = req.type.value_or(a_file.dtype);
      auto require_type = [&](const npy::Matrix& x, const std::string& path) {
        if (x.dtype != element)
          throw Error(Errc::unsupported, path,
                      "holds " + std::string(to_string(x.dtype)) + " but the product is over " +
                          std::string(to_string(element)) + " (ringmm does not convert element types)");
      };
      require_type(a_file, *req.a_path);
      require_type(b_file, *req.b_path);
      if (c_file) require_type(*c_file, *req.c_path);
    }
    if (!is_supported(req.kind, element))
      throw Error(Errc::unsupported, req.a_path.value_or("--type"), unsupported_message(req.kind, element));
    return visit_semiring(req.kind, element, [&](auto tag) {
      using S = typename decltype(tag)::type;
      return run<S>(req, grid, a_file, b_file, c_file);
    });
  } catch (const Error& e) {
    // Every error above is reached alike on every rank (agreement checks); rank 0 reports it.
    if (rank == 0) print_error("summa", describe(e));
    return e.code() == Errc::invalid_argument ? 2 : 1;
  }
}

}  // namespace ringmm::tools
