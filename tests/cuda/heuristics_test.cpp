// The CUDA engine's heuristics (ringmm/cuda/heuristics.hpp) and configuration table, as host
// arithmetic: no GPU, no CUDA runtime. The machine is the H100's 132 SMs with the occupancy its
// pad-mode kernels reach for 4-byte elements (2 blocks of 128×128 per SM, 3 of 64×64).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "ringmm/cuda/heuristics.hpp"

namespace {

using namespace ringmm;
using namespace ringmm::cuda_detail;

constexpr int sms = 132;

// The heuristic's candidate with a square block tile of this side.
ConfigId candidate(int tile) {
  for (int i = 0; i < config_count; ++i)
    if (config_table[i].has(use_pick) && config_table[i].bm == tile && config_table[i].bn == tile) return ConfigId(i);
  ADD_FAILURE() << "no candidate with a " << tile << "x" << tile << " tile";
  return ConfigId{};
}

int h100_resident(ConfigId id) { return config_info(id).bm == 128 ? 2 : 3; }

Workload shape(index_t m, index_t n, index_t k, index_t batch = 1, std::size_t bytes = 4) {
  Workload w;
  w.m = m, w.n = n, w.k = k, w.batch = batch, w.element_bytes = bytes;
  return w;
}

ConfigId choose(const Workload& w, Border border) { return choose_config(w, border, sms, h100_resident); }

std::string name_of(ConfigId id) { return std::string(config_info(id).name); }

// ---- the table -----------------------------------------------------------------------------

TEST(ConfigTable, NamesAreUnique) {
  std::set<std::string> names;
  for (const ConfigInfo& c : config_table) EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name;
}

TEST(ConfigTable, HeuristicCandidatesCarryRates) {
  int pick = 0, wide = 0, fringe = 0;
  for (const ConfigInfo& c : config_table) {
    pick += c.has(use_pick), wide += c.has(use_pick_wide), fringe += c.has(use_fringe);
    if (c.has(use_pick)) {
      EXPECT_GT(c.rate, 0.0) << c.name;
      EXPECT_GT(c.rate_ffma, 0.0) << c.name;
    }
  }
  EXPECT_EQ(pick, 2);
  EXPECT_EQ(wide, 1);  // 8-byte elements have one configuration, so no occupancy query
  EXPECT_EQ(fringe, 1);
  EXPECT_EQ(name_of(fringe_config()), name_of(candidate(64)));
}

TEST(ConfigTable, ShapesNest) {
  for (const ConfigInfo& c : config_table) {
    EXPECT_EQ(c.bm % c.tm, 0) << c.name;
    EXPECT_EQ(c.bn % c.tn, 0) << c.name;
    EXPECT_EQ(c.tm % c.sub_m, 0) << c.name;
    EXPECT_EQ(c.tn % c.sub_n, 0) << c.name;
    EXPECT_EQ(c.bm % 64, 0) << c.name;  // 16-byte vectors of any element type
    EXPECT_EQ(c.bn % 64, 0) << c.name;
  }
}

// ---- border ---------------------------------------------------------------------------------

TEST(ChooseBorder, NamedPolicyIsKept) {
  EXPECT_EQ(choose_border(BorderPolicy::pad, shape(3, 3, 3)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::predicate, shape(8192, 8192, 8192)), Border::predicate);
}

// The measured cases of docs/perf/cuda-engine.md: large and wide-but-shallow products pad,
// mid-size and skinny ones predicate.
TEST(ChooseBorder, AutomaticPadsWhenCopiesAreCheap) {
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(4096, 4096, 4096)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(2000, 2000, 2000)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(8192, 8192, 32)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1000, 1000, 1000)), Border::predicate);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(131072, 16, 16)), Border::predicate);
}

