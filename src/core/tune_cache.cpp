// The tune cache's host logic (ringmm/tune.hpp): shape classes, the file format, its location.
//
// The file, line by line ('#' starts a comment line; blank lines are skipped):
//   ringmm-tune-cache 1
//   gpu <cudaDeviceProp::name, to the end of the line>
//   sms <SM count>
//   version <ringmm version>
//   <semiring> <type> <M> <N> <K> <batch> <gemm|syrk> <config> <pad|predicate|-> <split|-> <rate> <heuristic rate>
#include <atomic>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>
#include <unistd.h>

#include "ringmm/cuda/configs.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/error.hpp"
#include "ringmm/tune.hpp"

namespace ringmm::tune {

namespace {

constexpr std::string_view magic = "ringmm-tune-cache 1";
constexpr index_t largest_bucket = index_t(1) << 40;

int exponent(index_t power_of_two) { return std::countr_zero(std::uint64_t(power_of_two)); }

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (true) {
    at = line.find_first_not_of(" \t", at);
    if (at == std::string_view::npos) return out;
    const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
    out.push_back(line.substr(at, end - at));
    at = end;
  }
}

// Whole-word numbers; anything else is an invalid_argument naming `what`.
index_t whole_number(std::string_view text, const char* what) {
  index_t value = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size())
    throw Error(Errc::invalid_argument, what, "'" + std::string(text) + "' is not a whole number");
  return value;
}

// A whole number that an int holds (SM counts, splits): larger ones are refused, not truncated.
int small_number(std::string_view text, const char* what) {
  const index_t value = whole_number(text, what);
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw Error(Errc::invalid_argument, what, "'" + std::string(text) + "' is out of range");
  return int(value);
}

double rate(std::string_view text, const char* what) {
  double value = 0;
  const auto [end, err] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size() || !std::isfinite(value) || value <= 0)
    throw Error(Errc::invalid_argument, what, "'" + std::string(text) + "' is not a positive rate");
  return value;
}

bool is_table_config(std::string_view name) {
  for (const auto& cfg : cuda_detail::config_table)
    if (cfg.name == name) return true;
  return false;
}

std::string rate_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", x);
  return buf;
}

}  // namespace

index_t bucket(index_t x) { return x <= 1 ? 1 : index_t(std::bit_ceil(std::uint64_t(x))); }

ShapeClass class_of(SemiringKind kind, DType type, index_t m, index_t n, index_t k, index_t batch, bool symmetric) {
  return {kind, type, bucket(m), bucket(n), bucket(k), bucket(batch), symmetric};
}

// 4 bits each for the kind and type, 7 for each exponent, 1 for symmetric: 41 bits.
std::uint64_t ShapeClass::packed() const {
  std::uint64_t key = std::uint64_t(kind);
  for (const std::uint64_t part : {std::uint64_t(type), std::uint64_t(exponent(m)), std::uint64_t(exponent(n)),
                                   std::uint64_t(exponent(k)), std::uint64_t(exponent(batch))})
    key = key << 7 | part;
  return key << 1 | (symmetric ? 1 : 0);
}

const Entry* Cache::find(const ShapeClass& shape) const {
  for (const Entry& e : entries)
    if (e.shape == shape) return &e;
  return nullptr;
}

void Cache::put(const Entry& entry) {
  for (Entry& e : entries)
    if (e.shape == entry.shape) {
      e = entry;
      return;
    }
  entries.push_back(entry);
}

