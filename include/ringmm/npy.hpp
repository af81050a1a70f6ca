// Reading and writing NumPy .npy files (format versions 1.0–3.0, as numpy.save writes them):
// matrices (read/write) and arrays of any rank (read_array/write_array).
//
// dtypes: <f4 ↔ f32, <f8 ↔ f64, <i4 ↔ i32, |u1 and |b1 ↔ u8, and <i2 with a trailing axis of 2
// ↔ i16x2 (shape (rows, cols, 2): lane 0 is .lo, lane 1 is .hi). <u4, the 32-bit words of packed
// b1 files (ringmm/bits.hpp), is no element type: read only on request (ReadOptions), written by
// write_uint32. On request too (ReadOptions::narrow), <f2 and |i1 are read widened: float16 to f32
// exactly, int8 to i32 by value, and `narrow` says so (the int8 sentinel is the semiring's to map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "ringmm/matrix.hpp"
#include "ringmm/narrow_types.hpp"
#include "ringmm/types.hpp"

namespace ringmm::npy {

// A 2-D matrix read from a file: element (i, j) is data[i*cols + j] (row-major) whatever the
// file's order; `fortran_order` tells what the file held.
struct Matrix {
  DType dtype = DType::f32;
  index_t rows = 0;
  index_t cols = 0;
  bool fortran_order = false;
  bool booleans = false;  // the file held numpy bools ('|b1'), read as u8 0/1
  // The file held uint32 words ('<u4'; only with ReadOptions::uint32_words): dtype says i32, the
  // same four bytes per element, but they are bits to unpack, never numbers to compute with.
  bool uint32_words = false;
  NarrowType narrow = NarrowType::none;  // the file held float16 (now f32) or int8 (now i32)
  std::vector<std::byte> data;

  template <class T> MatrixView<T> view() { return {reinterpret_cast<T*>(data.data()), rows, cols, cols > 1 ? cols : 1, Layout::row_major}; }
};

// An array of any rank (0 included) read from a file: its elements in C order (last axis fastest)
// whatever the file's order. An i16x2 file's trailing lane axis is part of the element, not of
// `shape`.
struct Array {
  DType dtype = DType::f32;
  std::vector<index_t> shape;
  bool fortran_order = false;
  bool booleans = false;
  bool uint32_words = false;
  NarrowType narrow = NarrowType::none;
  std::vector<std::byte> data;

  index_t size() const {
    index_t n = 1;
    for (index_t d : shape) n *= d;
    return n;
  }
};

// Throws ringmm::Error naming `path`: io_error when the file cannot be read, format_error for a bad
// magic string, header, dtype, rank, or a file shorter than its header says.
// Nothing is allocated on the header's word alone: the claim is checked against the file's size,
// or, for a pipe, memory grows only as the data arrives.
// What read() admits beyond the element types.
struct ReadOptions {
  bool uint32_words = false;  // '<u4' (packed b1 words); otherwise refused as any unsupported dtype
  bool narrow = false;        // '<f2' and '|i1', widened to f32 and i32; otherwise refused
};

Matrix read(const std::string& path, const ReadOptions& options = {});
// The same from a stream (a pipe, an in-memory buffer) that holds exactly one array, read to its
// end; `name` is the subject of errors, and memory grows only as the data arrives.
Matrix read(std::istream& in, const std::string& name, const ReadOptions& options = {});
// The same for an array of any rank (an N-d tensor for `ringmm einsum`).
Array read_array(const std::string& path, const ReadOptions& options = {});
Array read_array(std::istream& in, const std::string& name, const ReadOptions& options = {});

// Writes a row-major rows×cols matrix; a shape whose byte size overflows is invalid_argument. The file appears complete or not at all (written to a
// temporary name, then renamed), so a failed write never leaves a partial file.
void write(const std::string& path, DType dtype, index_t rows, index_t cols, const void* row_major_data);
// The same for a C-order array of any rank.
void write_array(const std::string& path, DType dtype, const std::vector<index_t>& shape, const void* c_order_data);
// The same for a row-major rows×cols matrix of uint32 words ('<u4'), as packed b1 files hold them.
void write_uint32(const std::string& path, index_t rows, index_t cols, const std::uint32_t* row_major_data);

}  // namespace ringmm::npy
