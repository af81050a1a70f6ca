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
//    '<u4' is accepted only when the caller asks (ReadOptions::uint32_words: packed b1 words), so
//    that no other reader takes uint32 numbers for i32.
//  * The header must have exactly the three keys, as numpy requires.
//  * Nothing is allocated on the header's word alone: a regular file's size is checked against
//    the claim first, and from a pipe or stream the buffer grows only as bytes arrive.
// Over 500 lines because the header's parser and writer, and the data's checks, are one format.
#include "ringmm/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <istream>
#include <limits>
#include <new>
#include <optional>
#include <string_view>
#include <variant>

#include "ringmm/detail/validate.hpp"
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

// Where read() takes its bytes from. `known_size` is the total length when it is known (regular
// files): the header's claims are checked against it before anything is allocated.
class Source {
 public:
  virtual ~Source() = default;
  // Reads up to `size` bytes; returns how many were read (fewer only at the end of the data).
  virtual std::size_t read(void* buffer, std::size_t size) = 0;
  std::optional<std::uint64_t> known_size;
};

class FdSource final : public Source {
 public:
  FdSource(int fd, const std::string& path) : fd_(fd), path_(path) {}
  std::size_t read(void* buffer, std::size_t size) override {
    std::size_t done = 0;
    while (done < size) {
      const ssize_t n = ::read(fd_, static_cast<char*>(buffer) + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        io_error(path_, "read failed", errno);
      }
      if (n == 0) break;
      done += std::size_t(n);
    }
    return done;
  }

 private:
  int fd_;
  const std::string& path_;
};

class StreamSource final : public Source {
 public:
  StreamSource(std::istream& in, const std::string& name) : in_(in), name_(name) {}
  std::size_t read(void* buffer, std::size_t size) override {
    in_.read(static_cast<char*>(buffer), std::streamsize(size));
    if (in_.bad()) io_error(name_, "read failed", 0);
    return std::size_t(in_.gcount());
  }

 private:
  std::istream& in_;
  const std::string& name_;
};

// Reads exactly `size` bytes into `out`; false (with `out` holding what came) when the data ends
// first. When the total size is unknown the buffer grows as bytes arrive, each step at most
// doubling it, so a header that claims more than the stream holds costs memory in proportion to
// what the stream holds, not to the claim.
bool read_exactly(Source& in, std::uint64_t size, std::vector<std::byte>& out, const std::string& name) {
  constexpr std::uint64_t min_step = std::uint64_t(1) << 16;
  out.clear();
  std::uint64_t done = 0;
  while (done < size) {
    const std::uint64_t step = in.known_size ? size - done : std::min(size - done, std::max(min_step, done));
    try {
      out.resize(std::size_t(done + step));
    } catch (const std::bad_alloc&) {
      throw Error(Errc::out_of_memory, name, "cannot allocate " + std::to_string(done + step) + " bytes to read it");
    } catch (const std::length_error&) {
      throw Error(Errc::out_of_memory, name, "cannot allocate " + std::to_string(done + step) + " bytes to read it");
    }
    const std::size_t got = in.read(out.data() + done, std::size_t(step));
    done += got;
    if (got < step) {
      out.resize(std::size_t(done));
      return false;
    }
  }
  return true;
}

// ---- the header: a Python dict literal -------------------------------------------------------

// Header text as it may appear in a one-line message: trailing padding dropped, bytes that are
// not printable ASCII escaped (a header may hold anything, newlines and terminal escapes
// included), at most `limit` characters.
std::string printable(std::string_view text, std::size_t limit = 120) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  std::string out;
  for (std::size_t i = 0; i < std::min(text.size(), limit); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return text.size() > limit ? out + "..." : out;
}

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
      expect(':', "expected ':' after key '" + printable(key) + "'");
      skip_space();
      Value value = parse_value(key);
      entries.emplace_back(std::move(key), std::move(value));
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
    format_error(path_, "malformed .npy header: " + message + " (header: " + printable(text_) + ")");
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

  // `key` only words the errors: a list means a structured dtype as 'descr' but a malformed shape.
  Value parse_value(const std::string& key) {
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
    if (c == '[' && key == "shape")
      format_error(path_, "malformed shape in the .npy header: a list, where numpy writes a tuple such as (3, 4) (header: " +
                              printable(text_) + ")");
    if (c == '[' && key == "descr") fail("structured dtypes (a list as 'descr') are not supported");
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
  bool is_uint32 = false;  // '<u4', held as i32's bytes
  NarrowType narrow = NarrowType::none;  // '<f2' or '|i1': item_size bytes in the file, widened to dtype
};

std::string accepted_dtypes(const ReadOptions& options) {
  return std::string("'<f4', '<f8', '<i4', '|u1', '|b1', '<i2' with shape (r, c, 2)") +
         (options.uint32_words ? ", '<u4' (packed bits)" : "") + (options.narrow ? ", '<f2', '|i1'" : "");
}

