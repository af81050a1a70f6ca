// Kernels of the device side of ringmm::dist (device_ops.cu): element-wise semiring helpers on
// contiguous buffers, the input check's scan, a block transpose, and the element-wise steps of
// the distributed APSP. Kept free of MPI so that nvcc never sees the MPI headers.
#pragma once

#include <cstdint>
#include <vector>

#include "ringmm/detail/input_check.hpp"
#include "ringmm/semiring.hpp"
#include "ringmm/types.hpp"

namespace ringmm::dist::detail {

// acc ← acc ⊕ part, on `stream` (a cudaStream_t).
template <class S>
void device_accumulate(typename S::value_type* acc, const typename S::value_type* part, index_t count, void* stream);
// c ← α ⊗ acc ⊕ β ⊗ c: the library's one epilogue (C is read only when β ≠ 0̄); a null `acc`
// stands for 0̄ everywhere (a product with K = 0).
template <class S>
void device_epilogue(typename S::value_type* c, const typename S::value_type* acc, index_t count,
                     typename S::value_type alpha, typename S::value_type beta, void* stream);

// The argmax SUMMA's steps, for semirings whose ⊕ selects (others throw). take_better: where a
// later panel's term beats the running one strictly, it and its index replace them (ties keep the
// earlier, smaller k). argmax_epilogue: gemm_argmax's store (detail::argmax_store) of the running
// winners into C and K*; a null `acc` stands for 0̄ everywhere (K = 0).
template <class S>
void device_take_better(typename S::value_type* acc, std::int32_t* acc_k, const typename S::value_type* part,
                        const std::int32_t* part_k, index_t count, void* stream);
template <class S>
void device_argmax_epilogue(typename S::value_type* c, std::int32_t* k_star, const typename S::value_type* acc,
                            const std::int32_t* acc_k, index_t count, typename S::value_type alpha,
                            typename S::value_type beta, void* stream);

// The input check's scan (ringmm's scan_kernel) of a row-major rows × cols block with leading
// dimension ld, on `stream`; waits for it. Positions count row by row, as on the host.
template <class S>
ringmm::detail::ValueScan device_scan(const typename S::value_type* x, index_t rows, index_t cols, index_t ld,
                                      void* stream);

// dst ← the transpose of the rows × cols block at src (leading dimension ld): cols × rows, dense.
template <class T> void device_transpose_block(T* dst, const T* src, index_t rows, index_t cols, index_t ld, void* stream);

// One dimension of the block-cyclic layout seen from rank `me` of `procs` (BlockCyclic of
// ringmm/dist.hpp, which device code cannot include), for kernels that need global indexes.
struct LocalAxis {
  index_t nb = 1;
  int procs = 1, me = 0;
  RINGMM_HD index_t to_global(index_t local) const { return ((local / nb) * procs + me) * nb + local % nb; }
  RINGMM_HD bool owns(index_t global) const { return (global / nb) % procs == me; }
  RINGMM_HD index_t to_local(index_t global) const { return (global / nb / procs) * nb + global % nb; }
};

// The distributed APSP's steps on a rank's rows × cols blocks (src/dist/apsp_devices.cpp), each
// waiting for its result where it returns one. T is float or double.
// The smallest global row-major position i·n + j of a weight APSP refuses (NaN or −∞) among
// these blocks, or −1 where there is none.
template <class T>
std::int64_t device_first_refused_weight(const T* d, index_t ld, index_t rows, index_t cols, LocalAxis row, LocalAxis col,
                                         index_t n, void* stream);
// graph::initial_entry (src/graph/fw_host.hpp) on every entry: +∞ → 0̄, the diagonal, the successors.
template <class T>
void device_initial_entries(T* d, index_t ld_d, std::int32_t* next, index_t ld_next, index_t rows, index_t cols,
                            LocalAxis row, LocalAxis col, bool longest, void* stream);
// The global vertices whose diagonal entry these blocks hold and which is not 0 (a cycle of the
// wrong sign passes through them), in increasing order.
template <class T>
std::vector<std::int64_t> device_cycle_vertices(const T* d, index_t ld, index_t rows, LocalAxis row, LocalAxis col,
                                                void* stream);

}  // namespace ringmm::dist::detail
