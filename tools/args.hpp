// The argument parser shared by every `ringmm` subcommand: `--name value` and `--name=value`
// options, `--flag` switches, strict numbers. Every mistake is a UsageError (exit status 2).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands.hpp"

namespace ringmm::tools {

// A mistake on the command line: the tool prints it and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  UsageError(std::string subject, const std::string& message)
      : std::runtime_error(subject + ": " + message), subject_(std::move(subject)) {}
  const std::string& subject() const noexcept { return subject_; }

 private:
  std::string subject_;
};

struct OptionSpec {
  std::string_view name;  // without the leading "--"
  bool takes_value;       // false: a switch such as --transa
};

class Options {
 public:
  // Parses `args` against `spec`; throws UsageError for an unknown option, a missing value, a
  // value given to a switch, an option given twice, or a positional argument.
  Options(const Args& args, std::initializer_list<OptionSpec> spec);

  bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
  bool flag(std::string_view name) const { return has(name); }
  std::optional<std::string> get(std::string_view name) const;
  std::string get_or(std::string_view name, std::string fallback) const;
  std::string required(std::string_view name) const;
  // Strict numbers: the whole value must parse; the error names the option.
  double real_or(std::string_view name, double fallback) const;
  std::int64_t integer_or(std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max) const;

 private:
  std::map<std::string, std::string> values_;  // switches map to ""
};

// Strict parsers for option values and list items; `subject` names what is parsed.
// parse_real accepts decimal and exponent forms, "inf", "+inf", "-inf" (not nan).
double parse_real(std::string_view text, const std::string& subject);
std::int64_t parse_integer(std::string_view text, const std::string& subject, std::int64_t min, std::int64_t max);
// A process grid "PRxPC" such as 2x3.
std::pair<int, int> parse_grid(const std::string& text, const std::string& subject);
// Splits "a,b,c" into its items; empty items are a UsageError.
std::vector<std::string> split_list(std::string_view text, const std::string& subject);

// Prints "ringmm <command>: error: <text>" on stderr.
void print_error(std::string_view command, const std::string& text);

// Runs a command body and turns every failure into the one-line report
//   ringmm <command>: error: <subject>: <message>
// on stderr, returning 2 for a UsageError and 1 for anything else.
int run_guarded(std::string_view command, const std::function<int()>& body);

}  // namespace ringmm::tools
