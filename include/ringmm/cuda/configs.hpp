// The table of kernel configurations: the compile-time parameters of gemm_kernel.cuh and what the
// heuristics (heuristics.hpp) know of each. Host-only, includable without nvcc.
//
// Names (Context::cuda_config accepts exactly these) say the shape: block tile bMxN, k-tile kK,
// thread tile tMxN, pattern of the thread tile's sub-patches (blk: one block, cyc: cyclic, bcyc:
// block-cyclic 4×4), and which operand fragments come straight from global memory into registers
// (areg, breg, abreg; otherwise both go through shared memory).
//
// Every configuration is compiled for every semiring the engine is instantiated for, in both
// border modes. The ones the heuristic never picks are there to measure alternatives (ringmm bench
// --config) and build only with -DRINGMM_CUDA_ALL_CONFIGS=ON; the library passes that definition
// on to its users, so every translation unit of a program sees the same table.
// docs/perf/cuda-engine.md has their measurements.
#pragma once

#include <string_view>

namespace ringmm::cuda_detail {

enum class Place { smem, global };  // where the thread tile's operand fragments are read from

// pad: operands are tile-multiple buffers and the kernel checks no bound; predicate: the kernel
// reads the caller's strided views with bounds checks.
enum class Border { pad, predicate };

// Which choices of the heuristics may return a configuration.
enum ConfigUse : unsigned {
  use_none = 0,
  use_pick = 1,        // a candidate of the wave model for elements under 8 bytes
  use_pick_wide = 2,   // a candidate for elements of 8 bytes or more: with 64 such accumulators
                       // per thread one 128×128 block fits per SM, and that tile ran f64
                       // max-plus at 2.84 × 10¹² updates/s (4096³) against 3.15 for 64×64
  use_fringe = 4,      // runs the ragged last block row and column beside a padded interior
};

// X(name, BM, BN, BK, TM, TN, SubM, SubN, place_a, place_b, min_blocks_per_sm, uses, rate, rate_ffma)
// rate: full-machine throughput relative to b128x128_k8_t8x8_bcyc at 4096³ on the H100, for
// semirings whose update is one FFMA (plus-times f32: rate_ffma) and for the others; the 64×64
// tile issues one shared-memory load per 8 updates instead of 16, which costs most against an
// FFMA. 0 where never measured (configurations the wave model does not consider).
#define RINGMM_CUDA_HEURISTIC_CONFIGS(X)                                               \
  X(b128x128_k8_t8x8_bcyc, 128, 128, 8, 8, 8, 4, 4, smem, smem, 2, use_pick, 1.0, 1.0) \
  X(b64x64_k16_t4x4_blk, 64, 64, 16, 4, 4, 4, 4, smem, smem, 2, use_pick | use_pick_wide | use_fringe, 0.97, 0.72)
#if RINGMM_CUDA_ALL_CONFIGS
#define RINGMM_CUDA_CONFIGS(X)                                                         \
  RINGMM_CUDA_HEURISTIC_CONFIGS(X)                                                     \
  X(b128x64_k8_t8x4_cyc, 128, 64, 8, 8, 4, 1, 1, smem, smem, 2, use_none, 0, 0)        \
  X(b64x64_k16_t4x4_blk_breg, 64, 64, 16, 4, 4, 4, 4, smem, global, 2, use_none, 0, 0) \
  X(b64x64_k16_t4x4_blk_areg, 64, 64, 16, 4, 4, 4, 4, global, smem, 2, use_none, 0, 0) \
  X(b64x64_k16_t4x4_blk_abreg, 64, 64, 16, 4, 4, 4, 4, global, global, 2, use_none, 0, 0)
#else
#define RINGMM_CUDA_CONFIGS(X) RINGMM_CUDA_HEURISTIC_CONFIGS(X)
#endif

struct ConfigInfo {
  std::string_view name;
  int bm, bn, bk, tm, tn, sub_m, sub_n;
  Place place_a, place_b;
  int min_blocks;
  unsigned uses;  // ConfigUse bits
  double rate, rate_ffma;

  constexpr bool has(ConfigUse use) const { return (uses & use) != 0; }
};

enum class ConfigId {
#define RINGMM_CONFIG_ID(name, ...) name,
  RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_ID)
#undef RINGMM_CONFIG_ID
};

inline constexpr ConfigInfo config_table[] = {
#define RINGMM_CONFIG_INFO(name, bm, bn, bk, tm, tn, sm, sn, pa, pb, mb, uses, rate, rate_ffma) \
  {#name, bm, bn, bk, tm, tn, sm, sn, Place::pa, Place::pb, mb, uses, rate, rate_ffma},
    RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_INFO)
#undef RINGMM_CONFIG_INFO
};

inline constexpr int config_count = int(sizeof(config_table) / sizeof(config_table[0]));

constexpr const ConfigInfo& config_info(ConfigId id) { return config_table[int(id)]; }

// The small-product kernel (small_kernel.cuh) is named apart from the table: "small16", "small32"
// and "small64" run it with that tile edge. Returns the edge, or 0 for any other name.
constexpr int small_config_tile(std::string_view name) {
  return name == "small16" ? 16 : name == "small32" ? 32 : name == "small64" ? 64 : 0;
}
inline constexpr std::string_view small_config_names = "small16, small32, small64";

// The configuration that runs the fringe: the one the table marks use_fringe.
constexpr ConfigId fringe_config() {
  for (int i = 0; i < config_count; ++i)
    if (config_table[i].has(use_fringe)) return ConfigId(i);
  return ConfigId(config_count);
}
static_assert(int(fringe_config()) < config_count, "the table marks no configuration use_fringe");

}  // namespace ringmm::cuda_detail
