// The engine's choices for one call, as pure host arithmetic over the configuration table: which
// configuration, pad or predicate, whether the fringe is split off, into how many parts K is cut.
// The machine enters as numbers (SM count, resident blocks per SM), so everything here is
// includable without nvcc and testable without a GPU (tests/cuda/heuristics_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "ringmm/context.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/detail/problem.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::cuda_detail {

inline index_t round_up(index_t x, index_t m) { return (x + m - 1) / m * m; }
inline index_t ceil_div(index_t x, index_t m) { return (x + m - 1) / m; }

// What the heuristics know of a call.
struct Workload {
  index_t m = 0, n = 0, k = 0, batch = 1;
  bool symmetric = false;  // Aᵀ·A: lower-triangle tiles only
  std::size_t element_bytes = 4;
  bool ffma = false;  // the update is one FFMA: rates from the table's rate_ffma column
};

template <class S> Workload workload_of(const detail::Problem<S>& p) {
  return {p.m(), p.n(), p.k(), p.batch, p.symmetric, sizeof(element_t<S>), std::is_same_v<S, PlusTimes<float>>};
}

// Pad mode splits off the ragged last block row and column when M, N are at least one tile and
// rounding them up to whole tiles would add a wave of blocks (`slots`: the blocks the GPU holds at
// once): the interior runs branch-free on whole tiles and the fringe runs, concurrently on a second
// stream, as a predicated product of fringe_config() on the same packed operands. 4097³ on 128×128
// tiles: 1089 padded tiles take 5 waves of 264 slots, the 1024 whole ones 4. Where the padded tiles
// fit in the whole tiles' waves, padding everything runs no longer and leaves no fringe to finish
// beside the interior (2000³ on 128×128 tiles: 256 padded tiles, one wave; docs/performance-log.md
// has the measurements).
inline bool splits_fringe(const ConfigInfo& cfg, Border border, const Workload& w, index_t slots) {
  if (border != Border::pad || w.symmetric || w.m < cfg.bm || w.n < cfg.bn || (w.m % cfg.bm == 0 && w.n % cfg.bn == 0))
    return false;
  const index_t whole = (w.m / cfg.bm) * (w.n / cfg.bn) * w.batch;
  const index_t padded = ceil_div(w.m, cfg.bm) * ceil_div(w.n, cfg.bn) * w.batch;
  return ceil_div(padded, std::max<index_t>(slots, 1)) > ceil_div(whole, std::max<index_t>(slots, 1));
}

// automatic: pad when the padded copies cost under a tenth of the product, or under 0.6 of it
// when M and N are multiples of 128 (whole tiles of every configuration) and C is written in place. Padding lets the kernel use 16-byte
// loads with no bounds checks (predicate mode is 20–30 % slower on large products); the copies
// read and write A and B once (C too when it cannot be written in place: Aᵀ·A, or M or N below a
// tile) at about 3 TB/s, plus ~2 µs for each of the two pack launches. The product is priced at
// 15 × 10¹² updates/s, about the fastest 4-byte semiring. The ratio depends on M and N, not on K:
// on the H100 8192×8192×32 pads at 9.4 × 10¹² f32 max-plus updates/s against 4.6 predicated, while
// 1000³ predicates at 6.7 against 5.5 (its padded copy adds a fringe of ragged tiles) and
// 131072×16×16 predicates (docs/perf/cuda-engine.md). With no ragged tiles padding won every
// shape measured, up to copies of 0.54 of the product (16384×128×128 at 6.3 against 5.7; 1024³ at
// 9.5 against 7.2, 4096×512×512 at 9.4 against 7.3, i32 and f64 alike; the records
// lab/results/border-h100-2026-11-24-*.json).
inline Border choose_border(BorderPolicy policy, const Workload& w) {
  switch (policy) {
    case BorderPolicy::pad: return Border::pad;
    case BorderPolicy::predicate: return Border::predicate;
    case BorderPolicy::automatic: break;
  }
  constexpr double copy_bytes_per_s = 3e12, pack_launch_s = 2e-6, updates_per_s = 15e12;
  const double m = double(w.m), n = double(w.n), k = double(w.k), batch = double(w.batch);
  const bool c_copied = w.symmetric || w.m < 64 || w.n < 64;
  const double copy_bytes = 2.0 * double(w.element_bytes) * batch * (m * k + k * n + (c_copied ? m * n : 0.0));
  const double copy_s = copy_bytes / copy_bytes_per_s + 2 * pack_launch_s;
  const double product_s = m * n * k * batch / updates_per_s;
  // Whole tiles of either configuration (64 and 128): every shape measured so is a multiple of 128.
  const bool whole_tiles = !c_copied && w.m % 128 == 0 && w.n % 128 == 0;
  return copy_s < (whole_tiles ? 0.6 : 0.1) * product_s ? Border::pad : Border::predicate;
}

