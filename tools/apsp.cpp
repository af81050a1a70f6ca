// ringmm apsp: all-pairs shortest (or DAG longest) paths with routes, from a .mtx or .npy graph,
// or on a random dense graph (--bench N) for timing; with --summa, distributed under mpirun
// (apsp_summa.cpp, which shares the parsing, the graph loading and the outputs declared in apsp.hpp).
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "apsp.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "measure/apsp_timing.hpp"
#include "measure/records.hpp"
#include "measure/timer.hpp"
#include "ringmm/apsp.hpp"
#include "ringmm/mtx.hpp"
#include "ringmm/npy.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

void* allocate_matrix_memory(std::size_t bytes) {
  constexpr std::size_t huge_page = std::size_t(2) << 20;
  if (bytes < 2 * huge_page) {
    if (void* p = std::malloc(bytes ? bytes : 1)) return p;
    throw std::bad_alloc();
  }
  const std::size_t rounded = (bytes + huge_page - 1) / huge_page * huge_page;
  void* p = std::aligned_alloc(huge_page, rounded);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, rounded, MADV_HUGEPAGE);  // a hint: where transparent huge pages are off, nothing changes
#endif
  return p;
}

void free_matrix_memory(void* p) noexcept { std::free(p); }

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string route_text(const std::vector<index_t>& path) {
  std::string text;
  for (std::size_t s = 0; s < path.size(); ++s) text += (s ? " -> " : "") + std::to_string(path[s]);
  return text;
}

template <class T> int run_apsp(ApspRequest& req) {
  const auto started = std::chrono::steady_clock::now();
  auto seconds_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  index_t n = 0;
  std::string summary;
  const std::string name = graph_name(req);
  // --bench on a GPU: the device starts up and loads its kernels (a solve of 1024 vertices) while
  // the host makes the graph, so that neither the timing nor the whole command waits for both.
  double warm_up_seconds = 0;
  std::exception_ptr warm_up_error;
  std::thread warm_up;
  if (!req.graph_path && req.bench_vertices > 1024)
    warm_up = std::thread([&, ctx = req.ctx, options = req.options, density = req.bench_density, seed = req.seed] {
      try {
        const auto warm_up_started = std::chrono::steady_clock::now();
        if (ctx.resolved_backend() != Backend::cuda) return;
        constexpr index_t small_n = 1024;
        Weights<T> small(std::size_t(small_n * small_n));
        for (index_t i = 0; i < small_n; ++i)
          for (index_t j = 0; j < small_n; ++j)
            small[std::size_t(i * small_n + j)] = bench_weight<T>(i, j, small_n, density, seed);
        ApspOptions small_options = options;
        small_options.block = std::min<index_t>(options.block, small_n);
        apsp<T>(ctx, row_major<const T>(small.data(), small_n, small_n), small_options);
        warm_up_seconds = seconds_since(warm_up_started);
      } catch (...) {
        warm_up_error = std::current_exception();
      }
    });
  const auto join_warm_up = [&] {
    if (warm_up.joinable()) warm_up.join();
  };
  Weights<T> weights;
  try {
    weights = load_graph<T>(req, n, summary);
  } catch (...) {
    join_warm_up();
    throw;
  }
  const double graph_seconds = seconds_since(started);
  join_warm_up();
  if (warm_up_error) std::rethrow_exception(warm_up_error);
  check_route(req, n);
  // The library returns no timings: the call is timed here (measure/apsp_timing.hpp), the solve
  // apart from the copies around it.
  const Backend backend = req.ctx.resolved_backend();
  const index_t block = std::max<index_t>(1, std::min(req.options.block > 0 ? req.options.block : apsp_default_block(backend), n));
  // Left unwritten: every solve writes them whole (zeroing them first is a pass over 8n² bytes).
  const std::size_t count = std::size_t(n) * std::size_t(n);
  Weights<T> dist(count);
  Weights<std::int32_t> next(count);
  std::vector<double> solve_times, total_times;
  for (int rep = 0; rep < req.reps; ++rep) {
    try {
      const measure::ApspTiming t = measure::time_apsp<T>(req.ctx, weights.data(), n, req.options, dist.data(), next.data());
      solve_times.push_back(t.solve_seconds);
      total_times.push_back(t.total_seconds);
    } catch (const CycleError&) {
      throw;
    } catch (const Error& e) {
      throw naming_the_graph(e, req);
    }
  }
  const double solve = measure::median(solve_times), total = measure::median(total_times);
  const double rate = n > 0 && solve > 0 ? double(n) * double(n) * double(n) / solve : 0;
  const char* semiring = req.options.longest ? "max-plus" : "min-plus";
  std::cout << "graph     " << name << ": " << summary << "\n"
            << "paths     " << (req.options.longest ? "longest" : "shortest") << " (" << semiring << " "
            << to_string(dtype_of<T>::value) << ")\n"
            << "backend   " << to_string(backend) << ", block " << block << "\n"
            << "time      solve " << fixed(solve * 1e3, 3) << " ms (distances and successors"
            << (backend == Backend::cuda ? ", on the device" : "") << "), total " << fixed(total * 1e3, 3) << " ms"
            << (req.reps > 1 ? " (median of " + std::to_string(req.reps) + ")" : "") << "\n"
            << "rate      " << (rate > 0 ? scientific(rate) + " updates/s (n^3 / solve time)" : "-") << "\n";

  if (req.record_path) {
    measure::Record r;
    r.suite = "apsp";
    r.device = backend == Backend::cuda ? gpu_name() : cpu_model();
    r.backend = std::string(to_string(backend));
    r.kernel = "blocked-fw-argmax b=" + std::to_string(block);
    r.semiring = semiring;
    r.type = std::string(to_string(dtype_of<T>::value));
    r.product = "apsp";
    r.m = r.n = r.k = n;
    r.batch = 1;
    r.seconds = solve;
    r.seconds_with_transfers = total;
    if (rate > 0) r.updates_per_s = rate;
    r.date = utc_timestamp();
    measure::write_records(*req.record_path, {r});
    std::cout << "record    " << *req.record_path << "\n";
  }

  write_outputs<T>(req, n, dist.data(), next.data());
  print_route<T>(req, n, dist.data(), next.data());
  std::cout << "whole     " << fixed(seconds_since(started), 3) << " s: graph " << fixed(graph_seconds, 3) << " s"
            << (warm_up_seconds > 1e-3 ? ", device warm-up " + fixed(warm_up_seconds, 3) + " s (beside the graph)" : std::string())
            << ", " << req.reps << (req.reps > 1 ? " solves" : " solve") << " with copies "
            << fixed(std::accumulate(total_times.begin(), total_times.end(), 0.0), 3) << " s\n";
  return 0;
}