void check_entry(const Entry& e) {
  const ShapeClass& s = e.shape;
  if (!is_supported(s.kind, s.type))
    throw Error(Errc::invalid_argument, "semiring", std::string(to_string(s.kind)) + " " + std::string(to_string(s.type)) +
                                                        " is not a built-in pair");
  for (const index_t dim : {s.m, s.n, s.k, s.batch})
    if (dim < 1 || dim > largest_bucket || !std::has_single_bit(std::uint64_t(dim)))
      throw Error(Errc::invalid_argument, "shape", std::to_string(dim) + " is not a power of two up to 2^40");
  if (s.symmetric && (s.m != s.n || s.batch != 1))
    throw Error(Errc::invalid_argument, "shape", "a syrk class has M = N and batch 1");
  if (e.keeps_heuristic()) {
    if (e.border != BorderPolicy::automatic || e.split_k != 0)
      throw Error(Errc::invalid_argument, "config", "'heuristic' takes no border and no split");
  } else {
    const bool small = cuda_detail::small_config_tile(e.config) != 0;
    if (!small && !is_table_config(e.config))
      throw Error(Errc::invalid_argument, "config", "unknown CUDA configuration '" + e.config + "'");
    if (small != (e.border == BorderPolicy::automatic))
      throw Error(Errc::invalid_argument, "border",
                  small ? "the small kernel takes no border" : "a table configuration needs pad or predicate");
    if (e.split_k < 1 || e.split_k > 4096) throw Error(Errc::invalid_argument, "split", "parts must be 1 to 4096");
    if (e.split_k > 1 && (s.batch != 1 || s.symmetric))
      throw Error(Errc::invalid_argument, "split", "only a single product (gemm, batch 1) is split");
    if (e.split_k > 1 && e.split_k > s.k)
      throw Error(Errc::invalid_argument, "split", "more parts than the class's K (" + std::to_string(s.k) + ")");
  }
  if (!(e.updates_per_s > 0 && std::isfinite(e.updates_per_s)) ||
      !(e.heuristic_updates_per_s > 0 && std::isfinite(e.heuristic_updates_per_s)))
    throw Error(Errc::invalid_argument, "rate", "rates are positive numbers");
}

std::string serialize(const Cache& cache) {
  std::ostringstream os;
  os << magic << "\n# written by `ringmm tune`; read by the CUDA engine (README, \"ringmm tune\")\n"
     << "gpu " << cache.key.gpu << "\nsms " << cache.key.sms << "\nversion " << cache.key.version << "\n"
     << "# semiring type M N K batch product config border split updates/s heuristic-updates/s\n";
  for (const Entry& e : cache.entries) {
    const ShapeClass& s = e.shape;
    os << to_string(s.kind) << ' ' << to_string(s.type) << ' ' << s.m << ' ' << s.n << ' ' << s.k << ' ' << s.batch
       << ' ' << (s.symmetric ? "syrk" : "gemm") << ' ' << e.config << ' '
       << (e.border == BorderPolicy::automatic ? "-" : to_string(e.border)) << ' '
       << (e.split_k == 0 ? "-" : std::to_string(e.split_k)) << ' ' << rate_text(e.updates_per_s) << ' '
       << rate_text(e.heuristic_updates_per_s) << '\n';
  }
  return os.str();
}

Cache parse(std::string_view text, const CacheKey& expected) {
  Cache cache;
  int line_number = 0, header = 0;  // header lines read so far: magic, gpu, sms, version
  auto fail = [&](const std::string& why) -> Error {
    return Error(Errc::format_error, "tune cache", "line " + std::to_string(line_number) + ": " + why);
  };
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto w = words(line);
    if (w.empty() || w[0].front() == '#') continue;
    if (header == 0) {
      if (line != magic) throw fail("not a ringmm tune cache (expected '" + std::string(magic) + "')");
      ++header;
      continue;
    }
    if (header == 1) {
      if (w[0] != "gpu" || w.size() < 2) throw fail("expected 'gpu <name>'");
      cache.key.gpu = std::string(line.substr(line.find(w[1]), line.size() - line.find(w[1])));
      while (!cache.key.gpu.empty() && (cache.key.gpu.back() == ' ' || cache.key.gpu.back() == '\t'))
        cache.key.gpu.pop_back();
      ++header;
      continue;
    }
    if (header == 2 || header == 3) {
      const char* key = header == 2 ? "sms" : "version";
      if (w.size() != 2 || w[0] != key) throw fail(std::string("expected '") + key + " <value>'");
      try {
        if (header == 2) cache.key.sms = small_number(w[1], "sms");
        else cache.key.version = std::string(w[1]);
      } catch (const Error& e) {
        throw fail(e.what());
      }
      if (++header == 4 && !(cache.key == expected))
        throw fail("written for " + cache.key.gpu + " (" + std::to_string(cache.key.sms) + " SMs), ringmm " +
                   cache.key.version + "; this is " + expected.gpu + " (" + std::to_string(expected.sms) +
                   " SMs), ringmm " + expected.version);
      continue;
    }
    if (w.size() != 12) throw fail("an entry has 12 fields, this line " + std::to_string(w.size()));
    try {
      Entry e;
      e.shape.kind = parse_semiring(w[0], "semiring");
      e.shape.type = parse_dtype(w[1], "type");
      e.shape.m = whole_number(w[2], "M"), e.shape.n = whole_number(w[3], "N");
      e.shape.k = whole_number(w[4], "K"), e.shape.batch = whole_number(w[5], "batch");
      if (w[6] != "gemm" && w[6] != "syrk") throw Error(Errc::invalid_argument, "product", "gemm or syrk");
      e.shape.symmetric = w[6] == "syrk";
      e.config = std::string(w[7]);
      e.border = w[8] == "-" ? BorderPolicy::automatic : parse_border(w[8], "border");
      if (w[8] == "auto") throw Error(Errc::invalid_argument, "border", "pad, predicate or -");
      e.split_k = w[9] == "-" ? 0 : small_number(w[9], "split");
      e.updates_per_s = rate(w[10], "rate");
      e.heuristic_updates_per_s = rate(w[11], "heuristic rate");
      check_entry(e);
      if (cache.find(e.shape)) throw Error(Errc::invalid_argument, "class", "listed twice");
      cache.entries.push_back(std::move(e));
    } catch (const Error& e) {
      throw fail(e.what());
    }
  }
  if (header < 4) throw fail("the file ends before its header does");
  return cache;
}

