// Device-resident distributed matrices: allocation, copies from and to host DistMatrix parts, and
// scatter / gather through pinned host buffers (the MPI traffic itself stays in host memory).
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "device_support.hpp"
#include "distribute.hpp"
#include "mpi_util.hpp"
#include "ringmm/dist_device.hpp"

namespace ringmm::dist {

namespace {

// The shape is agreed first, so that a bad one throws alike everywhere and no rank goes on to
// the collective device set-up alone.
DistLayout agreed_layout(const Grid& grid, index_t rows, index_t cols, index_t nb) {
  check_agreement(grid.comm(), {{"rows", rows}, {"cols", cols}, {"block", nb}}, "DeviceDistMatrix");
  return DistLayout(grid, rows, cols, nb);
}

}  // namespace

template <class T>
DeviceDistMatrix<T>::DeviceDistMatrix(const Grid& grid, index_t rows, index_t cols, index_t nb)
    : DistLayout(agreed_layout(grid, rows, cols, nb)) {
  device_ = detail::device_state(grid).device;
  std::optional<Error> problem;
  const std::size_t bytes = std::size_t(local_rows() * ld()) * sizeof(T);
  if (bytes > 0 && cudaMalloc(reinterpret_cast<void**>(&data_), bytes) != cudaSuccess) {
    cudaGetLastError();  // a failed allocation must not fail the next launch
    data_ = nullptr;
    problem = Error(Errc::out_of_memory, "DeviceDistMatrix",
                    "rank " + std::to_string(grid.rank()) + ": cudaMalloc of " + std::to_string(bytes) +
                        " bytes on device " + std::to_string(device_) + " failed");
  }
  try {
    throw_if_any(grid.comm(), problem);
  } catch (...) {
    cudaFree(data_);
    throw;
  }
}

template <class T> DeviceDistMatrix<T>::~DeviceDistMatrix() { cudaFree(data_); }

template <class T>
DeviceDistMatrix<T>::DeviceDistMatrix(DeviceDistMatrix&& other) noexcept
    : DistLayout(other.layout()), data_(std::exchange(other.data_, nullptr)), device_(std::exchange(other.device_, -1)) {}

template <class T> DeviceDistMatrix<T>& DeviceDistMatrix<T>::operator=(DeviceDistMatrix&& other) noexcept {
  if (this != &other) {
    cudaFree(data_);
    static_cast<DistLayout&>(*this) = other.layout();
    data_ = std::exchange(other.data_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

namespace {

// This rank's part between host memory (dense or with DistMatrix's leading dimension, which is
// the same: max(1, local_cols)) and the device. Throws on failure; callers agree on it.
template <class T> void upload(DeviceDistMatrix<T>& to, const T* from, const char* what) {
  const std::size_t bytes = std::size_t(to.local_rows() * to.local_cols()) * sizeof(T);
  if (bytes > 0) detail::check_cuda(cudaMemcpy(to.local().data, from, bytes, cudaMemcpyHostToDevice), what);
}
template <class T> void download(T* to, const DeviceDistMatrix<T>& from, const char* what) {
  const std::size_t bytes = std::size_t(from.local_rows() * from.local_cols()) * sizeof(T);
  if (bytes > 0) detail::check_cuda(cudaMemcpy(to, from.local().data, bytes, cudaMemcpyDeviceToHost), what);
}

template <class T> std::optional<Error> device_check(const Grid& grid, const DeviceDistMatrix<T>& m) {
  const int current = detail::device_state(grid).device;
  if (m.device() == current) return std::nullopt;
  return Error(Errc::invalid_argument, "device",
               "matrix lives on device " + std::to_string(m.device()) + ", but rank " + std::to_string(grid.rank()) +
                   " of this grid runs on device " + std::to_string(current));
}

}  // namespace

template <class T> DeviceDistMatrix<T> to_device(const Grid& grid, const DistMatrix<T>& host) {
  detail::agree_on_layout<T>(grid, host, 0, "to_device", std::nullopt);
  DeviceDistMatrix<T> device(grid, host.rows(), host.cols(), host.block());
  std::optional<Error> problem;
  try {
    upload(device, host.local().data, "to_device");
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);
  return device;
}

template <class T> void to_host(const Grid& grid, const DeviceDistMatrix<T>& device, DistMatrix<T>& host) {
  std::optional<Error> problem = device_check(grid, device);
  if (!problem && (host.rows() != device.rows() || host.cols() != device.cols() || host.block() != device.block()))
    problem = Error(Errc::dimension_mismatch, "host",
                    "the host matrix is " + std::to_string(host.rows()) + "x" + std::to_string(host.cols()) +
                        " in blocks of " + std::to_string(host.block()) + " but the device one is " +
                        std::to_string(device.rows()) + "x" + std::to_string(device.cols()) + " in blocks of " +
                        std::to_string(device.block()));
  // The host part is written from the device's: both must have this rank's place in this grid.
  if (!problem && !host.fits(grid))
    problem = Error(Errc::invalid_argument, "host", "matrix was built for another process grid");
  detail::agree_on_layout<T>(grid, device, 0, "to_host", problem);
  try {
    download(host.local().data, device, "to_host");
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);
}

template <class T> DistMatrix<T> to_host(const Grid& grid, const DeviceDistMatrix<T>& device) {
  DistMatrix<T> host(grid, device.rows(), device.cols(), device.block());
  to_host(grid, device, host);
  return host;
}

template <class T> void scatter(const Grid& grid, MatrixView<const T> global, DeviceDistMatrix<T>& out, int root) {
  // MPI delivers this rank's part into page-locked memory, from which it goes to the device.
  std::optional<Error> problem = device_check(grid, out);
  std::optional<detail::PinnedBuffer> staging;
  try {
    if (!problem) staging.emplace(std::size_t(out.local_rows() * out.local_cols()) * sizeof(T), "scatter");
  } catch (const Error& e) {
    problem = e;
  }
  detail::scatter_parts<T>(grid, global, out, staging ? staging->as<T>() : nullptr, root, "scatter", problem);
  try {
    upload(out, staging->as<T>(), "scatter (to the device)");
  } catch (const Error& e) {
    problem = e;
  }
  throw_if_any(grid.comm(), problem);
}

template <class T> void gather(const Grid& grid, const DeviceDistMatrix<T>& in, MatrixView<T> global, int root) {
  std::optional<Error> problem = device_check(grid, in);
  std::optional<detail::PinnedBuffer> staging;
  try {
    if (!problem) {
      staging.emplace(std::size_t(in.local_rows() * in.local_cols()) * sizeof(T), "gather");
      download(staging->as<T>(), in, "gather (from the device)");
    }
  } catch (const Error& e) {
    problem = e;
  }
  detail::gather_parts<T>(grid, in, staging ? staging->as<const T>() : nullptr, global, root, "gather", problem);
}

#define RINGMM_DIST_DEVICE_MATRIX(T)                                                                \
  template class DeviceDistMatrix<T>;                                                             \
  template DeviceDistMatrix<T> to_device<T>(const Grid&, const DistMatrix<T>&);                   \
  template void to_host<T>(const Grid&, const DeviceDistMatrix<T>&, DistMatrix<T>&);              \
  template DistMatrix<T> to_host<T>(const Grid&, const DeviceDistMatrix<T>&);                     \
  template void scatter<T>(const Grid&, MatrixView<const T>, DeviceDistMatrix<T>&, int);          \
  template void gather<T>(const Grid&, const DeviceDistMatrix<T>&, MatrixView<T>, int);
RINGMM_DIST_DEVICE_MATRIX(float)
RINGMM_DIST_DEVICE_MATRIX(double)
RINGMM_DIST_DEVICE_MATRIX(std::int32_t)
RINGMM_DIST_DEVICE_MATRIX(i16x2)
RINGMM_DIST_DEVICE_MATRIX(std::uint8_t)

}  // namespace ringmm::dist