// The configuration when Context::cuda_config is empty: the candidates are the table's use_pick
// configurations (use_pick_wide for elements of 8 bytes or more), each scored by the time a wave
// model predicts,
//     ceil(blocks / slots) · slots · BM·BN / rate,
// slots = resident blocks per SM × SMs, rate = the table's throughput relative to the 128×128
// tile. A partial last wave costs a whole wave, so small products move to the smaller tile, whose
// waves are finer; blocks count whole tiles only when the fringe is split off (splits_fringe).
// resident_blocks(ConfigId) gives the occupancy of a candidate's pad-mode kernel; it is not asked
// when there is a single candidate.
template <class ResidentBlocks>
ConfigId choose_config(const Workload& w, Border border, int sms, ResidentBlocks&& resident_blocks) {
  const ConfigUse use = w.element_bytes >= 8 ? use_pick_wide : use_pick;
  int candidates = 0;
  ConfigId best{};
  for (int i = 0; i < config_count; ++i)
    if (config_table[i].has(use)) ++candidates, best = ConfigId(i);
  if (candidates == 1) return best;
  double best_cost = 0;
  for (int i = 0; i < config_count; ++i) {
    const ConfigInfo& cfg = config_table[i];
    if (!cfg.has(use)) continue;
    const index_t slots = index_t(sms) * std::max(1, int(resident_blocks(ConfigId(i))));
    const bool split = splits_fringe(cfg, border, w, slots);  // then only whole tiles count
    const double tiles_m = double(split ? w.m / cfg.bm : ceil_div(w.m, cfg.bm));
    const double tiles_n = double(split ? w.n / cfg.bn : ceil_div(w.n, cfg.bn));
    const double blocks = (w.symmetric ? tiles_m * (tiles_m + 1) / 2 : tiles_m * tiles_n) * double(w.batch);
    const double rate = w.ffma ? cfg.rate_ffma : cfg.rate;
    const double cost = std::ceil(blocks / double(slots)) * double(slots) * cfg.bm * cfg.bn / rate;
    if (best_cost == 0 || cost < best_cost) best = ConfigId(i), best_cost = cost;
  }
  return best;
}

// The small-product kernel (small_kernel.cuh) for products whose M and N per member are at most 64
// (a batch of small products, or the parts of a split K), or whose M or N is at most 64 with
// K ≤ 256 (skinny). There the large kernel's 64×64 and 128×128 tiles are mostly empty or its two
// blocks per SM leave memory latency exposed (docs/performance-log.md). A skinny product with a
// long K stays on the large kernels: the small kernel's blocks, several tiles each, would be too
// few to fill the machine. Returns the tile edge T, the smallest of 16, 32, 64 that covers
// min(M, N), or 0 for the large kernels. Aᵀ·A stays there too (they compute one triangle).
//
// Mid sizes of 4-byte elements take T = 64 as well where the large kernels would predicate
// (`border`): M and N at most 1024, or one of them at most 128 with K ≤ 256. The small kernel
// holds fewer registers a thread than the large kernels (64 or 94, small_min_blocks, against
// 110–128), so more of its warps hide each other's latency (f32 max-plus on an H200, its
// four-block build: 1000³ 7.8 against 6.6, 512³ 3.8 against 3.4, 2048×128×128 2.0 against 1.8;
// docs/performance-log.md). Where the large kernels pad (whole tiles, 1024³), their branch-free
// loads win, and FFMA's plus-times keeps them too (not measured here).
inline int small_tile(const Workload& w, Border border) {
  const index_t lo = std::min(w.m, w.n), hi = std::max(w.m, w.n);
  if (w.symmetric || lo == 0) return 0;
  const bool mid = border == Border::predicate && w.element_bytes == 4 && !w.ffma &&
                   (hi <= 1024 || (lo <= 128 && w.k <= 256));
  if (!(hi <= 64 || (lo <= 64 && w.k <= 256) || mid)) return 0;
  return lo <= 16 ? 16 : lo <= 32 ? 32 : 64;
}