// Pulls out what the option parser cannot take: the graph (the one positional argument) and
// "--route I J" (two values).
Args split_positionals(const Args& args, ApspRequest& req, std::initializer_list<OptionSpec> spec) {
  Args rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--route") {
      if (i + 2 >= args.size()) throw UsageError("--route", "needs two vertices: --route I J");
      if (req.route) throw UsageError("--route", "given more than once");
      const index_t max = std::numeric_limits<std::int32_t>::max();
      req.route = {parse_integer(args[i + 1], "--route", 0, max), parse_integer(args[i + 2], "--route", 0, max)};
      i += 2;
      continue;
    }
    if (arg.compare(0, 2, "--") == 0) {
      rest.push_back(arg);
      const std::string name = arg.substr(2, arg.find('=') - 2);
      const bool takes_value = std::any_of(spec.begin(), spec.end(), [&](const OptionSpec& o) { return o.name == name && o.takes_value; });
      if (takes_value && arg.find('=') == std::string::npos && i + 1 < args.size()) rest.push_back(args[++i]);
      continue;
    }
    if (req.graph_path) throw UsageError(arg, "unexpected argument (the graph is " + *req.graph_path + ")");
    req.graph_path = arg;
  }
  return rest;
}

// Refuses, before allocating, a graph whose dense matrices (weights, distances, successors) cannot
// fit in this machine's memory, naming the size.
template <class T> void check_room(index_t n, const std::string& name) {
  const std::optional<index_t> entries = checked_mul(n, n);
  const double bytes = double(n) * double(n) * double(2 * sizeof(T) + sizeof(std::int32_t));
  const double memory = machine_memory_bytes();
  if (entries && (memory <= 0 || bytes <= memory)) return;
  throw Error(Errc::out_of_memory, name,
              std::to_string(n) + " vertices need " + bytes_text(bytes) +
                  " for the dense weights, distances and successors, more than this machine's " +
                  bytes_text(memory) + " of memory");
}