DtypeInfo parse_descr(const std::string& descr, const std::string& path, const ReadOptions& options) {
  if (descr == "<f4") return {DType::f32, 4, false};
  if (descr == "<f8") return {DType::f64, 8, false};
  if (descr == "<i4") return {DType::i32, 4, false};
  if (descr == "<i2") return {DType::i16x2, 2, false};
  if (descr == "<u4" && options.uint32_words) return {DType::i32, 4, false, true};
  if (descr == "<f2" && options.narrow) return {DType::f32, 2, false, false, NarrowType::f16};
  // One-byte types have no byte order; numpy writes '|' but '<', '>' and '=' mean the same.
  if (descr.size() == 3 && (descr[0] == '|' || descr[0] == '<' || descr[0] == '>' || descr[0] == '=')) {
    if (descr.substr(1) == "u1") return {DType::u8, 1, false};
    if (descr.substr(1) == "b1") return {DType::u8, 1, true};
    if (descr.substr(1) == "i1" && options.narrow) return {DType::i32, 1, false, false, NarrowType::i8};
  }
  if (!descr.empty() && descr[0] == '>')
    format_error(path, "big-endian dtype '" + printable(descr) + "' is not supported; save it little-endian, e.g. "
                           "a.astype('<" + printable(descr.substr(1)) + "') (accepted: " + accepted_dtypes(options) + ")");
  format_error(path, "unsupported dtype '" + printable(descr) + "' (accepted: " + accepted_dtypes(options) + ")");
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

struct Header {
  DtypeInfo type;
  bool fortran_order;
  std::vector<std::int64_t> dims;  // the file's shape, an i16x2 file's lane axis included
  std::uint64_t data_bytes;
};

Header interpret(const std::vector<std::pair<std::string, Value>>& entries, const std::string& path,
                 const ReadOptions& options) {
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
      format_error(path, "unexpected header key '" + printable(key) +
                             "' (a .npy header has exactly 'descr', 'fortran_order', 'shape')");
    }
  }
  if (!descr) format_error(path, "header has no 'descr' key");
  if (!fortran) format_error(path, "header has no 'fortran_order' key");
  if (!shape) format_error(path, "header has no 'shape' key");

  Header h{parse_descr(*descr, path, options), *fortran, shape->items, 0};
  for (std::int64_t d : h.dims)
    if (d < 0) format_error(path, "negative dimension in shape " + shape_text(h.dims));
  if (h.type.dtype == DType::i16x2 && (h.dims.empty() || h.dims.back() != 2))
    format_error(path, "dtype '<i2' is read as i16x2 and needs shape (rows, cols, 2) (a trailing axis of 2 at any "
                       "rank), got " + shape_text(h.dims));
  // The byte size must fit in index_t (and in memory, checked when the data arrives).
  std::optional<index_t> bytes = index_t(h.type.item_size);
  for (std::int64_t d : h.dims)
    if (bytes) bytes = checked_mul(*bytes, index_t(d));
  if (!bytes) format_error(path, "shape " + shape_text(h.dims) + " is too large (its byte size overflows 64 bits)");
  h.data_bytes = std::uint64_t(*bytes);
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


// Reorders a Fortran-order array of any shape (`dims`, items of `size` bytes) into C order: output
// element (i0, …, in-1) reads input offset i0 + d0·(i1 + d1·(…)).
void fortran_to_c_order(const std::byte* in, std::byte* out, const std::vector<std::int64_t>& dims, std::size_t size) {
  const std::size_t rank = dims.size();
  std::vector<index_t> stride(rank, 1), at(rank, 0);
  for (std::size_t d = 1; d < rank; ++d) stride[d] = stride[d - 1] * dims[d - 1];
  index_t total = 1;
  for (std::int64_t d : dims) total *= d;
  index_t offset = 0;
  for (index_t i = 0; i < total; ++i) {
    std::memcpy(out + std::size_t(i) * size, in + std::size_t(offset) * size, size);
    for (std::size_t d = rank; d-- > 0;) {  // the next index, last axis fastest
      if (++at[d] < dims[d]) {
        offset += stride[d];
        break;
      }
      offset -= (dims[d] - 1) * stride[d];
      at[d] = 0;
    }
  }
}
}  // namespace

