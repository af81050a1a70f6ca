// .npy reading and writing. The format (numpy/lib/format.py, NEP 1): the magic "\x93NUMPY", a
// major and minor version byte, a little-endian header length (2 bytes in 1.0, 4 in 2.0 and 3.0),
// then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)} padded with
// spaces and a newline, then the raw array data.
//
// Decisions beyond the format:
//  * A file longer than its header says is refused (format_error): numpy would silently ignore the
//    extra bytes, but they mean the file is not what its header claims (a truncated rewrite, two
//    arrays concatenated, the wrong shape in the header).
//  * Only the dtypes ringmm computes with are accepted, little-endian only; '|b1' becomes u8 0/1.
//  * The header must have exactly the three keys, as numpy requires.
#include "ringmm/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <variant>

#include "ringmm/error.hpp"

namespace ringmm::npy {

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;

[[noreturn]] void format_error(const std::string& path, const std::string& message) {
  throw Error(Errc::format_error, path, message);
}
[[noreturn]] void io_error(const std::string& path, const std::string& message, int err) {
  throw Error(Errc::io_error, path, message + (err ? std::string(": ") + std::strerror(err) : std::string()));
}

// An open file descriptor, closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { close(); }
  int get() const { return fd_; }
  int close() {
    const int rc = fd_ >= 0 ? ::close(fd_) : 0;
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

// Reads up to `size` bytes; returns how many were read (fewer only at end of file).
std::size_t read_fully(int fd, void* buffer, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, static_cast<char*>(buffer) + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path, "read failed", errno);
    }
    if (n == 0) break;
    done += std::size_t(n);
  }
  return done;
}

// ---- the header: a Python dict literal -------------------------------------------------------

struct Tuple {
  std::vector<std::int64_t> items;
};
using Value = std::variant<std::string, bool, Tuple>;

// A parser for the small subset of Python literals numpy writes into .npy headers: strings,
// True/False, and tuples of integers. Anything else is a format error.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::vector<std::pair<std::string, Value>> parse_dict() {
    std::vector<std::pair<std::string, Value>> entries;
    skip_space();
    expect('{', "the header is not a Python dict");
    skip_space();
    while (peek() != '}') {
      if (peek() != '\'' && peek() != '"') fail("expected a quoted key in the header dict");
      std::string key = parse_string();
      skip_space();
      expect(':', "expected ':' after key '" + key + "'");
      skip_space();
      entries.emplace_back(std::move(key), parse_value());
      skip_space();
      if (peek() == ',') {
        ++pos_;
        skip_space();
      } else if (peek() != '}') {
        fail("expected ',' or '}' in the header dict");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the header dict");
    return entries;
  }

 private:
  char peek() const {
    if (pos_ >= text_.size()) fail("the header dict is not closed");
    return text_[pos_];
  }
  void expect(char c, const std::string& message) {
    if (pos_ >= text_.size() || text_[pos_] != c) fail(message);
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  [[noreturn]] void fail(const std::string& message) const {
    format_error(path_, "malformed .npy header: " + message + " (header: " + std::string(text_.substr(0, 120)) + ")");
  }

  std::string parse_string() {
    const char quote = text_[pos_++];
    std::string out;
    while (true) {
      const char c = peek();
      ++pos_;
      if (c == quote) return out;
      if (c == '\\') fail("escape sequences are not supported in header strings");
      out += c;
    }
  }

  std::int64_t parse_integer() {
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (peek() < '0' || peek() > '9') fail("expected an integer in the shape tuple");
    std::int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const int digit = text_[pos_++] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) fail("a shape entry overflows 64 bits");
      value = value * 10 + digit;
    }
    // Python 2 era writers appended L to long integers.
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return negative ? -value : value;
  }

  Value parse_value() {
    const char c = peek();
    if (c == '\'' || c == '"') return parse_string();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    if (c == '(') {
      ++pos_;
      Tuple tuple;
      skip_space();
      while (peek() != ')') {
        tuple.items.push_back(parse_integer());
        skip_space();
        if (peek() == ',') {
          ++pos_;
          skip_space();
        } else if (peek() != ')') {
          fail("expected ',' or ')' in the shape tuple");
        }
      }
      ++pos_;
      return tuple;
    }
    if (c == '[') fail("structured dtypes (a list as 'descr') are not supported");
    fail("unsupported value in the header dict");
  }

  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