// The vertex count and weights of a graph file, as T, row-major, +inf where there is no edge.
// A .mtx file's repeated entries keep the best weight (smallest, or largest with --longest).
template <class T> Weights<T> load_weights(ApspRequest& req, index_t& n, std::string& summary) {
  const std::string& path = *req.graph_path;
  const T none = std::numeric_limits<T>::infinity();
  if (req.npy_graph) {
    npy::Matrix m = std::move(*req.npy_graph);
    req.npy_graph.reset();
    if (m.rows != m.cols)
      throw Error(Errc::dimension_mismatch, path, "the adjacency matrix is " + std::to_string(m.rows) + "x" +
                                                      std::to_string(m.cols) + "; it must be square");
    n = m.rows;
    summary = std::to_string(n) + " vertices, dense " + std::string(to_string(m.dtype));
    Weights<T> w(std::size_t(n * n));
    if (m.dtype == DType::f32) std::copy_n(m.view<float>().data, w.size(), w.begin());
    else if (m.dtype == DType::f64) std::copy_n(m.view<double>().data, w.size(), w.begin());
    else
      throw Error(Errc::unsupported, path, "holds " + std::string(to_string(m.dtype)) +
                                               "; an adjacency matrix is f32 or f64 with +inf for no edge");
    return w;
  }
  if (!ends_with(path, ".mtx"))
    throw Error(Errc::unsupported, path, "unknown graph format: expected a .mtx (Matrix Market) or .npy file");
  const mtx::Graph g = mtx::read(path);
  n = g.vertices;
  check_room<T>(n, path);
  Weights<T> w(std::size_t(n * n), none);
  for (const mtx::Edge& e : g.edges) {
    T& x = w[std::size_t(e.from * n + e.to)];
    const T v = T(e.weight);
    if (x == none || (req.options.longest ? v > x : v < x)) x = v;
  }
  summary = std::to_string(n) + " vertices, " + std::to_string(g.edges.size()) + " edges";
  return w;
}

// The whole --bench graph, rows filled in parallel.
template <class T> Weights<T> random_weights(index_t n, double density, std::uint64_t seed) {
  Weights<T> w(std::size_t(n) * std::size_t(n));  // pages first touched by the threads that fill them
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) w[std::size_t(i * n + j)] = bench_weight<T>(i, j, n, density, seed);
  return w;
}

}  // namespace

template <class T> T bench_weight(index_t i, index_t j, index_t n, double density, std::uint64_t seed) {
  auto mix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  const std::uint64_t h = mix(seed * 0x100000001b3ull ^ std::uint64_t(i * n + j));
  const double u = double(h >> 11) * 0x1.0p-53, v = double(mix(h) >> 11) * 0x1.0p-53;
  return u < density ? T(1 + 99 * v) : std::numeric_limits<T>::infinity();
}

template <class T> Weights<T> load_graph(ApspRequest& req, index_t& n, std::string& summary) {
  if (req.graph_path) return load_weights<T>(req, n, summary);
  n = req.bench_vertices;
  check_room<T>(n, "--bench");
  summary = std::to_string(n) + " vertices, density " + fixed(req.bench_density, 3) + ", seed " + std::to_string(req.seed);
  return random_weights<T>(n, req.bench_density, req.seed);
}

std::string graph_name(const ApspRequest& req) { return req.graph_path ? *req.graph_path : "random graph"; }

void check_route(const ApspRequest& req, index_t n) {
  if (req.route)
    for (const index_t v : {req.route->first, req.route->second})
      if (v < 0 || v >= n)
        throw UsageError("--route", "vertex " + std::to_string(v) + " is out of range: " + graph_name(req) + " has " +
                                        std::to_string(n) + " vertices, numbered 0.." + std::to_string(n - 1));
}

Error naming_the_graph(const Error& e, const ApspRequest& req) {
  if (e.subject() != "weights") return e;
  return Error(e.code(), graph_name(req), std::string(e.what()).substr(e.subject().size() + 2));
}

template <class T> void write_outputs(const ApspRequest& req, index_t n, const T* dist, const std::int32_t* next) {
  const DType type = dtype_of<T>::value;
  if (req.out_path) {
    npy::write(*req.out_path, type, n, n, dist);
    std::cout << "wrote     " << *req.out_path << " (" << n << "x" << n << " " << to_string(type) << " distances)\n";
  }
  if (req.next_path) {
    try {
      npy::write(*req.next_path, DType::i32, n, n, next);
    } catch (...) {
      if (req.out_path) std::filesystem::remove(*req.out_path);  // all outputs or none
      throw;
    }
    std::cout << "wrote     " << *req.next_path << " (" << n << "x" << n << " i32 successors)\n";
  }
}

template <class T> void print_route(const ApspRequest& req, index_t n, const T* dist, const std::int32_t* next) {
  if (!req.route) return;
  const auto [from, to] = *req.route;
  const std::vector<index_t> path = ringmm::route(row_major<const std::int32_t>(next, n, n), from, to);
  std::cout << "route     " << from << " to " << to << ": ";
  if (path.empty()) std::cout << "no path\n";
  else std::cout << route_text(path) << " (length " << show_value(dist[std::size_t(from * n + to)]) << ", "
                 << path.size() - 1 << (path.size() == 2 ? " edge" : " edges") << ")\n";
}