namespace {

// float16 (f16) or int8 (i8) elements, one per item in m.data, widened in place to f32 or i32.
void widen_narrow(Array& m, NarrowType narrow) {
  const std::size_t count = m.data.size() / (narrow == NarrowType::f16 ? 2 : 1);
  std::vector<std::byte> wide(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    if (narrow == NarrowType::f16) {
      f16 h;
      std::memcpy(&h.bits, m.data.data() + 2 * i, 2);
      const float v = to_float(h);
      std::memcpy(wide.data() + 4 * i, &v, 4);
    } else {
      const std::int32_t v = std::int8_t(m.data[i]);
      std::memcpy(wide.data() + 4 * i, &v, 4);
    }
  }
  m.data = std::move(wide);
  m.narrow = narrow;
}

// The format itself, from whichever source; `name` is the subject of every error.
// `rank`, when given, is the rank the caller reads (a matrix's 2), checked before the data is read.
Array read_from(Source& in, const std::string& name, const ReadOptions& options, std::optional<std::size_t> rank) {
  unsigned char prefix[12];
  const std::size_t got = in.read(prefix, 8);
  if (got == 0) format_error(name, "empty file, not a .npy file");
  if (got < magic_size || std::memcmp(prefix, magic, magic_size) != 0)
    format_error(name, "not a .npy file (bad magic string; expected \\x93NUMPY)");
  if (got < 8) format_error(name, "truncated header (file ends inside the version bytes)");
  const int major = prefix[6], minor = prefix[7];
  std::size_t length_bytes;
  if (major == 1 && minor == 0) length_bytes = 2;
  else if ((major == 2 || major == 3) && minor == 0) length_bytes = 4;
  else
    format_error(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                           " (supported: 1.0, 2.0, 3.0)");
  if (in.read(prefix + 8, length_bytes) < length_bytes)
    format_error(name, "truncated header (file ends inside the header length)");
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_bytes; ++i) header_length |= std::uint64_t(prefix[8 + i]) << (8 * i);
  const std::uint64_t prefix_size = 8 + length_bytes;
  if (in.known_size && prefix_size + header_length > *in.known_size)
    format_error(name, "truncated header (header length " + std::to_string(header_length) + " but the file has " +
                           std::to_string(*in.known_size - prefix_size) + " bytes after the prefix)");
  std::vector<std::byte> header_bytes;
  if (!read_exactly(in, header_length, header_bytes, name))
    format_error(name, "truncated header (file ends inside the header)");
  const std::string_view header_text(reinterpret_cast<const char*>(header_bytes.data()), header_bytes.size());
  const Header h = interpret(HeaderParser(header_text, name).parse_dict(), name, options);

  const bool lanes = h.type.dtype == DType::i16x2;
  const std::size_t element_rank = h.dims.size() - (lanes ? 1 : 0);
  if (rank && element_rank != *rank) {
    if (lanes) format_error(name, "dtype '<i2' is read as i16x2 and needs shape (rows, cols, 2), got " + shape_text(h.dims));
    format_error(name, "ringmm reads " + (*rank == 2 ? std::string("2-D matrices") : std::to_string(*rank) + "-D arrays") + " here; shape " + shape_text(h.dims) +
                           " has rank " + std::to_string(h.dims.size()) +
                           (h.dims.size() == 1 && *rank == 2 ? " (reshape to (1, n) or (n, 1))" : ""));
  }
  Array m;
  m.dtype = h.type.dtype;
  m.shape.assign(h.dims.begin(), h.dims.begin() + std::ptrdiff_t(element_rank));
  m.fortran_order = h.fortran_order;
  m.booleans = h.type.is_bool;
  m.uint32_words = h.type.is_uint32;
  if (in.known_size) {
    const std::uint64_t available = *in.known_size - prefix_size - header_length;
    if (available < h.data_bytes)
      format_error(name, "data truncated: shape " + shape_text(h.dims) + " needs " + std::to_string(h.data_bytes) +
                             " bytes but the file has " + std::to_string(available));
    if (available > h.data_bytes)
      format_error(name, std::to_string(available - h.data_bytes) + " unexpected bytes after the " +
                             std::to_string(h.data_bytes) + " bytes of data the header describes");
  }
  std::vector<std::byte> raw;
  if (!read_exactly(in, h.data_bytes, raw, name))
    format_error(name, "data truncated: shape " + shape_text(h.dims) + " needs " + std::to_string(h.data_bytes) +
                           " bytes but the file has " + std::to_string(raw.size()));
  if (!in.known_size) {
    char extra;
    if (in.read(&extra, 1) != 0) format_error(name, "unexpected bytes after the data");
  }

  if (h.type.is_bool)
    for (auto& b : raw) b = std::byte(b != std::byte{0});
  // Fortran and C order differ only where two axes have more than one element.
  const bool same_in_both_orders = std::count_if(h.dims.begin(), h.dims.end(), [](std::int64_t d) { return d > 1; }) <= 1;
  if (!h.fortran_order || same_in_both_orders) {
    m.data = std::move(raw);
  } else {
    m.data.resize(raw.size());
    if (m.shape.size() == 2)  // a matrix, perhaps of i16x2 lanes: the blocked transposition
      fortran_to_row_major(raw.data(), m.data.data(), m.shape[0], m.shape[1], lanes ? 2 : 1, h.type.item_size);
    else
      fortran_to_c_order(raw.data(), m.data.data(), h.dims, h.type.item_size);
  }
  if (h.type.narrow != NarrowType::none) widen_narrow(m, h.type.narrow);
  return m;
}

}  // namespace