struct DtypeInfo {
  DType dtype;
  std::size_t item_size;  // bytes of one file element (i16x2: one int16 lane)
  bool is_bool;
};

std::string_view accepted_dtypes() { return "'<f4', '<f8', '<i4', '|u1', '|b1', '<i2' with shape (r, c, 2)"; }

DtypeInfo parse_descr(const std::string& descr, const std::string& path) {
  if (descr == "<f4") return {DType::f32, 4, false};
  if (descr == "<f8") return {DType::f64, 8, false};
  if (descr == "<i4") return {DType::i32, 4, false};
  if (descr == "<i2") return {DType::i16x2, 2, false};
  // One-byte types have no byte order; numpy writes '|' but '<', '>' and '=' mean the same.
  if (descr.size() == 3 && (descr[0] == '|' || descr[0] == '<' || descr[0] == '>' || descr[0] == '=')) {
    if (descr.substr(1) == "u1") return {DType::u8, 1, false};
    if (descr.substr(1) == "b1") return {DType::u8, 1, true};
  }
  if (!descr.empty() && descr[0] == '>')
    format_error(path, "big-endian dtype '" + descr + "' is not supported; save it little-endian, e.g. a.astype('<" +
                           descr.substr(1) + "') (accepted: " + std::string(accepted_dtypes()) + ")");
  format_error(path, "unsupported dtype '" + descr + "' (accepted: " + std::string(accepted_dtypes()) + ")");
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

struct Header {
  DtypeInfo type;
  bool fortran_order;
  index_t rows, cols;
  std::uint64_t data_bytes;
};

Header interpret(const std::vector<std::pair<std::string, Value>>& entries, const std::string& path) {
  const std::string* descr = nullptr;
  const bool* fortran = nullptr;
  const Tuple* shape = nullptr;
  for (const auto& [key, value] : entries) {
    if (key == "descr") {
      descr = std::get_if<std::string>(&value);
      if (!descr) format_error(path, "header key 'descr' is not a dtype string");
    } else if (key == "fortran_order") {
      fortran = std::get_if<bool>(&value);
      if (!fortran) format_error(path, "header key 'fortran_order' is not True or False");
    } else if (key == "shape") {
      shape = std::get_if<Tuple>(&value);
      if (!shape) format_error(path, "header key 'shape' is not a tuple");
    } else {
      format_error(path, "unexpected header key '" + key + "' (a .npy header has exactly 'descr', 'fortran_order', 'shape')");
    }
  }
  if (!descr) format_error(path, "header has no 'descr' key");
  if (!fortran) format_error(path, "header has no 'fortran_order' key");
  if (!shape) format_error(path, "header has no 'shape' key");

  Header h{parse_descr(*descr, path), *fortran, 0, 0, 0};
  const auto& dims = shape->items;
  for (std::int64_t d : dims)
    if (d < 0) format_error(path, "negative dimension in shape " + shape_text(dims));
  if (h.type.dtype == DType::i16x2) {
    if (dims.size() != 3 || dims[2] != 2)
      format_error(path, "dtype '<i2' is read as i16x2 and needs shape (rows, cols, 2), got " + shape_text(dims));
  } else if (dims.size() != 2) {
    format_error(path, "ringmm reads 2-D matrices; shape " + shape_text(dims) + " has rank " + std::to_string(dims.size()) +
                           (dims.size() == 1 ? " (reshape to (1, n) or (n, 1))" : ""));
  }
  h.rows = dims[0];
  h.cols = dims[1];
  // Element count and byte size must fit in 63 bits (and in memory, checked on allocation).
  std::uint64_t bytes = h.type.item_size;
  for (std::int64_t d : dims) {
    if (d != 0 && bytes > std::uint64_t(std::numeric_limits<std::int64_t>::max()) / std::uint64_t(d))
      format_error(path, "shape " + shape_text(dims) + " is too large (its byte size overflows 64 bits)");
    bytes *= std::uint64_t(d);
  }
  h.data_bytes = bytes;
  return h;
}

// Reorders a column-major rows×cols array of `lanes`-element items (each lane `size` bytes, lanes
// stored as the slowest axis, as Fortran order of shape (rows, cols, lanes) puts them) into
// row-major (rows, cols, lanes). Blocked so both sides stay in cache.
void fortran_to_row_major(const std::byte* in, std::byte* out, index_t rows, index_t cols, index_t lanes, std::size_t size) {
  constexpr index_t block = 64;
  const index_t plane = rows * cols;
  for (index_t l = 0; l < lanes; ++l)
    for (index_t i0 = 0; i0 < rows; i0 += block)
      for (index_t j0 = 0; j0 < cols; j0 += block)
        for (index_t j = j0; j < std::min(cols, j0 + block); ++j)
          for (index_t i = i0; i < std::min(rows, i0 + block); ++i)
            std::memcpy(out + ((i * cols + j) * lanes + l) * size, in + (l * plane + j * rows + i) * size, size);
}

}  // namespace