// Split-K, for products whose output tiles fill under half a wave while K is long (one block
// would walk all of K while the other SMs idle): K is cut into parts of at least min_part_k, as
// many as fill the machine's resident-block slots once. One part means no split. Batches and Aᵀ·A
// are not split.
constexpr index_t min_part_k = 256;
inline index_t k_parts(const Workload& w, const ConfigInfo& cfg, int sms, int resident_blocks) {
  if (w.batch != 1 || w.symmetric) return 1;
  const index_t tiles = ceil_div(w.m, cfg.bm) * ceil_div(w.n, cfg.bn);
  const index_t slots = index_t(sms) * std::max(1, resident_blocks);
  if (tiles == 0 || 2 * tiles > slots) return 1;
  return std::max<index_t>(1, std::min(slots / tiles, w.k / min_part_k));
}

// The K of each part of a split into `parts` (launch.cuh: run_split_k): a multiple of 16, so that
// every part's operands keep the 16-byte alignment of the whole; the last part may be shorter.
inline index_t split_chunk(index_t k, index_t parts) { return round_up(ceil_div(k, parts), 16); }

// How run_split_k cuts K: `members` parts of `chunk` as one batch, member i over K's
// [i·step, i·step + chunk), then, where rest > 0, one more part over the last `rest` of K,
// launched after the batch. A short part after the batch costs a second pass over every tile
// (1000³ in 2 parts of 512 and 488 ran as two half-filled launches, slower than no split), so
// where ⊕ selects one of its terms (max, min), which a term counted twice leaves unchanged, the
// parts overlap instead: all `parts` are members, the last ending at K, the steps multiples of
// `quantum` elements (the parts' operands keep the alignment of the whole). That adds
// (parts − 1)·(K − parts·step) terms; where they would exceed K/16, and where ⊕ sums, K is cut
// into chunks of split_chunk.
struct KSplit {
  index_t members = 0, step = 0, chunk = 0;
  index_t rest = 0;
  index_t launched() const { return members + (rest > 0 ? 1 : 0); }
};
inline KSplit split_k(index_t k, index_t parts, bool selects, index_t quantum) {
  if (selects && parts > 1) {
    const index_t step = k / parts / quantum * quantum;
    if (step > 0 && (parts - 1) * (k - parts * step) * 16 <= k) return {parts, step, k - (parts - 1) * step, 0};
  }
  const index_t chunk = split_chunk(k, parts), whole = chunk > 0 ? k / chunk : 0;
  return {whole, chunk, chunk, k - whole * chunk};
}

// The small kernel's resident blocks per SM with 4-byte registers (its launch bound; wider types
// fit fewer): 4 for T = 64 (64 registers: 3–4 % faster on 64³ batches and 11 % on 64×64×65536's
// parts than 3 at 80 registers), 3 for T = 32 and 16, whose quads need the 80 registers.
constexpr int small_resident_blocks(int tile) { return tile == 64 ? 4 : 3; }

