// Scatter and gather between a root's whole matrix and each rank's dense local part, wherever the
// part is then kept: DistMatrix's storage, or a pinned buffer that feeds a DeviceDistMatrix.
#pragma once

#include <optional>
#include <string>

#include "ringmm/dist.hpp"

namespace ringmm::dist::detail {

// The parameters a layout collective must agree on (shape, block, type, root), a check of
// `layout` against the grid, then every rank's `local_problem` (throw_if_any): all ranks throw
// alike or none does. Callers that send a rank's part as one MPI message add check_count; the
// copies between a rank's host and device memory have no such limit.
template <class T>
void agree_on_layout(const Grid& grid, const DistLayout& layout, int root, const std::string& call,
                     std::optional<Error> local_problem);

// Collective. `mine` holds this rank's local_rows × local_cols part, row-major and dense; root's
// `global` is checked against the layout first, and every part must fit one MPI message.
template <class T>
void scatter_parts(const Grid& grid, MatrixView<const T> global, const DistLayout& layout, T* mine, int root,
                   const std::string& call, std::optional<Error> local_problem = std::nullopt);
template <class T>
void gather_parts(const Grid& grid, const DistLayout& layout, const T* mine, MatrixView<T> global, int root,
                  const std::string& call, std::optional<Error> local_problem = std::nullopt);

}  // namespace ringmm::dist::detail
