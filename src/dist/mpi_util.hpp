// Internal helpers of the distributed layer.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <typeinfo>

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// An MPI datatype of one element (sizeof(T) bytes), so that counts are in elements: a panel or a
// rank's part of a matrix may exceed INT_MAX bytes long before it exceeds INT_MAX elements.
class ElementType {
 public:
  explicit ElementType(std::size_t bytes) {
    MPI_Type_contiguous(int(bytes), MPI_BYTE, &type_);
    MPI_Type_commit(&type_);
  }
  ~ElementType() { MPI_Type_free(&type_); }
  ElementType(const ElementType&) = delete;
  ElementType& operator=(const ElementType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// A stable fingerprint of a C++ type, equal on every rank of one program (same mangled name).
template <class X> std::int64_t type_fingerprint() {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the mangled name
  for (const char* p = typeid(X).name(); *p; ++p) h = (h ^ std::uint8_t(*p)) * 1099511628211ull;
  return std::int64_t(h >> 1);
}

// The element type's name ("f32"), for agreement messages.
template <class T> std::string type_name() {
  if constexpr (requires { dtype_of<T>::value; }) return std::string(to_string(dtype_of<T>::value));
  else return typeid(T).name();
}

// The bits of a scalar as one integer, for agreement checks of α and β.
template <class T> std::int64_t scalar_bits(T x) {
  static_assert(sizeof(T) <= 8);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof(T));
  return std::int64_t(bits);
}

// Checks, on every rank alike, that the largest local part fits an MPI count.
inline void check_count(const BlockCyclic& rows, const BlockCyclic& cols, const std::string& subject) {
  index_t max_rows = 0, max_cols = 0;
  for (int p = 0; p < rows.procs; ++p) max_rows = std::max(max_rows, rows.local_size(p));
  for (int p = 0; p < cols.procs; ++p) max_cols = std::max(max_cols, cols.local_size(p));
  if (max_rows * max_cols > INT_MAX)
    throw Error(Errc::invalid_argument, subject,
                "a rank's part (" + std::to_string(max_rows) + "x" + std::to_string(max_cols) +
                    ") exceeds the 2^31-1 elements one MPI message can carry; use more ranks");
}

}  // namespace ringmm::dist::detail
