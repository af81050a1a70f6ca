// Device-resident distributed matrices: each rank's local blocks in its GPU's memory, so that
// products can follow one another on the devices (C = A·B, then D = C·B) with no host round trip.
// Only for builds of ringmm::dist with CUDA and NCCL (RINGMM_HAVE_NCCL); one rank per GPU, as the
// device path of dist::gemm assumes (the rank's index on its node picks the device).
//
// The layout is DistMatrix's (DistLayout, ringmm/dist.hpp): the same blocks on the same ranks,
// row-major local storage with leading dimension max(1, local_cols). Data enters and leaves through
// page-locked host buffers; the MPI traffic of scatter and gather stays in host memory (the MPI
// need not be CUDA-aware), the transposes and panels of gemm move by NCCL.
//
// Every function here is collective over the grid's communicator and checks first, like the rest
// of ringmm::dist, that the ranks agree on its parameters and that no rank has a local problem
// (no device, a failed allocation, a matrix built for another grid or device): every rank then
// throws the same ringmm::Error, and none waits for the others. A device fault after those checks,
// inside the NCCL exchanges (a failed launch or copy on one rank), is not agreed on: the other
// ranks can then wait in NCCL, as in the host matrices' device path. See docs/distributed.md.
#pragma once

#include <cstdint>

#include "ringmm/dist.hpp"

#if !RINGMM_HAVE_NCCL
#error "ringmm/dist_device.hpp needs ringmm::dist built with CUDA and NCCL (RINGMM_HAVE_NCCL)"
#endif

namespace ringmm::dist {

// This rank's part of a distributed matrix, in the memory of the device its grid runs on.
// Move-only: it owns the allocation, freed on destruction.
template <class T> class DeviceDistMatrix : public DistLayout {
 public:
  DeviceDistMatrix() = default;
  // Collective: picks this rank's device (once per grid) and allocates the local part there; the
  // contents are unspecified.
  DeviceDistMatrix(const Grid& grid, index_t rows, index_t cols, index_t nb);
  ~DeviceDistMatrix();
  DeviceDistMatrix(DeviceDistMatrix&& other) noexcept;
  DeviceDistMatrix& operator=(DeviceDistMatrix&& other) noexcept;
  DeviceDistMatrix(const DeviceDistMatrix&) = delete;
  DeviceDistMatrix& operator=(const DeviceDistMatrix&) = delete;

  // The CUDA device holding the local part (-1 for a default-constructed matrix).
  int device() const { return device_; }
  // The local part as a view of device memory (row-major, ld()).
  MatrixView<T> local() { return {data_, local_rows(), local_cols(), ld(), Layout::row_major}; }
  MatrixView<const T> local() const { return {data_, local_rows(), local_cols(), ld(), Layout::row_major}; }

 private:
  T* data_ = nullptr;
  int device_ = -1;
};

// Collective. A device copy of each rank's part of `host` (no data moves between ranks).
template <class T> DeviceDistMatrix<T> to_device(const Grid& grid, const DistMatrix<T>& host);
// Collective. Each rank's part of `device` copied into `host` (same shape and block; no data moves
// between ranks), or into a new host matrix.
template <class T> void to_host(const Grid& grid, const DeviceDistMatrix<T>& device, DistMatrix<T>& host);
template <class T> DistMatrix<T> to_host(const Grid& grid, const DeviceDistMatrix<T>& device);

// Collective. Root's `global` (rows × cols of `out`, any layout, host memory; ignored on other
// ranks) is cut into blocks, sent to their owners over MPI and copied to their devices.
template <class T> void scatter(const Grid& grid, MatrixView<const T> global, DeviceDistMatrix<T>& out, int root = 0);
// Collective. Assembles the matrix on root into `global` (rows × cols, any layout, host memory).
template <class T> void gather(const Grid& grid, const DeviceDistMatrix<T>& in, MatrixView<T> global, int root = 0);

// Collective SUMMA on device-resident matrices: dist::gemm's semantics, checks and Stats, with
// no host staging (Stats::staged_bytes = 0): transposed operands are redistributed on the
// devices (NCCL), panels move by NCCL, local multiplies run on each rank's device; C stays there.
// C must be neither A nor B. options.context.backend must be automatic or cuda. Instantiated for
// every built-in semiring.
template <class S>
Stats gemm(const Grid& grid, Op op_a, const DeviceDistMatrix<typename S::value_type>& a, Op op_b,
           const DeviceDistMatrix<typename S::value_type>& b, DeviceDistMatrix<typename S::value_type>& c,
           typename S::value_type alpha, typename S::value_type beta, const Options& options = {});

// Collective SUMMA with the argmax on device-resident matrices: dist::gemm_argmax's semantics
// (ringmm::gemm_argmax's, with K* counting columns of the whole K, ties to the smallest k) and
// dist::gemm's device path above. Each panel's winners and indexes are kept apart from C on the
// devices and merged there; α, β and the incoming K* apply once at the end. K* shares C's shape
// and block. Throws unsupported for a semiring whose ⊕ does not select.
template <class S>
Stats gemm_argmax(const Grid& grid, Op op_a, const DeviceDistMatrix<typename S::value_type>& a, Op op_b,
                  const DeviceDistMatrix<typename S::value_type>& b, DeviceDistMatrix<typename S::value_type>& c,
                  DeviceDistMatrix<std::int32_t>& k_star, typename S::value_type alpha, typename S::value_type beta,
                  const Options& options = {});

// Collective blocked Floyd–Warshall with successors on device-resident matrices: dist::apsp's
// semantics, checks and errors (ringmm/dist.hpp), with every step on the ranks' devices: the
// column strip's diagonal and relax kernels and the local argmax products of the one-GPU solver,
// panels broadcast by NCCL. Its sub-blocks are the one-GPU solver's, so distances and successors
// equal ringmm::apsp on one GPU with ApspOptions::block = the layout's block, bit for bit.
// options.context.backend must be automatic or cuda; T is float or double.
template <class T>
Stats apsp(const Grid& grid, DeviceDistMatrix<T>& dist, DeviceDistMatrix<std::int32_t>& next,
           const ApspOptions& apsp = {}, const Options& options = {});

}  // namespace ringmm::dist
