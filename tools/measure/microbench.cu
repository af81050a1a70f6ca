// The hardware ceilings (docs/perf/ladder.md) for every built-in semiring and type.
//
// Each thread holds an 8×8 register tile c and applies the semiring update c[i][j] ⊕= a[i] ⊗ b[j]
// in a long unrolled loop; 256 threads a block, one full wave of blocks over the device.
//   reg-reg    a and b in registers. To keep every product new, a and b are fed back from the
//              tile after each step: a[i] ← c[i+1][i], b[j] ← c[j][j+1]. This costs no
//              instruction, and the compiler can neither drop repeated products (⊕ is idempotent
//              for the tropical semirings) nor factor a constant b out of two steps (it did for
//              or-and: c | (a₁ & b) | (a₂ & b) = c | ((a₁ | a₂) & b)).
//   smem-one   a read from shared memory each step (two 16-byte loads for 8 × 4 bytes), b fed
//              back from the tile.
//   smem-both  a and b read from shared memory each step, laid out as a GEMM's thread tile reads
//              them (16-byte vectors, conflict-free): the inner loop of a register-tiled kernel.
// A compiler barrier at the top of each round stops the shared-memory loads being hoisted.
// Rates count one update per (i, j) per step; a packed i16x2 instruction counts as 2 (one per lane).
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "measure/gpu_measure.hpp"
#include "measure/gpu_timer.cuh"
#include "ringmm/dispatch.hpp"

