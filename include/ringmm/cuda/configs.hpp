// The table of instantiated kernel configurations (compile-time parameters of gemm_kernel.cuh).
//
// Names (Context::cuda_config accepts exactly these) say the shape: block tile bMxN, k-tile kK,
// thread tile tMxN, pattern of the thread tile's sub-patches (blk: one block, cyc: cyclic, bcyc:
// block-cyclic 4×4), and which operand fragments come straight from global memory into registers
// (areg, breg, abreg; otherwise both go through shared memory).
//
// The heuristic picks from the first two; the others are there to measure alternatives
// (ringmm bench --config) and build only with -DRINGMM_CUDA_ALL_CONFIGS=ON. Each is compiled for
// every built-in semiring and both border modes (pad: branch-free on tile-multiple buffers;
// predicate: bounds checks on the caller's strided views). docs/perf/cuda-engine.md has their
// history and measurements.
#pragma once

#include <string_view>

namespace ringmm::cuda_detail {

enum class Place { smem, global };  // where the thread tile's operand fragments are read from

// X(name, BM, BN, BK, TM, TN, SubM, SubN, place_a, place_b, min_blocks_per_sm)
#define RINGMM_CUDA_HEURISTIC_CONFIGS(X)                                       \
  X(b128x128_k8_t8x8_bcyc, 128, 128, 8, 8, 8, 4, 4, smem, smem, 2)             \
  X(b64x64_k16_t4x4_blk, 64, 64, 16, 4, 4, 4, 4, smem, smem, 2)
#if RINGMM_CUDA_ALL_CONFIGS
#define RINGMM_CUDA_CONFIGS(X)                                                 \
  RINGMM_CUDA_HEURISTIC_CONFIGS(X)                                             \
  X(b128x64_k8_t8x4_cyc, 128, 64, 8, 8, 4, 1, 1, smem, smem, 2)               \
  X(b64x64_k16_t4x4_blk_breg, 64, 64, 16, 4, 4, 4, 4, smem, global, 2)        \
  X(b64x64_k16_t4x4_blk_areg, 64, 64, 16, 4, 4, 4, 4, global, smem, 2)        \
  X(b64x64_k16_t4x4_blk_abreg, 64, 64, 16, 4, 4, 4, 4, global, global, 2)
#else
#define RINGMM_CUDA_CONFIGS(X) RINGMM_CUDA_HEURISTIC_CONFIGS(X)
#endif

struct ConfigInfo {
  std::string_view name;
  int bm, bn, bk, tm, tn, sub_m, sub_n;
  Place place_a, place_b;
  int min_blocks;
};

enum class ConfigId {
#define RINGMM_CONFIG_ID(name, ...) name,
  RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_ID)
#undef RINGMM_CONFIG_ID
};

inline constexpr ConfigInfo config_table[] = {
#define RINGMM_CONFIG_INFO(name, bm, bn, bk, tm, tn, sm, sn, pa, pb, mb) \
  {#name, bm, bn, bk, tm, tn, sm, sn, Place::pa, Place::pb, mb},
    RINGMM_CUDA_CONFIGS(RINGMM_CONFIG_INFO)
#undef RINGMM_CONFIG_INFO
};

inline constexpr int config_count = int(sizeof(config_table) / sizeof(config_table[0]));

}  // namespace ringmm::cuda_detail