TEST(ChooseBorder, WholeTilesPadUpToCopiesOfMostOfTheProduct) {
  // M and N multiples of 128: measured faster padded up to copies of 0.54 of the product.
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1024, 1024, 1024)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(4096, 512, 512)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(16384, 128, 128)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1024, 1024, 1024, 1, 8)), Border::pad);
  // The same sizes with a ragged tile keep the tenth: 1000³ predicates.
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1000, 1000, 1000)), Border::predicate);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(4096, 520, 512)), Border::predicate);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(4096, 576, 512)), Border::predicate);  // 64 but not 128
  // Copies above 0.6 of the product: 65536×64×64 (copies ~0.85) predicates.
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(65536, 64, 64)), Border::predicate);
}

TEST(ChooseBorder, CopiesScaleWithElementSizeAndCopiedC) {
  // 1500³: pad for 4-byte elements, predicate for 8-byte ones (twice the bytes to copy).
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1500, 1500, 1500)), Border::pad);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, shape(1500, 1500, 1500, 1, 8)), Border::predicate);
  // K = 250 against M = N = 4096: C is written in place, but Aᵀ·A copies it too.
  Workload w = shape(4096, 4096, 250);
  EXPECT_EQ(choose_border(BorderPolicy::automatic, w), Border::pad);
  w.symmetric = true;
  EXPECT_EQ(choose_border(BorderPolicy::automatic, w), Border::predicate);
}

// ---- fringe split ---------------------------------------------------------------------------

TEST(SplitsFringe, OnlyPadModeWithARaggedEdgeAndAWholeTile) {
  const ConfigInfo& big = config_info(candidate(128));
  const index_t slots = sms * 2;
  EXPECT_TRUE(splits_fringe(big, Border::pad, shape(4097, 4097, 4097), slots));
  EXPECT_TRUE(splits_fringe(big, Border::pad, shape(4096, 130, 7, 5), slots));  // 5 · 64 padded tiles, 5 · 32 whole
  EXPECT_FALSE(splits_fringe(big, Border::pad, shape(4096, 4096, 4097), slots));  // K does not matter
  EXPECT_FALSE(splits_fringe(big, Border::predicate, shape(4097, 4097, 4097), slots));
  EXPECT_FALSE(splits_fringe(big, Border::pad, shape(127, 4097, 64), slots));  // no whole tile of rows
  Workload syrk = shape(4097, 4097, 64);
  syrk.symmetric = true;
  EXPECT_FALSE(splits_fringe(big, Border::pad, syrk, slots));
}

TEST(SplitsFringe, OnlyWhereWholeTilesWouldAddAWave) {
  const ConfigInfo& big = config_info(candidate(128));
  // 4097³: 33² = 1089 padded tiles are 5 waves of 264 slots, the 32² = 1024 whole ones 4.
  EXPECT_TRUE(splits_fringe(big, Border::pad, shape(4097, 4097, 4097), 264));
  // 2000³: 16² = 256 padded tiles fit the one wave that the 15² = 225 whole ones take...
  EXPECT_FALSE(splits_fringe(big, Border::pad, shape(2000, 2000, 2000), 264));
  EXPECT_FALSE(splits_fringe(big, Border::pad, shape(4096, 130, 7), 264));
  // ...but not on a GPU of 240 slots, and batches count their members' tiles.
  EXPECT_TRUE(splits_fringe(big, Border::pad, shape(2000, 2000, 2000), 240));
  EXPECT_FALSE(splits_fringe(big, Border::pad, shape(2000, 2000, 64, 2), 264));  // 512 padded, 450 whole: 2 waves each
  EXPECT_TRUE(splits_fringe(big, Border::pad, shape(2000, 2000, 64, 8), 264));   // 2048 padded: 8 waves; 1800 whole: 7
}

// ---- configuration --------------------------------------------------------------------------