namespace ringmm::measure {

namespace {

enum class Level { reg_reg, smem_one, smem_both };
constexpr const char* level_name(Level l) {
  return l == Level::reg_reg ? "reg-reg" : l == Level::smem_one ? "smem-one" : "smem-both";
}

constexpr int kTile = 8;          // 8×8 register tile per thread
constexpr int kThreads = 256;     // 16×16 threads: a 128×128 block tile in a real kernel
constexpr int kSide = 16;         // threads along each side of the block
constexpr int kSteps = 16;        // k-steps per round (staged in shared memory for the smem levels)

// The microbenchmark's view of S: the registers and update of the semiring's hardware form
// (semiring_traits, the form the GEMM kernel computes in), plus what only a measurement needs:
// values made from a hash, a fold of the accumulators into one output so that no update is dead,
// and `opaque`, which hides fed-back values from the compiler where the algebra would let it drop
// updates (or-and is a distributive lattice: it dropped a third of the reg-reg loop).
template <class S> struct Hw {
  using traits = semiring_traits<S>;
  using T = element_t<S>;
  using R = typename traits::reg;      // accumulator registers
  using O = typename traits::operand;  // operand registers (R in a hardware form, else elements)
  using Stored = T;                    // shared memory holds elements, loaded through to_register
  static constexpr int lanes = std::is_same_v<T, i16x2> ? 2 : 1;
  static __device__ __forceinline__ R update(R acc, O a, O b) { return traits::update(acc, a, b); }
  // An accumulator fed back as an operand: the same register in a hardware form, else its value.
  static __device__ __forceinline__ O feed(R x) {
    if constexpr (std::is_same_v<O, R>) return x;
    else return traits::to_register(traits::finalize(traits::from_register(x)));
  }
  static __device__ __forceinline__ R fold(R x, R y) {
    return traits::to_register(S::add(traits::finalize(traits::from_register(x)), traits::finalize(traits::from_register(y))));
  }
  static __device__ __forceinline__ void opaque(O& x) {
    if constexpr (S::kind == SemiringKind::or_and) asm volatile("" : "+r"(x));
  }
  static __device__ __forceinline__ T make_element(unsigned h) {
    if constexpr (std::is_same_v<T, i16x2>) return {std::int16_t(int(h % 201u) - 100), std::int16_t(int((h >> 16) % 201u) - 100)};
    else if constexpr (std::is_same_v<T, std::uint8_t>) return T(h & 1u);
    else if constexpr (std::is_floating_point_v<T>) {
      const T x = T(int(h % 2001u) - 1000) / T(1024);
      return traits::valid_input(x) ? x : -x;
    } else return T(int(h % 2001u) - 1000);
  }
  static __device__ __forceinline__ O make(unsigned h) { return traits::to_register(make_element(h)); }
};

// Elements per shared-memory vector: 16 bytes, or the whole 8-byte row of u8.
template <class Stored> constexpr int vec_elems() { return 16 / int(sizeof(Stored)) < kTile ? 16 / int(sizeof(Stored)) : kTile; }

// Reads the 8 values thread `t` (0..15) owns in one staged row: vector q of thread t lies at
// element (q·16 + t)·V, so a half-warp's vector loads cover consecutive addresses.
template <class S>
__device__ __forceinline__ void load_row(const element_t<S>* row, int t, typename semiring_traits<S>::operand (&out)[kTile]) {
  using Stored = element_t<S>;
  constexpr int v = vec_elems<Stored>();
  using Raw = std::conditional_t<v * sizeof(Stored) == 16, uint4, uint2>;
#pragma unroll
  for (int q = 0; q < kTile / v; ++q) {
    const Raw raw = *reinterpret_cast<const Raw*>(row + (q * kSide + t) * v);
    Stored vals[v];
    std::memcpy(vals, &raw, sizeof raw);
#pragma unroll
    for (int e = 0; e < v; ++e) out[q * v + e] = semiring_traits<S>::to_register(vals[e]);
  }
}

template <class S, Level L>
__global__ void __launch_bounds__(kThreads) microbench_kernel(int rounds, unsigned seed, typename Hw<S>::R* out) {
  using R = typename Hw<S>::R;
  using O = typename Hw<S>::O;
  using Stored = typename Hw<S>::Stored;
  constexpr int staged = L == Level::reg_reg ? 1 : kSteps;
  __shared__ alignas(16) Stored a_stage[staged][kSide * kTile];
  __shared__ alignas(16) Stored b_stage[staged][kSide * kTile];
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
  const unsigned id = blockIdx.x * kThreads + threadIdx.x;

  if constexpr (L != Level::reg_reg) {
    for (int e = threadIdx.x; e < staged * kSide * kTile; e += kThreads) {
      a_stage[e / (kSide * kTile)][e % (kSide * kTile)] = Hw<S>::make_element(seed * 7919u + 2u * e);
      b_stage[e / (kSide * kTile)][e % (kSide * kTile)] = Hw<S>::make_element(seed * 7919u + 2u * e + 1u);
    }
    __syncthreads();
  }
  O a[kTile], b[kTile];
  R c[kTile][kTile];
#pragma unroll
  for (int i = 0; i < kTile; ++i) {
    a[i] = Hw<S>::make(seed + id * 131u + i);
    b[i] = Hw<S>::make(seed + id * 137u + 64u + i);
#pragma unroll
    for (int j = 0; j < kTile; ++j) c[i][j] = Hw<S>::make(seed + id * 139u + 128u + i * kTile + j);
  }

  for (int r = 0; r < rounds; ++r) {
    asm volatile("" ::: "memory");
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      if constexpr (L != Level::reg_reg) load_row<S>(a_stage[s], ty, a);
      if constexpr (L == Level::smem_both) load_row<S>(b_stage[s], tx, b);
#pragma unroll
      for (int i = 0; i < kTile; ++i)
#pragma unroll
        for (int j = 0; j < kTile; ++j) c[i][j] = Hw<S>::update(c[i][j], a[i], b[j]);
      if constexpr (L == Level::reg_reg) {
#pragma unroll
        for (int i = 0; i < kTile; ++i) {
          a[i] = Hw<S>::feed(c[(i + 1) % kTile][i]);
          b[i] = Hw<S>::feed(c[i][(i + 1) % kTile]);
          Hw<S>::opaque(a[i]);
          Hw<S>::opaque(b[i]);
        }
      } else if constexpr (L == Level::smem_one) {
#pragma unroll
        for (int j = 0; j < kTile; ++j) b[j] = Hw<S>::feed(c[j][(j + 1) % kTile]);
      }
    }
  }
  R folded = c[0][0];
#pragma unroll
  for (int i = 0; i < kTile; ++i)
#pragma unroll
    for (int j = 0; j < kTile; ++j) folded = Hw<S>::fold(folded, c[i][j]);
  out[id] = folded;
}

template <class S, Level L> Ceiling measure_level() {
  using R = typename Hw<S>::R;
  int device = 0, sms = 0, per_sm = 0;
  cuda_check(cudaGetDevice(&device), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  cuda_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, microbench_kernel<S, L>, kThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  const int blocks = sms * (per_sm > 0 ? per_sm : 1);  // exactly one full wave
  const DeviceBuffer<R> out(std::size_t(blocks) * kThreads, nullptr);
  EventClock clock(nullptr);
  int rounds = 1;
  auto launch = [&] {
    microbench_kernel<S, L><<<blocks, kThreads>>>(rounds, 12345u, out.get());
    cuda::check_launch("microbench_kernel");
  };
  clock(launch);  // warm-up: module load
  // Calibrate: grow the loop until one launch takes about 10 ms.
  rounds = 16;
  for (double t = clock(launch); t < 5e-3 && rounds < (1 << 24); t = clock(launch)) rounds *= t > 1e-4 ? int(std::ceil(1e-2 / t)) : 16;
  const double seconds = median_seconds(7, clock, [&](int) { launch(); });
  const double updates = double(blocks) * kThreads * double(rounds) * kSteps * kTile * kTile * Hw<S>::lanes;
  return {level_name(L), updates / seconds};
}

template <class S> std::vector<Ceiling> microbench_typed() {
  return {measure_level<S, Level::reg_reg>(), measure_level<S, Level::smem_one>(), measure_level<S, Level::smem_both>()};
}

}  // namespace

std::vector<Ceiling> microbench(SemiringKind kind, DType type) {
  visit_semiring(kind, type, [](auto) {});  // Errc::unsupported for a pair the library does not ship
  require_device();
  return visit_semiring(kind, type, [](auto tag) { return microbench_typed<typename decltype(tag)::type>(); });
}

}  // namespace ringmm::measure
