// Reading Matrix Market coordinate files (.mtx) as weighted directed graphs.
//
// Accepted: "%%MatrixMarket matrix coordinate <field> <symmetry>" with field real, integer or
// pattern (every listed edge weighs 1) and symmetry general or symmetric (each off-diagonal entry
// is an edge both ways; either triangle may be stored). The matrix must be square. Refused with a
// format_error naming the file and line: array (dense) format, complex fields, skew-symmetric and
// hermitian files, sizes that disagree with the entries, indexes outside 1..n, values that are not
// numbers, NaN or infinite weights, and entries past the count or missing from it. An entry may
// repeat (the count may then exceed n²); every one is kept, and the APSP tools keep the best weight.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "ringmm/types.hpp"

namespace ringmm::mtx {

struct Edge {
  index_t from = 0, to = 0;  // 0-based
  double weight = 0;
};

struct Graph {
  index_t vertices = 0;
  std::vector<Edge> edges;  // as listed, symmetric entries mirrored; duplicates kept
};

// Throws ringmm::Error: io_error when the file cannot be read, format_error as described above.
Graph read(const std::string& path);
// The same from a stream; `name` is the subject of errors.
Graph read(std::istream& in, const std::string& name);

}  // namespace ringmm::mtx