TEST(ChooseConfig, LargeTileWhenWavesAreFull) {
  // 4096³: 1024 blocks of 128² on 264 slots (3.9 → 4 waves) against 4096 of 64² on 396 (10.3 → 11).
  EXPECT_EQ(choose(shape(4096, 4096, 4096), Border::pad), candidate(128));
  // 4097³ padded: the fringe is split off, so only the 32 × 32 whole tiles count.
  EXPECT_EQ(choose(shape(4097, 4097, 4097), Border::pad), candidate(128));
}

TEST(ChooseConfig, SmallTileWhenTheLastWaveIsMostlyEmpty) {
  // 4097³ predicated: 33² = 1089 blocks is 4.1 → 5 waves of 128², 65² = 4225 is 10.7 → 11 of 64².
  EXPECT_EQ(choose(shape(4097, 4097, 4097), Border::predicate), candidate(64));
  EXPECT_EQ(choose(shape(1000, 1000, 1000), Border::predicate), candidate(64));
}

TEST(ChooseConfig, FfmaRateKeepsPlusTimesF32OnTheLargeTile) {
  Workload w = shape(4097, 4097, 4097);
  w.ffma = true;  // the 64×64 tile runs plus-times f32 at 0.72 of the 128×128 one
  EXPECT_EQ(choose(w, Border::predicate), candidate(128));
}

TEST(ChooseConfig, BatchAndTriangleCountBlocks) {
  // 256² is 4 blocks of 128² or 16 of 64²: one wave either way, the smaller tile wins...
  EXPECT_EQ(choose(shape(256, 256, 64), Border::pad), candidate(64));
  // ...until the batch fills 264 slots exactly (66 × 4) while 64² needs 66 × 16 / 396 = 2.7 → 3 waves.
  EXPECT_EQ(choose(shape(256, 256, 64, 66), Border::pad), candidate(128));
  // Aᵀ·A launches only the 528 lower-triangle tiles of 4096² (2 waves of 128²).
  Workload syrk = shape(4096, 4096, 64);
  syrk.symmetric = true;
  EXPECT_EQ(choose(syrk, Border::pad), candidate(128));
}

TEST(ChooseConfig, WideElementsHaveOneCandidateAndNoOccupancyQuery) {
  int queries = 0;
  const ConfigId id = choose_config(shape(4096, 4096, 4096, 1, 8), Border::pad, sms, [&](ConfigId c) {
    ++queries;
    return h100_resident(c);
  });
  EXPECT_TRUE(config_info(id).has(use_pick_wide));
  EXPECT_EQ(queries, 0);
}

TEST(WorkloadOf, ReadsTheSemiring) {
  detail::Problem<PlusTimes<float>> f32{};
  f32.c.rows = 5, f32.c.cols = 6, f32.a.cols = 7;
  const Workload w = workload_of(f32);
  EXPECT_EQ(w.m, 5);
  EXPECT_EQ(w.n, 6);
  EXPECT_EQ(w.k, 7);
  EXPECT_TRUE(w.ffma);
  EXPECT_EQ(workload_of(detail::Problem<MaxPlus<double>>{}).element_bytes, 8u);
  EXPECT_FALSE(workload_of(detail::Problem<PlusTimes<std::int32_t>>{}).ffma);
}

// ---- split-K --------------------------------------------------------------------------------

TEST(KParts, FillTheSlotsWithPartsOfAtLeast256) {
  const ConfigInfo& small = config_info(candidate(64));
  EXPECT_EQ(k_parts(shape(16, 16, 131072), small, sms, 3), 396);  // one tile, 396 slots
  EXPECT_EQ(k_parts(shape(7, 5, 1000), small, sms, 3), 3);        // 1000 / 256
  EXPECT_EQ(k_parts(shape(200, 190, 2000), small, sms, 3), 7);    // 12 tiles: min(396 / 12, 7)
  EXPECT_EQ(k_parts(shape(16, 16, 255), small, sms, 3), 1);
}