Matrix read(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) io_error(path, "cannot open for reading", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) io_error(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) io_error(path, "is a directory, not a .npy file", 0);

  unsigned char prefix[12];
  const std::size_t got = read_fully(fd.get(), prefix, 8, path);
  if (got == 0) format_error(path, "empty file, not a .npy file");
  if (got < magic_size || std::memcmp(prefix, magic, magic_size) != 0)
    format_error(path, "not a .npy file (bad magic string; expected \\x93NUMPY)");
  if (got < 8) format_error(path, "truncated header (file ends inside the version bytes)");
  const int major = prefix[6], minor = prefix[7];
  std::size_t length_bytes;
  if (major == 1 && minor == 0) length_bytes = 2;
  else if ((major == 2 || major == 3) && minor == 0) length_bytes = 4;
  else
    format_error(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                           " (supported: 1.0, 2.0, 3.0)");
  if (read_fully(fd.get(), prefix + 8, length_bytes, path) < length_bytes)
    format_error(path, "truncated header (file ends inside the header length)");
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::uint64_t(prefix[8 + i]) << (8 * i);
  const std::uint64_t prefix_size = 8 + length_bytes;
  if (S_ISREG(st.st_mode) && prefix_size + header_length > std::uint64_t(st.st_size))
    format_error(path, "truncated header (header length " + std::to_string(header_length) + " but the file has " +
                           std::to_string(std::uint64_t(st.st_size) - prefix_size) + " bytes after the prefix)");
  std::string header_text(header_length, '\0');
  if (read_fully(fd.get(), header_text.data(), header_length, path) < header_length)
    format_error(path, "truncated header (file ends inside the header)");
  const Header h = interpret(HeaderParser(header_text, path).parse_dict(), path);

  Matrix m;
  m.dtype = h.type.dtype;
  m.rows = h.rows;
  m.cols = h.cols;
  m.fortran_order = h.fortran_order;
  if (S_ISREG(st.st_mode)) {
    const std::uint64_t available = std::uint64_t(st.st_size) - prefix_size - header_length;
    if (available < h.data_bytes)
      format_error(path, "data truncated: shape " + std::to_string(h.rows) + "x" + std::to_string(h.cols) + " needs " +
                             std::to_string(h.data_bytes) + " bytes but the file has " + std::to_string(available));
    if (available > h.data_bytes)
      format_error(path, std::to_string(available - h.data_bytes) + " unexpected bytes after the " +
                             std::to_string(h.data_bytes) + " bytes of data the header describes");
  }
  std::vector<std::byte> raw;
  try {
    raw.resize(std::size_t(h.data_bytes));
  } catch (const std::bad_alloc&) {
    throw Error(Errc::out_of_memory, path, "cannot allocate " + std::to_string(h.data_bytes) + " bytes for the data");
  } catch (const std::length_error&) {
    throw Error(Errc::out_of_memory, path, "cannot allocate " + std::to_string(h.data_bytes) + " bytes for the data");
  }
  const std::size_t data_read = read_fully(fd.get(), raw.data(), raw.size(), path);
  if (data_read < raw.size())
    format_error(path, "data truncated: needs " + std::to_string(raw.size()) + " bytes but the file has " +
                           std::to_string(data_read));
  if (!S_ISREG(st.st_mode)) {
    char extra;
    if (read_fully(fd.get(), &extra, 1, path) != 0) format_error(path, "unexpected bytes after the data");
  }

  if (h.type.is_bool)
    for (auto& b : raw) b = std::byte(b != std::byte{0});
  const index_t lanes = h.type.dtype == DType::i16x2 ? 2 : 1;
  const bool same_in_both_orders = lanes == 1 && (h.rows <= 1 || h.cols <= 1);
  if (h.fortran_order && !same_in_both_orders) {
    m.data.resize(raw.size());
    fortran_to_row_major(raw.data(), m.data.data(), h.rows, h.cols, lanes, h.type.item_size);
  } else {
    m.data = std::move(raw);
  }
  return m;
}

