// ringmm bench: times ringmm's products on random data and prints each beside its baselines —
// OpenBLAS and ringmm's blocked kernel on the CPU; cuBLAS and the microbenchmark ceiling on CUDA.
// The measurements themselves live in ringmm_measure (tools/measure).
// Over 500 lines: one command whose CPU and CUDA modes share the case list, the table printer and
// the record writer.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/cpu_measure.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/random_data.hpp"
#include "measure/records.hpp"
#include "measure/timer.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm/tune.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

using measure::Product;
using measure::Record;

struct Shape {
  index_t m, n, k;
};

std::string_view product_name(Product p) {
  switch (p) {
    case Product::gemm: return "gemm";
    case Product::batched: return "batched";
    case Product::syrk: return "syrk";
    case Product::argmax: return "argmax";
  }
  return "?";
}

Product parse_product(const std::string& text) {
  if (text == "gemm") return Product::gemm;
  if (text == "batched") return Product::batched;
  if (text == "syrk") return Product::syrk;
  if (text == "argmax") return Product::argmax;
  throw UsageError("--product", "unknown value '" + text + "' (valid: gemm, batched, syrk, argmax)");
}

// Whether ⊕ of the pair selects one term, so that --product argmax can time it.
bool selects(SemiringKind kind, DType type) {
  return visit_semiring(kind, type, [](auto tag) { return semiring_traits<typename decltype(tag)::type>::selects; });
}