TEST(KParts, NoSplitPastHalfAWaveOrForBatchesAndTriangles) {
  const ConfigInfo& small = config_info(candidate(64));
  EXPECT_EQ(k_parts(shape(1000, 1000, 100000), small, sms, 3), 1);  // 256 tiles > 396 / 2
  EXPECT_EQ(k_parts(shape(16, 16, 131072, 2), small, sms, 3), 1);
  Workload syrk = shape(16, 16, 131072);
  syrk.symmetric = true;
  EXPECT_EQ(k_parts(syrk, small, sms, 3), 1);
  EXPECT_EQ(k_parts(shape(16, 16, 131072), small, sms, 0), 132);  // occupancy unknown: one per SM
}

// ---- the small kernel ---------------------------------------------------------------------------

TEST(SmallTile, SmallOrSkinnyProductsAndTheEdgeThatCoversTheShortSide) {
  for (Border border : {Border::pad, Border::predicate}) {
    EXPECT_EQ(small_tile(shape(64, 64, 64, 4096), border), 64);
    EXPECT_EQ(small_tile(shape(32, 32, 32, 4096), border), 32);
    EXPECT_EQ(small_tile(shape(16, 16, 16, 100000), border), 16);
    EXPECT_EQ(small_tile(shape(65536, 64, 64), border), 64);    // M·N large, N = 64 with a short K
    EXPECT_EQ(small_tile(shape(131072, 16, 16), border), 16);   // skinny
    EXPECT_EQ(small_tile(shape(64, 64, 65536), border), 64);    // the parts of its split K
    EXPECT_EQ(small_tile(shape(1, 1, 1), border), 16);
  }
}

TEST(SmallTile, MidSizesOfFourByteElementsWhereTheLargeKernelsWouldPredicate) {
  for (const Workload& w : {shape(256, 256, 256), shape(512, 512, 512), shape(1000, 1000, 1000), shape(2048, 128, 128),
                            shape(1024, 700, 5000), shape(300, 300, 300, 8)}) {
    EXPECT_EQ(small_tile(w, Border::predicate), 64) << w.m << "x" << w.n << "x" << w.k;
    EXPECT_EQ(small_tile(w, Border::pad), 0) << w.m << "x" << w.n << "x" << w.k;  // whole tiles: the large kernels
  }
  Workload wide = shape(1000, 1000, 1000);
  wide.element_bytes = 8;
  EXPECT_EQ(small_tile(wide, Border::predicate), 0);
  Workload ffma = shape(1000, 1000, 1000);
  ffma.ffma = true;
  EXPECT_EQ(small_tile(ffma, Border::predicate), 0);
}

TEST(SmallTile, LargeProductsTrianglesAndEmptyOnesStayOnTheLargeKernels) {
  for (Border border : {Border::pad, Border::predicate}) {
    EXPECT_EQ(small_tile(shape(4096, 64, 4096), border), 0);  // N = 64 but K long: the large kernels' split K
    EXPECT_EQ(small_tile(shape(20, 5000, 5000), border), 0);
    EXPECT_EQ(small_tile(shape(8192, 8192, 32), border), 0);
    EXPECT_EQ(small_tile(shape(2048, 128, 4096), border), 0);  // one side 128, K long
    EXPECT_EQ(small_tile(shape(1025, 1000, 1000), border), 0);
    EXPECT_EQ(small_tile(shape(0, 16, 16), border), 0);
    Workload syrk = shape(16, 16, 16);
    syrk.symmetric = true;
    EXPECT_EQ(small_tile(syrk, border), 0);
  }
  EXPECT_EQ(small_tile(shape(256, 256, 256), Border::pad), 0);
}

TEST(SmallTile, NamedApartFromTheTable) {
  EXPECT_EQ(small_config_tile("small16"), 16);
  EXPECT_EQ(small_config_tile("small64"), 64);
  EXPECT_EQ(small_config_tile("b64x64_k16_t4x4_blk"), 0);
  EXPECT_EQ(small_config_tile(""), 0);
  for (const ConfigInfo& c : config_table) EXPECT_EQ(small_config_tile(c.name), 0) << c.name;
}

