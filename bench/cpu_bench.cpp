// CPU benchmark: the blocked semiring kernel (max-plus f32 and i32, plus-times f32) beside
// OpenBLAS SGEMM, on 1 thread and on every thread, in one run. Writes JSON records in the
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

// Median and minimum seconds of `reps` calls after one warm-up call.
std::pair<double, double> time_calls(int reps, const std::function<void()>& call) {
  call();
  std::vector<double> secs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  return {secs[secs.size() / 2], secs.front()};
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

template <class T> ringmm::detail::Problem<T> square_problem(const std::vector<T>& a, const std::vector<T>& b,
                                                            std::vector<T>& c, index_t n, T alpha, T beta) {
  ringmm::detail::Problem<T> p;
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

// One blocked-kernel measurement of semiring S on an n³ product.
// `run` replaces blocked_gemm for the tuning variants.
template <class S>
Record bench_blocked(const char* semiring, const char* type, index_t n, int threads, int reps, std::mt19937_64& rng,
                     void (*run)(const ringmm::detail::Problem<typename S::value_type>&, int) = nullptr,
                     const std::string& config = "") {
  using T = typename S::value_type;
  const auto a = random_values<T>(n * n, rng), b = random_values<T>(n * n, rng);
  std::vector<T> c(std::size_t(n * n));
  const auto p = square_problem<T>(a, b, c, n, S::one(), S::zero());
  const auto [med, best] = time_calls(reps, [&] {
    if (run) run(p, threads);
    else ringmm::cpu::blocked_gemm<S>(p, threads);
  });
  const std::string kernel = config.empty() ? "blocked " + isa_name() + " " + tile_name<T>() : config;
  return {"cpu", kernel + " t" + std::to_string(threads), semiring, type, n, n, n, threads, med, best,
          p.updates() / med, S::kind == ringmm::SemiringKind::plus_times};
}

#if RINGMM_HAVE_BLAS
Record bench_sgemm(index_t n, int threads, int reps, std::mt19937_64& rng) {
  const auto a = random_values<float>(n * n, rng), b = random_values<float>(n * n, rng);
  std::vector<float> c(std::size_t(n * n));
  openblas_set_num_threads(threads);
  const int ni = int(n);
  const auto [med, best] = time_calls(reps, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni, b.data(), ni, 0.0f, c.data(), ni);
  });
  return {"openblas", "cblas_sgemm t" + std::to_string(threads), "plus-times", "f32", n, n, n, threads, med, best,
          double(n) * double(n) * double(n) / med, true};
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
template <class S, class V> void run_variant(const ringmm::detail::Problem<typename S::value_type>& p, int threads) {
  bd::run_isa<S, V>(p, threads, run_team_variant<S, V>);
}

template <class V> void tune_variant(std::vector<Record>& out, index_t n, int reps, std::mt19937_64& rng) {
  using B = bd::Blocking<float, V>;
  const std::string name = "tune " + std::to_string(B::mr) + "x" + std::to_string(B::nr) + " kc" + std::to_string(B::kc) +
                           " mc" + std::to_string(B::mc);
  out.push_back(bench_blocked<ringmm::MaxPlus<float>>("max-plus", "f32", n, 1, reps, rng,
                                                      run_variant<ringmm::MaxPlus<float>, V>, name));
  out.push_back(bench_blocked<ringmm::PlusTimes<float>>("plus-times", "f32", n, 1, reps, rng,
                                                        run_variant<ringmm::PlusTimes<float>, V>, name));
}

void tune(std::vector<Record>& out, index_t n, int reps, std::mt19937_64& rng) {
  tune_variant<Variant<8, 3, 24, 256>>(out, n, reps, rng);  // the shipped configuration
  tune_variant<Variant<12, 2, 24, 256>>(out, n, reps, rng);
  tune_variant<Variant<6, 4, 24, 256>>(out, n, reps, rng);
  tune_variant<Variant<14, 2, 24, 256>>(out, n, reps, rng);
  tune_variant<Variant<8, 3, 12, 256>>(out, n, reps, rng);
  tune_variant<Variant<8, 3, 48, 256>>(out, n, reps, rng);
  tune_variant<Variant<8, 3, 24, 128>>(out, n, reps, rng);
  tune_variant<Variant<8, 3, 24, 512>>(out, n, reps, rng);
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
                  "\"semiring\": \"%s\", \"type\": \"%s\", \"product\": \"gemm\", \"m\": %lld, \"n\": %lld, "
                  "\"k\": %lld, \"batch\": 1, \"threads\": %d, \"seconds\": %.6e, \"seconds_min\": %.6e, "
                  "\"updates_per_s\": %.6e%s, \"load_average\": [%.2f, %.2f], \"date\": \"%s\"}%s\n",
                  device.c_str(), r.backend.c_str(), r.kernel.c_str(), r.semiring.c_str(), r.type.c_str(),
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
    std::printf("| %s | %s | %s | %s | %lld³ | %d | %.2f | %.2f | %.1f | %s |\n", r.backend.c_str(), r.kernel.c_str(),
                r.semiring.c_str(), r.type.c_str(), (long long)r.m, r.threads, r.seconds * 1e3, r.seconds_min * 1e3,
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
  for (index_t n : sizes) {
    const int size_reps = reps > 0 ? reps : n <= 600 ? 15 : n <= 1200 ? 9 : 5;
    for (int threads : {1, all_threads}) {
      if (threads == all_threads && threads == 1 && records.size() > 0 && records.back().m == n) break;
      records.push_back(bench_blocked<ringmm::MaxPlus<float>>("max-plus", "f32", n, threads, size_reps, rng));
      records.push_back(bench_blocked<ringmm::MaxPlus<std::int32_t>>("max-plus", "i32", n, threads, size_reps, rng));
      records.push_back(bench_blocked<ringmm::PlusTimes<float>>("plus-times", "f32", n, threads, size_reps, rng));
#if RINGMM_HAVE_BLAS
      records.push_back(bench_sgemm(n, threads, size_reps, rng));
#endif
      std::fprintf(stderr, "done %lld³ on %d thread(s)\n", (long long)n, threads);
    }
  }
#if RINGMM_CPU_MULTIVERSION
  if (tuning && bd::detect_isa() == bd::Isa::avx512) tune(records, 1024, 5, rng);
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
