// The table of instantiated kernel configurations (compile-time parameters of gemm_kernel.cuh).
//
// Names (Context::cuda_config accepts exactly these):
//   b128x128_k8_t8x8_bcyc   128×128 block, k-tile 8, 8×8 thread tile, block-cyclic 4×4 sub-patches,
//                           both operands in shared memory (seed 004 case 00): the large-shape kernel
//   b64x64_k16_t4x4_blk     64×64 block, k-tile 16, 4×4 thread tile, block pattern, case 00:
//                           small shapes and f64
//   b128x64_k8_t8x4_cyc     128×64 block, k-tile 8, 8×4 thread tile, cyclic pattern (Sub 1×1), case 00
//   b64x64_k16_t4x4_p01     as b64x64_k16_t4x4_blk, B read from global memory into registers (case 01)
//   b64x64_k16_t4x4_p10     as b64x64_k16_t4x4_blk, A read from global memory into registers (case 10)
//   b64x64_k16_t4x4_p11     both operands read from global memory into registers (case 11)
//
// Each is compiled for every built-in semiring and both border modes (pad: branch-free on
// tile-multiple buffers; predicate: bounds checks on the caller's strided views).
#pragma once

#include <string_view>

namespace ringmm::cuda_detail {

enum class Place { smem, global };  // where the thread tile's operand fragments are read from

// X(name, BM, BN, BK, TM, TN, SubM, SubN, place_a, place_b, min_blocks_per_sm)
#define RINGMM_CUDA_CONFIGS(X)                                                 \
  X(b128x128_k8_t8x8_bcyc, 128, 128, 8, 8, 8, 4, 4, smem, smem, 2)             \
  X(b64x64_k16_t4x4_blk, 64, 64, 16, 4, 4, 4, 4, smem, smem, 2)               \
  X(b128x64_k8_t8x4_cyc, 128, 64, 8, 8, 4, 1, 1, smem, smem, 2)               \
  X(b64x64_k16_t4x4_p01, 64, 64, 16, 4, 4, 4, 4, smem, global, 2)             \
  X(b64x64_k16_t4x4_p10, 64, 64, 16, 4, 4, 4, 4, global, smem, 2)             \
  X(b64x64_k16_t4x4_p11, 64, 64, 16, 4, 4, 4, 4, global, global, 2)

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