// "4096" is 4096x4096x4096; "MxNxK" names all three. syrk (C = Aᵀ·A, A K×N) needs M = N.
std::vector<Shape> parse_shapes(const std::string& text, Product product) {
  std::vector<Shape> shapes;
  constexpr index_t limit = index_t(1) << 24;
  for (const std::string& item : split_list(text, "--shapes")) {
    std::vector<index_t> dims;
    std::size_t start = 0;
    while (true) {
      const std::size_t x = item.find('x', start);
      dims.push_back(parse_integer(item.substr(start, x == std::string::npos ? std::string::npos : x - start),
                                   "--shapes", 1, limit));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (dims.size() == 1) shapes.push_back({dims[0], dims[0], dims[0]});
    else if (dims.size() == 3) shapes.push_back({dims[0], dims[1], dims[2]});
    else throw UsageError("--shapes", "'" + item + "' is neither N nor MxNxK");
    if (product == Product::syrk && shapes.back().m != shapes.back().n)
      throw UsageError("--shapes", "'" + item + "': syrk computes an NxN C = A^T A, so M must equal N");
  }
  return shapes;
}

std::string shape_text(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// ---- a fixed-width table printed row by row --------------------------------------------------

struct Column {
  std::string title;
  int width;
};

void print_row(const std::vector<Column>& columns, const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    std::string cell = i < cells.size() ? cells[i] : "";
    if (columns[i].title == "|") cell = "|";
    line += cell + std::string(cell.size() < std::size_t(columns[i].width) ? columns[i].width - cell.size() : 1, ' ');
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::cout << line << std::endl;
}

void print_header(const std::vector<Column>& columns) {
  std::vector<std::string> titles;
  for (const Column& c : columns) titles.push_back(c.title);
  print_row(columns, titles);
}

// 10^12 per second to four significant digits (CPU rates are small fractions of one).
std::string tera(double per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", per_s * 1e-12);
  return buf;
}
std::string rate(double updates_per_s) { return tera(updates_per_s); }
std::string ms(double seconds) { return fixed(seconds * 1e3, 3); }
std::string ratio(double x) { return fixed(x, 2) + "x"; }

// ---- the run ---------------------------------------------------------------------------------

struct Settings {
  Context ctx;
  Backend backend;
  Product product;
  index_t batch;
  int reps;
  bool ceilings;
  measure::HostMemory host;   // where the with-transfers timings keep their host operands
  Op op_a;                    // --transpose-a: ringmm reads A as the transpose of a K×M matrix
  bool named_threads;  // --threads given: CPU kernel names carry " t<threads>"
  int calls = 0;       // --calls: also time this many calls back to back (CUDA)
  bool sign_known = false;  // --sign-known: operands folded into the sign-known domain (CUDA)
  std::string suite, device, date;
};

struct Case {
  SemiringKind kind;
  DType type;   // for b1, u8: the element type b1 packs
  Shape shape;
  int threads;  // CPU threads; 0 = OpenMP's default
  bool b1 = false;  // bit-packed operands (ringmm/bits.hpp): gemm_b1 or gemm_b1_count
  std::string narrow;  // bf16, f16 or i8 operands (ringmm/narrow.hpp); `type` is the accumulator's
};

std::string type_name(const Case& c) {
  if (c.b1) return std::string(b1_type_name);
  return c.narrow.empty() ? std::string(to_string(c.type)) : c.narrow;
}

// The narrow operand types --type takes, and the accumulator each multiplies in.
constexpr std::pair<std::string_view, DType> narrow_types[] = {{"bf16", DType::f32}, {"f16", DType::f32}, {"i8", DType::i32}};

// Whether narrow operands of `element` multiply in kind (ringmm/narrow.hpp): bf16 and f16 in every
// semiring of f32 elements, i8 in max-plus and min-plus i32.
bool takes_narrow(SemiringKind kind, std::string_view element) {
  if (element == "i8") return kind == SemiringKind::max_plus || kind == SemiringKind::min_plus;
  return is_supported(kind, DType::f32);
}

// Semiring updates one call performs: m·n·k per product; syrk computes one triangle of its
// symmetric C, n(n+1)/2·k, so its rate compares with the ceilings; each lane of i16x2 is its own
// product and counts (the convention of the ceilings in measure/gpu_measure.hpp).
double updates(const Case& c, const Settings& s) {
  const double outputs = s.product == Product::syrk ? double(c.shape.n) * double(c.shape.n + 1) / 2
                                                    : double(c.shape.m) * double(c.shape.n);
  return outputs * double(c.shape.k) * double(s.product == Product::batched ? s.batch : 1) * double(lanes(c.type));
}

Record make_record(const Case& c, const Settings& s, std::string backend, std::string kernel, double seconds) {
  Record r;
  r.suite = s.suite;
  r.device = s.device;
  r.backend = std::move(backend);
  // Pinned host memory changes ms+xfer only, but every record of such a run says so.
  r.kernel = std::move(kernel) + (s.host == measure::HostMemory::pinned ? " pinned-host" : "");
  r.semiring = std::string(to_string(c.kind));
  r.type = type_name(c);
  r.product = std::string(product_name(s.product));
  r.m = c.shape.m;
  r.n = c.shape.n;
  r.k = c.shape.k;
  r.batch = s.product == Product::batched ? s.batch : 1;
  r.seconds = seconds;
  r.updates_per_s = updates(c, s) / seconds;
  if (c.kind == SemiringKind::plus_times) r.flops_per_s = 2 * *r.updates_per_s;
  r.date = s.date;
  return r;
}

// Random operands of one case on the host: A and B (one set per batch member), and C.
template <class S> struct HostOperands {
  using T = typename S::value_type;
  Shape shape;
  index_t batch;
  std::vector<T> a, b, c;
  HostOperands(const Shape& s, Product product, index_t batch_count) : shape(s), batch(batch_count) {
    const std::size_t members = std::size_t(product == Product::batched ? batch_count : 1);
    a = measure::random_vector<S>(members * std::size_t(s.m * s.k), 1, s.k);  // syrk: A is K×N with N = M
    b = product == Product::syrk ? std::vector<T>() : measure::random_vector<S>(members * std::size_t(s.k * s.n), 2, s.k);
    c.assign(members * std::size_t(s.m * s.n), S::zero());
  }
};

// The normalised problem of the case, as the public API would build it.
template <class S> Problem<S> make_case_problem(HostOperands<S>& x, Product product) {
  using T = typename S::value_type;
  const Shape& s = x.shape;
  const MatrixView<T> c = row_major(x.c.data(), s.m, s.n);
  if (product == Product::syrk) {
    const MatrixView<const T> a = row_major<const T>(x.a.data(), s.k, s.n);
    auto p = make_problem<S>(Op::T, a, Op::N, a, c, S::one(), S::zero());
    p.symmetric = true;
    return p;
  }
  auto p = make_problem<S>(Op::N, row_major<const T>(x.a.data(), s.m, s.k), Op::N, row_major<const T>(x.b.data(), s.k, s.n),
                           c, S::one(), S::zero());
  if (product == Product::batched) {
    p.batch = x.batch;
    p.stride_a = s.m * s.k;
    p.stride_b = s.k * s.n;
    p.stride_c = s.m * s.n;
  }
  return p;
}

// ringmm through its public API on the CPU backend, on the case's threads.
template <class S> double time_cpu_ringmm(HostOperands<S>& x, const Case& cs, const Settings& st) {
  using T = typename S::value_type;
  const Shape& s = x.shape;
  const MatrixView<T> c = row_major(x.c.data(), s.m, s.n);
  Context ctx = st.ctx;
  ctx.cpu_threads = cs.threads;
  switch (st.product) {
    case Product::gemm:
      return measure::median_seconds(st.reps, [&] {
        gemm<S>(ctx, Op::N, row_major<const T>(x.a.data(), s.m, s.k), Op::N, row_major<const T>(x.b.data(), s.k, s.n), c);
      });
    case Product::batched:
      return measure::median_seconds(st.reps, [&] {
        gemm_batched<S>(ctx, Op::N, row_major<const T>(x.a.data(), s.m, s.k), s.m * s.k, Op::N,
                        row_major<const T>(x.b.data(), s.k, s.n), s.k * s.n, c, s.m * s.n, x.batch);
      });
    case Product::syrk:
      return measure::median_seconds(st.reps, [&] { syrk<S>(ctx, Op::N, row_major<const T>(x.a.data(), s.k, s.n), c); });
    case Product::argmax:
      if constexpr (semiring_traits<S>::selects) {
        std::vector<std::int32_t> k_star(std::size_t(s.m * s.n));
        return measure::median_seconds(st.reps, [&] {
          gemm_argmax<S>(ctx, Op::N, row_major<const T>(x.a.data(), s.m, s.k), Op::N,
                         row_major<const T>(x.b.data(), s.k, s.n), c, row_major(k_star.data(), s.m, s.n));
        });
      }
      break;
  }
  return 0;
}

// ringmm's blocked semiring kernel called directly (bypassing BLAS for plus-times f32/f64 and the
// shift trick for log-plus).
template <class S> double time_cpu_blocked(HostOperands<S>& x, const Case& cs, const Settings& st) {
  const auto p = make_case_problem<S>(x, st.product);
  return measure::median_seconds(st.reps, [&] { cpu::blocked_gemm<S>(p, cs.threads); });
}

// "ringmm" for the heuristic's choice; a forced configuration or border policy is named.
std::string kernel_label(const Context& ctx) {
  if (!ctx.names_cuda_kernels() && ctx.boolean_mma != BooleanMma::automatic)
    return "ringmm mma-" + std::string(to_string(ctx.boolean_mma));  // or-and's tensor-core route, named
  if (!ctx.names_cuda_kernels()) return ctx.allow_tf32 ? "ringmm tf32" : "ringmm";
  return "ringmm " + (ctx.cuda_config.empty() ? std::string("auto") : ctx.cuda_config) + " " +
         std::string(to_string(ctx.border));
}

std::string blas_kernel_name(DType precision, Product product) {
  const char p = precision == DType::f64 ? 'd' : 's';
  return std::string("cblas_") + p + (product == Product::syrk ? "syrk" : "gemm");
}

std::string cublas_kernel_name(DType precision, Product product) {
  const char* p = precision == DType::f64 ? "D" : "S";
  switch (product) {
    case Product::gemm: return std::string("cublas") + p + "gemm";
    case Product::batched: return std::string("cublas") + p + "gemmStridedBatched";
    case Product::syrk: return std::string("cublas") + p + "syrk";
    case Product::argmax: break;  // no selecting semiring has a cuBLAS baseline
  }
  return "cublas";
}

// " t4": the suffix of CPU kernel names when --threads lists the thread counts (the records have
// no threads key).
std::string threads_suffix(const Case& c, const Settings& st) {
  return st.named_threads ? " t" + std::to_string(c.threads) : "";
}

std::string case_label(std::size_t i, std::size_t count) {
  return "[" + std::to_string(i + 1) + "/" + std::to_string(count) + "]";
}

class Bench {
 public:
  explicit Bench(Settings settings) : st_(std::move(settings)) {}

  // Runs every case, printing its row as it finishes; returns how many cases failed.
  int run(const std::vector<Case>& cases) {
    const bool gpu = st_.backend == Backend::cuda;
    if (gpu)
      columns_ = {{"case", 8},      {"semiring", 11},  {"type", 7},     {"shape", 18},   {"ms", 10},
                  {"ms+xfer", 10},  {"Tupd/s", 9},     {"TFLOP/s", 9},  {"engine Tupd/s", 15}, {"|", 2},
                  {"cuBLAS TFLOP/s", 16}, {"vs cuBLAS", 11}, {"|", 2}, {"ceiling Tupd/s", 16}, {"of ceiling", 10}};
    else
      columns_ = {{"case", 8},  {"semiring", 11},         {"type", 7},           {"shape", 18},
                  {"threads", 9}, {"ms", 10},             {"Tupd/s", 9},         {"TFLOP/s", 9},
                  {"|", 2},     {"blocked ms", 12},       {"blocked Tupd/s", 16}, {"|", 2},
                  {"OpenBLAS", 16}, {"ms", 10},           {"TFLOP/s", 9},        {"vs OpenBLAS", 11}};
    print_header(columns_);
    int failures = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      try {
        std::vector<std::string> cells = c.b1 ? run_cpu_b1(c) : visit_semiring(c.kind, c.type, [&](auto tag) {
          using S = typename decltype(tag)::type;
          if (!c.narrow.empty()) return run_narrow<S>(c);
          return gpu ? run_cuda<S>(c) : run_cpu<S>(c);
        });
        cells.insert(cells.begin(), {case_label(i, cases.size()), std::string(to_string(c.kind)), type_name(c),
                                     shape_text(c.shape)});
        print_row(columns_, cells);
        for (const std::string& line : notes_) std::cout << "        " << line << "\n";
        notes_.clear();
      } catch (const Error& e) {
        ++failures;
        report_failure(case_label(i, cases.size()), c, e);
      }
    }
    return failures;
  }

  const std::vector<Record>& records() const { return records_; }

 private:
  void report_failure(const std::string& label, const Case& c, const Error& e) {
    std::cout << label << " " << to_string(c.kind) << " " << type_name(c) << " " << shape_text(c.shape)
              << ": error: " << e.what() << std::endl;
  }

  template <class S> std::vector<std::string> run_cpu(const Case& c) {
    using T = typename S::value_type;
    HostOperands<S> x(c.shape, st_.product, st_.batch);
    const double seconds = time_cpu_ringmm<S>(x, c, st_);
    const double work = updates(c, st_);
    const std::string suffix = threads_suffix(c, st_);
    records_.push_back(make_record(c, st_, "cpu", "ringmm" + suffix, seconds));
    plain_rates_[{c.kind, c.type, shape_text(c.shape)}] = work / seconds;
    if (c.kind == SemiringKind::or_and) u8_or_and_rates_[{shape_text(c.shape), c.threads}] = work / seconds;
    std::vector<std::string> cells = {std::to_string(c.threads > 0 ? c.threads : omp_get_max_threads()), ms(seconds),
                                      rate(work / seconds),
                                      c.kind == SemiringKind::plus_times ? tera(2 * work / seconds) : "-", ""};
    // For plus-times f32/f64 the CPU backend is OpenBLAS, for log-plus the shift trick (large
    // products); show the semiring kernel (for log-plus, the streaming one) beside them.
    const bool plus_times_blas = c.kind == SemiringKind::plus_times && std::is_floating_point_v<T> && blas_compiled();
    if (plus_times_blas || c.kind == SemiringKind::log_plus) {
      const double blocked = time_cpu_blocked<S>(x, c, st_);
      records_.push_back(make_record(c, st_, "cpu", "blocked" + suffix, blocked));
      cells.insert(cells.end(), {ms(blocked), rate(work / blocked), ""});
    } else {
      cells.insert(cells.end(), {"-", "-", ""});
    }
    append_openblas(cells, c, work / seconds);
    return cells;
  }

  // The baseline is plus-times of the same shape at the type's precision; "vs OpenBLAS" compares
  // update rates (an i16x2 element is two updates, an sgemm element one).
  void append_openblas(std::vector<std::string>& cells, const Case& c, double updates_per_s) {
    const Case baseline{SemiringKind::plus_times, c.type == DType::f64 ? DType::f64 : DType::f32, c.shape, c.threads};
    if (blas_compiled()) {
      const double blas = openblas_seconds(baseline);
      const Record r = make_record(baseline, st_, "openblas",
                                   blas_kernel_name(baseline.type, st_.product) + threads_suffix(c, st_), blas);
      if (recorded_baselines_.insert(r.kernel + shape_text(c.shape)).second) records_.push_back(r);
      cells.insert(cells.end(), {r.kernel, ms(blas), tera(*r.flops_per_s), ratio(updates_per_s / *r.updates_per_s)});
    } else {
      cells.insert(cells.end(), {"-", "-", "-", "-"});
    }
  }

  // b1 (ringmm/bits.hpp) on the CPU: the u8 or-and case's random data (the same seeds, so the two
  // rows of one run compare), A packed along K and B into Bᵀ along K. or-and is timed with a u8 C
  // (kernel "ringmm", as the u8 rows) and with a b1 C ("ringmm b1-out", what chained squarings
  // use); plus-times counts into an i32 C.
  std::vector<std::string> run_cpu_b1(const Case& c) {
    const Shape& s = c.shape;
    const auto a = measure::random_vector<OrAnd>(std::size_t(s.m * s.k), 1, s.k);
    const auto b = measure::random_vector<OrAnd>(std::size_t(s.k * s.n), 2, s.k);
    std::vector<bit_word> a_words(std::size_t(s.m * words_for_bits(s.k))), bt_words(std::size_t(s.n * words_for_bits(s.k)));
    const auto a_bits = bit_matrix(a_words.data(), s.m, s.k), bt_bits = bit_matrix(bt_words.data(), s.n, s.k);
    pack_bits(row_major<const std::uint8_t>(a.data(), s.m, s.k), a_bits);
    pack_bits(MatrixView<const std::uint8_t>{b.data(), s.n, s.k, std::max<index_t>(1, s.n), Layout::col_major}, bt_bits);
    Context ctx = st_.ctx;
    ctx.cpu_threads = c.threads;
    const std::string suffix = threads_suffix(c, st_);
    const double work = updates(c, st_);
    double seconds;
    if (c.kind == SemiringKind::or_and) {
      std::vector<std::uint8_t> cu(std::size_t(s.m * s.n));
      seconds = measure::median_seconds(st_.reps, [&] { gemm_b1(ctx, a_bits, bt_bits, row_major(cu.data(), s.m, s.n)); });
      std::vector<bit_word> cb(std::size_t(s.m * words_for_bits(s.n)));
      const double packed =
          measure::median_seconds(st_.reps, [&] { gemm_b1(ctx, a_bits, bt_bits, bit_matrix(cb.data(), s.m, s.n)); });
      records_.push_back(make_record(c, st_, "cpu", "ringmm" + suffix, seconds));
      records_.push_back(make_record(c, st_, "cpu", "ringmm b1-out" + suffix, packed));
      std::string note = "b1 C: " + ms(packed) + " ms, " + rate(work / packed) + " Tupd/s";
      const auto u8 = u8_or_and_rates_.find({shape_text(s), c.threads});
      if (u8 != u8_or_and_rates_.end()) note += "; u8 C over u8 or-and of this run: " + ratio(work / seconds / u8->second);
      notes_.push_back(note);
    } else {
      std::vector<std::int32_t> cc(std::size_t(s.m * s.n));
      seconds =
          measure::median_seconds(st_.reps, [&] { gemm_b1_count(ctx, a_bits, bt_bits, row_major(cc.data(), s.m, s.n)); });
      records_.push_back(make_record(c, st_, "cpu", "ringmm" + suffix, seconds));
    }
    std::vector<std::string> cells = {std::to_string(c.threads > 0 ? c.threads : omp_get_max_threads()), ms(seconds),
                                      rate(work / seconds),
                                      c.kind == SemiringKind::plus_times ? tera(2 * work / seconds) : "-", "", "-", "-", ""};
    append_openblas(cells, c, work / seconds);
    return cells;
  }

  double openblas_seconds(const Case& baseline) {
    const Shape& s = baseline.shape;
    const auto key = std::make_tuple(baseline.type, s.m, s.n, s.k, baseline.threads);
    auto it = openblas_cache_.find(key);
    if (it == openblas_cache_.end())
      it = openblas_cache_
               .emplace(key, measure::time_openblas(baseline.type, st_.product, s.m, s.n, s.k, st_.batch, st_.reps,
                                                    baseline.threads))
               .first;
    return it->second;
  }

  // Narrow operands (ringmm/narrow.hpp): gemm with C in the accumulator type, on device buffers on
  // CUDA (measure::time_ringmm_narrow), on host memory on the CPU; the note compares with the
  // accumulator type's row of this run, where there is one.
  template <class S> std::vector<std::string> run_narrow(const Case& c) {
    const Shape& s = c.shape;
    const double work = updates(c, st_);
    double seconds;
    std::vector<std::string> cells;
    if (st_.backend == Backend::cuda) {
      seconds = measure::time_ringmm_narrow(st_.ctx, c.kind, c.type, c.narrow, s.m, s.n, s.k, st_.reps).kernel_seconds;
      records_.push_back(make_record(c, st_, "cuda", kernel_label(st_.ctx), seconds));
      cells = {ms(seconds), "-", rate(work / seconds), "-", "-", "", "-", "-", "", "-", "-"};
    } else {
      seconds = time_cpu_narrow<S>(c);
      records_.push_back(make_record(c, st_, "cpu", "ringmm" + threads_suffix(c, st_), seconds));
      cells = {std::to_string(c.threads > 0 ? c.threads : omp_get_max_threads()), ms(seconds), rate(work / seconds), "-",
               "", "-", "-", "", "-", "-", "-", "-"};
    }
    const auto plain = plain_rates_.find({c.kind, c.type, shape_text(s)});
    if (plain != plain_rates_.end())
      notes_.push_back("over " + std::string(to_string(c.type)) + " operands of this run: " + ratio(work / seconds / plain->second));
    return cells;
  }

  template <class S> double time_cpu_narrow(const Case& c) {
    if constexpr (detail::narrow_operand_v<S, bf16> || detail::narrow_operand_v<S, std::int8_t>) {
      HostOperands<S> x(c.shape, Product::gemm, 1);
      Context ctx = st_.ctx;
      ctx.cpu_threads = c.threads;
      const Shape& s = c.shape;
      const auto time_with = [&](auto element) {
        using E = decltype(element);
        const auto narrowed = [&](const std::vector<element_t<S>>& v) {
          std::vector<E> out(v.size());
          for (std::size_t i = 0; i < v.size(); ++i) {
            if constexpr (std::is_same_v<E, bf16>) out[i] = to_bf16(v[i]);
            else if constexpr (std::is_same_v<E, f16>) out[i] = to_f16(v[i]);
            else if constexpr (std::is_same_v<E, std::int8_t>)
              out[i] = measure::int8_operand(v[i], S::zero(), detail::i8_sentinel<S>());
          }
          return out;
        };
        const auto a = narrowed(x.a), b = narrowed(x.b);
        return measure::median_seconds(st_.reps, [&] {
          gemm<S>(ctx, Op::N, row_major<const E>(a.data(), s.m, s.k), Op::N, row_major<const E>(b.data(), s.k, s.n),
                  row_major(x.c.data(), s.m, s.n));
        });
      };
      if constexpr (detail::narrow_operand_v<S, bf16>) {
        if (c.narrow == "bf16") return time_with(bf16{});
        return time_with(f16{});
      } else {
        return time_with(std::int8_t{});
      }
    }
    throw Error(Errc::unsupported, "--type", c.narrow + " operands do not multiply in " + std::string(to_string(c.kind)));
  }

  template <class S> std::vector<std::string> run_cuda(const Case& c) {
    const Shape& s = c.shape;
    const index_t batch = st_.product == Product::batched ? st_.batch : 1;
    const measure::Timing t =
        measure::time_ringmm(st_.ctx, c.kind, c.type, st_.product, s.m, s.n, s.k, batch, st_.reps, st_.host, st_.op_a,
                             st_.sign_known);
    const double work = updates(c, st_);
    Record r = make_record(c, st_, "cuda", kernel_label(st_.ctx) + transpose_suffix() + (st_.sign_known ? " sign-known" : ""),
                           t.kernel_seconds);
    if (t.with_transfers_seconds > 0) r.seconds_with_transfers = t.with_transfers_seconds;
    const std::optional<CudaChoice> choice = engine_choice(st_.ctx, c);
    if (choice) r.choice = choice->text();
    records_.push_back(r);
    plain_rates_[{c.kind, c.type, shape_text(c.shape)}] = work / t.kernel_seconds;
    if (!r.choice.empty()) notes_.push_back("choice: " + r.choice);
    const bool plus_times = c.kind == SemiringKind::plus_times;
    const bool vendor =
        plus_times && (c.type == DType::f32 || c.type == DType::f64) && st_.ctx.vendor_blas && !st_.ctx.names_cuda_kernels();
    std::vector<std::string> cells = {ms(t.kernel_seconds), t.with_transfers_seconds > 0 ? ms(t.with_transfers_seconds) : "-", rate(work / t.kernel_seconds),
                                      plus_times ? tera(2 * work / t.kernel_seconds) : "-"};
    // plus-times f32/f64 went to cuBLAS (Context::vendor_blas): time ringmm's own kernel beside it.
    if (vendor) {
      Context own = st_.ctx;
      own.vendor_blas = false;
      const measure::Timing e =
          measure::time_ringmm(own, c.kind, c.type, st_.product, s.m, s.n, s.k, batch, st_.reps, st_.host, st_.op_a);
      Record r_engine = make_record(c, st_, "cuda", "engine" + transpose_suffix(), e.kernel_seconds);
      if (e.with_transfers_seconds > 0) r_engine.seconds_with_transfers = e.with_transfers_seconds;
      if (const auto engine = engine_choice(own, c)) r_engine.choice = engine->text();
      if (!r_engine.choice.empty()) notes_.push_back("engine choice: " + r_engine.choice);
      records_.push_back(r_engine);
      cells.push_back(rate(work / e.kernel_seconds));
    } else {
      cells.push_back("-");
    }
    cells.push_back("");
    // Plus-times, and log-plus (whose target is a share of pedantic SGEMM's rate), beside cuBLAS's
    // plus-times of the same shape and precision, recorded once per shape as plus-times.
    const bool log_plus = c.kind == SemiringKind::log_plus;
    if ((plus_times || log_plus) && (c.type == DType::f32 || c.type == DType::f64)) {
      const Case baseline{SemiringKind::plus_times, c.type, c.shape, c.threads};
      const measure::Timing cub =
          measure::time_cublas(c.type, st_.product, s.m, s.n, s.k, batch, st_.reps, st_.host);
      Record b = make_record(baseline, st_, "cublas", cublas_kernel_name(c.type, st_.product), cub.kernel_seconds);
      if (cub.with_transfers_seconds > 0) b.seconds_with_transfers = cub.with_transfers_seconds;
      if (recorded_baselines_.insert(b.kernel + shape_text(c.shape)).second) records_.push_back(b);
      cells.insert(cells.end(), {tera(2 * work / cub.kernel_seconds), ratio(cub.kernel_seconds / t.kernel_seconds), ""});
    } else if (c.kind == SemiringKind::or_and && st_.product == Product::gemm) {
      // or-and on tensor cores beside cuBLAS's bf16 GEMM, the tensor-core reference: its
      // multiply-adds per second against ringmm's updates per second.
      const Case baseline{SemiringKind::plus_times, DType::f32, c.shape, c.threads};
      const measure::Timing cub = measure::time_cublas_bf16(s.m, s.n, s.k, st_.reps);
      Record b = make_record(baseline, st_, "cublas", "cublasGemmEx bf16", cub.kernel_seconds);
      b.type = "bf16";
      if (recorded_baselines_.insert(b.kernel + shape_text(c.shape)).second) records_.push_back(b);
      cells.insert(cells.end(), {tera(2 * work / cub.kernel_seconds), ratio(cub.kernel_seconds / t.kernel_seconds), ""});
    } else {
      cells.insert(cells.end(), {"-", "-", ""});
    }
    // The register-register ceiling bounds the SIMT kernels alone: a call routed to cuBLAS, the
    // tensor cores or log-plus's shift trick has its own baseline in the columns before.
    const bool simt = !choice || choice->route == "kernels";
    const std::optional<double> ceiling = simt ? reg_reg_ceiling(c.kind, c.type) : std::nullopt;
    if (ceiling) cells.insert(cells.end(), {rate(*ceiling), fixed(100 * work / t.kernel_seconds / *ceiling, 1) + "%"});
    else cells.insert(cells.end(), {"-", "-"});
    if (st_.calls > 0) time_calls(c);
    return cells;
  }

  // --calls: the case's call made back to back (measure::time_calls), a note and a record.
  void time_calls(const Case& c) {
    const Shape& s = c.shape;
    const index_t batch = st_.product == Product::batched ? st_.batch : 1;
    const measure::CallCost cost =
        measure::time_calls(st_.ctx, c.kind, c.type, st_.product, s.m, s.n, s.k, batch, st_.calls, st_.op_a);
    Record r = make_record(c, st_, "cuda", "ringmm calls" + transpose_suffix(), cost.stream_seconds);
    r.host_seconds = cost.host_seconds;
    if (cost.graph_seconds > 0) r.graph_seconds = cost.graph_seconds;
    records_.push_back(r);
    auto us = [](double seconds) { return fixed(seconds * 1e6, 2) + " us"; };
    notes_.push_back("calls: host " + us(cost.host_seconds) + ", stream " + us(cost.stream_seconds) + ", graph " +
                     (cost.graph_seconds > 0 ? us(cost.graph_seconds) : "refused (" + cost.graph_refusal + ")") +
                     " per call, " + std::to_string(st_.calls) + " back to back");
  }

  // What the engine runs for the case (ringmm/tune.hpp), for the records, the note under the row and
  // the ceiling's column. None for argmax products, whose kernels (argmax.cuh) the engine's choice
  // does not cover.
  std::optional<CudaChoice> engine_choice(const Context& ctx, const Case& c) const {
    if (st_.product == Product::argmax) return std::nullopt;
    const Shape& s = c.shape;
    return describe_cuda_choice(ctx, c.kind, c.type, s.m, s.n, s.k, st_.product == Product::batched ? st_.batch : 1,
                                st_.product == Product::syrk);
  }

  // ringmm's records of a --transpose-a run say so; cuBLAS beside them still multiplies A as stored.
  std::string transpose_suffix() const { return st_.op_a == Op::T ? " transA" : ""; }

  // The microbenchmark ceilings of a semiring/type, measured once per run and recorded.
  std::optional<double> reg_reg_ceiling(SemiringKind kind, DType type) {
    const auto key = std::make_pair(kind, type);
    auto it = ceilings_.find(key);
    if (it == ceilings_.end()) {
      std::optional<double> reg_reg;
      for (const measure::Ceiling& c : measure::microbench(kind, type)) {
        if (c.level == "reg-reg") reg_reg = c.updates_per_second;
        if (c.level != "reg-reg" && !st_.ceilings) continue;
        Record r;
        r.suite = st_.suite;
        r.device = st_.device;
        r.backend = "ceiling";
        r.kernel = "microbench";
        r.semiring = std::string(to_string(kind));
        r.type = std::string(to_string(type));
        r.product = c.level;
        r.updates_per_s = c.updates_per_second;
        if (kind == SemiringKind::plus_times) r.flops_per_s = 2 * c.updates_per_second;
        r.date = st_.date;
        records_.push_back(r);
        if (st_.ceilings)
          std::cout << "ceiling " << r.semiring << " " << r.type << " " << c.level << ": "
                    << rate(c.updates_per_second) << " x 10^12 updates/s" << std::endl;
      }
      it = ceilings_.emplace(key, reg_reg).first;
    }
    return it->second;
  }

  Settings st_;
  std::vector<Column> columns_;
  std::map<std::tuple<SemiringKind, DType, std::string>, double> plain_rates_;  // updates/s of the non-narrow rows
  std::vector<Record> records_;
  std::map<std::tuple<DType, index_t, index_t, index_t, int>, double> openblas_cache_;
  std::set<std::string> recorded_baselines_;
  std::vector<std::string> notes_;  // lines printed under the current row
  std::map<std::pair<SemiringKind, DType>, std::optional<double>> ceilings_;
  std::map<std::pair<std::string, int>, double> u8_or_and_rates_;  // by shape and threads, for the b1 rows
};

// "1,2,all": thread counts, all = every thread OpenMP offers.
std::vector<int> parse_threads(const std::string& text) {
  std::vector<int> threads;
  for (const std::string& item : split_list(text, "--threads"))
    threads.push_back(item == "all" ? omp_get_max_threads() : int(parse_integer(item, "--threads", 1, 4096)));
  return threads;
}

}  // namespace

