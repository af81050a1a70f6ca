#include "measure/records.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "ringmm/error.hpp"

namespace ringmm::measure {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// (key, value as JSON text or nullopt when absent, is_string) in the README's order.
struct Field {
  const char* key;
  std::optional<std::string> text;
  bool is_string;
};

std::vector<Field> fields_of(const Record& r) {
  auto str = [](const char* key, const std::string& v) { return Field{key, v, true}; };
  auto idx = [](const char* key, const std::optional<index_t>& v) {
    return Field{key, v ? std::optional<std::string>(std::to_string(*v)) : std::nullopt, false};
  };
  auto num = [](const char* key, const std::optional<double>& v) {
    return Field{key, v ? std::optional<std::string>(number(*v)) : std::nullopt, false};
  };
  return {str("suite", r.suite), str("device", r.device), str("backend", r.backend), str("kernel", r.kernel),
          str("semiring", r.semiring), str("type", r.type), str("product", r.product), idx("m", r.m), idx("n", r.n),
          idx("k", r.k), idx("batch", r.batch), num("seconds", r.seconds),
          num("seconds_with_transfers", r.seconds_with_transfers), num("updates_per_s", r.updates_per_s),
          num("flops_per_s", r.flops_per_s), num("host_seconds", r.host_seconds),
          num("graph_seconds", r.graph_seconds), str("date", r.date),
          Field{"choice", r.choice.empty() ? std::nullopt : std::optional<std::string>(r.choice), true}};
}

}  // namespace

bool is_results_path(const std::string& path) { return ends_with(path, ".json") || ends_with(path, ".csv"); }

void write_records(const std::string& path, const std::vector<Record>& records) {
  if (!is_results_path(path)) throw Error(Errc::invalid_argument, path, "a results file ends in .json or .csv");
  std::ostringstream os;
  if (ends_with(path, ".json")) {
    os << "[\n";
    for (std::size_t i = 0; i < records.size(); ++i) {
      os << "  {";
      bool first = true;
      for (const Field& f : fields_of(records[i])) {
        if (!f.text) continue;
        os << (first ? "" : ", ") << json_string(f.key) << ": " << (f.is_string ? json_string(*f.text) : *f.text);
        first = false;
      }
      os << "}" << (i + 1 < records.size() ? ",\n" : "\n");
    }
    os << "]\n";
  } else {
    const auto header = fields_of(Record{});
    for (std::size_t i = 0; i < header.size(); ++i) os << (i ? "," : "") << header[i].key;
    os << "\n";
    for (const Record& r : records) {
      const auto fields = fields_of(r);
      for (std::size_t i = 0; i < fields.size(); ++i) {
        std::string text = fields[i].text.value_or("");
        if (text == "null") text.clear();
        os << (i ? "," : "") << csv_field(text);
      }
      os << "\n";
    }
  }
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << os.str();
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      throw Error(Errc::io_error, path, "cannot write the results file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    throw Error(Errc::io_error, path, "cannot move the results file into place: " + ec.message());
  }
}

}  // namespace ringmm::measure