TEST(SmallTile, SplitKFillsTheSmallKernelsSlotsWithShortParts) {
  const bool workspace = false;  // parts reduced by a second launch (no thread block clusters)
  EXPECT_EQ(k_parts_small(shape(64, 64, 65536), 64, sms, workspace), 264);    // 2 × 132 slots of one tile each
  EXPECT_EQ(k_parts_small(shape(16, 16, 65536), 16, sms, workspace), 2048);   // 6336 tile slots, parts of 32
  EXPECT_EQ(k_parts_small(shape(64, 64, 100), 64, sms, workspace), 1);        // K under 256
  EXPECT_EQ(k_parts_small(shape(256, 256, 256), 64, sms, workspace), 8);      // 16 blocks, parts of 32
  EXPECT_EQ(k_parts_small(shape(512, 512, 512), 64, sms, workspace), 4);      // 64 blocks into 256: two per SM
  EXPECT_EQ(k_parts_small(shape(1000, 1000, 1000), 64, sms, workspace), 1);   // 256 blocks: one per SM or more
  EXPECT_EQ(k_parts_small(shape(2048, 128, 128), 64, sms, workspace), 1);     // 64 blocks, but K = 128
  EXPECT_EQ(k_parts_small(shape(65536, 64, 64), 64, sms, workspace), 1);      // 1024 blocks fill the machine
  EXPECT_EQ(k_parts_small(shape(64, 64, 65536, 2), 64, sms, workspace), 1);   // batches are not split
  EXPECT_EQ(k_parts_small(shape(64, 64, 65536), 0, sms, workspace), 1);
}

// Parts that meet in clusters keep to one block per SM, at most 8 of them, from K = 128 on.
TEST(SmallTile, SplitKInClustersKeepsOneBlockPerSM) {
  const bool clusters = true;
  EXPECT_EQ(k_parts_small(shape(256, 256, 256), 64, sms, clusters), 8);      // 16 tiles: 128 blocks
  EXPECT_EQ(k_parts_small(shape(512, 512, 512), 64, sms, clusters), 2);      // 64 tiles: 128 blocks
  EXPECT_EQ(k_parts_small(shape(2048, 128, 128), 64, sms, clusters), 2);     // K = 128 splits too
  EXPECT_EQ(k_parts_small(shape(300, 300, 1000), 64, sms, clusters), 5);     // 25 tiles: 125 blocks
  EXPECT_EQ(k_parts_small(shape(1000, 1000, 1000), 64, sms, clusters), 1);   // 256 blocks already
  EXPECT_EQ(k_parts_small(shape(64, 64, 100), 64, sms, clusters), 1);        // K under 128
  EXPECT_EQ(k_parts_small(shape(256, 256, 96), 64, sms, clusters), 1);
  EXPECT_EQ(k_parts_small(shape(64, 64, 65536), 64, sms, clusters), 264);    // more than a cluster holds
  EXPECT_EQ(k_parts_small(shape(16, 16, 65536), 16, sms, clusters), 2048);   // T = 16 has no clusters
  EXPECT_EQ(k_parts_small(shape(64, 64, 65536, 2), 64, sms, clusters), 1);
}

// T = 64 launches whose blocks fit at two per SM take the two-block build; the other edges have one.
TEST(SmallTile, TheTwoBlockBuildWhereTheBlocksFitTwoPerSM) {
  EXPECT_EQ(small_min_blocks(64, 256, sms), 2);   // 1000³: 16 × 16 tiles
  EXPECT_EQ(small_min_blocks(64, 264, sms), 2);   // exactly two per SM
  EXPECT_EQ(small_min_blocks(64, 265, sms), 4);   // one more: the four-block build's slots
  EXPECT_EQ(small_min_blocks(64, 4096, sms), 4);  // a batch of 4096 × 64³
  EXPECT_EQ(small_min_blocks(64, 1, sms), 2);
  EXPECT_EQ(small_min_blocks(32, 10, sms), 3);
  EXPECT_EQ(small_min_blocks(16, 10, sms), 3);
}