int bench_command(const Args& args) {
  const Options opt(args, {{"backend", true}, {"semiring", true}, {"type", true}, {"shapes", true}, {"product", true},
                           {"batch", true}, {"reps", true}, {"out", true}, {"ceilings", false}, {"config", true},
                           {"border", true}, {"threads", true},
                           {"tf32", false}, {"host-memory", true}, {"transpose-a", false},
                           {"boolean-mma", true}, {"calls", true}, {"trust-inputs", false},
                           {"sign-known", false}});

  Settings st;
  st.suite = "bench";
  st.ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  st.ctx.border = parse_border(opt.get_or("border", "auto"), "--border");
  st.ctx.cuda_config = opt.get_or("config", "");
  st.ctx.allow_tf32 = opt.flag("tf32");
  st.ctx.boolean_mma = parse_boolean_mma(opt.get_or("boolean-mma", "auto"), "--boolean-mma");
  st.ctx.trust_inputs = opt.flag("trust-inputs");
  st.calls = int(opt.integer_or("calls", 0, 1, 1000000));
  st.sign_known = opt.flag("sign-known");
  st.product = parse_product(opt.get_or("product", "gemm"));
  st.batch = opt.integer_or("batch", st.product == Product::batched ? 8 : 1, 1, 1 << 20);
  if (opt.has("batch") && st.product != Product::batched) throw UsageError("--batch", "needs --product batched");
  st.reps = int(opt.integer_or("reps", 10, 1, 100000));
  st.ceilings = opt.flag("ceilings");
  const std::string host_memory = opt.get_or("host-memory", "pageable");
  if (host_memory != "pageable" && host_memory != "pinned")
    throw UsageError("--host-memory", "unknown value '" + host_memory + "' (valid: pageable, pinned)");
  st.host = host_memory == "pinned" ? measure::HostMemory::pinned : measure::HostMemory::pageable;
  st.op_a = opt.flag("transpose-a") ? Op::T : Op::N;
  if (opt.flag("transpose-a") && st.product == Product::syrk)
    throw UsageError("--transpose-a", "syrk computes A^T A of its one operand");
  const std::vector<int> threads = opt.has("threads") ? parse_threads(*opt.get("threads")) : std::vector<int>{0};
  st.named_threads = opt.has("threads");
  // --type may name b1, bit-packed storage rather than a DType (ringmm/bits.hpp): it is split off
  // here, and its cases run after the pairs' for each selected semiring that has a b1 product.
  const std::string semiring_text = opt.get_or("semiring", "all");
  // bf16, f16 and i8 name narrow operands (ringmm/narrow.hpp), also split off: their cases run
  // after the pairs'.
  std::string type_text;
  bool b1 = false;
  std::vector<std::string> narrow;
  for (const std::string& item : split_list(opt.get_or("type", "all"), "--type")) {
    const bool is_narrow = std::any_of(std::begin(narrow_types), std::end(narrow_types), [&](const auto& t) { return t.first == item; });
    if (item == b1_type_name) b1 = true;
    else if (is_narrow) narrow.push_back(item);
    else type_text += (type_text.empty() ? "" : ",") + item;
  }
  std::vector<std::pair<SemiringKind, std::string>> narrow_cases;  // (semiring, narrow type)
  if (!narrow.empty()) {
    if (st.product != Product::gemm) throw UsageError("--type", "narrow types (bf16, f16, i8) time gemm only (--product gemm)");
    for (const char* plain_only : {"calls", "sign-known", "transpose-a"})
      if (opt.has(plain_only))
        throw UsageError(std::string("--") + plain_only,
                         "applies to the registry's types, not to bf16, f16 or i8: leave those out of --type");
    for (const std::string& element : narrow)
      for (const std::string& item : split_list(semiring_text, "--semiring"))
        for (SemiringKind kind : item == "all" ? std::vector<SemiringKind>(std::begin(all_semirings), std::end(all_semirings))
                                               : std::vector<SemiringKind>{parse_semiring(item, "--semiring")})
          if (takes_narrow(kind, element)) narrow_cases.emplace_back(kind, element);
    if (narrow_cases.empty())
      throw UsageError("--type", "bf16 and f16 multiply in the semirings of f32, i8 in max-plus and min-plus; --semiring " +
                                     semiring_text + " has none of them");
  }
  std::vector<SemiringKind> b1_kinds;
  if (b1) {
    if (st.product != Product::gemm) throw UsageError("--type", "b1 times gemm only (--product gemm)");
    for (const std::string& item : split_list(semiring_text, "--semiring"))
      for (SemiringKind kind : item == "all" ? std::vector<SemiringKind>(std::begin(all_semirings), std::end(all_semirings))
                                             : std::vector<SemiringKind>{parse_semiring(item, "--semiring")})
        if (b1_supports(kind) && std::find(b1_kinds.begin(), b1_kinds.end(), kind) == b1_kinds.end()) b1_kinds.push_back(kind);
    if (b1_kinds.empty())
      throw UsageError("--type", "b1 products are or-and and plus-times (counts); --semiring " + semiring_text + " has neither");
  }
  const auto pairs = type_text.empty() ? std::vector<std::pair<SemiringKind, DType>>{}
                                       : selected_pairs(semiring_text, type_text);
  const auto out = opt.get("out");
  if (out) check_results_path(*out, "--out");
  const auto shapes_text = opt.get("shapes");
  if (shapes_text) parse_shapes(*shapes_text, st.product);  // usage mistakes before anything runs

  std::vector<std::string> notices;
  st.ctx.on_notice = [&](std::string_view note) { notices.emplace_back(note); };
  st.backend = st.ctx.resolved_backend();
  st.ctx.backend = st.backend;
  const bool gpu = st.backend == Backend::cuda;
  if (st.ceilings && !gpu)
    throw Error(Errc::backend_unavailable, "--ceilings", "the ceilings are GPU microbenchmarks; the run uses the CPU backend");
  for (const char* cuda_only : {"config", "border", "tf32", "boolean-mma"})
    if (opt.has(cuda_only) && !gpu)
      throw Error(Errc::backend_unavailable, std::string("--") + cuda_only,
                  "chooses CUDA kernels; the run uses the CPU backend");
  if (opt.has("calls") && !gpu)
    throw Error(Errc::backend_unavailable, "--calls", "times calls on device buffers; the run uses the CPU backend");
  if (opt.flag("sign-known") && !gpu)
    throw Error(Errc::backend_unavailable, "--sign-known",
                "times the CUDA kernels' sign-known update; the run uses the CPU backend");
  if (opt.has("host-memory") && !gpu)
    throw Error(Errc::backend_unavailable, "--host-memory", "times CUDA transfers; the run uses the CPU backend");
  if (opt.flag("transpose-a") && !gpu)
    throw Error(Errc::backend_unavailable, "--transpose-a", "applies to the CUDA backend; the run uses the CPU backend");
  if (opt.has("threads") && gpu)
    throw Error(Errc::backend_unavailable, "--threads", "chooses CPU threads; the run uses the CUDA backend");
  if (b1 && gpu)
    throw Error(Errc::unsupported, "--type",
                "b1 products run on the CPU only (the CUDA backend has no b1 kernel yet); add --backend cpu");
  const char* default_shapes = gpu ? "4096,8192,4097" : "256,512";
  const auto shapes = parse_shapes(shapes_text.value_or(default_shapes), st.product);
  st.device = gpu ? gpu_name() : cpu_model();
  st.date = utc_timestamp();

  for (const auto& note : notices) std::cout << "note: " << note << "\n";
  std::vector<Record> records;
  int failures = 0;
  std::size_t cases_run = 0;
  {
    std::vector<Case> cases;
    for (const auto& [kind, type] : pairs)
      for (const Shape& s : shapes)
        if (st.product != Product::argmax || selects(kind, type))
        for (int t : threads) cases.push_back({kind, type, s, t});
    for (SemiringKind kind : b1_kinds)
      for (const Shape& s : shapes)
        for (int t : threads) cases.push_back({kind, DType::u8, s, t, true});
    for (const auto& [kind, element] : narrow_cases) {
      const DType accumulator = std::find_if(std::begin(narrow_types), std::end(narrow_types),
                                             [&](const auto& t) { return t.first == element; })->second;
      for (const Shape& s : shapes)
        for (int t : threads) cases.push_back({kind, accumulator, s, t, false, element});
    }
    cases_run = cases.size();

    std::cout << "backend " << to_string(st.backend) << " on " << st.device;
    if (!gpu) std::cout << " (" << omp_get_max_threads() << " threads)";
    std::cout << "; " << product_name(st.product);
    if (st.product == Product::batched) std::cout << " x " << st.batch;
    std::cout << "; median of " << st.reps << " after a warm-up; " << cases.size() << " cases\n"
              << "Tupd/s = 10^12 semiring updates per second (one per i, j, k and i16x2 lane"
              << (st.product == Product::syrk ? "; syrk counts the n(n+1)/2 outputs it computes" : "")
              << "); TFLOP/s = 2 x Tupd/s for plus-times\n";
    if (gpu)
      std::cout << "ms: kernel on device buffers; ms+xfer: with host<->device copies; engine: ringmm's own kernel "
                   "where plus-times f32/f64 run through cuBLAS; or-and is shown beside cuBLAS's bf16 GEMM\n";
    else std::cout << "baseline OpenBLAS: s/dgemm (or s/dsyrk) of the same shape at the type's precision\n";

    Bench bench(std::move(st));
    failures = bench.run(cases);
    records = bench.records();
  }
  if (out) {
    measure::write_records(*out, records);
    std::cout << "wrote " << *out << " (" << records.size() << " records)\n";
  }
  if (failures) {
    print_error("bench", "cases: " + std::to_string(failures) + " of " + std::to_string(cases_run) + " failed (see above)");
    return 1;
  }
  return 0;
}

}  // namespace ringmm::tools
