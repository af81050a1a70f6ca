// What `ringmm apsp` (apsp.cpp) and its distributed form `ringmm apsp --summa` (apsp_summa.cpp)
// share: the request, its parsing, the graph loading and the outputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "ringmm/apsp.hpp"
#include "ringmm/npy.hpp"

namespace ringmm::tools {

struct ApspRequest {
  std::optional<std::string> graph_path;  // absent with --bench
  index_t bench_vertices = 0;
  double bench_density = 1.0;
  std::uint64_t seed = 1;
  int reps = 1;
  std::optional<std::string> out_path, next_path, record_path;
  std::optional<std::pair<index_t, index_t>> route;
  std::optional<DType> type;
  std::optional<npy::Matrix> npy_graph;  // a .npy graph, read once to learn its element type
  ApspOptions options;
  Context ctx;
  bool summa = false;      // distributed under mpirun
  int prow = 0, pcol = 0;  // --grid; 0: near-square
};

// The command line, checked as far as it can be without the graph (UsageError otherwise).
ApspRequest parse_apsp(const Args& args);
bool is_npy(const ApspRequest& req);
// The element type of the solve: --type, else the .npy file's (npy_dtype), f64 for .mtx, f32 for --bench.
DType apsp_type(const ApspRequest& req, std::optional<DType> npy_dtype);
// Entry (i, j) of the --bench graph of n vertices: an edge with probability `density`, of weight
// uniform in [1, 100), else +inf; a counter-based hash of (seed, i, j), so that any part of the
// graph can be made anywhere (each rank of --summa makes its own blocks).
template <class T> T bench_weight(index_t i, index_t j, index_t n, double density, std::uint64_t seed);
// Memory for the command's n² matrices (weights, distances, successors): large blocks are
// aligned to 2 MiB and asked for transparent huge pages, which cut the page faults of their first
// touch 512-fold (a gigabyte at 16384 vertices is 262144 small pages). apsp.cpp.
void* allocate_matrix_memory(std::size_t bytes);
void free_matrix_memory(void* p) noexcept;

// An allocator of that memory which leaves new elements unwritten (std::vector's own zeroes them,
// a serial pass over a gigabyte at 16384 vertices) for the loaders and solves, which write every one.
template <class T> struct UnwrittenAllocator {
  using value_type = T;
  UnwrittenAllocator() = default;
  template <class U> UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept {}
  T* allocate(std::size_t count) { return static_cast<T*>(allocate_matrix_memory(count * sizeof(T))); }
  void deallocate(T* p, std::size_t) noexcept { free_matrix_memory(p); }
  template <class U> void construct(U* p) noexcept { ::new (static_cast<void*>(p)) U; }
  template <class U, class... Args> void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U> friend bool operator==(const UnwrittenAllocator&, const UnwrittenAllocator<U>&) { return true; }
};
template <class T> using Weights = std::vector<T, UnwrittenAllocator<T>>;
// The weights (n×n row-major, +inf for no edge) of the graph file or of the --bench graph.
template <class T> Weights<T> load_graph(ApspRequest& req, index_t& n, std::string& summary);
std::string graph_name(const ApspRequest& req);
// A UsageError when --route names a vertex outside 0..n−1.
void check_route(const ApspRequest& req, index_t n);
// A refused weight's error (subject "weights") renamed after the graph it came from.
Error naming_the_graph(const Error& e, const ApspRequest& req);
// --out and --next (both or neither are left behind), then --route; each prints what it did.
template <class T> void write_outputs(const ApspRequest& req, index_t n, const T* dist, const std::int32_t* next);
template <class T> void print_route(const ApspRequest& req, index_t n, const T* dist, const std::int32_t* next);

// `ringmm apsp --summa` (apsp_summa.cpp, in builds with MPI).
int apsp_summa_command(const Args& args);

}  // namespace ringmm::tools
