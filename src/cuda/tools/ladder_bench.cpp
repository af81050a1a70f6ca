// ringmm-ladder-bench: the microbenchmark ceilings for every built-in semiring and type, and the
// kernel ladder (seed 001: straightforward, tiled 8/16/32, then the production engine) beside
// cuBLAS, measured in one run. Writes JSON records (bench/results/README.md) and prints tables.
//
//   ringmm-ladder-bench [--sizes 1024,4096] [--reps 10] [--microbench-json FILE] [--ladder-json FILE]
//                       [--only microbench|ladder]
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ringmm/cuda_tools.hpp"
#include "ringmm/error.hpp"
#include "ringmm/types.hpp"

namespace {

using ringmm::DType;
using ringmm::SemiringKind;
using ringmm::index_t;

struct Record {
  std::string suite, backend, kernel, semiring, type, product;
  index_t m = 0, n = 0, k = 0, batch = 1;
  double seconds = 0, seconds_with_transfers = 0, updates_per_s = 0;
};

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

void write_json(const std::string& path, const std::vector<Record>& records, const std::string& device,
                const std::string& date) {
  std::ofstream out(path);
  if (!out) throw ringmm::Error(ringmm::Errc::io_error, path, "cannot open for writing");
  out << "[\n";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Record& r = records[i];
    std::ostringstream o;
    o.precision(6);
    o << "  {\"suite\": \"" << r.suite << "\", \"device\": \"" << json_escape(device) << "\", \"backend\": \"" << r.backend
      << "\", \"kernel\": \"" << json_escape(r.kernel) << "\", \"semiring\": \"" << r.semiring << "\", \"type\": \""
      << r.type << "\", \"product\": \"" << r.product << "\"";
    if (r.m > 0) o << ", \"m\": " << r.m << ", \"n\": " << r.n << ", \"k\": " << r.k << ", \"batch\": " << r.batch;
    if (r.seconds > 0) o << ", \"seconds\": " << r.seconds;
    if (r.seconds_with_transfers > 0) o << ", \"seconds_with_transfers\": " << r.seconds_with_transfers;
    o << ", \"updates_per_s\": " << r.updates_per_s;
    if (r.semiring == "plus-times") o << ", \"flops_per_s\": " << 2 * r.updates_per_s;
    o << ", \"date\": \"" << date << "\"}";
    out << o.str() << (i + 1 < records.size() ? ",\n" : "\n");
  }
  out << "]\n";
  if (!out) throw ringmm::Error(ringmm::Errc::io_error, path, "write failed");
}

std::string utc_date() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

struct Pair {
  SemiringKind kind;
  DType type;
};
const Pair kBuiltins[] = {{SemiringKind::plus_times, DType::f32}, {SemiringKind::plus_times, DType::f64},
                          {SemiringKind::plus_times, DType::i32}, {SemiringKind::max_plus, DType::f32},
                          {SemiringKind::max_plus, DType::f64},   {SemiringKind::max_plus, DType::i32},
                          {SemiringKind::max_plus, DType::i16x2}, {SemiringKind::min_plus, DType::f32},
                          {SemiringKind::min_plus, DType::f64},   {SemiringKind::min_plus, DType::i32},
                          {SemiringKind::min_plus, DType::i16x2}, {SemiringKind::max_min, DType::f32},
                          {SemiringKind::max_min, DType::i32},    {SemiringKind::or_and, DType::u8}};

// DESIGN.md's register-to-register figures for this H100 (10¹² updates/s), where it has one.
std::optional<double> design_reg_reg(SemiringKind kind, DType type) {
  if (kind == SemiringKind::plus_times && type == DType::f32) return 22.3;
  if (kind == SemiringKind::plus_times && type == DType::f64) return 12.1;
  const bool tropical = kind == SemiringKind::max_plus || kind == SemiringKind::min_plus;
  if (tropical && type == DType::f32) return 14.5;
  if (kind == SemiringKind::max_plus && type == DType::i32) return 16.35;
  if (kind == SemiringKind::max_plus && type == DType::i16x2) return 32.3;
  if (tropical && type == DType::f64) return 3.0;
  return std::nullopt;
}

std::string name(SemiringKind k) { return std::string(ringmm::to_string(k)); }
std::string name(DType t) { return std::string(ringmm::to_string(t)); }

std::vector<Record> run_microbench(std::map<std::string, double>& reg_reg) {
  std::vector<Record> records;
  std::printf("\nMicrobenchmark ceilings, 10^12 updates/s (i16x2: lanes), 8x8 register tile per thread\n");
  std::printf("%-11s %-6s %9s %9s %9s %12s\n", "semiring", "type", "reg-reg", "smem-one", "smem-both", "DESIGN reg");
  for (const Pair& p : kBuiltins) {
    const auto ceilings = ringmm::cuda::microbench(p.kind, p.type);
    std::printf("%-11s %-6s", name(p.kind).c_str(), name(p.type).c_str());
    for (const auto& c : ceilings) {
      std::printf(" %9.2f", c.updates_per_second / 1e12);
      Record r{"microbench", "ceiling", "8x8 register tile, 256 threads", name(p.kind), name(p.type), c.level};
      r.updates_per_s = c.updates_per_second;
      records.push_back(r);
      if (c.level == "reg-reg") reg_reg[name(p.kind) + "/" + name(p.type)] = c.updates_per_second;
    }
    const auto design = design_reg_reg(p.kind, p.type);
    if (design) std::printf(" %12.2f\n", *design);
    else std::printf(" %12s\n", "-");
  }
  return records;
}