namespace {

// A matrix is an array of rank 2 (read_from has checked it).
Matrix as_matrix(Array array) {
  Matrix m;
  m.dtype = array.dtype;
  m.rows = array.shape[0];
  m.cols = array.shape[1];
  m.fortran_order = array.fortran_order;
  m.booleans = array.booleans;
  m.uint32_words = array.uint32_words;
  m.narrow = array.narrow;
  m.data = std::move(array.data);
  return m;
}

Array read_file(const std::string& path, const ReadOptions& options, std::optional<std::size_t> rank) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) io_error(path, "cannot open for reading", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) io_error(path, "cannot stat", errno);
  if (S_ISDIR(st.st_mode)) io_error(path, "is a directory, not a .npy file", 0);
  FdSource source(fd.get(), path);
  if (S_ISREG(st.st_mode)) source.known_size = std::uint64_t(st.st_size);
  return read_from(source, path, options, rank);
}

}  // namespace

Array read_array(const std::string& path, const ReadOptions& options) { return read_file(path, options, std::nullopt); }

Array read_array(std::istream& in, const std::string& name, const ReadOptions& options) {
  StreamSource source(in, name);
  return read_from(source, name, options, std::nullopt);
}

Matrix read(const std::string& path, const ReadOptions& options) { return as_matrix(read_file(path, options, 2)); }

Matrix read(std::istream& in, const std::string& name, const ReadOptions& options) {
  StreamSource source(in, name);
  return as_matrix(read_from(source, name, options, 2));
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

// What a file's elements are: the header's dtype, the bytes of one element (all its lanes), its
// name in messages, and whether the shape has a trailing lane axis of 2.
struct Element {
  std::string descr;
  std::size_t size;
  std::string name;
  bool lane_axis;
};

// The version 1.0 header numpy writes: the dict, then spaces and a newline so that the data starts
// at a multiple of 64 bytes.
std::string make_header(const Element& element, std::vector<std::int64_t> dims) {
  if (element.lane_axis) dims.push_back(2);
  std::string dict = "{'descr': '" + element.descr + "', 'fortran_order': False, 'shape': " + shape_text(dims) + ", }";
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

// Writes the file beside the target and renames it into place (see write() in npy.hpp).
void write_elements(const std::string& path, const Element& element, const std::vector<index_t>& shape,
                    const void* row_major_data) {
  const std::vector<std::int64_t> dims(shape.begin(), shape.end());
  std::optional<index_t> bytes = index_t(element.size);
  double wanted = double(element.size);
  for (index_t d : shape) {
    if (d < 0) throw Error(Errc::invalid_argument, path, "negative shape " + shape_text(dims));
    if (bytes) bytes = checked_mul(*bytes, d);
    wanted *= double(d);
  }
  if (!bytes)
    throw Error(Errc::invalid_argument, path,
                "a " + shape_text(dims) + " " + element.name + " array would be " + bytes_text(wanted) +
                    ", more than any array can hold");
  if (*bytes != 0 && row_major_data == nullptr) throw Error(Errc::null_pointer, path, "no data to write");
  const std::string header = make_header(element, dims);

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
    write_fully(fd.get(), row_major_data, std::size_t(*bytes), path);
    if (fd.close() != 0) io_error(path, "closing the written file failed", errno);
    if (::rename(temp.c_str(), path.c_str()) != 0) io_error(path, "cannot move the written file into place", errno);
  } catch (...) {
    fd.close();
    ::unlink(temp.c_str());
    throw;
  }
}

}  // namespace

namespace {
Element element_of(DType dtype) {
  return {descr_of(dtype), dtype_size(dtype), std::string(to_string(dtype)), dtype == DType::i16x2};
}
}  // namespace

void write(const std::string& path, DType dtype, index_t rows, index_t cols, const void* row_major_data) {
  write_elements(path, element_of(dtype), {rows, cols}, row_major_data);
}

void write_array(const std::string& path, DType dtype, const std::vector<index_t>& shape, const void* c_order_data) {
  write_elements(path, element_of(dtype), shape, c_order_data);
}

void write_uint32(const std::string& path, index_t rows, index_t cols, const std::uint32_t* row_major_data) {
  write_elements(path, {"<u4", sizeof(std::uint32_t), "uint32", false}, {rows, cols}, row_major_data);
}

}  // namespace ringmm::npy
