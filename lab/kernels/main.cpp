// ringmm-lab: the measurements that study ringmm rather than use it, built from lab/ and never
// shipped. Four commands (the last three where the lab is built with CUDA):
//   tune-cpu    the sweep behind the blocked CPU kernel's constants (docs/perf/cpu.md)
//   ladder      the kernel ladder (docs/perf/ladder.md) beside cuBLAS, the register-register
//               ceiling and ringmm's own engine; --serial adds the naive loop on one CPU thread
//   seed003     the published Aᵀ·A kernels (docs/seeds.md) beside ringmm's syrk and cuBLAS dsyrk
//   microbench  the GPU's throughput ceilings per semiring and element type
// Records follow lab/results/README.md (suites "ladder", "bench" and "microbench").
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "lab_kernels.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/random_data.hpp"
#include "measure/records.hpp"
#include "measure/timer.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::lab {
namespace {

using tools::Options;
using tools::UsageError;

constexpr const char* kUsage = R"(usage: ringmm-lab <command> [options]

commands:
  tune-cpu    [--shapes LIST] [--reps N] [--out FILE]
              the CPU kernel's tuning sweep on 1 thread: the micro-kernel's L1-resident ceiling
              (max-plus f32/i32, plus-times f32), then max-plus and plus-times f32 on each shape
              with the shipped kernel, its builds for narrower instruction sets and, on AVX-512
              CPUs, micro-tile and cache-budget variants (default --shapes 1024)
  ladder      [--semiring LIST] [--type LIST] [--shapes LIST] [--reps N] [--serial] [--out FILE]
              the ladder kernels, cuBLAS (plus-times f32/f64), the reg-reg ceiling and ringmm's
              engine per shape (default max-plus,plus-times f32 at 1024,4096); --serial adds the
              naive loop on one CPU thread (median of at most 3 runs)
  seed003     [--shapes LIST] [--reps N] [--out FILE]
              the published A^T A kernels in f64 beside ringmm's syrk and cuBLAS dsyrk
              (shapes N or NxK: C is NxN, A is KxN; default 4096; the naive kernel up to N = 4096)
  microbench  [--semiring LIST] [--type LIST] [--out FILE]
              the throughput ceilings: reg-reg, smem-one, smem-both

Shapes: N (NxNxN) or MxNxK, comma-separated. --out writes .json or .csv records.
Exit status: 0 success, 1 a measurement failed, 2 usage mistake.
)";

struct Shape {
  index_t m, n, k;
};