// T = 64 is also built for two blocks per SM (94 registers, no spills: room to load the next
// fragments early). A launch whose blocks all fit at two per SM takes that build, since its SMs
// hold no more than two anyway; more blocks keep the four. f32 max-plus on an H200
// (lab/harnesses/small_kernel_ab.cu, lab/results/calls/2026-11-29-h200-smallab-dd28e31.log):
// 1000³ 8.24 → 9.27, 1024³ 8.77 → 9.92, 2048×128×128 2.06 → 2.16, 512³ unsplit 3.48 → 3.84; a
// batch of 4096 × 64³ (4096 blocks) would drop 8.12 → 7.87.
constexpr int small_roomy_blocks = 2;
inline int small_min_blocks(int tile, index_t blocks, int sms) {
  return tile == 64 && blocks <= index_t(sms) * small_roomy_blocks ? small_roomy_blocks : small_resident_blocks(tile);
}
constexpr int small_tiles_per_block(int tile) { return 256 / ((tile / 4) * (tile / 4)); }

// Split-K for the small kernel (small_tile(w) = T): the parts become members of one batch, so
// they fill the small kernel's slots where the whole product has fewer blocks than the machine has
// SMs and K is at least min_split_k_small. The slots are small_resident_blocks(T) per SM, each of
// small_tiles_per_block(T) tiles; for T = 64 two per SM, so that the parts run on its two-block
// build (small_min_blocks). Parts are shorter than the large kernels' (min_part_k_small): the small
// kernel has no long K walk to amortise. The reduction and its launch cost a few µs, so a short K or
// a product that already gives every SM a block loses by splitting (f32 max-plus on an H200:
// 1000³'s 256 blocks 8.36 unsplit against 6.7 in 2 or 4 parts; 2048×128×128 2.1 against 1.5). In
// `ringmm tune` on an H200, 256³ ran 0.90 in 8 parts of 32 against 0.81 in 4 of 64, and 512³ 3.73
// in 4 parts (256 blocks, the two-block build) against 3.64 in 8 (512 blocks, the four-block one).
// One part means no split; batches and Aᵀ·A are not split.
//
// Where T = 64's parts meet in thread block clusters (`clusters`: small_kernel.cuh), they cost no
// second launch and no workspace, so K from min_split_k_clusters on splits, into as many parts as
// keep to one block per SM; a product with so few tiles that this takes more parts than a cluster
// holds (max_cluster_parts; 64×64×65536) keeps the split above. In `ringmm tune` on an H200
// (lab/results/calls/2026-11-29-h200-clusters-tune.log, whole calls): 512³ 5.28 in 2 parts (128
// blocks) against 4.14 in 4 and 4.50 in 8; 2048×128×128 2.39 in 2 against 2.16 unsplit and 1.89
// in 4; 256³ 1.10 in 8 and 1.14 in 4 (0.71 unsplit); 1000³ (256 blocks) still best unsplit.
constexpr index_t min_part_k_small = 32, min_split_k_small = 256, min_split_k_clusters = 128;
constexpr int max_cluster_parts = 8;  // the portable cluster size
inline index_t k_parts_small(const Workload& w, int tile, int sms, bool clusters) {
  if (w.batch != 1 || w.symmetric || tile == 0) return 1;
  const index_t tiles = ceil_div(w.m, tile) * ceil_div(w.n, tile), per_block = small_tiles_per_block(tile);
  if (tiles == 0 || ceil_div(tiles, per_block) >= sms) return 1;
  const index_t slots = index_t(sms) * (tile == 64 ? small_roomy_blocks : small_resident_blocks(tile));
  const index_t parts =
      w.k < min_split_k_small ? 1 : std::max<index_t>(1, std::min(slots * per_block / tiles, w.k / min_part_k_small));
  const index_t per_sm = index_t(sms) / tiles;  // parts that keep to one block per SM
  if (!clusters || tile != 64 || per_sm > max_cluster_parts || w.k < min_split_k_clusters) return parts;
  return std::max<index_t>(1, std::min(per_sm, w.k / min_part_k_small));
}

}  // namespace ringmm::cuda_detail
