// cpu_ceilings and tune_blocked (lab_kernels.hpp): the measurements behind the constants of the
// blocked CPU kernel (include/ringmm/cpu/blocked.hpp; results in docs/perf/cpu.md). It builds the
// kernel's internal variants (cpu::blocked_detail), which is why it lives in the lab.
#include <cstdint>
#include <string>
#include <vector>

#include "lab_kernels.hpp"
#include "measure/random_data.hpp"
#include "measure/timer.hpp"
#include "ringmm/cpu/blocked.hpp"
#include "ringmm/semiring.hpp"

namespace ringmm::lab {

using namespace ringmm::measure;

namespace {

namespace bd = cpu::blocked_detail;

template <class S> using Runner = void (*)(const detail::Problem<S>&, int);

template <class S>
Record make_record(std::string backend, const std::string& kernel, std::string product, index_t m, index_t n,
                   index_t k, double seconds) {
  Record r;
  r.backend = std::move(backend);
  r.kernel = kernel + " t1";
  r.semiring = std::string(to_string(S::kind));
  r.type = std::string(to_string(dtype_of<typename S::value_type>::value));
  r.product = std::move(product);
  r.m = m;
  r.n = n;
  r.k = k;
  r.batch = 1;
  r.seconds = seconds;
  r.updates_per_s = double(m) * double(n) * double(k) / seconds;
  if (S::kind == SemiringKind::plus_times) r.flops_per_s = 2 * *r.updates_per_s;
  return r;
}

template <class T, class Isa> std::string tile_name() {
  return std::to_string(bd::Blocking<T, Isa>::mr) + "x" + std::to_string(bd::Blocking<T, Isa>::nr);
}

// ---- the blocked kernel ------------------------------------------------------------------------

// The blocked kernel for S through `run` on random m×n×k row-major data, 1 thread.
template <class S>
Record time_blocked(const std::string& kernel, index_t m, index_t n, index_t k, int reps, Runner<S> run) {
  using T = typename S::value_type;
  const std::vector<T> a = random_vector<S>(std::size_t(m * k), 1, k), b = random_vector<S>(std::size_t(k * n), 2, k);
  std::vector<T> c(std::size_t(m * n));
  detail::Problem<S> p;
  p.a = {a.data(), m, k, k, 1};
  p.b = {b.data(), k, n, n, 1};
  p.c = {c.data(), m, n, n, 1};
  p.alpha = S::one();
  p.beta = S::zero();
  return make_record<S>("cpu", kernel, "gemm", m, n, k, median_seconds(reps, [&] { run(p, 1); }));
}

// The configuration blocked_gemm runs on this CPU, as "blocked avx512 8x48".
template <class T> std::string shipped_name() {
#if RINGMM_CPU_MULTIVERSION
  switch (detected_cpu_isa()) {
    case CpuIsa::avx512: return "blocked avx512 " + tile_name<T, bd::IsaAvx512>();
    case CpuIsa::avx2: return "blocked avx2 " + tile_name<T, bd::IsaAvx2>();
    default: break;  // generic
  }
#endif
  return "blocked generic " + tile_name<T, bd::IsaGeneric>();
}

// The shipped kernel, then its builds for instruction sets narrower than this CPU's widest.
template <class S> void shipped_and_narrower(std::vector<Record>& out, index_t m, index_t n, index_t k, int reps) {
  using T = typename S::value_type;
  out.push_back(time_blocked<S>(shipped_name<T>(), m, n, k, reps,
                                [](const detail::Problem<S>& p, int threads) { cpu::blocked_gemm<S>(p, threads); }));
#if RINGMM_CPU_MULTIVERSION
  if (detected_cpu_isa() == CpuIsa::avx512)
    out.push_back(time_blocked<S>("blocked avx2 " + tile_name<T, bd::IsaAvx2>(), m, n, k, reps,
                                  [](const detail::Problem<S>& p, int threads) {
                                    bd::run_isa<S, bd::IsaAvx2>(p, threads, bd::run_team_avx2<S>);
                                  }));
  if (detected_cpu_isa() != CpuIsa::generic)
    out.push_back(time_blocked<S>("blocked generic " + tile_name<T, bd::IsaGeneric>(), m, n, k, reps,
                                  [](const detail::Problem<S>& p, int threads) {
                                    bd::run_isa<S, bd::IsaGeneric>(p, threads, bd::run_team_generic<S>);
                                  }));
#endif
}

#if RINGMM_CPU_MULTIVERSION
// Tuning variants of the AVX-512 configuration: MR rows × VPR registers, L1 budget for the B
// sliver (KC) and L2 budget for the A block (MC), in KiB.
template <int MR, int VPR, int L1K, int L2K> struct Variant {
  static constexpr int vector_bytes = 64, vectors_per_row = VPR, mr = MR;
  static constexpr bool has_fma = true;
  static constexpr std::size_t b_sliver_bytes = std::size_t(L1K) << 10, a_block_bytes = std::size_t(L2K) << 10;
};
template <class S, class V> [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2,prefer-vector-width=512")]]
void run_team_variant(const bd::Call<S>& call, int id, int size) {
  bd::run_team<S, V>(call, id, size);
}
template <class S, class V> void run_variant(const detail::Problem<S>& p, int threads) {
  bd::run_isa<S, V>(p, threads, run_team_variant<S, V>);
}

template <class V> void tune_variant(std::vector<Record>& out, index_t m, index_t n, index_t k, int reps) {
  using B = bd::Blocking<float, V>;
  const std::string name = "tune " + tile_name<float, V>() + " kc" + std::to_string(B::kc) + " mc" + std::to_string(B::mc);
  out.push_back(time_blocked<MaxPlus<float>>(name, m, n, k, reps, run_variant<MaxPlus<float>, V>));
  out.push_back(time_blocked<PlusTimes<float>>(name, m, n, k, reps, run_variant<PlusTimes<float>, V>));
}

void tune_avx512(std::vector<Record>& out, index_t m, index_t n, index_t k, int reps) {
  tune_variant<Variant<8, 3, 48, 256>>(out, m, n, k, reps);  // the shipped configuration
  tune_variant<Variant<8, 3, 24, 256>>(out, m, n, k, reps);
  tune_variant<Variant<12, 2, 24, 256>>(out, m, n, k, reps);
  tune_variant<Variant<6, 4, 24, 256>>(out, m, n, k, reps);
  tune_variant<Variant<14, 2, 24, 256>>(out, m, n, k, reps);
  tune_variant<Variant<8, 3, 12, 256>>(out, m, n, k, reps);
  tune_variant<Variant<8, 3, 96, 256>>(out, m, n, k, reps);
  tune_variant<Variant<8, 3, 48, 512>>(out, m, n, k, reps);
  tune_variant<Variant<8, 3, 24, 128>>(out, m, n, k, reps);
  tune_variant<Variant<8, 3, 24, 512>>(out, m, n, k, reps);
}
#endif

// ---- the micro-kernel's ceiling --------------------------------------------------------------

// The micro-kernel alone, over packed panels that stay in L1 (KC = 256), accumulators parked and
// resumed each call as between KC chunks.
constexpr index_t kCeilingKc = 256, kCeilingCalls = 2000;

template <class T> using MicroLoop = void (*)(const T*, const T*, T*);

template <class S, class Isa>
RINGMM_CPU_INLINE void micro_loop(const typename S::value_type* a, const typename S::value_type* b,
                                  typename S::value_type* partial) {
  using Blk = bd::Blocking<typename S::value_type, Isa>;
  const bd::TileOut<typename S::value_type> unused{};
  for (index_t r = 0; r < kCeilingCalls; ++r)
    bd::micro_kernel<S, Isa, Blk::mr, Blk::nr>(kCeilingKc, a, b, partial, false, false, /*nan_free=*/true, unused);
}
template <class S>
void micro_loop_generic(const typename S::value_type* a, const typename S::value_type* b, typename S::value_type* c) {
  micro_loop<S, bd::IsaGeneric>(a, b, c);
}
#if RINGMM_CPU_MULTIVERSION
template <class S> [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2,prefer-vector-width=512")]]
void micro_loop_avx512(const typename S::value_type* a, const typename S::value_type* b, typename S::value_type* c) {
  micro_loop<S, bd::IsaAvx512>(a, b, c);
}
template <class S> [[gnu::target("avx2,fma,bmi2")]]
void micro_loop_avx2(const typename S::value_type* a, const typename S::value_type* b, typename S::value_type* c) {
  micro_loop<S, bd::IsaAvx2>(a, b, c);
}
#endif

template <class S, class Isa> Record time_ceiling(const std::string& isa, MicroLoop<typename S::value_type> loop, int reps) {
  using T = typename S::value_type;
  using Blk = bd::Blocking<T, Isa>;
  const std::vector<T> a = random_vector<S>(std::size_t(kCeilingKc * Blk::mr), 1, kCeilingKc);
  const std::vector<T> b = random_vector<S>(std::size_t(kCeilingKc * Blk::nr), 2, kCeilingKc);
  std::vector<T> partial(std::size_t(Blk::mr * Blk::nr), S::zero());
  const double seconds = median_seconds(reps, [&] { loop(a.data(), b.data(), partial.data()); });
  return make_record<S>("ceiling", "micro-kernel " + isa + " " + tile_name<T, Isa>() + " L1-resident", "micro-kernel",
                        Blk::mr, Blk::nr, kCeilingKc * kCeilingCalls, seconds);
}

template <class S> Record ceiling(int reps) {
#if RINGMM_CPU_MULTIVERSION
  switch (detected_cpu_isa()) {
    case CpuIsa::avx512: return time_ceiling<S, bd::IsaAvx512>("avx512", micro_loop_avx512<S>, reps);
    case CpuIsa::avx2: return time_ceiling<S, bd::IsaAvx2>("avx2", micro_loop_avx2<S>, reps);
    default: break;  // generic
  }
#endif
  return time_ceiling<S, bd::IsaGeneric>("generic", micro_loop_generic<S>, reps);
}

}  // namespace

std::vector<Record> cpu_ceilings(int reps) {
  return {ceiling<MaxPlus<float>>(reps), ceiling<MaxPlus<std::int32_t>>(reps), ceiling<PlusTimes<float>>(reps)};
}

std::vector<Record> tune_blocked(index_t m, index_t n, index_t k, int reps) {
  std::vector<Record> out;
  shipped_and_narrower<MaxPlus<float>>(out, m, n, k, reps);
  shipped_and_narrower<PlusTimes<float>>(out, m, n, k, reps);
#if RINGMM_CPU_MULTIVERSION
  if (detected_cpu_isa() == CpuIsa::avx512) tune_avx512(out, m, n, k, reps);
#endif
  return out;
}

}  // namespace ringmm::lab
