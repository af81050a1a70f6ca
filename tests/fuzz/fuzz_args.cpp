// libFuzzer target: the `ringmm` tool's argument handling, without running anything. The input
// is one argument vector per line, arguments separated by single spaces (so two spaces make an
// empty argument); a first argument naming a command picks that command's option table. A usage
// mistake must be a UsageError or a ringmm::Error; a crash, a sanitizer report, any other
// exception or a parsed value outside its documented domain is a finding.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"
#include "ringmm/bits.hpp"
#include "ringmm/context.hpp"
#include "ringmm/error.hpp"
#include "ringmm/types.hpp"

namespace {

using ringmm::tools::Args;
using ringmm::tools::Options;
using ringmm::tools::OptionSpec;

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_args: %s\n", what.c_str());
  std::abort();
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + 1)
    parts.emplace_back(text.substr(start, at - start));
  parts.emplace_back(text.substr(start));
  return parts;
}

// The option tables of multiply, bench (tools/*.cpp) and microbench (lab/kernels/main.cpp): the parser is what is
// fuzzed, so these only need the same kinds of entries.
Options parse_options(const std::string& command, const Args& args) {
  if (command == "bench")
    return Options(args, {{"backend", true}, {"semiring", true}, {"type", true}, {"shapes", true}, {"product", true},
                          {"batch", true}, {"reps", true}, {"out", true}, {"ceilings", false}, {"config", true},
                          {"border", true}});
  if (command == "microbench") return Options(args, {{"semiring", true}, {"type", true}, {"out", true}});
  return Options(args, {{"a", true}, {"b", true}, {"out", true}, {"c", true}, {"semiring", true}, {"type", true},
                        {"transa", false}, {"transb", false}, {"alpha", true}, {"beta", true}, {"backend", true},
                        {"border", true}, {"own-kernels", false}, {"check", false}, {"size", true},
                        {"a-cols", true}, {"b-cols", true}, {"bitorder", true}, {"packed-out", false},
                        {"packed-dtype", true}});
}

// Parses every option the way the commands do and checks what the parsers promise.
void parse_values(const std::string& command, const Options& opt) {
  for (const char* name : {"a", "b", "out", "c", "shapes", "type", "semiring"})
    if (auto value = opt.get(name); value && value->empty()) finding(std::string("--") + name + " parsed as empty");
  for (const char* name : {"alpha", "beta"}) {
    if (!opt.has(name)) continue;
    if (std::isnan(opt.real_or(name, 0))) finding(std::string("--") + name + " parsed as nan");
  }
  for (const char* name : {"size", "reps", "batch"}) {
    const std::int64_t value = opt.integer_or(name, 1, 1, 1 << 16);
    if (value < 1 || value > (1 << 16)) finding(std::string("--") + name + " outside its range");
  }
  for (const char* name : {"a-cols", "b-cols"}) {  // multiply --type b1 (tools/multiply.cpp)
    const std::int64_t value = opt.integer_or(name, 0, 0, std::int64_t(1) << 40);
    if (value < 0 || value > (std::int64_t(1) << 40)) finding(std::string("--") + name + " outside its range");
  }
  if (auto order = opt.get("bitorder")) ringmm::parse_bit_order(*order, "--bitorder");
  if (auto shapes = opt.get("shapes")) {
    std::string joined;
    for (const std::string& item : ringmm::tools::split_list(*shapes, "--shapes")) {
      if (item.empty()) finding("split_list gave an empty item");
      joined += (joined.empty() ? "" : ",") + item;
      for (const std::string& dim : split(item, 'x')) ringmm::tools::parse_integer(dim, "--shapes", 0, INT64_MAX);
    }
    if (joined != *shapes) finding("split_list lost text");
  }
  ringmm::parse_backend(opt.get_or("backend", "auto"), "--backend");
  ringmm::parse_border(opt.get_or("border", "auto"), "--border");
  if (command == "multiply") {
    ringmm::parse_semiring(opt.get_or("semiring", "plus-times"), "--semiring");
    if (auto type = opt.get("type"); type && *type != ringmm::b1_type_name) ringmm::parse_dtype(*type, "--type");
  } else {
    // bench and microbench take lists of names or "all" (tools/support.cpp selected_pairs).
    for (const std::string& item : ringmm::tools::split_list(opt.get_or("semiring", "all"), "--semiring"))
      if (item != "all") ringmm::parse_semiring(item, "--semiring");
    for (const std::string& item : ringmm::tools::split_list(opt.get_or("type", "all"), "--type"))
      if (item != "all" && item != ringmm::b1_type_name) ringmm::parse_dtype(item, "--type");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  for (const std::string& line : split(std::string_view(reinterpret_cast<const char*>(data), size), '\n')) {
    Args args = split(line, ' ');
    const std::string command = args.front();
    if (command == "multiply" || command == "bench" || command == "microbench") args.erase(args.begin());
    try {
      parse_values(command == "bench" || command == "microbench" ? command : "multiply", parse_options(command, args));
    } catch (const ringmm::tools::UsageError&) {
    } catch (const ringmm::Error&) {
    }
  }
  return 0;
}