std::string shape_text(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// "N" is NxNxN; "MxNxK" names all three; with `syrk`, "NxK" names C's side and the inner length.
std::vector<Shape> parse_shapes(const std::string& text, bool syrk) {
  std::vector<Shape> shapes;
  for (const std::string& item : tools::split_list(text, "--shapes")) {
    std::vector<index_t> dims;
    for (std::size_t start = 0;;) {
      const std::size_t x = item.find('x', start);
      dims.push_back(tools::parse_integer(item.substr(start, x == std::string::npos ? x : x - start), "--shapes", 1,
                                          index_t(1) << 24));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (dims.size() == 1) shapes.push_back({dims[0], dims[0], dims[0]});
    else if (syrk && dims.size() == 2) shapes.push_back({dims[0], dims[0], dims[1]});
    else if (!syrk && dims.size() == 3) shapes.push_back({dims[0], dims[1], dims[2]});
    else throw UsageError("--shapes", "'" + item + "' is neither N nor " + (syrk ? "NxK" : "MxNxK"));
  }
  return shapes;
}

// The rows of one command: each timed, printed at once and kept as a record; a row that fails is
// printed and counted, and the run goes on.
class Table {
 public:
  Table(std::string suite, std::string product) : suite_(std::move(suite)), product_(std::move(product)) {
    date_ = tools::utc_timestamp();
    device_ = tools::gpu_name();
  }

  // Times one row with time() (a measure::Timing); returns its rate, or nothing when it failed.
  template <class Time>
  std::optional<double> row(SemiringKind kind, DType type, const Shape& s, const std::string& backend,
                            const std::string& kernel, double updates, std::optional<double> reference_rate, Time&& time) {
    try {
      return add(kind, type, s, backend, kernel, time(), updates, reference_rate);
    } catch (const Error& e) {
      ++failures_;
      std::cout << to_string(kind) << " " << to_string(type) << " " << shape_text(s) << " " << kernel
                << ": error: " << e.what() << std::endl;
      return std::nullopt;
    }
  }

  void header(const std::string& reference) const {
    std::cout << pad("semiring", 11) << pad("type", 6) << pad("shape", 18) << pad("kernel", 20) << pad("ms", 11)
              << pad("Tupd/s", 10) << "of " << reference << "\n";
  }

  // Writes the records to `out` (if given); the exit status: 1 when a row failed.
  int finish(const std::optional<std::string>& out, const char* command) const {
    if (out) {
      measure::write_records(*out, records_);
      std::cout << "wrote " << *out << " (" << records_.size() << " records)\n";
    }
    if (failures_) tools::print_error(command, std::to_string(failures_) + " measurements failed (see above)");
    return failures_ ? 1 : 0;
  }

 private:
  double add(SemiringKind kind, DType type, const Shape& s, const std::string& backend, const std::string& kernel,
             const measure::Timing& t, double updates, std::optional<double> reference_rate) {
    measure::Record r;
    r.suite = suite_;
    r.device = backend == "cpu" ? tools::cpu_model() : device_;
    r.backend = backend;
    r.kernel = kernel;
    r.semiring = std::string(to_string(kind));
    r.type = std::string(to_string(type));
    r.product = product_;
    r.m = s.m, r.n = s.n, r.k = s.k, r.batch = 1;
    r.seconds = t.kernel_seconds;
    if (t.with_transfers_seconds > 0) r.seconds_with_transfers = t.with_transfers_seconds;
    r.updates_per_s = updates / t.kernel_seconds;
    if (kind == SemiringKind::plus_times) r.flops_per_s = 2 * *r.updates_per_s;
    r.date = date_;
    records_.push_back(r);
    std::cout << pad(r.semiring, 11) << pad(r.type, 6) << pad(shape_text(s), 18) << pad(kernel, 20)
              << pad(tools::fixed(t.kernel_seconds * 1e3, 3), 11) << pad(tools::fixed(*r.updates_per_s * 1e-12, 3), 10)
              << (reference_rate ? tools::fixed(100 * *r.updates_per_s / *reference_rate, 1) + "%" : "-") << std::endl;
    return *r.updates_per_s;
  }

  static std::string pad(const std::string& s, std::size_t width) {
    return s + std::string(s.size() < width ? width - s.size() : 1, ' ');
  }
  std::string suite_, product_, date_, device_;
  std::vector<measure::Record> records_;
  int failures_ = 0;
};

std::optional<std::string> results_path(const Options& opt) {
  const auto out = opt.get("out");
  if (out) tools::check_results_path(*out, "--out");
  return out;
}

int tune_cpu_command(const tools::Args& args) {
  const Options opt(args, {{"shapes", true}, {"reps", true}, {"out", true}});
  const auto shapes = parse_shapes(opt.get_or("shapes", "1024"), false);
  const int reps = int(opt.integer_or("reps", 10, 1, 1000));
  const auto out = results_path(opt);
  const std::string device = tools::cpu_model(), date = tools::utc_timestamp();
  std::cout << "CPU tuning sweep on " << device << ", 1 thread; median of " << reps
            << " after a warm-up\nTupd/s = 10^12 semiring updates per second\n";
  std::vector<measure::Record> records;
  auto keep = [&](std::vector<measure::Record> measured) {
    for (measure::Record& r : measured) {
      r.suite = "bench";
      r.device = device;
      r.date = date;
      std::cout << r.semiring << std::string(r.semiring.size() < 11 ? 11 - r.semiring.size() : 1, ' ') << r.type
                << std::string(r.type.size() < 6 ? 6 - r.type.size() : 1, ' ') << shape_text({*r.m, *r.n, *r.k}) << "  "
                << r.kernel << "  " << tools::fixed(*r.seconds * 1e3, 3) << " ms  "
                << tools::fixed(*r.updates_per_s * 1e-12, 4) << " Tupd/s" << std::endl;
      records.push_back(std::move(r));
    }
  };
  keep(cpu_ceilings(reps));
  for (const Shape& s : shapes) keep(tune_blocked(s.m, s.n, s.k, reps));
  if (out) {
    measure::write_records(*out, records);
    std::cout << "wrote " << *out << " (" << records.size() << " records)\n";
  }
  return 0;
}

#if RINGMM_LAB_CUDA
void require_gpu(const char* command) {
  std::string why;
  if (!cuda_device_available(&why))
    throw Error(Errc::backend_unavailable, "cuda", std::string(command) + " needs a GPU: " + why);
}

// The register-register ceiling of a pair (the microbenchmark's first level).
double reg_reg_ceiling(SemiringKind kind, DType type) {
  for (const measure::Ceiling& c : measure::microbench(kind, type))
    if (c.level == "reg-reg") return c.updates_per_second;
  throw Error(Errc::unsupported, "microbench", "no reg-reg level");
}

// The naive triple loop (cpu::reference_gemm) on one thread: the ladder's sequential baseline.
double serial_seconds(SemiringKind kind, DType type, const Shape& s, int reps) {
  return visit_semiring(kind, type, [&](auto tag) {
    using S = typename decltype(tag)::type;
    using T = typename S::value_type;
    const std::vector<T> a = measure::random_vector<S>(std::size_t(s.m * s.k), 1, s.k);
    const std::vector<T> b = measure::random_vector<S>(std::size_t(s.k * s.n), 2, s.k);
    std::vector<T> c(std::size_t(s.m * s.n), S::zero());
    const auto p = make_problem<S>(Op::N, row_major<const T>(a.data(), s.m, s.k), Op::N,
                                   row_major<const T>(b.data(), s.k, s.n), row_major(c.data(), s.m, s.n), S::one(),
                                   S::zero());
    return measure::median_seconds(std::min(reps, 3), [&] { cpu::reference_gemm<S>(p); });
  });
}

int ladder_command(const tools::Args& args) {
  const Options opt(args, {{"semiring", true}, {"type", true}, {"shapes", true}, {"reps", true}, {"serial", false},
                           {"out", true}});
  const auto pairs = tools::selected_pairs(opt, "max-plus,plus-times", "f32");
  const auto shapes = parse_shapes(opt.get_or("shapes", "1024,4096"), false);
  const int reps = int(opt.integer_or("reps", 10, 1, 1000));
  const auto out = results_path(opt);
  require_gpu("ladder");
  Table table("ladder", "gemm");
  table.header("ceiling");
  Context engine;
  engine.backend = Backend::cuda;
  engine.vendor_blas = false;  // ringmm's own kernels, never the cuBLAS route
  for (const auto& [kind, type] : pairs) {
    const double ceiling = reg_reg_ceiling(kind, type);  // once per pair: it does not depend on the shape
    for (const Shape& s : shapes) {
      const double updates = double(s.m) * double(s.n) * double(s.k) * tools::lanes(type);
      auto row = [&](const std::string& backend, const std::string& kernel, auto&& time) {
        table.row(kind, type, s, backend, kernel, updates, ceiling, time);
      };
      if (opt.flag("serial")) row("cpu", "serial", [&] { return measure::Timing{serial_seconds(kind, type, s, reps), 0}; });
      if (kind == SemiringKind::plus_times && (type == DType::f32 || type == DType::f64))
        row("cublas", type == DType::f32 ? "cublasSgemm" : "cublasDgemm",
            [&] { return measure::time_cublas(type, measure::Product::gemm, s.m, s.n, s.k, 1, reps); });
      for (const std::string& kernel : ladder_kernels())
        row("cuda", kernel, [&] { return time_ladder(kind, type, kernel, s.m, s.n, s.k, reps); });
      row("cuda", "ringmm",
          [&] { return measure::time_ringmm(engine, kind, type, measure::Product::gemm, s.m, s.n, s.k, 1, reps); });
    }
  }
  return table.finish(out, "ladder");
}

int seed003_command(const tools::Args& args) {
  const Options opt(args, {{"shapes", true}, {"reps", true}, {"out", true}});
  const auto shapes = parse_shapes(opt.get_or("shapes", "4096"), true);
  const int reps = int(opt.integer_or("reps", 10, 1, 1000));
  const auto out = results_path(opt);
  require_gpu("seed003");
  // Records keep the suite and kernel names `ringmm bench --product syrk` gave these kernels.
  Table table("bench", "syrk");
  table.header("cuBLAS");
  Context engine;
  engine.backend = Backend::cuda;
  engine.vendor_blas = false;
  for (const Shape& s : shapes) {
    const double updates = double(s.n) * double(s.n + 1) / 2 * double(s.k);  // one triangle, as syrk counts
    const std::optional<double> cublas_rate = table.row(
        SemiringKind::plus_times, DType::f64, s, "cublas", "cublasDsyrk", updates, std::nullopt,
        [&] { return measure::time_cublas(DType::f64, measure::Product::syrk, s.n, s.n, s.k, 1, reps); });
    auto row = [&](const std::string& kernel, auto&& time) {
      table.row(SemiringKind::plus_times, DType::f64, s, "cuda", kernel, updates, cublas_rate, time);
    };
    row("ringmm", [&] {
      return measure::time_ringmm(engine, SemiringKind::plus_times, DType::f64, measure::Product::syrk, s.n, s.n, s.k,
                                  1, reps);
    });
    for (const std::string& kernel : seed003_kernels()) {
      if (kernel == "seed003-naive" && s.n > 4096) continue;  // minutes per call beyond
      row(kernel, [&] { return time_seed003(kernel, s.n, s.k, std::min(reps, 3)); });
    }
  }
  return table.finish(out, "seed003");
}

int microbench_command(const tools::Args& args) {
  const Options opt(args, {{"semiring", true}, {"type", true}, {"out", true}});
  const auto pairs = tools::selected_pairs(opt);
  const auto out = results_path(opt);
  require_gpu("microbench");
  const std::string device = tools::gpu_name(), date = tools::utc_timestamp();
  std::vector<measure::Record> records;
  std::cout << "device: " << device << "\nsemiring    type   level       10^12 updates/s\n";
  for (const auto& [kind, type] : pairs) {
    for (const measure::Ceiling& c : measure::microbench(kind, type)) {
      const std::string s(to_string(kind)), t(to_string(type));
      std::cout << s << std::string(12 - s.size(), ' ') << t << std::string(7 - t.size(), ' ') << c.level
                << std::string(c.level.size() < 12 ? 12 - c.level.size() : 1, ' ')
                << tools::fixed(c.updates_per_second * 1e-12, 2) << std::endl;
      measure::Record r;
      r.suite = "microbench";
      r.device = device;
      r.backend = "ceiling";
      r.kernel = "microbench";
      r.semiring = s;
      r.type = t;
      r.product = c.level;
      r.updates_per_s = c.updates_per_second;
      if (kind == SemiringKind::plus_times) r.flops_per_s = 2 * c.updates_per_second;
      r.date = date;
      records.push_back(r);
    }
  }
  if (out) {
    measure::write_records(*out, records);
    std::cout << "wrote " << *out << " (" << records.size() << " records)\n";
  }
  return 0;
}

#endif  // RINGMM_LAB_CUDA

int dispatch(const tools::Args& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  const tools::Args rest(args.begin() + 1, args.end());
  if (command == "tune-cpu") return tools::run_guarded("tune-cpu", [&] { return tune_cpu_command(rest); });
#if RINGMM_LAB_CUDA
  if (command == "ladder") return tools::run_guarded("ladder", [&] { return ladder_command(rest); });
  if (command == "seed003") return tools::run_guarded("seed003", [&] { return seed003_command(rest); });
  if (command == "microbench") return tools::run_guarded("microbench", [&] { return microbench_command(rest); });
#else
  if (command == "ladder" || command == "seed003" || command == "microbench") {
    std::cerr << "ringmm-lab: error: " << command << ": this lab was built without CUDA" << std::endl;
    return 1;
  }
#endif
  std::cerr << "ringmm-lab: error: " << command << ": unknown command (see 'ringmm-lab --help')" << std::endl;
  return 2;
}

}  // namespace
}  // namespace ringmm::lab

int main(int argc, char** argv) { return ringmm::lab::dispatch(ringmm::tools::Args(argv + 1, argv + argc)); }
