// CPU benchmark: the blocked semiring kernel (max-plus f32 and i32, plus-times f32) beside
// OpenBLAS SGEMM, on 1 thread and on every thread, in one run; at the middle size also the kernel
// built for narrower instruction sets (AVX2, generic x86-64), 1 thread. Writes JSON records in the
// bench/results schema (suite "cpu") and prints them as a markdown table.
//
//   cpu_bench <out.json> [--sizes 512,1024,2000] [--reps N] [--tune]
//
// --tune adds a sweep over micro-tile shapes and cache budgets of the AVX-512 kernel (max-plus
// and plus-times f32, 1 thread): the measurements behind the constants in ringmm/cpu/blocked.hpp.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <omp.h>

#include "ringmm/cpu/blocked.hpp"
#include "ringmm/error.hpp"
#include "ringmm/semiring.hpp"

#if RINGMM_HAVE_BLAS
#include <cblas.h>
#endif

namespace {

using ringmm::index_t;
namespace bd = ringmm::cpu::blocked_detail;

struct Record {
  std::string backend, kernel, semiring, type;
  std::string product = "gemm";
  index_t m, n, k;
  int threads;
  double seconds, seconds_min, updates_per_s;
  bool plus_times;
};

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = -1;
  in >> one;
  return one;
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

// A measured call: its record (filled in by measure) and the call itself, owning its operands.
struct Contender {
  Record record;
  std::function<void()> call;
  std::vector<double> secs;
};

// One warm-up call each, then `reps` rounds in which every contender runs once in turn, so that
// load from other processes on this shared machine falls on all of them alike. Records the
// median and minimum seconds.
void measure(std::vector<Contender>& contenders, int reps) {
  for (auto& c : contenders) c.call();
  for (int r = 0; r < reps; ++r)
    for (auto& c : contenders) {
      const auto t0 = std::chrono::steady_clock::now();
      c.call();
      c.secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  for (auto& c : contenders) {
    std::sort(c.secs.begin(), c.secs.end());
    c.record.seconds = c.secs[c.secs.size() / 2];
    c.record.seconds_min = c.secs.front();
    c.record.updates_per_s = double(c.record.m) * double(c.record.n) * double(c.record.k) / c.record.seconds;
  }
}

template <class T> std::vector<T> random_values(index_t count, std::mt19937_64& rng) {
  std::vector<T> v(static_cast<std::size_t>(count));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> u(-1, 1);
    for (auto& x : v) x = u(rng);
  } else {
    std::uniform_int_distribution<T> u(-1000, 1000);
    for (auto& x : v) x = u(rng);
  }
  return v;
}

template <class S, class T> ringmm::detail::Problem<S> square_problem(const std::vector<T>& a, const std::vector<T>& b,
                                                            std::vector<T>& c, index_t n, T alpha, T beta) {
  ringmm::detail::Problem<S> p;
  p.a = {a.data(), n, n, n, 1};
  p.b = {b.data(), n, n, n, 1};
  p.c = {c.data(), n, n, n, 1};
  p.alpha = alpha;
  p.beta = beta;
  return p;
}

std::string isa_name() {
#if RINGMM_CPU_MULTIVERSION
  switch (bd::detect_isa()) {
    case bd::Isa::avx512: return "avx512";
    case bd::Isa::avx2: return "avx2";
    case bd::Isa::generic: break;
  }
#endif
  return "generic";
}

template <class T> std::string tile_name() {
#if RINGMM_CPU_MULTIVERSION
  switch (bd::detect_isa()) {
    case bd::Isa::avx512: return std::to_string(bd::Blocking<T, bd::IsaAvx512>::mr) + "x" + std::to_string(bd::Blocking<T, bd::IsaAvx512>::nr);
    case bd::Isa::avx2: return std::to_string(bd::Blocking<T, bd::IsaAvx2>::mr) + "x" + std::to_string(bd::Blocking<T, bd::IsaAvx2>::nr);
    case bd::Isa::generic: break;
  }
#endif
  return std::to_string(bd::Blocking<T, bd::IsaGeneric>::mr) + "x" + std::to_string(bd::Blocking<T, bd::IsaGeneric>::nr);
}

// The blocked kernel for semiring S on an n³ product; `run` replaces blocked_gemm for the tuning
// variants and the narrower instruction sets.
template <class S>
Contender blocked(const char* semiring, const char* type, index_t n, int threads, std::mt19937_64& rng,
                  void (*run)(const ringmm::detail::Problem<S>&, int) = nullptr,
                  const std::string& config = "") {
  using T = typename S::value_type;
  auto a = std::make_shared<std::vector<T>>(random_values<T>(n * n, rng));
  auto b = std::make_shared<std::vector<T>>(random_values<T>(n * n, rng));
  auto c = std::make_shared<std::vector<T>>(static_cast<std::size_t>(n * n));
  const auto p = square_problem<S, T>(*a, *b, *c, n, S::one(), S::zero());
  const std::string kernel = config.empty() ? "blocked " + isa_name() + " " + tile_name<T>() : config;
  Record record{"cpu", kernel + " t" + std::to_string(threads), semiring, type, "gemm", n, n, n, threads, 0, 0, 0,
                S::kind == ringmm::SemiringKind::plus_times};
  return {record, [a, b, c, p, threads, run] {
            if (run) run(p, threads);
            else ringmm::cpu::blocked_gemm<S>(p, threads);
          }, {}};
}

// The blocked kernel built for narrower instruction sets than this CPU's widest.
template <class S> void run_generic(const ringmm::detail::Problem<S>& p, int threads) {
  bd::run_isa<S, bd::IsaGeneric>(p, threads, bd::run_team_generic<S>);
}
#if RINGMM_CPU_MULTIVERSION
template <class S> void run_avx2(const ringmm::detail::Problem<S>& p, int threads) {
  bd::run_isa<S, bd::IsaAvx2>(p, threads, bd::run_team_avx2<S>);
}
#endif

template <class S> void narrower_isas(std::vector<Contender>& out, const char* semiring, index_t n, std::mt19937_64& rng) {
  using T = typename S::value_type;
  const auto tile = [](auto blk) { return std::to_string(blk.mr) + "x" + std::to_string(blk.nr); };
#if RINGMM_CPU_MULTIVERSION
  if (bd::detect_isa() == bd::Isa::avx512)
    out.push_back(blocked<S>(semiring, "f32", n, 1, rng, run_avx2<S>, "blocked avx2 " + tile(bd::Blocking<T, bd::IsaAvx2>{})));
#endif
  out.push_back(blocked<S>(semiring, "f32", n, 1, rng, run_generic<S>, "blocked generic " + tile(bd::Blocking<T, bd::IsaGeneric>{})));
}

// The ceiling for semiring S on this core: the micro-kernel alone, over packed panels that stay in
// L1 (KC = 256), accumulators parked and resumed each call as between KC chunks.
template <class S, class Isa> RINGMM_CPU_INLINE void micro_loop_body(index_t calls, const typename S::value_type* a,
                                                                     const typename S::value_type* b,
                                                                     typename S::value_type* partial) {
  using Blk = bd::Blocking<typename S::value_type, Isa>;
  const bd::TileOut<typename S::value_type> unused{};
  for (index_t r = 0; r < calls; ++r) bd::micro_kernel<S, Isa, Blk::mr, Blk::nr>(256, a, b, partial, false, false, unused);
}
template <class S> void micro_loop_generic(index_t calls, const typename S::value_type* a, const typename S::value_type* b,
                                           typename S::value_type* partial) {
  micro_loop_body<S, bd::IsaGeneric>(calls, a, b, partial);
}
#if RINGMM_CPU_MULTIVERSION
template <class S> [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2,prefer-vector-width=512")]]
void micro_loop_avx512(index_t calls, const typename S::value_type* a, const typename S::value_type* b,
                       typename S::value_type* partial) {
  micro_loop_body<S, bd::IsaAvx512>(calls, a, b, partial);
}
template <class S> [[gnu::target("avx2,fma,bmi2")]]
void micro_loop_avx2(index_t calls, const typename S::value_type* a, const typename S::value_type* b,
                     typename S::value_type* partial) {
  micro_loop_body<S, bd::IsaAvx2>(calls, a, b, partial);
}
#endif

template <class S> Contender ceiling(const char* semiring, const char* type, std::mt19937_64& rng) {
  using T = typename S::value_type;
  constexpr index_t calls = 2000;
  auto loop = micro_loop_generic<S>;
  index_t mr = bd::Blocking<T, bd::IsaGeneric>::mr, nr = bd::Blocking<T, bd::IsaGeneric>::nr;
#if RINGMM_CPU_MULTIVERSION
  if (bd::detect_isa() == bd::Isa::avx512) {
    loop = micro_loop_avx512<S>;
    mr = bd::Blocking<T, bd::IsaAvx512>::mr, nr = bd::Blocking<T, bd::IsaAvx512>::nr;
  } else if (bd::detect_isa() == bd::Isa::avx2) {
    loop = micro_loop_avx2<S>;
    mr = bd::Blocking<T, bd::IsaAvx2>::mr, nr = bd::Blocking<T, bd::IsaAvx2>::nr;
  }
#endif
  auto a = std::make_shared<std::vector<T>>(random_values<T>(256 * mr, rng));
  auto b = std::make_shared<std::vector<T>>(random_values<T>(256 * nr, rng));
  auto partial = std::make_shared<std::vector<T>>(static_cast<std::size_t>(mr * nr), S::zero());
  Record record{"ceiling", "micro-kernel " + isa_name() + " " + std::to_string(mr) + "x" + std::to_string(nr) + " L1-resident t1",
                semiring, type, "micro-kernel", mr, nr, 256 * calls, 1, 0, 0, 0,
                S::kind == ringmm::SemiringKind::plus_times};
  return {record, [a, b, partial, loop] { loop(calls, a->data(), b->data(), partial->data()); }, {}};
}

#if RINGMM_HAVE_BLAS
Contender sgemm(index_t n, int threads, std::mt19937_64& rng) {
  auto a = std::make_shared<std::vector<float>>(random_values<float>(n * n, rng));
  auto b = std::make_shared<std::vector<float>>(random_values<float>(n * n, rng));
  auto c = std::make_shared<std::vector<float>>(static_cast<std::size_t>(n * n));
  Record record{"openblas", "cblas_sgemm t" + std::to_string(threads), "plus-times", "f32", "gemm", n, n, n, threads, 0, 0, 0, true};
  return {record, [a, b, c, n, threads] {
            openblas_set_num_threads(threads);
            const int ni = int(n);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a->data(), ni, b->data(), ni, 0.0f,
                        c->data(), ni);
          }, {}};
}
#endif

#if RINGMM_CPU_MULTIVERSION
// Tuning variants of the AVX-512 configuration: MR rows × VPR registers, L1 budget for the B
// sliver (KC) and L2 budget for the A block (MC), in KiB.
template <int MR, int VPR, int L1K, int L2K> struct Variant {
  static constexpr int vector_bytes = 64, vectors_per_row = VPR, mr = MR;
  static constexpr bool has_fma = true;
  static constexpr std::size_t b_sliver_bytes = std::size_t(L1K) << 10, a_block_bytes = std::size_t(L2K) << 10;
};
template <class S, class V> [[gnu::target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2,prefer-vector-width=512")]]
void run_team_variant(const bd::Call<S>& call, int id, int size) { bd::run_team<S, V>(call, id, size); }
template <class S, class V> void run_variant(const ringmm::detail::Problem<S>& p, int threads) {
  bd::run_isa<S, V>(p, threads, run_team_variant<S, V>);
}

template <class V> void tune_variant(std::vector<Contender>& out, index_t n, std::mt19937_64& rng) {
  using B = bd::Blocking<float, V>;
  const std::string name = "tune " + std::to_string(B::mr) + "x" + std::to_string(B::nr) + " kc" + std::to_string(B::kc) +
                           " mc" + std::to_string(B::mc);
  out.push_back(blocked<ringmm::MaxPlus<float>>("max-plus", "f32", n, 1, rng, run_variant<ringmm::MaxPlus<float>, V>, name));
  out.push_back(blocked<ringmm::PlusTimes<float>>("plus-times", "f32", n, 1, rng, run_variant<ringmm::PlusTimes<float>, V>, name));
}

std::vector<Contender> tuning_set(index_t n, std::mt19937_64& rng) {
  std::vector<Contender> out;
  tune_variant<Variant<8, 3, 48, 256>>(out, n, rng);  // the shipped configuration
  tune_variant<Variant<8, 3, 24, 256>>(out, n, rng);
  tune_variant<Variant<12, 2, 24, 256>>(out, n, rng);
  tune_variant<Variant<6, 4, 24, 256>>(out, n, rng);
  tune_variant<Variant<14, 2, 24, 256>>(out, n, rng);
  tune_variant<Variant<8, 3, 12, 256>>(out, n, rng);
  tune_variant<Variant<8, 3, 96, 256>>(out, n, rng);
  tune_variant<Variant<8, 3, 48, 512>>(out, n, rng);
  tune_variant<Variant<8, 3, 24, 128>>(out, n, rng);
  tune_variant<Variant<8, 3, 24, 512>>(out, n, rng);
  return out;
}
#endif

std::vector<index_t> parse_sizes(const std::string& text) {
  std::vector<index_t> sizes;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const long long v = std::atoll(item.c_str());
    if (v <= 0) throw ringmm::Error(ringmm::Errc::invalid_argument, "--sizes", "not a positive size: '" + item + "'");
    sizes.push_back(index_t(v));
  }
  return sizes;
}

void write_json(const std::string& path, const std::vector<Record>& records, const std::string& device,
                const std::string& date, double load_before, double load_after) {
  std::ofstream out(path);
  if (!out) throw ringmm::Error(ringmm::Errc::io_error, path, "cannot open the output file for writing");
  out << "[\n";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    char line[1024];
    std::snprintf(line, sizeof line,
                  "  {\"suite\": \"cpu\", \"device\": \"%s\", \"backend\": \"%s\", \"kernel\": \"%s\", "
                  "\"semiring\": \"%s\", \"type\": \"%s\", \"product\": \"%s\", \"m\": %lld, \"n\": %lld, "
                  "\"k\": %lld, \"batch\": 1, \"threads\": %d, \"seconds\": %.6e, \"seconds_min\": %.6e, "
                  "\"updates_per_s\": %.6e%s, \"load_average\": [%.2f, %.2f], \"date\": \"%s\"}%s\n",
                  device.c_str(), r.backend.c_str(), r.kernel.c_str(), r.semiring.c_str(), r.type.c_str(), r.product.c_str(),
                  (long long)r.m, (long long)r.n, (long long)r.k, r.threads, r.seconds, r.seconds_min, r.updates_per_s,
                  r.plus_times ? (", \"flops_per_s\": " + std::to_string(2 * r.updates_per_s)).c_str() : "",
                  load_before, load_after, date.c_str(), i + 1 < records.size() ? "," : "");
    out << line;
  }
  out << "]\n";
  if (!out) throw ringmm::Error(ringmm::Errc::io_error, path, "write failed");
}

void print_table(const std::vector<Record>& records) {
  std::printf("| backend | kernel | semiring | type | shape | threads | ms (median) | ms (min) | 10^9 upd/s | GFLOP/s |\n");
  std::printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const Record& r : records) {
    const std::string shape = r.product == "gemm" ? std::to_string(r.m) + "³"
                                                  : std::to_string(r.m) + "×" + std::to_string(r.n) + "×" + std::to_string(r.k);
    std::printf("| %s | %s | %s | %s | %s | %d | %.2f | %.2f | %.1f | %s |\n", r.backend.c_str(), r.kernel.c_str(),
                r.semiring.c_str(), r.type.c_str(), shape.c_str(), r.threads, r.seconds * 1e3, r.seconds_min * 1e3,
                r.updates_per_s * 1e-9, r.plus_times ? std::to_string(int(2 * r.updates_per_s * 1e-9)).c_str() : "");
  }
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <out.json> [--sizes 512,1024,2000] [--reps N] [--tune]\n", argv[0]);
    return 2;
  }
  const std::string out_path = argv[1];
  std::vector<index_t> sizes{512, 1024, 2000};
  int reps = 0;  // 0: by size
  bool tuning = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--sizes" && i + 1 < argc) sizes = parse_sizes(argv[++i]);
    else if (arg == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    else if (arg == "--tune") tuning = true;
    else throw ringmm::Error(ringmm::Errc::invalid_argument, arg, "unknown argument");
  }
  const double load_before = load_average();
  const int all_threads = omp_get_max_threads();
  std::mt19937_64 rng(42);
  std::vector<Record> records;
  auto keep = [&](std::vector<Contender>& measured) {
    for (const auto& c : measured) records.push_back(c.record);
  };
  {
    std::vector<Contender> set;
    set.push_back(ceiling<ringmm::MaxPlus<float>>("max-plus", "f32", rng));
    set.push_back(ceiling<ringmm::MaxPlus<std::int32_t>>("max-plus", "i32", rng));
    set.push_back(ceiling<ringmm::PlusTimes<float>>("plus-times", "f32", rng));
    measure(set, 21);
    keep(set);
  }
  for (index_t n : sizes) {
    const int size_reps = reps > 0 ? reps : n <= 600 ? 21 : n <= 1200 ? 11 : 5;
    for (int threads : {1, all_threads}) {
      if (threads == all_threads && all_threads == 1) break;
      std::vector<Contender> set;
      set.push_back(blocked<ringmm::MaxPlus<float>>("max-plus", "f32", n, threads, rng));
      set.push_back(blocked<ringmm::MaxPlus<std::int32_t>>("max-plus", "i32", n, threads, rng));
      set.push_back(blocked<ringmm::PlusTimes<float>>("plus-times", "f32", n, threads, rng));
#if RINGMM_HAVE_BLAS
      set.push_back(sgemm(n, threads, rng));
#endif
      measure(set, size_reps);
      keep(set);
      std::fprintf(stderr, "done %lld³ on %d thread(s)\n", (long long)n, threads);
    }
  }
  {
    const index_t mid = sizes[sizes.size() / 2];
    std::vector<Contender> set;
    narrower_isas<ringmm::MaxPlus<float>>(set, "max-plus", mid, rng);
    narrower_isas<ringmm::PlusTimes<float>>(set, "plus-times", mid, rng);
    measure(set, 5);
    keep(set);
  }
#if RINGMM_CPU_MULTIVERSION
  if (tuning && bd::detect_isa() == bd::Isa::avx512) {
    auto set = tuning_set(1024, rng);
    measure(set, 7);
    keep(set);
  }
#endif
  const double load_after = load_average();
  write_json(out_path, records, cpu_model(), utc_date(), load_before, load_after);
  std::printf("device: %s, %d threads, load average %.2f before, %.2f after\n\n", cpu_model().c_str(), all_threads,
              load_before, load_after);
  print_table(records);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cpu_bench: %s\n", e.what());
  return 1;
}
