// Autotuning (`ringmm tune`): a cache of measured kernel choices per class of shapes, which the CUDA
// engine reads for the calls whose kernels it chooses, and a description of the engine's choice
// for a call (what `ringmm bench` records).
//
// The cache is one small text file per GPU model, SM count and library version. Everything in
// namespace tune is host logic, testable without a GPU (tests/api/tune_cache_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/types.hpp"

namespace ringmm {

namespace tune {

// A class of shapes: one built-in pair, M, N, K and the batch each rounded up to a power of two
// (a call of 1000×1000×1000 is in the class 1024×1024×1024), and whether the call is Aᵀ·A.
struct ShapeClass {
  SemiringKind kind{};
  DType type{};
  index_t m = 1, n = 1, k = 1, batch = 1;  // powers of two
  bool symmetric = false;
  friend bool operator==(const ShapeClass&, const ShapeClass&) = default;
  // A number unique to the class (the exponents packed), for hashed lookups.
  std::uint64_t packed() const;
};

// x rounded up to a power of two; 1 for x ≤ 1.
index_t bucket(index_t x);
ShapeClass class_of(SemiringKind kind, DType type, index_t m, index_t n, index_t k, index_t batch = 1,
                    bool symmetric = false);

// The word that keeps the heuristics' choice in an entry's config field.
inline constexpr std::string_view keep_heuristic = "heuristic";

// What tuning chose for one class: a configuration name (ringmm/cuda/configs.hpp), small16,
// small32 or small64 (the small kernel), or keep_heuristic when the heuristics' own choice ran
// fastest; the border (pad or predicate for a table configuration, automatic otherwise); the
// split of K (parts ≥ 1; 0 with keep_heuristic); and the measured rates, in updates/s, of the
// choice and of the heuristics.
struct Entry {
  ShapeClass shape;
  std::string config;
  BorderPolicy border = BorderPolicy::automatic;
  int split_k = 0;
  double updates_per_s = 0, heuristic_updates_per_s = 0;
  bool keeps_heuristic() const { return config == keep_heuristic; }
};

// The machine and build a cache belongs to: the GPU's model name (cudaDeviceProp::name), its SM
// count and ringmm's version.
struct CacheKey {
  std::string gpu;
  int sms = 0;
  std::string version;
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};

struct Cache {
  CacheKey key;
  std::vector<Entry> entries;  // one per class
  const Entry* find(const ShapeClass& shape) const;
  void put(const Entry& entry);  // replaces the entry of the same class
};

// The file's text and back. parse is strict: anything unexpected (an unknown word, a missing or
// extra field, a class listed twice, a configuration this build does not have, a key other than
// `expected`) throws Error(format_error) naming the line.
std::string serialize(const Cache& cache);
Cache parse(std::string_view text, const CacheKey& expected);

// Checks one entry as parse does; throws Error(invalid_argument) saying what is wrong.
void check_entry(const Entry& entry);

// "ringmm-tune-NVIDIA_H100_80GB_HBM3-132sm-0.1.0.txt": the file of `key`.
std::string file_name(const CacheKey& key);
// True when RINGMM_TUNE_CACHE's value turns the cache off ("off", "0", "none", "false").
bool disabled(const char* setting);
// Where the cache of `key` lives: `setting` (RINGMM_TUNE_CACHE) names a file, or an existing
// directory (or one ending in '/') that holds file_name(key); unset or empty, the directory is
// $XDG_CACHE_HOME/ringmm, else $HOME/.cache/ringmm. Empty when disabled or there is no home.
std::string cache_path(const CacheKey& key, const char* setting, const char* xdg_cache_home, const char* home);
std::string cache_path(const CacheKey& key);  // from the environment

// The cache at `path`, or nullopt when there is no such file; throws as parse does (and
// Error(io_error) for a file that cannot be read).
std::optional<Cache> read_file(const std::string& path, const CacheKey& expected);
// Writes the cache whole or not at all (a temporary file, then a rename), creating the directory.
void write_file(const std::string& path, const Cache& cache);

}  // namespace tune

// What the CUDA engine runs for a call of `kind`/`type` and this shape on device operands, with
// ctx's settings and the current device: the route ("kernels", or "cublas", "tensor cores" for
// or-and, "shift trick" for log-plus, which run before the kernels), for the kernel route the
// configuration (or small16/32/64), border (empty for the small kernel) and split of K (what a
// split's parts run), and where the choice came from: "caller" (named in ctx), "tune cache",
// "tune cache (heuristic kept)" or "heuristic". Throws Errc::backend_unavailable without the CUDA
// backend or a device, and Errc::unsupported for a pair that is not built in.
struct CudaChoice {
  std::string route, config, border;
  index_t split_k = 1;
  std::string source;
  bool split_in_clusters = false;  // the K parts meet in thread block clusters, not a workspace
  // One line: "b128x128_k8_t8x8_bcyc pad split 1 (heuristic)", "small64 split 8 in clusters
  // (heuristic)", "cublas (heuristic)".
  std::string text() const;
};
CudaChoice describe_cuda_choice(const Context& ctx, SemiringKind kind, DType type, index_t m, index_t n, index_t k,
                                index_t batch = 1, bool symmetric = false);

// The kernel configurations of this build, in the table's order: the names Context::cuda_config
// accepts and their block tiles, for tools that try each one.
struct CudaConfiguration {
  std::string name;
  index_t block_m = 0, block_n = 0;
};
std::vector<CudaConfiguration> cuda_configurations();

// The current device's cache key. Throws Errc::backend_unavailable without a device.
tune::CacheKey current_tune_key();
// Forgets the caches read so far, so the next call reads RINGMM_TUNE_CACHE and the file again
// (after `ringmm tune` wrote it, or in tests). Entries already handed out stay valid.
void reload_tune_cache();

}  // namespace ringmm
