// Arrays that only expose __cuda_array_interface__ (numba's device arrays, or any object that
// describes device memory that way). python/ringmm/_cuda_array.py describes them as CudaArray
// views; this file gives those views DLPack, so that every binding reads them as it reads torch or
// cupy arrays, and provides what no framework is there to do: allocate device memory for results,
// copy between strided views, and order one stream after another.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "bindings.hpp"
#if RINGMM_PY_HAVE_CUDA
#include "device_kernels.hpp"
#endif

namespace ringmm_py {
namespace {

// The DLPack dtype of numpy's dtype name.
nb::dlpack::dtype dtype_from_name(const std::string& name) {
  using code = nb::dlpack::dtype_code;
  static const nb::dlpack::dtype candidates[] = {
      nb::dtype<bool>(),          nb::dtype<std::int8_t>(),   nb::dtype<std::int16_t>(),  nb::dtype<std::int32_t>(),
      nb::dtype<std::int64_t>(),  nb::dtype<std::uint8_t>(),  nb::dtype<std::uint16_t>(), nb::dtype<std::uint32_t>(),
      nb::dtype<std::uint64_t>(), {std::uint8_t(code::Float), 16, 1}, nb::dtype<float>(), nb::dtype<double>(),
      {std::uint8_t(code::Complex), 64, 1}, {std::uint8_t(code::Complex), 128, 1}};
  for (const nb::dlpack::dtype& d : candidates)
    if (dtype_name(d) == name) return d;
  type_error("dtype " + name + " has no DLPack type");
}

// A DLPack view of CUDA memory at `data` (strides in elements) that keeps `owner` alive.
nb::object dlpack_view(std::uintptr_t data, const std::vector<std::size_t>& shape, const std::vector<std::int64_t>& strides,
                       const std::string& dtype, int device, bool readonly, nb::handle owner) {
  if (strides.size() != shape.size()) value_error("shape and strides differ in length");
  const nb::dlpack::dtype d = dtype_from_name(dtype);
  auto* p = reinterpret_cast<void*>(data);
  constexpr int cuda = nb::device::cuda::value;
  if (readonly) return nb::cast(nb::ndarray<nb::ro>(p, shape.size(), shape.data(), owner, strides.data(), d, cuda, device));
  return nb::cast(nb::ndarray<>(p, shape.size(), shape.data(), owner, strides.data(), d, cuda, device));
}

#if RINGMM_PY_HAVE_CUDA
// Device memory that lives as long as this object: the storage of the arrays ringmm returns for
// __cuda_array_interface__ inputs. cudaFree waits for the work queued on it.
class DeviceMemory {
 public:
  DeviceMemory(std::size_t bytes, int device) : bytes_(bytes), device_(device) {
    if (bytes == 0) return;
    const DeviceGuard guard(Place{true, device});
    const cudaError_t status = cudaMalloc(&data_, bytes);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw Error(Errc::out_of_memory, "device", "cannot allocate " + std::to_string(bytes) + " bytes on cuda:" +
                                                     std::to_string(device));
    }
    cuda_check(status, "cudaMalloc");
  }
  ~DeviceMemory() {
    if (!data_) return;
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(device_);
    cudaFree(data_);
    cudaSetDevice(previous);
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  std::uintptr_t data() const { return reinterpret_cast<std::uintptr_t>(data_); }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
  int device_;
};

// The GPU that owns the memory at `data`; host memory is refused, naming the argument.
int pointer_device(std::uintptr_t data, const std::string& name) {
  cudaPointerAttributes attributes{};
  const cudaError_t status = cudaPointerGetAttributes(&attributes, reinterpret_cast<const void*>(data));
  if (status != cudaSuccess) {
    cudaGetLastError();
    value_error(name + "'s __cuda_array_interface__ points to memory that CUDA cannot identify (" +
                cudaGetErrorString(status) + ")");
  }
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged)
    value_error(name + "'s __cuda_array_interface__ points to memory that is not CUDA device memory");
  return attributes.device;
}

// dst[...] = src[...] between two strided views of one shape on one GPU.
void device_copy(nb::ndarray<> dst_array, nb::ndarray<nb::ro> src_array, std::uintptr_t stream) {
  const ArrayInfo dst("dst", dst_array), src("src", src_array);
  check_same_dtype(src, dst);
  check_same_place(src, dst);
  if (!dst.place.gpu) value_error("device_copy copies device memory");
  if (src.shape != dst.shape)
    value_error("cannot copy an array of shape " + shape_text(src.shape) + " into one of shape " + shape_text(dst.shape));
  if (dst.shape.size() > std::size_t(device::max_dims))
    value_error("arrays of more than " + std::to_string(device::max_dims) +
                " dimensions cannot be copied on the device without cupy or torch");
  device::StridedCopy layout;
  layout.ndim = int(dst.shape.size());
  for (int d = 0; d < layout.ndim; ++d) {
    layout.shape[d] = dst.shape[std::size_t(d)];
    layout.dst_stride[d] = dst.strides[std::size_t(d)];
    layout.src_stride[d] = src.strides[std::size_t(d)];
  }
  const DeviceGuard guard(dst.place);
  const nb::gil_scoped_release release;
  cuda_check(device::strided_copy(dst.data, src.data, dst.dtype.bits / 8 * dst.dtype.lanes, layout,
                                  reinterpret_cast<cudaStream_t>(stream)),
             "copying device memory");
}

// Work queued on `waiting` from now on starts after the work queued so far on `producer`.
void stream_wait(std::uintptr_t waiting, std::uintptr_t producer, int device) {
  if (waiting == producer) return;
  const DeviceGuard guard(Place{true, device});
  cudaEvent_t event;
  cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  cudaError_t status = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
  if (status == cudaSuccess) status = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(waiting), event, 0);
  cudaEventDestroy(event);  // released once the wait completes
  cuda_check(status, "ordering one stream after another");
}
#endif

}  // namespace

void bind_cuda_arrays(nb::module_& m) {
  m.attr("has_cuda") = bool(RINGMM_PY_HAVE_CUDA);
  m.def("dlpack_view", &dlpack_view, nb::arg("data"), nb::arg("shape"), nb::arg("strides"), nb::arg("dtype"),
        nb::arg("device"), nb::arg("readonly"), nb::arg("owner"));
#if RINGMM_PY_HAVE_CUDA
  nb::class_<DeviceMemory>(m, "DeviceMemory", "cudaMalloc'd memory, freed with the object")
      .def(nb::init<std::size_t, int>(), nb::arg("bytes"), nb::arg("device"))
      .def_prop_ro("data", &DeviceMemory::data)
      .def_prop_ro("bytes", &DeviceMemory::bytes)
      .def_prop_ro("device", &DeviceMemory::device);
  m.def("pointer_device", &pointer_device, nb::arg("data"), nb::arg("name"));
  m.def("device_copy", &device_copy, nb::arg("dst"), nb::arg("src"), nb::arg("stream"));
  m.def("stream_wait", &stream_wait, nb::arg("waiting"), nb::arg("producer"), nb::arg("device"));
#endif
}

}  // namespace ringmm_py