TEST(SplitK, PartsAreMultiplesOf16CoveringK) {
  EXPECT_EQ(split_chunk(1000, 3), 336);  // 2 parts of 336 and the rest, 328
  EXPECT_EQ(split_chunk(4096, 8), 512);
  EXPECT_EQ(split_chunk(64, 64), 16);    // 4 parts: no part is shorter than 16
  for (index_t k : {1, 17, 777, 65536})
    for (index_t parts : {1, 2, 3, 8}) EXPECT_GE(split_chunk(k, parts) * parts, k) << k << " " << parts;
}

// Overlapping parts where ⊕ selects: one batch of equal parts whose union is K, each starting at a
// multiple of the quantum, the terms counted twice at most K/16; chunks and a remainder otherwise.
TEST(SplitK, OverlappingPartsWhereTheSumSelects) {
  const KSplit even = split_k(1000, 2, true, 4);  // 2 × 500, no overlap
  EXPECT_EQ(even.members, 2);
  EXPECT_EQ(even.step, 500);
  EXPECT_EQ(even.chunk, 500);
  EXPECT_EQ(even.rest, 0);
  const KSplit four = split_k(1000, 4, true, 4);  // steps of 248, parts of 256: 8 terms twice at each seam
  EXPECT_EQ(four.members, 4);
  EXPECT_EQ(four.step, 248);
  EXPECT_EQ(four.chunk, 256);
  EXPECT_EQ(four.launched(), 4);
  const KSplit sums = split_k(1000, 2, false, 4);  // ⊕ sums: 512 and the remaining 488 after it
  EXPECT_EQ(sums.members, 1);
  EXPECT_EQ(sums.chunk, 512);
  EXPECT_EQ(sums.rest, 488);
  EXPECT_EQ(sums.launched(), 2);
  const KSplit wasteful = split_k(1000, 16, true, 4);  // steps of 60 would count 600 terms twice
  EXPECT_EQ(wasteful.members, 15);
  EXPECT_EQ(wasteful.chunk, 64);
  EXPECT_EQ(wasteful.rest, 40);
  EXPECT_EQ(split_k(40, 8, true, 4).launched(), 3);  // 3 chunks of 16, as a sum would
  for (index_t k : {1, 17, 777, 1000, 4097, 65536})
    for (index_t parts : {1, 2, 3, 8, 16})
      for (bool selects : {false, true}) {
        const KSplit s = split_k(k, parts, selects, 4);
        const std::string what = std::to_string(k) + " in " + std::to_string(parts) + (selects ? " selecting" : " summing");
        EXPECT_LE(s.launched(), std::max<index_t>(parts, 1)) << what;
        EXPECT_EQ(s.step % 4, 0) << what;
        if (s.members > 0) EXPECT_EQ((s.members - 1) * s.step + s.chunk + s.rest, k) << what;  // the last part ends at K
        else EXPECT_EQ(s.rest, k) << what;
        EXPECT_GE(s.chunk, s.step) << what;  // no gaps between parts
        if (!selects) EXPECT_EQ(s.chunk, s.step) << what;  // sums never overlap
        if (s.chunk > s.step) EXPECT_LE((s.members - 1) * (s.chunk - s.step) * 16, k) << what;
      }
}

TEST(Rounding, UpToMultiples) {
  EXPECT_EQ(round_up(4097, 128), 4224);
  EXPECT_EQ(round_up(4096, 128), 4096);
  EXPECT_EQ(round_up(0, 64), 0);
  EXPECT_EQ(ceil_div(65, 64), 2);
}

}  // namespace
