#include "args.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>

#include "ringmm/error.hpp"

namespace ringmm::tools {

Options::Options(const Args& args, std::initializer_list<OptionSpec> spec) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      throw UsageError(arg, "unexpected argument (options are spelled --name value)");
    const std::size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const OptionSpec* match = nullptr;
    for (const auto& s : spec)
      if (s.name == name) match = &s;
    if (!match) throw UsageError("--" + name, "unknown option");
    if (values_.count(name)) throw UsageError("--" + name, "given more than once");
    if (!match->takes_value) {
      if (eq != std::string::npos) throw UsageError("--" + name, "is a switch and takes no value");
      values_[name] = "";
    } else if (eq != std::string::npos) {
      values_[name] = arg.substr(eq + 1);
      if (values_[name].empty()) throw UsageError("--" + name, "missing value");
    } else {
      // A following option is not a value, but a negative number is ("--alpha -inf").
      const bool next_is_value = i + 1 < args.size() && args[i + 1].compare(0, 2, "--") != 0 && !args[i + 1].empty();
      if (!next_is_value) throw UsageError("--" + name, "missing value");
      values_[name] = args[++i];
    }
  }
}

std::optional<std::string> Options::get(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Options::get_or(std::string_view name, std::string fallback) const {
  auto value = get(name);
  return value ? *value : std::move(fallback);
}

std::string Options::required(std::string_view name) const {
  auto value = get(name);
  if (!value) throw UsageError("--" + std::string(name), "required option is missing");
  return *value;
}

double Options::real_or(std::string_view name, double fallback) const {
  auto value = get(name);
  return value ? parse_real(*value, "--" + std::string(name)) : fallback;
}

std::int64_t Options::integer_or(std::string_view name, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
  auto value = get(name);
  return value ? parse_integer(*value, "--" + std::string(name), min, max) : fallback;
}

double parse_real(std::string_view text, const std::string& subject) {
  const std::string s(text);
  if (s == "inf" || s == "+inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  // strtod also takes hex floats, "nan" and "infinity": only plain decimal forms get this far.
  const bool plain = !s.empty() && s.find_first_not_of("0123456789+-.eE") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const double value = plain ? std::strtod(s.c_str(), &end) : 0.0;
  if (!plain || end != s.c_str() + s.size())
    throw UsageError(subject, "'" + s + "' is not a number (use decimal notation, inf or -inf)");
  if (errno == ERANGE && std::isinf(value)) throw UsageError(subject, "'" + s + "' is out of the range of a double");
  return value;
}

std::int64_t parse_integer(std::string_view text, const std::string& subject, std::int64_t min, std::int64_t max) {
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (!text.empty() && text.front() == '+') ++first;
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != last)
    throw UsageError(subject, "'" + std::string(text) + "' is not an integer");
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    throw UsageError(subject, "'" + std::string(text) + "' is out of range [" + std::to_string(min) + ", " +
                                  std::to_string(max) + "]");
  return value;
}

std::pair<int, int> parse_grid(const std::string& text, const std::string& subject) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos) throw UsageError(subject, "expected PRxPC such as 2x3, got '" + text + "'");
  return {int(parse_integer(text.substr(0, x), subject, 1, 1 << 20)), int(parse_integer(text.substr(x + 1), subject, 1, 1 << 20))};
}

std::vector<std::string> split_list(std::string_view text, const std::string& subject) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) throw UsageError(subject, "empty item in the list '" + std::string(text) + "'");
    items.emplace_back(item);
    if (comma == std::string_view::npos) return items;
    start = comma + 1;
  }
}

void print_error(std::string_view command, const std::string& text) {
  std::cerr << "ringmm " << command << ": error: " << text << std::endl;
}

int run_guarded(std::string_view command, const std::function<int()>& body) {
  auto report = [&](const std::string& text) { print_error(command, text); };
  try {
    return body();
  } catch (const UsageError& e) {
    report(e.what());
    return 2;
  } catch (const Error& e) {
    // Subjects are always set by ringmm; a bad option value (invalid_argument) is a usage mistake.
    report(e.subject().empty() ? std::string(to_string(e.code())) + ": " + e.what() : e.what());
    return e.code() == Errc::invalid_argument ? 2 : 1;
  } catch (const std::bad_alloc&) {
    report("memory: out of host memory");
    return 1;
  } catch (const std::exception& e) {
    report(std::string("internal: ") + e.what());
    return 1;
  }
}

}  // namespace ringmm::tools
