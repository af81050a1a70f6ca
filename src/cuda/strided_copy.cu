// Copies between strided tensors in device memory, and device memory for them from the engine's
// workspace: ringmm::contract's copies of device tensors whose strides do not express the grouped
// layout (src/core/contract.cpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ringmm/cuda/check.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/error.hpp"

namespace ringmm::cuda_detail {

namespace {

// A tensor copy's axes (at most max_dims), passed by value to the kernel.
constexpr int max_dims = 32;
struct CopyAxes {
  int rank = 0;
  index_t size[max_dims];
  index_t from[max_dims];  // strides of the source, in elements
  index_t to[max_dims];    // strides of the destination
};

// One thread an element: its index, last axis fastest, gives both offsets.
template <class E> __global__ void strided_copy_kernel(const E* from, E* to, CopyAxes axes, index_t total) {
  for (index_t i = index_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += index_t(gridDim.x) * blockDim.x) {
    index_t rest = i, source = 0, target = 0;
    for (int d = axes.rank - 1; d >= 0; --d) {
      const index_t x = rest % axes.size[d];
      rest /= axes.size[d];
      source += x * axes.from[d];
      target += x * axes.to[d];
    }
    to[target] = from[source];
  }
}

template <class E> void launch(const void* from, void* to, const CopyAxes& axes, index_t total, cudaStream_t stream) {
  constexpr int threads = 256;
  const index_t blocks = std::min<index_t>((total + threads - 1) / threads, index_t(8) * multiprocessor_count() * 8);
  strided_copy_kernel<E><<<unsigned(blocks), threads, 0, stream>>>(static_cast<const E*>(from), static_cast<E*>(to), axes, total);
  check_launch("strided_copy_kernel");
}

}  // namespace

void strided_copy(const void* from, const std::vector<index_t>& from_strides, void* to,
                  const std::vector<index_t>& to_strides, const std::vector<index_t>& shape, std::size_t element,
                  void* stream) {
  if (shape.size() > std::size_t(max_dims))
    throw Error(Errc::unsupported, "tensor",
                "has " + std::to_string(shape.size()) + " axes; a copy in device memory takes at most " +
                    std::to_string(max_dims));
  CopyAxes axes;
  axes.rank = int(shape.size());
  index_t total = 1;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    axes.size[d] = shape[d];
    axes.from[d] = from_strides[d];
    axes.to[d] = to_strides[d];
    total *= shape[d];
  }
  if (total == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  switch (element) {
    case 1: return launch<std::uint8_t>(from, to, axes, total, s);
    case 2: return launch<std::uint16_t>(from, to, axes, total, s);
    case 4: return launch<std::uint32_t>(from, to, axes, total, s);
    case 8: return launch<std::uint64_t>(from, to, axes, total, s);
    default: throw Error(Errc::unsupported, "tensor", "elements of " + std::to_string(element) + " bytes cannot be copied");
  }
}

std::shared_ptr<void> workspace_block(std::size_t bytes, void* stream) {
  auto* buffer = new DeviceBuffer<std::byte>(bytes, static_cast<cudaStream_t>(stream));
  return std::shared_ptr<void>(buffer->get(), [buffer](void*) { delete buffer; });
}

}  // namespace ringmm::cuda_detail
