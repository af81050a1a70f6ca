// npy::read / npy::write: round trips of every dtype, both orders, all three format versions, the
// fixtures numpy wrote, and one test per malformed file, each expecting its own error.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ringmm/error.hpp"
#include "ringmm/npy.hpp"

namespace fs = std::filesystem;
using ringmm::DType;
using ringmm::Errc;
using ringmm::Error;
using ringmm::index_t;

namespace {

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringmm_npy_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // Writes a .npy file by hand: magic, version, little-endian header length, header, data.
  std::string write_raw(const std::string& name, const std::string& header, const std::string& data, int major = 1,
                        int minor = 0) const {
    std::string padded = header;
    const std::size_t len_bytes = major == 1 ? 2 : 4;
    while ((6 + 2 + len_bytes + padded.size() + 1) % 64) padded += ' ';
    padded += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += char(major);
    bytes += char(minor);
    for (std::size_t i = 0; i < len_bytes; ++i) bytes += char((padded.size() >> (8 * i)) & 0xff);
    return write_bytes(name, bytes + padded + data);
  }

  std::string write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  fs::path dir_;
};

template <class T> std::string raw_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Reading `file` must throw an Error with `code` whose subject is the file's path.
void expect_refused(const std::string& file, Errc code, const std::string& message_part) {
  try {
    ringmm::npy::read(file);
    ADD_FAILURE() << file << " was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.subject(), file);
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

template <class T> void expect_round_trip(const std::string& file, DType dtype, index_t rows, index_t cols) {
  std::vector<T> data(std::size_t(rows * cols));
  for (std::size_t i = 0; i < data.size(); ++i) {
    if constexpr (std::is_same_v<T, ringmm::i16x2>) data[i] = {std::int16_t(i * 3 - 50), std::int16_t(-int(i))};
    else data[i] = T(int(i % 251) - (std::is_unsigned_v<T> ? 0 : 100));
  }
  ringmm::npy::write(file, dtype, rows, cols, data.data());
  const auto m = ringmm::npy::read(file);
  EXPECT_EQ(m.dtype, dtype);
  EXPECT_EQ(m.rows, rows);
  EXPECT_EQ(m.cols, cols);
  EXPECT_FALSE(m.fortran_order);
  ASSERT_EQ(m.data.size(), data.size() * sizeof(T));
  EXPECT_EQ(std::memcmp(m.data.data(), data.data(), m.data.size()), 0);
}

}  // namespace

TEST_F(NpyTest, RoundTripEveryDtype) {
  expect_round_trip<float>(path("f32.npy"), DType::f32, 7, 33);
  expect_round_trip<double>(path("f64.npy"), DType::f64, 33, 7);
  expect_round_trip<std::int32_t>(path("i32.npy"), DType::i32, 1, 129);
  expect_round_trip<std::uint8_t>(path("u8.npy"), DType::u8, 127, 3);
  expect_round_trip<ringmm::i16x2>(path("i16x2.npy"), DType::i16x2, 5, 4);
  expect_round_trip<float>(path("empty.npy"), DType::f32, 0, 5);
  expect_round_trip<float>(path("empty2.npy"), DType::f32, 4, 0);
}

TEST_F(NpyTest, WrittenHeaderIsNumpysVersion1PaddedTo64) {
  const std::vector<float> data(6, 1.5f);
  ringmm::npy::write(path("h.npy"), DType::f32, 2, 3, data.data());
  std::ifstream in(path("h.npy"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t header_len = std::uint8_t(bytes[8]) | (std::size_t(std::uint8_t(bytes[9])) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  EXPECT_EQ(bytes.size(), 10 + header_len + data.size() * 4);
  const std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << header;
  EXPECT_EQ(header.back(), '\n');
}

TEST_F(NpyTest, WriteReplacesAnExistingFileAndLeavesNoTemporary) {
  const std::vector<std::int32_t> one(4, 1), two(6, 2);
  ringmm::npy::write(path("c.npy"), DType::i32, 2, 2, one.data());
  ringmm::npy::write(path("c.npy"), DType::i32, 3, 2, two.data());
  EXPECT_EQ(ringmm::npy::read(path("c.npy")).rows, 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(NpyTest, WriteIntoAMissingDirectoryIsAnIoError) {
  const std::vector<float> data(4, 0.f);
  const std::string file = path("no/such/dir/c.npy");
  try {
    ringmm::npy::write(file, DType::f32, 2, 2, data.data());
    ADD_FAILURE() << "write succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io_error);
    EXPECT_EQ(e.subject(), file);
  }
  EXPECT_FALSE(fs::exists(file));
}

TEST_F(NpyTest, FortranOrderIsConvertedToRowMajor) {
  // 2x3 matrix [[0, 1, 2], [3, 4, 5]] stored column by column.
  const std::vector<float> column_major = {0, 3, 1, 4, 2, 5};
  const auto m = ringmm::npy::read(
      write_raw("f.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw_bytes(column_major)));
  EXPECT_TRUE(m.fortran_order);
  ASSERT_EQ(m.rows, 2);
  ASSERT_EQ(m.cols, 3);
  const float* x = reinterpret_cast<const float*>(m.data.data());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(x[i], float(i));
}

TEST_F(NpyTest, ArraysOfAnyRankRoundTrip) {
  for (const std::vector<ringmm::index_t>& shape :
       std::vector<std::vector<ringmm::index_t>>{{}, {5}, {2, 3, 4}, {1, 2, 1, 3, 2}, {3, 0, 2}}) {
    ringmm::index_t count = 1;
    for (auto d : shape) count *= d;
    std::vector<double> data(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = 0.5 * double(i) - 3;
    ringmm::npy::write_array(path("t.npy"), DType::f64, shape, data.data());
    const auto a = ringmm::npy::read_array(path("t.npy"));
    EXPECT_EQ(a.dtype, DType::f64);
    EXPECT_EQ(a.shape, shape);
    ASSERT_EQ(a.data.size(), data.size() * sizeof(double));
    EXPECT_EQ(std::memcmp(a.data.data(), data.data(), a.data.size()), 0);
  }
}

TEST_F(NpyTest, FortranOrderArraysAreConvertedToCOrder) {
  // Shape (2, 3, 4) stored first axis fastest: the file's element i + 2j + 6k is (i, j, k).
  std::vector<std::int32_t> file(24);
  for (int i = 0; i < 24; ++i) file[std::size_t(i)] = i;
  const auto a = ringmm::npy::read_array(
      write_raw("f.npy", "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", raw_bytes(file)));
  ASSERT_EQ(a.shape, (std::vector<ringmm::index_t>{2, 3, 4}));
  const auto* x = reinterpret_cast<const std::int32_t*>(a.data.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(x[(i * 3 + j) * 4 + k], i + 2 * j + 6 * k) << i << j << k;
  // A matrix reader refuses the array by its rank, before reading its data.
  expect_refused(write_raw("t.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 4), }", std::string(8, '\0')),
                 Errc::format_error, "has rank 3");
}

TEST_F(NpyTest, FortranOrderI16x2KeepsLanesTogether) {
  // Shape (2, 2, 2) in Fortran order: the lane axis is slowest. Element (i, j) = {10i + j, -(10i + j)}.
  std::vector<std::int16_t> file;
  for (int lane = 0; lane < 2; ++lane)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 2; ++i) file.push_back(std::int16_t((lane ? -1 : 1) * (10 * i + j)));
  const auto m = ringmm::npy::read(
      write_raw("f.npy", "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2, 2), }", raw_bytes(file)));
  ASSERT_EQ(m.dtype, DType::i16x2);
  const auto* x = reinterpret_cast<const ringmm::i16x2*>(m.data.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(x[i * 2 + j].lo, 10 * i + j);
      EXPECT_EQ(x[i * 2 + j].hi, -(10 * i + j));
    }
}

TEST_F(NpyTest, Versions2And3AndBoolAreRead) {
  const std::vector<std::uint8_t> bools = {0, 1, 1, 0, 2, 0};  // any nonzero byte is true
  for (int major : {2, 3}) {
    const auto m = ringmm::npy::read(write_raw("v" + std::to_string(major) + ".npy",
                                               "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 2), }",
                                               raw_bytes(bools), major));
    EXPECT_EQ(m.dtype, DType::u8);
    EXPECT_TRUE(m.booleans);  // so that a bool file is not taken for np.packbits bytes
    const std::vector<std::uint8_t> expected = {0, 1, 1, 0, 1, 0};
    EXPECT_EQ(std::memcmp(m.data.data(), expected.data(), 6), 0);
  }
}

// float16 ('<f2') and int8 ('|i1') are read only on request, widened to f32 and i32 (exactly, and
// by value: the int8 sentinel is the caller's to map), in C order whatever the file's order.
TEST_F(NpyTest, NarrowFilesAreReadWidenedOnlyOnRequest) {
  // 2x3 float16, column-major in the file: 1, -2, 0.5, +inf, 65504, the smallest subnormal 2^-24.
  const std::vector<std::uint16_t> halves = {0x3c00, 0x7c00, 0xc000, 0x7bff, 0x3800, 0x0001};
  const std::string f2 = write_raw("f2.npy", "{'descr': '<f2', 'fortran_order': True, 'shape': (2, 3), }", raw_bytes(halves));
  expect_refused(f2, Errc::format_error, "unsupported dtype '<f2'");
  const ringmm::npy::ReadOptions narrow{.narrow = true};
  auto m = ringmm::npy::read(f2, narrow);
  EXPECT_EQ(m.dtype, DType::f32);
  EXPECT_EQ(m.narrow, ringmm::NarrowType::f16);
  const std::vector<float> want = {1.0f, -2.0f, 0.5f, std::numeric_limits<float>::infinity(), 65504.0f, 0x1p-24f};
  ASSERT_EQ(m.data.size(), want.size() * 4);
  EXPECT_EQ(std::memcmp(m.data.data(), want.data(), m.data.size()), 0);

  const std::vector<std::int8_t> bytes = {-128, 127, 0, -1, 5, -7};
  const std::string i1 = write_raw("i1.npy", "{'descr': '|i1', 'fortran_order': False, 'shape': (3, 2), }", raw_bytes(bytes));
  expect_refused(i1, Errc::format_error, "unsupported dtype '|i1'");
  m = ringmm::npy::read(i1, narrow);
  EXPECT_EQ(m.dtype, DType::i32);
  EXPECT_EQ(m.narrow, ringmm::NarrowType::i8);
  const std::vector<std::int32_t> wide = {-128, 127, 0, -1, 5, -7};
  ASSERT_EQ(m.data.size(), wide.size() * 4);
  EXPECT_EQ(std::memcmp(m.data.data(), wide.data(), m.data.size()), 0);
  // A file shorter than its header says is refused as before (the file's bytes, not the widened ones).
  try {
    ringmm::npy::read(write_raw("short.npy", "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", std::string(6, '\0')),
                      narrow);
    ADD_FAILURE() << "a truncated float16 file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("needs 8 bytes but the file has 6"), std::string::npos) << e.what();
  }
  EXPECT_EQ(ringmm::npy::read(std::string(RINGMM_CLI_FIXTURES) + "/max_plus_i32_a.npy", narrow).narrow, ringmm::NarrowType::none);
}

// '<u4', the words of packed b1 files, is read only on request (as i32's bytes, marked), so no
// other reader takes uint32 numbers for i32; write_uint32 writes it back with numpy's header.
TEST_F(NpyTest, Uint32WordsAreReadOnlyOnRequestAndWritten) {
  const std::vector<std::uint32_t> words = {0x80000001u, 0xffffffffu, 7u, 0u, 0x12345678u, 1u};  // 2x3
  const std::string file = write_raw("u4.npy", "{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }", raw_bytes(words));
  expect_refused(file, Errc::format_error, "unsupported dtype '<u4'");
  const ringmm::npy::ReadOptions uint32_words{.uint32_words = true};
  auto m = ringmm::npy::read(file, uint32_words);
  EXPECT_EQ(m.dtype, DType::i32);
  EXPECT_TRUE(m.uint32_words);
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(m.data.size(), raw_bytes(words).size());
  EXPECT_EQ(std::memcmp(m.data.data(), words.data(), m.data.size()), 0);
  EXPECT_FALSE(ringmm::npy::read(std::string(RINGMM_CLI_FIXTURES) + "/max_plus_i32_a.npy", uint32_words).uint32_words);
  expect_refused(write_raw("be.npy", "{'descr': '>u4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0')),
                 Errc::format_error, "big-endian");

  const std::vector<std::uint32_t> column_major = {0x80000001u, 0u, 0xffffffffu, 0x12345678u, 7u, 1u};
  m = ringmm::npy::read(write_raw("f.npy", "{'descr': '<u4', 'fortran_order': True, 'shape': (2, 3), }",
                                  raw_bytes(column_major)),
                        uint32_words);
  EXPECT_EQ(std::memcmp(m.data.data(), words.data(), m.data.size()), 0) << "Fortran order not reordered";

  ringmm::npy::write_uint32(path("w.npy"), 2, 3, words.data());
  std::ifstream in(path("w.npy"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(bytes.find("{'descr': '<u4', 'fortran_order': False, 'shape': (2, 3), }"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.size() % 64, 24u);  // a 64-byte-aligned header, then 2x3 words
  std::istringstream stream(bytes);
  m = ringmm::npy::read(stream, "stream", uint32_words);
  EXPECT_TRUE(m.uint32_words);
  EXPECT_EQ(std::memcmp(m.data.data(), words.data(), m.data.size()), 0);
  expect_refused(path("w.npy"), Errc::format_error, "unsupported dtype '<u4'");
}

TEST_F(NpyTest, ReadsNumpysOwnFiles) {
  const std::string dir = RINGMM_CLI_FIXTURES;
  const auto c_order = ringmm::npy::read(dir + "/max_plus_f32_a.npy");
  const auto f_order = ringmm::npy::read(dir + "/max_plus_f32_a_fortran.npy");
  EXPECT_FALSE(c_order.fortran_order);
  EXPECT_TRUE(f_order.fortran_order);
  EXPECT_EQ(c_order.rows, 9);
  EXPECT_EQ(c_order.cols, 14);
  EXPECT_EQ(c_order.data, f_order.data);
  EXPECT_EQ(ringmm::npy::read(dir + "/max_plus_i32_a.npy").dtype, DType::i32);
  EXPECT_TRUE(ringmm::npy::read(dir + "/or_and_bool_a.npy").booleans);
  const auto packed = ringmm::npy::read(dir + "/b1_a_big.npy");  // np.packbits: plain uint8
  EXPECT_EQ(packed.dtype, DType::u8);
  EXPECT_FALSE(packed.booleans);
}

// ---- malformed files: each refused with its own error naming the file --------------------------

TEST_F(NpyTest, RefusesBadMagic) {
  expect_refused(write_bytes("m.npy", std::string("\x93NUMPX\x01\x00\x10\x00", 10) + std::string(16, ' ')),
                 Errc::format_error, "bad magic");
}

TEST_F(NpyTest, RefusesEmptyFile) { expect_refused(write_bytes("e.npy", ""), Errc::format_error, "empty file"); }

TEST_F(NpyTest, RefusesUnsupportedVersion) {
  expect_refused(write_raw("v.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0'), 4),
                 Errc::format_error, "version 4.0");
}

TEST_F(NpyTest, RefusesTruncatedHeader) {
  const std::string full = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + "{'descr': '<f4', 'fortr";
  expect_refused(write_bytes("t.npy", full), Errc::format_error, "truncated header");
  expect_refused(write_bytes("t2.npy", std::string("\x93NUMPY\x01", 7)), Errc::format_error, "truncated header");
}

TEST_F(NpyTest, RefusesHeaderThatIsNotADict) {
  expect_refused(write_raw("d.npy", "['<f4', False, (1, 1)]", std::string(4, '\0')), Errc::format_error,
                 "not a Python dict");
}

TEST_F(NpyTest, RefusesMissingShapeKey) {
  expect_refused(write_raw("k.npy", "{'descr': '<f4', 'fortran_order': False, }", std::string(4, '\0')),
                 Errc::format_error, "no 'shape' key");
}

TEST_F(NpyTest, RefusesMissingDescrKey) {
  expect_refused(write_raw("k.npy", "{'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0')),
                 Errc::format_error, "no 'descr' key");
}

TEST_F(NpyTest, RefusesUnexpectedKeyAndWrongValueTypes) {
  expect_refused(write_raw("x.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'extra': True, }",
                           std::string(4, '\0')),
                 Errc::format_error, "unexpected header key 'extra'");
  expect_refused(write_raw("y.npy", "{'descr': '<f4', 'fortran_order': (1,), 'shape': (1, 1), }", std::string(4, '\0')),
                 Errc::format_error, "'fortran_order' is not True or False");
}

TEST_F(NpyTest, RefusesUnknownDtype) {
  expect_refused(write_raw("i8.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 1), }", std::string(8, '\0')),
                 Errc::format_error, "unsupported dtype '<i8'");
  expect_refused(write_raw("s.npy", "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (1, 1), }",
                           std::string(4, '\0')),
                 Errc::format_error, "structured dtypes");
}

TEST_F(NpyTest, RefusesBigEndian) {
  expect_refused(write_raw("be.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0')),
                 Errc::format_error, "big-endian");
}

TEST_F(NpyTest, RefusesRankOtherThanTwo) {
  expect_refused(write_raw("r1.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", std::string(16, '\0')),
                 Errc::format_error, "rank 1");
  expect_refused(write_raw("r3.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", std::string(16, '\0')),
                 Errc::format_error, "rank 3");
  expect_refused(write_raw("r0.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (), }", std::string(4, '\0')),
                 Errc::format_error, "rank 0");
}

TEST_F(NpyTest, RefusesI16WithoutTheLaneAxis) {
  expect_refused(write_raw("i2.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }", std::string(8, '\0')),
                 Errc::format_error, "needs shape (rows, cols, 2)");
  expect_refused(write_raw("i3.npy", "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2, 3), }", std::string(24, '\0')),
                 Errc::format_error, "needs shape (rows, cols, 2)");
}

TEST_F(NpyTest, RefusesNegativeShape) {
  expect_refused(write_raw("n.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", ""),
                 Errc::format_error, "negative dimension");
}

TEST_F(NpyTest, RefusesOverflowingShape) {
  expect_refused(write_raw("o.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""),
                 Errc::format_error, "overflows 64 bits");
  expect_refused(write_raw("o2.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999, 1), }", ""),
                 Errc::format_error, "overflows 64 bits");
}

TEST_F(NpyTest, RefusesAListAsShapeAsAMalformedShape) {
  const std::string file =
      write_raw("l.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': [3, 4], }", std::string(48, '\0'));
  expect_refused(file, Errc::format_error, "malformed shape");
  try {
    ringmm::npy::read(file);
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("structured"), std::string::npos) << e.what();
  }
}

// The CLI prints errors as one line: header bytes in a message are escaped, padding dropped.
TEST_F(NpyTest, HeaderTextInMessagesIsOneEscapedLine) {
  expect_refused(write_raw("c.npy", "{'descr': '<f4\n\x1b[2J', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0')),
                 Errc::format_error, "unsupported dtype '<f4\\x0a\\x1b[2J'");
  try {
    ringmm::npy::read(write_raw("p.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), 'x': 1}", ""));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.substr(what.size() - 2), "})") << what;  // the padding is not shown
  }
}

TEST_F(NpyTest, EmptyMatrixWithAHugeDimensionIsRead) {
  // numpy accepts it (0 bytes of data); the product it leads to is checked by its user.
  const auto m = ringmm::npy::read(
      write_raw("z.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387905), }", ""));
  EXPECT_EQ(m.rows, 0);
  EXPECT_EQ(m.cols, 4611686018427387905);
  EXPECT_TRUE(m.data.empty());
}

TEST_F(NpyTest, WriteRefusesAShapeWhoseSizeOverflows) {
  const float x = 0;
  // rows·cols·4 once wrapped round to 16 bytes and wrote a 144-byte file numpy could not load.
  for (const auto& [rows, cols] : {std::pair<index_t, index_t>{4611686018427387905, 4}, {index_t(1) << 40, index_t(1) << 40}}) {
    try {
      ringmm::npy::write(path("c.npy"), DType::f32, rows, cols, &x);
      ADD_FAILURE() << rows << "x" << cols << " was written";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find("more than any array can hold"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(path("c.npy")));
  }
}

TEST_F(NpyTest, ReadsFromAStream) {
  const std::vector<float> data{1, 2, 3, 4, 5, 6};
  ringmm::npy::write(path("f.npy"), DType::f32, 2, 3, data.data());
  std::ifstream file(path("f.npy"), std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  std::istringstream in(bytes.str());
  const auto m = ringmm::npy::read(in, "stream");
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.cols, 3);
  EXPECT_EQ(std::memcmp(m.data.data(), data.data(), 24), 0);

  auto expect_stream_refused = [](const std::string& text, const std::string& part) {
    std::istringstream in(text);
    try {
      ringmm::npy::read(in, "stream");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format_error) << e.what();
      EXPECT_EQ(e.subject(), "stream");
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_stream_refused(bytes.str() + "x", "unexpected bytes after the data");
  expect_stream_refused(bytes.str().substr(0, bytes.str().size() - 1), "data truncated");
  expect_stream_refused("", "empty file");
}

// A 128-byte .npy whose header claims (16000, 16000) f8, i.e. 2 GB.
std::string claims_2gb() {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (16000, 16000), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  return std::string("\x93NUMPY\x01\x00", 8) + char(header.size() + 1) + '\0' + header + '\n';
}

struct ChildRun {
  int status;             // exit status of the child
  long rss_growth_kb;     // its peak resident set beyond the parent's at the fork
  double seconds;
};

// Runs `body` in a forked child, so its peak memory is measured on its own, and `feed` here
// while it runs.
template <class F, class G> ChildRun in_child(F body, G feed) {
  rusage self{};
  ::getrusage(RUSAGE_SELF, &self);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  feed();
  int status = 0;
  rusage child{};
  ::wait4(pid, &status, 0, &child);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, child.ru_maxrss - self.ru_maxrss, seconds};
}

// 0 when reading `file` fails with "data truncated", else 1.
int read_fails_truncated(const std::string& file) {
  try {
    ringmm::npy::read(file);
  } catch (const Error& e) {
    return e.code() == Errc::format_error && std::string(e.what()).find("data truncated") != std::string::npos ? 0 : 1;
  }
  return 1;
}

// The reader once allocated (and zeroed) the 2 GB the header claims before reading any data:
// 2.1 GB of memory and 5 s before "data truncated".
TEST_F(NpyTest, TruncatedPipeFailsFastWithLittleMemory) {
  const std::string fifo = path("pipe.npy");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string bytes = claims_2gb();
  ASSERT_EQ(bytes.size(), 128u);
  // The child blocks in open() until this end opens; the pipe buffer takes all 128 bytes.
  const ChildRun run = in_child([&] { return read_fails_truncated(fifo); },
                                [&] {
                                  const int fd = ::open(fifo.c_str(), O_WRONLY);
                                  ASSERT_GE(fd, 0);
                                  EXPECT_EQ(::write(fd, bytes.data(), bytes.size()), 128);
                                  ::close(fd);
                                });
  EXPECT_EQ(run.status, 0);
  EXPECT_LT(run.rss_growth_kb, 100 * 1024);
  EXPECT_LT(run.seconds, 3.0);
}

TEST_F(NpyTest, TruncatedFileIsRefusedBeforeAllocating) {
  const std::string file = write_bytes("claims.npy", claims_2gb());
  const ChildRun run = in_child([&] { return read_fails_truncated(file); }, [] {});
  EXPECT_EQ(run.status, 0);
  EXPECT_LT(run.rss_growth_kb, 100 * 1024);
  EXPECT_LT(run.seconds, 3.0);
}

TEST_F(NpyTest, RefusesShortData) {
  expect_refused(write_raw("s.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", std::string(32, '\0')),
                 Errc::format_error, "data truncated");
}

TEST_F(NpyTest, RefusesTrailingBytes) {
  expect_refused(write_raw("g.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", std::string(17, '\0')),
                 Errc::format_error, "1 unexpected bytes");
}

TEST_F(NpyTest, MissingFileOrDirectoryIsAnIoError) {
  expect_refused(path("absent.npy"), Errc::io_error, "cannot open");
  expect_refused(dir_.string(), Errc::io_error, "is a directory");
}

TEST_F(NpyTest, UnreadableFileIsAnIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const std::string file = write_raw("p.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }", std::string(4, '\0'));
  fs::permissions(file, fs::perms::none);
  expect_refused(file, Errc::io_error, "Permission denied");
}
