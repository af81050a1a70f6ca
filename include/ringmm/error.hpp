// The one error type of ringmm: a code, the argument or file it concerns, and a message.
#pragma once

#include <cstddef>
#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ringmm {

enum class Errc {
  invalid_argument,       // a value outside its documented domain (negative size, bad option)
  dimension_mismatch,     // op(A) is M×K, op(B) must be K×N and C M×N
  invalid_leading_dim,    // leading dimension zero or smaller than the contiguous extent
  null_pointer,           // null data with a nonzero size
  aliasing,               // C overlaps A or B, or batch members of C overlap each other
  value_out_of_range,     // an input value outside the accepted range (integer policies)
  unsupported,            // semiring/type pair or feature not available for this backend
  backend_unavailable,    // asked for a backend that is not compiled in or has no device
  device_error,           // a CUDA / NCCL call failed
  out_of_memory,          // host or device allocation failed
  io_error,               // a file could not be opened, read or written
  format_error,           // a file's contents are malformed (.npy header, dtype, rank)
  distributed_mismatch,   // ranks disagree on a distributed call's parameters
};

std::string_view to_string(Errc code);

class Error : public std::runtime_error {
 public:
  Error(Errc code, std::string subject, const std::string& message)
      : std::runtime_error(subject.empty() ? message : subject + ": " + message),
        code_(code),
        subject_(std::move(subject)) {}
  Errc code() const noexcept { return code_; }
  // The argument, option or file the error is about ("lda", "--semiring", "a.npy"), or empty.
  const std::string& subject() const noexcept { return subject_; }

 private:
  Errc code_;
  std::string subject_;
};

// "4.84 YB": a byte count for messages, in decimal units (a double: the counts it describes may
// not fit in 64 bits).
inline std::string bytes_text(double bytes) {
  static constexpr const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
  std::size_t unit = 0;
  for (; bytes >= 1000 && unit + 1 < std::size(units); ++unit) bytes /= 1000;
  char text[48];
  std::snprintf(text, sizeof text, "%.3g %s", bytes, units[unit]);
  return text;
}

}  // namespace ringmm
