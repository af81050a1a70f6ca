// ringmm demo: the project's showcase. Multiplies random example matrices over every built-in
// semiring, checks each product against the CPU reference and reports throughput.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/random_data.hpp"
#include "measure/timer.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

struct DemoCase {
  SemiringKind kind;
  DType type;
  const char* what;  // what the product computes
};

// Every semiring of the registry over its first element type, then the integer forms Hopper
// runs fastest.
std::vector<DemoCase> demo_cases() {
  std::vector<DemoCase> cases;
  for (SemiringKind kind : all_semirings)
    for (const SemiringPair& p : builtin_pairs)
      if (p.kind == kind) {
        cases.push_back({kind, p.type, use_of(kind).data()});
        break;
      }
  cases.push_back({SemiringKind::max_plus, DType::i32, "integer max-plus (Hopper add-then-max)"});
  cases.push_back({SemiringKind::max_plus, DType::i16x2, "two int16 lanes per element"});
  return cases;
}

// A value no product of the demo's data equals: shows elements the multiply did not write.
template <class T> T poison() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else if constexpr (std::is_same_v<T, i16x2>) return {std::int16_t(0x7bad), std::int16_t(-0x7bad)};
  else if constexpr (std::is_same_v<T, std::uint8_t>) return 0xa5;
  else return T(0x7eadbeef);
}

struct Outcome {
  double seconds;
  CheckResult check;
};

template <class S> Outcome run_case(const Context& ctx, index_t m, index_t n, index_t k, std::uint64_t seed) {
  using T = typename S::value_type;
  const std::vector<T> a = measure::random_vector<S>(std::size_t(m * k), seed, k);
  const std::vector<T> b = measure::random_vector<S>(std::size_t(k * n), seed + 1, k);
  std::vector<T> c(std::size_t(m * n), poison<T>());
  const MatrixView<const T> av = row_major(a.data(), m, k), bv = row_major(b.data(), k, n);
  // The warm-up call is the checked one: C starts poisoned.
  gemm<S>(ctx, Op::N, av, Op::N, bv, row_major(c.data(), m, n));
  std::vector<T> expected(c.size(), poison<T>());
  const auto p = make_problem<S>(Op::N, av, Op::N, bv, row_major(expected.data(), m, n), S::one(), S::zero());
  parallel_reference<S>(p);
  Outcome out{0, compare_results<S>(p, expected, c, nullptr)};
  std::vector<T> scratch(c.size());
  out.seconds = measure::median_seconds(3, [&] { gemm<S>(ctx, Op::N, av, Op::N, bv, row_major(scratch.data(), m, n)); });
  return out;
}

}  // namespace

int demo_command(const Args& args) {
  const Options opt(args, {{"backend", true}, {"size", true}});
  Context ctx;
  ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  std::string why_cpu;
  ctx.on_notice = [&](std::string_view note) { why_cpu = std::string(note); };
  const Backend backend = ctx.resolved_backend();
  ctx.backend = backend;
  const bool gpu = backend == Backend::cuda;
  const index_t size = opt.integer_or("size", gpu ? 2048 : 640, 1, 1 << 16);
  // Rectangular and not tile multiples, so border handling is part of every product. --size is
  // the largest dimension: k = 7/8·size + 3 would exceed it below 24, so it is capped.
  const index_t m = size, n = size * 3 / 4 + 1, k = std::min(size, size * 7 / 8 + 3);

  std::cout << "ringmm demo: C = A (x) B over every semiring, A " << m << "x" << k << ", B " << k << "x" << n
            << ", random data\n"
            << "backend: " << to_string(backend) << " (" << (gpu ? gpu_name() : cpu_model()) << ")";
  if (!gpu) std::cout << (why_cpu.empty() ? "" : "; " + why_cpu);
  std::cout << "\ntimes: median of 3 calls on host matrices" << (gpu ? " (host<->device copies included)" : "")
            << "; every product is checked against the CPU reference\n\n"
            << "semiring    type   what                                     ms         10^9 upd/s  check\n";
  int failures = 0;
  std::uint64_t seed = 2024;
  const std::vector<DemoCase> cases = demo_cases();
  for (const DemoCase& dc : cases) {
    const std::string s(to_string(dc.kind)), t(to_string(dc.type)), w(dc.what);
    std::cout << s << std::string(12 - s.size(), ' ') << t << std::string(7 - t.size(), ' ') << w
              << std::string(w.size() < 41 ? 41 - w.size() : 1, ' ') << std::flush;
    try {
      const Outcome o = visit_semiring(dc.kind, dc.type, [&](auto tag) {
        return run_case<typename decltype(tag)::type>(ctx, m, n, k, seed);
      });
      const std::string time = fixed(o.seconds * 1e3, 3), rate = fixed(double(m) * n * k * lanes(dc.type) / o.seconds * 1e-9, 2);
      std::cout << time << std::string(11 - std::min<std::size_t>(10, time.size()), ' ') << rate
                << std::string(12 - std::min<std::size_t>(11, rate.size()), ' ')
                << (o.check.pass ? "PASS" : "FAIL") << (o.check.exact ? " (exact)" : " (within rounding bound)") << "\n";
      if (!o.check.pass) {
        ++failures;
        std::cout << "    " << o.check.detail << "\n";
      }
    } catch (const Error& e) {
      ++failures;
      std::cout << "FAIL: " << e.what() << "\n";
    }
    seed += 2;
  }
  std::cout << "\n" << (cases.size() - failures) << " of " << cases.size() << " products PASS\n";
  if (failures) {
    std::cout.flush();
    print_error("demo", "check: " + std::to_string(failures) + " of " + std::to_string(cases.size()) +
                            " products failed their check");
    return 1;
  }
  return 0;
}

}  // namespace ringmm::tools
