#include "support.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "args.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/records.hpp"

namespace ringmm::tools {

std::string supported_types(SemiringKind kind) {
  std::string list;
  for (DType t : all_dtypes)
    if (is_supported(kind, t)) list += (list.empty() ? "" : ", ") + std::string(to_string(t));
  return list;
}

std::string unsupported_message(SemiringKind kind, DType type) {
  return std::string(to_string(kind)) + " is not available for element type " + std::string(to_string(type)) +
         " (supported: " + supported_types(kind) + ")";
}

double machine_memory_bytes() { return double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE)); }

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// describe_devices() gives one line per device, "0: NVIDIA H100 80GB HBM3, compute capability ...":
// the name lies between the index and the first comma.
std::string gpu_name() {
  if (!cuda_device_available()) return "";
  const auto devices = measure::describe_devices();
  if (devices.empty()) return "";
  std::string name = devices.front().substr(0, devices.front().find(','));
  const std::size_t colon = name.find(": ");
  if (colon != std::string::npos && name.find_first_not_of("0123456789") == colon) name.erase(0, colon + 2);
  return name;
}

std::vector<std::pair<SemiringKind, DType>> selected_pairs(const Options& opt, const std::string& default_semirings,
                                                           const std::string& default_types) {
  return selected_pairs(opt.get_or("semiring", default_semirings), opt.get_or("type", default_types));
}

std::vector<std::pair<SemiringKind, DType>> selected_pairs(const std::string& semiring, const std::string& type) {
  std::vector<SemiringKind> kinds;
  std::vector<DType> types;
  for (const std::string& item : split_list(semiring, "--semiring")) {
    if (item == "all") kinds.insert(kinds.end(), std::begin(all_semirings), std::end(all_semirings));
    else kinds.push_back(parse_semiring(item, "--semiring"));
  }
  for (const std::string& item : split_list(type, "--type")) {
    if (item == "all") types.insert(types.end(), std::begin(all_dtypes), std::end(all_dtypes));
    else types.push_back(parse_dtype(item, "--type"));
  }
  std::vector<std::pair<SemiringKind, DType>> pairs;
  for (SemiringKind k : kinds)
    for (DType t : types)
      if (is_supported(k, t) && std::find(pairs.begin(), pairs.end(), std::make_pair(k, t)) == pairs.end())
        pairs.emplace_back(k, t);
  if (pairs.empty()) {
    if (kinds.size() == 1 && types.size() == 1) throw UsageError("--type", unsupported_message(kinds[0], types[0]));
    throw UsageError("--type", "no semiring in --semiring " + semiring + " is available for --type " + type);
  }
  return pairs;
}

void check_results_path(const std::string& path, const std::string& option) {
  if (!measure::is_results_path(path))
    throw UsageError(option, "'" + path + "' must end in .json or .csv (the format follows the extension)");
  // Before a long run, not after it: the folder must exist and take a new file.
  const std::filesystem::path folder = std::filesystem::absolute(path).parent_path();
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw UsageError(option, "folder '" + folder.string() + "' does not exist");
  if (::access(folder.c_str(), W_OK) != 0) throw UsageError(option, "folder '" + folder.string() + "' is not writable");
}

std::string utc_timestamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string fixed(double x, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

std::string scientific(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e", x);
  return buf;
}

ProductOptions parse_product_options(const Options& opt, bool has_c, bool b1_allowed) {
  ProductOptions p;
  p.kind = parse_semiring(opt.get_or("semiring", "plus-times"), "--semiring");
  if (auto t = opt.get("type")) {
    p.b1 = b1_allowed && *t == b1_type_name;
    if (p.b1 && !b1_supports(p.kind))
      throw UsageError("--type", "b1 products are or-and and plus-times (counts of k where both are true), not " +
                                     std::string(to_string(p.kind)));
    if (!p.b1) {
      p.type = parse_dtype(*t, "--type");
      if (!is_supported(p.kind, *p.type)) throw UsageError("--type", unsupported_message(p.kind, *p.type));
    }
  }
  p.trans_a = opt.flag("transa");
  p.trans_b = opt.flag("transb");
  p.check = opt.flag("check");
  if (opt.has("alpha")) p.alpha = opt.real_or("alpha", 0);
  if (opt.has("beta")) {
    if (!has_c) throw UsageError("--beta", "needs --c (there is no C0 to scale)");
    p.beta = opt.real_or("beta", 0);
  }
  return p;
}

}  // namespace ringmm::tools