namespace {

std::string descr_of(DType dtype) {
  switch (dtype) {
    case DType::f32: return "<f4";
    case DType::f64: return "<f8";
    case DType::i32: return "<i4";
    case DType::i16x2: return "<i2";
    case DType::u8: return "|u1";
  }
  return "?";
}

// The version 1.0 header numpy writes: the dict, then spaces and a newline so that the data starts
// at a multiple of 64 bytes.
std::string make_header(DType dtype, index_t rows, index_t cols) {
  std::string shape = "(" + std::to_string(rows) + ", " + std::to_string(cols) + (dtype == DType::i16x2 ? ", 2)" : ")");
  std::string dict = "{'descr': '" + descr_of(dtype) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = magic_size + 2 + 2 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out(magic, magic_size);
  out += char(1);
  out += char(0);
  out += char(dict.size() & 0xff);
  out += char((dict.size() >> 8) & 0xff);
  return out + dict;
}

void write_fully(int fd, const void* data, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, static_cast<const char*>(data) + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path, "write failed", errno);
    }
    done += std::size_t(n);
  }
}

}  // namespace

void write(const std::string& path, DType dtype, index_t rows, index_t cols, const void* row_major_data) {
  if (rows < 0 || cols < 0)
    throw Error(Errc::invalid_argument, path, "negative shape " + std::to_string(rows) + "x" + std::to_string(cols));
  const std::uint64_t bytes = std::uint64_t(rows) * std::uint64_t(cols) * dtype_size(dtype);
  if (bytes != 0 && row_major_data == nullptr) throw Error(Errc::null_pointer, path, "no data to write");
  const std::string header = make_header(dtype, rows, cols);

  // A unique temporary name beside the target, so rename() replaces it atomically. O_EXCL with mode
  // 0666 lets the umask set the permissions, as for any newly created file.
  static std::atomic<unsigned> counter{0};
  std::string temp;
  int raw_fd = -1;
  for (int attempt = 0; attempt < 100 && raw_fd < 0; ++attempt) {
    temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    raw_fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw_fd < 0 && errno != EEXIST) io_error(path, "cannot create a temporary file beside it", errno);
  }
  if (raw_fd < 0) io_error(path, "cannot find a free temporary name beside it", EEXIST);
  Fd fd(raw_fd);
  try {
    write_fully(fd.get(), header.data(), header.size(), path);
    write_fully(fd.get(), row_major_data, std::size_t(bytes), path);
    if (fd.close() != 0) io_error(path, "closing the written file failed", errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) io_error(path, "cannot move the written file into place", errno);
  } catch (...) {
    fd.close();
    ::unlink(temp.c_str());
    throw;
  }
}

}  // namespace ringmm::npy