ApspRequest parse_apsp(const Args& args) {
  const std::initializer_list<OptionSpec> spec = {{"out", true},     {"next", true},  {"longest", false}, {"backend", true},
                                                  {"block", true},   {"type", true},  {"bench", true},    {"density", true},
                                                  {"seed", true},    {"reps", true},  {"record", true},   {"threads", true},
                                                  {"summa", false},  {"grid", true}};
  ApspRequest req;
  const Options opt(split_positionals(args, req, spec), spec);
  req.out_path = opt.get("out");
  req.next_path = opt.get("next");
  req.record_path = opt.get("record");
  if (req.record_path) check_results_path(*req.record_path, "--record");
  req.options.longest = opt.flag("longest");
  req.options.block = opt.integer_or("block", 0, 1, 1 << 20);
  req.ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  req.ctx.cpu_threads = int(opt.integer_or("threads", 0, 1, 4096));
  req.ctx.on_notice = [](std::string_view note) { std::cerr << "ringmm apsp: note: " << note << "\n"; };
  req.reps = int(opt.integer_or("reps", 1, 1, 1000));
  if (auto t = opt.get("type")) {
    req.type = parse_dtype(*t, "--type");
    if (*req.type != DType::f32 && *req.type != DType::f64) throw UsageError("--type", "apsp computes in f32 or f64");
  }
  if (opt.has("bench")) {
    if (req.graph_path) throw UsageError("--bench", "generates its own graph; leave out " + *req.graph_path);
    req.bench_vertices = opt.integer_or("bench", 0, 1, std::numeric_limits<std::int32_t>::max());
    req.bench_density = opt.real_or("density", 1.0);
    if (!(req.bench_density >= 0 && req.bench_density <= 1)) throw UsageError("--density", "must lie in [0, 1]");
    req.seed = std::uint64_t(opt.integer_or("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  } else {
    if (!req.graph_path) throw UsageError("GRAPH", "no graph given (ringmm apsp GRAPH.mtx|GRAPH.npy --out D.npy)");
    if (!req.out_path && !req.next_path && !req.route)
      throw UsageError("--out", "nothing to do: give --out, --next or --route");
    for (const char* name : {"density", "seed"})
      if (opt.has(name)) throw UsageError("--" + std::string(name), "applies to --bench only");
  }
  if (req.out_path && req.next_path && std::filesystem::absolute(*req.out_path) == std::filesystem::absolute(*req.next_path))
    throw UsageError("--next", "is the same file as --out");

  req.summa = opt.flag("summa");
  if (auto g = opt.get("grid")) {
    if (!req.summa) throw UsageError("--grid", "applies to --summa only (mpirun -n P ringmm apsp GRAPH --summa --grid PRxPC)");
    std::tie(req.prow, req.pcol) = parse_grid(*g, "--grid");
  }
  if (req.summa && req.record_path) throw UsageError("--record", "is not available with --summa");
  return req;
}

// The element type: --type, else a .npy file's own, else f32 for --bench and f64 for .mtx (exact
// for any weight the file can spell).
DType apsp_type(const ApspRequest& req, std::optional<DType> npy_dtype) {
  if (req.type) return *req.type;
  if (!req.graph_path) return DType::f32;
  if (is_npy(req)) return npy_dtype == DType::f64 ? DType::f64 : DType::f32;
  return DType::f64;
}

bool is_npy(const ApspRequest& req) { return req.graph_path && ends_with(*req.graph_path, ".npy"); }

int apsp_command(const Args& args) {
  if (std::find(args.begin(), args.end(), "--summa") != args.end()) {
#if RINGMM_TOOL_HAS_SUMMA
    return apsp_summa_command(args);
#else
    throw Error(Errc::backend_unavailable, "--summa",
                mpi_compiled() ? "this build of the tool has no distributed layer"
                               : "this build of ringmm has no MPI (configure with RINGMM_ENABLE_MPI=ON)");
#endif
  }
  ApspRequest req = parse_apsp(args);
  if (is_npy(req)) req.npy_graph = npy::read(*req.graph_path);
  const DType type = apsp_type(req, req.npy_graph ? std::optional(req.npy_graph->dtype) : std::nullopt);
  return type == DType::f32 ? run_apsp<float>(req) : run_apsp<double>(req);
}

#define RINGMM_APSP_TOOL(T)                                                                                   \
  template T bench_weight<T>(index_t, index_t, index_t, double, std::uint64_t);                                 \
  template Weights<T> load_graph<T>(ApspRequest&, index_t&, std::string&);                                \
  template void write_outputs<T>(const ApspRequest&, index_t, const T*, const std::int32_t*);                 \
  template void print_route<T>(const ApspRequest&, index_t, const T*, const std::int32_t*);
RINGMM_APSP_TOOL(float)
RINGMM_APSP_TOOL(double)
#undef RINGMM_APSP_TOOL



}  // namespace ringmm::tools