std::vector<Record> run_ladder(const std::vector<index_t>& sizes, int reps, const std::map<std::string, double>& reg_reg) {
  std::vector<Record> records;
  const Pair semirings[] = {{SemiringKind::plus_times, DType::f32}, {SemiringKind::max_plus, DType::f32}};
  std::printf("\nLadder (row-major, alpha = 1, beta = 0; median of %d)\n", reps);
  std::printf("%-11s %-5s %-6s %-17s %10s %10s %9s %9s %9s\n", "semiring", "type", "size", "kernel", "ms",
              "ms+xfer", "T upd/s", "%ceiling", "%cuBLAS");
  for (const Pair& p : semirings) {
    const std::string key = name(p.kind) + "/" + name(p.type);
    const double ceiling = reg_reg.count(key) ? reg_reg.at(key) : 0;
    for (index_t size : sizes) {
      const double updates = double(size) * double(size) * double(size);
      std::vector<std::pair<Record, std::string>> rows;  // record, error text
      auto add = [&](const std::string& backend, const std::string& kernel, auto&& timer) {
        Record r{"ladder", backend, kernel, name(p.kind), name(p.type), "gemm", size, size, size, 1};
        try {
          const ringmm::cuda::Timing t = timer();
          r.seconds = t.kernel_seconds;
          r.seconds_with_transfers = t.with_transfers_seconds;
          r.updates_per_s = updates / t.kernel_seconds;
          rows.emplace_back(r, "");
        } catch (const std::exception& e) {
          rows.emplace_back(r, e.what());
        }
      };
      for (const std::string& kernel : ringmm::cuda::ladder_kernels())
        add("cuda", kernel, [&] { return ringmm::cuda::time_ladder(p.kind, p.type, kernel, size, size, size, reps); });
      add("cuda", "ringmm", [&] {
        return ringmm::cuda::time_ringmm(ringmm::Context{}, p.kind, p.type, ringmm::cuda::Product::gemm, size, size,
                                         size, 1, reps);
      });
      if (p.kind == SemiringKind::plus_times)
        add("cublas", p.type == DType::f32 ? "cublasSgemm (pedantic fp32)" : "cublasDgemm", [&] {
          return ringmm::cuda::time_cublas(p.type, ringmm::cuda::Product::gemm, size, size, size, 1, reps);
        });
      double cublas_rate = 0;
      for (const auto& [r, err] : rows)
        if (r.backend == "cublas" && err.empty()) cublas_rate = r.updates_per_s;
      for (const auto& [r, err] : rows) {
        std::printf("%-11s %-5s %-6lld %-17.17s", r.semiring.c_str(), r.type.c_str(), (long long)size, r.kernel.c_str());
        if (!err.empty()) {
          std::printf(" not measured: %s\n", err.c_str());
          continue;
        }
        records.push_back(r);
        std::printf(" %10.3f", r.seconds * 1e3);
        if (r.seconds_with_transfers > 0) std::printf(" %10.3f", r.seconds_with_transfers * 1e3);
        else std::printf(" %10s", "-");
        std::printf(" %9.3f", r.updates_per_s / 1e12);
        if (ceiling > 0) std::printf(" %8.1f%%", 100 * r.updates_per_s / ceiling);
        else std::printf(" %9s", "-");
        if (cublas_rate > 0) std::printf(" %8.1f%%\n", 100 * r.updates_per_s / cublas_rate);
        else std::printf(" %9s\n", "-");
      }
    }
  }
  return records;
}

std::vector<index_t> parse_sizes(const std::string& text) {
  std::vector<index_t> sizes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      sizes.push_back(std::stoll(item));
    } catch (const std::exception&) {
      throw ringmm::Error(ringmm::Errc::invalid_argument, "--sizes", "'" + item + "' is not a size");
    }
    if (sizes.back() <= 0) throw ringmm::Error(ringmm::Errc::invalid_argument, "--sizes", "sizes must be positive");
  }
  return sizes;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::vector<index_t> sizes{1024, 4096};
    int reps = 10;
    std::string microbench_json, ladder_json, only;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argc) throw ringmm::Error(ringmm::Errc::invalid_argument, arg, "needs a value");
        return argv[++i];
      };
      if (arg == "--sizes") sizes = parse_sizes(value());
      else if (arg == "--reps") reps = std::stoi(value());
      else if (arg == "--microbench-json") microbench_json = value();
      else if (arg == "--ladder-json") ladder_json = value();
      else if (arg == "--only") only = value();
      else throw ringmm::Error(ringmm::Errc::invalid_argument, arg, "unknown option");
    }
    if (!only.empty() && only != "microbench" && only != "ladder")
      throw ringmm::Error(ringmm::Errc::invalid_argument, "--only", "expected microbench or ladder");

    const auto devices = ringmm::cuda::describe_devices();
    if (devices.empty()) throw ringmm::Error(ringmm::Errc::backend_unavailable, "device", "no CUDA device");
    for (const auto& d : devices) std::printf("device %s\n", d.c_str());
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    const std::string device = prop.name, date = utc_date();

    std::map<std::string, double> reg_reg;
    if (only != "ladder") {
      const auto records = run_microbench(reg_reg);
      if (!microbench_json.empty()) write_json(microbench_json, records, device, date);
    }
    if (only != "microbench") {
      const auto records = run_ladder(sizes, reps, reg_reg);
      if (!ladder_json.empty()) write_json(ladder_json, records, device, date);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringmm-ladder-bench: %s\n", e.what());
    return 1;
  }
}
