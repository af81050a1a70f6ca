// Matrix Market coordinate reader (ringmm/mtx.hpp). Every problem is reported with the file name
// and the line it was found on, so a user can open the file at that line.
#include "ringmm/mtx.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <sstream>
#include <string_view>

#include "ringmm/error.hpp"

namespace ringmm::mtx {

namespace {

[[noreturn]] void fail(const std::string& name, index_t line, const std::string& message) {
  throw Error(Errc::format_error, name, line > 0 ? "line " + std::to_string(line) + ": " + message : message);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

// Splits a line on blanks.
std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at < line.size()) {
    while (at < line.size() && std::isspace((unsigned char)line[at])) ++at;
    const std::size_t start = at;
    while (at < line.size() && !std::isspace((unsigned char)line[at])) ++at;
    if (at > start) out.push_back(line.substr(start, at - start));
  }
  return out;
}

// Text from the file as an error message quotes it: at most 60 characters, non-printable ones as
// '?', so that a binary or enormous line still gives one short line of error.
std::string quoted(std::string_view text) {
  constexpr std::size_t limit = 60;
  std::string out = "'";
  for (std::size_t i = 0; i < std::min(text.size(), limit); ++i)
    out += std::isprint((unsigned char)text[i]) ? text[i] : '?';
  return out + (text.size() > limit ? "...'" : "'");
}

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
}

// A whole field as a non-negative integer; false when it is not one.
bool parse_index(std::string_view text, index_t& out) {
  if (text.empty() || text[0] == '-') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

enum class Field { real, integer, pattern };

}  // namespace

Graph read(std::istream& in, const std::string& name) {
  std::string line;
  index_t line_no = 0;
  auto next_line = [&] {
    if (!std::getline(in, line)) return false;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };

  if (!next_line()) fail(name, 0, "empty file (expected a '%%MatrixMarket matrix coordinate ...' header)");
  const auto header = fields(line);
  if (header.empty() || lower(std::string(header[0])) != "%%matrixmarket")
    fail(name, 1, "not a Matrix Market file: the first line must start with '%%MatrixMarket'");
  if (header.size() != 5)
    fail(name, 1, "bad header " + quoted(line) + ": expected '%%MatrixMarket matrix coordinate <field> <symmetry>'");
  const std::string object = lower(std::string(header[1])), format = lower(std::string(header[2]));
  const std::string field_text = lower(std::string(header[3])), symmetry = lower(std::string(header[4]));
  if (object != "matrix") fail(name, 1, "bad header: object " + quoted(object) + " is not 'matrix'");
  if (format == "array")
    fail(name, 1, "array (dense) Matrix Market files are not supported; use coordinate format, or a .npy adjacency");
  if (format != "coordinate") fail(name, 1, "bad header: format " + quoted(format) + " is not 'coordinate'");
  Field field;
  if (field_text == "real" || field_text == "double") field = Field::real;
  else if (field_text == "integer") field = Field::integer;
  else if (field_text == "pattern") field = Field::pattern;
  else if (field_text == "complex") fail(name, 1, "complex weights are not supported (real, integer or pattern)");
  else fail(name, 1, "bad header: field " + quoted(field_text) + " is not real, integer or pattern");
  const bool symmetric = symmetry == "symmetric";
  if (symmetry == "skew-symmetric" || symmetry == "hermitian")
    fail(name, 1, symmetry + " files are not supported as graphs (general or symmetric)");
  if (!symmetric && symmetry != "general") fail(name, 1, "bad header: symmetry " + quoted(symmetry) + " is not general or symmetric");

  // Comments and blank lines, then the size line "rows cols entries".
  do {
    if (!next_line()) fail(name, line_no, "file ends before the size line 'rows cols entries'");
  } while (blank(line) || line[0] == '%');
  const auto size = fields(line);
  index_t rows = 0, cols = 0, count = 0;
  if (size.size() != 3 || !parse_index(size[0], rows) || !parse_index(size[1], cols) || !parse_index(size[2], count))
    fail(name, line_no, "bad size line " + quoted(line) + ": expected three non-negative integers 'rows cols entries'");
  if (rows != cols)
    fail(name, line_no, "the matrix is " + std::to_string(rows) + "x" + std::to_string(cols) +
                            "; an adjacency matrix must be square");
  if (rows > index_t(1) << 31) fail(name, line_no, std::to_string(rows) + " vertices is more than supported (2^31)");
  // The count may exceed rows × cols: repeated entries are legal (the caller keeps the best).
  if (cols == 0 && count > 0) fail(name, line_no, "the header claims entries in an empty matrix");

  Graph g;
  g.vertices = rows;  // edges grow with the lines read, never from the header's claim
  const std::size_t want = field == Field::pattern ? 2 : 3;
  index_t seen = 0;
  while (next_line()) {
    if (blank(line) || line[0] == '%') continue;
    if (seen == count)
      fail(name, line_no, "more entries than the " + std::to_string(count) + " the size line announces");
    const auto parts = fields(line);
    if (parts.size() != want)
      fail(name, line_no, "expected " + std::string(want == 2 ? "'row col'" : "'row col value'") + ", got " + quoted(line));
    index_t i = 0, j = 0;
    if (!parse_index(parts[0], i) || !parse_index(parts[1], j))
      fail(name, line_no, "row and column must be integers, got " + quoted(std::string(parts[0]) + " " + std::string(parts[1])));
    if (i < 1 || i > rows || j < 1 || j > cols)
      fail(name, line_no, "index (" + std::to_string(i) + ", " + std::to_string(j) + ") is out of range 1.." +
                              std::to_string(rows));
    double w = 1;
    if (field != Field::pattern) {
      const std::string_view text = parts[2];
      if (field == Field::integer) {
        long long v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || end != text.data() + text.size())
          fail(name, line_no, quoted(text) + " is not an integer (the header says integer)");
        w = double(v);
      } else {
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), w);
        if (ec == std::errc::result_out_of_range)
          fail(name, line_no, "weight " + quoted(text) + " is out of the range of a double");
        if (ec != std::errc() || end != text.data() + text.size())
          fail(name, line_no, quoted(text) + " is not a number");
      }
      if (std::isnan(w)) fail(name, line_no, "weight is NaN");
      if (std::isinf(w)) fail(name, line_no, "weight is infinite (leave a missing edge out instead)");
    }
    g.edges.push_back({i - 1, j - 1, w});
    if (symmetric && i != j) g.edges.push_back({j - 1, i - 1, w});
    ++seen;
  }
  if (in.bad()) throw Error(Errc::io_error, name, "read failed");
  if (seen < count)
    fail(name, line_no, "file ends after " + std::to_string(seen) + " of the " + std::to_string(count) +
                            " entries the size line announces (truncated?)");
  return g;
}

Graph read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(Errc::io_error, path, "cannot open the file");
  return read(in, path);
}

}  // namespace ringmm::mtx