std::string file_name(const CacheKey& key) {
  std::string gpu;
  for (const char c : key.gpu) gpu += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return "ringmm-tune-" + gpu + "-" + std::to_string(key.sms) + "sm-" + key.version + ".txt";
}

bool disabled(const char* setting) {
  if (!setting) return false;
  const std::string_view s(setting);
  return s == "off" || s == "0" || s == "none" || s == "false";
}

std::string cache_path(const CacheKey& key, const char* setting, const char* xdg_cache_home, const char* home) {
  namespace fs = std::filesystem;
  if (disabled(setting)) return {};
  if (setting && *setting) {
    const std::string path(setting);
    std::error_code ec;
    if (path.back() == '/' || fs::is_directory(path, ec)) return (fs::path(path) / file_name(key)).string();
    return path;
  }
  if (xdg_cache_home && *xdg_cache_home) return (fs::path(xdg_cache_home) / "ringmm" / file_name(key)).string();
  if (home && *home) return (fs::path(home) / ".cache" / "ringmm" / file_name(key)).string();
  return {};
}

std::string cache_path(const CacheKey& key) {
  return cache_path(key, std::getenv("RINGMM_TUNE_CACHE"), std::getenv("XDG_CACHE_HOME"), std::getenv("HOME"));
}

std::optional<Cache> read_file(const std::string& path, const CacheKey& expected) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) throw Error(Errc::io_error, path, "cannot read the tune cache");
  return parse(text.str(), expected);
}

void write_file(const std::string& path, const Cache& cache) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  // One temporary per writer (process and call): two tunes of one GPU model at once, in two
  // processes or two threads, each rename their own.
  static std::atomic<unsigned> writes{0};
  const std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!(out << serialize(cache)) || !out.flush())
      throw Error(Errc::io_error, path, "cannot write the tune cache" + (ec ? " (" + ec.message() + ")" : std::string()));
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw Error(Errc::io_error, path, "cannot write the tune cache");
  }
}

}  // namespace ringmm::tune

namespace ringmm {

std::string CudaChoice::text() const {
  std::string line = route == "kernels" ? config + (border.empty() ? "" : " " + border) + " split " +
                                              std::to_string(split_k) + (split_in_clusters ? " in clusters" : "")
                                        : route;
  return line + " (" + source + ")";
}

std::vector<CudaConfiguration> cuda_configurations() {
  std::vector<CudaConfiguration> all;
  for (const cuda_detail::ConfigInfo& c : cuda_detail::config_table) all.push_back({std::string(c.name), c.bm, c.bn});
  return all;
}

}  // namespace ringmm
