// libFuzzer target: ringmm::npy::read on arbitrary bytes. An input must give a matrix whose data
// matches its shape or throw ringmm::Error; a crash, a sanitizer report, any other exception or
// memory beyond -rss_limit_mb is a finding. Each input is read twice, from an in-memory stream
// (size unknown, like a pipe) and from a regular file (size known, checked before allocating):
// the two paths must agree, and an error must be one line of printable text (the CLI prints it).
// A uint8 matrix is also read as `ringmm multiply --type b1` reads it, np.packbits rows of b1
// (ringmm/bits.hpp): it must round-trip with only its pad bits cleared, in both bit orders, and a
// column count its bytes cannot hold must be refused.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ringmm/bits.hpp"
#include "ringmm/detail/bits.hpp"
#include "ringmm/error.hpp"
#include "ringmm/npy.hpp"

namespace {

struct Outcome {
  std::optional<ringmm::npy::Matrix> matrix;
  ringmm::Errc code{};
};

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_npy: %s\n", what);
  std::abort();
}

template <class F> Outcome outcome(F read) {
  try {
    return {read(), {}};
  } catch (const ringmm::Error& e) {
    for (const char* c = e.what(); *c; ++c)
      if (static_cast<unsigned char>(*c) < 0x20) finding("an error message holds a control character");
    return {std::nullopt, e.code()};
  }
}

// One in-memory regular file, rewritten for every input and opened by path as a user's file is.
struct InputFile {
  int fd;
  std::string path;
};

const InputFile& input_file() {
  static const InputFile file = [] {
    const int fd = ::memfd_create("fuzz_npy", 0);
    if (fd < 0) finding("memfd_create failed");
    return InputFile{fd, "/proc/self/fd/" + std::to_string(fd)};
  }();
  return file;
}

void write_file(const std::uint8_t* data, std::size_t size) {
  const int fd = input_file().fd;
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != ssize_t(size)) finding("cannot write the input file");
}

void check_packed(const ringmm::npy::Matrix& m) {
  using namespace ringmm;
  if (m.dtype != DType::u8 || m.booleans || m.rows == 0 || m.cols == 0) return;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(m.data.data());
  const MatrixView<const std::uint8_t> packed{bytes, m.rows, m.cols, m.cols, Layout::row_major};
  for (BitOrder order : {BitOrder::big, BitOrder::little})
    for (index_t cols : {8 * m.cols, 8 * m.cols - 7}) {  // the widest and the narrowest row these bytes hold
      std::vector<bit_word> words(std::size_t(m.rows * words_for_bits(cols)));
      const auto bits = bit_matrix(words.data(), m.rows, cols);
      bits_from_packbits(packed, order, bits);
      for (index_t i = 0; i < m.rows; ++i) bits.row(i)[bits.row_words() - 1] |= ~detail::b1::last_word_mask(cols);  // readers ignore tails
      std::vector<std::uint8_t> back(m.data.size());
      packbits_from_bits(bit_matrix<const bit_word>(words.data(), m.rows, cols), order,
                         MatrixView<std::uint8_t>{back.data(), m.rows, m.cols, m.cols, Layout::row_major});
      const index_t valid = cols - 8 * (m.cols - 1);  // bits of each row's last byte
      const unsigned keep = order == BitOrder::big ? (0xff00u >> valid) & 0xffu : (1u << valid) - 1;
      for (index_t i = 0; i < m.rows; ++i)
        for (index_t b = 0; b < m.cols; ++b) {
          const std::size_t at = std::size_t(i * m.cols + b);
          if (back[at] != (b == m.cols - 1 ? bytes[at] & keep : bytes[at])) finding("packed bytes do not round-trip through b1");
        }
    }
  bit_word word = 0;
  try {
    bits_from_packbits(packed, BitOrder::big, BitMatrixView<bit_word>{&word, m.rows, 8 * m.cols + 1, m.cols / 8 + 1});
    finding("a column count the packed bytes cannot hold was accepted");
  } catch (const Error& e) {
    if (e.code() != Errc::dimension_mismatch) finding("a column count the packed bytes cannot hold failed oddly");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream stream(std::string(reinterpret_cast<const char*>(data), size));
  const Outcome from_stream = outcome([&] { return ringmm::npy::read(stream, "stream"); });
  write_file(data, size);
  const Outcome from_file = outcome([&] { return ringmm::npy::read(input_file().path); });

  if (from_stream.matrix.has_value() != from_file.matrix.has_value()) finding("stream and file disagree on acceptance");
  if (!from_stream.matrix) {
    if (from_stream.code != from_file.code) finding("stream and file fail with different error codes");
    return 0;
  }
  const ringmm::npy::Matrix& a = *from_stream.matrix;
  const ringmm::npy::Matrix& b = *from_file.matrix;
  if (a.dtype != b.dtype || a.rows != b.rows || a.cols != b.cols || a.fortran_order != b.fortran_order ||
      a.booleans != b.booleans || a.data != b.data)
    finding("stream and file give different matrices");
  if (a.rows < 0 || a.cols < 0) finding("negative shape accepted");
  // The data is exactly the shape's bytes (rows·cols may be huge only when the other is 0).
  const std::optional<ringmm::index_t> bytes = ringmm::checked_mul(a.rows, a.cols, ringmm::dtype_size(a.dtype));
  if (!bytes) finding("a shape whose byte size overflows was accepted");
  if (a.data.size() != std::size_t(*bytes)) finding("data size does not match the shape");
  check_packed(a);
  return 0;
}
