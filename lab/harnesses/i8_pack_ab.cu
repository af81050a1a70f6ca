// A/B of the i8 lanes' packing and unpacking passes (src/cuda/narrow.cu: i8_to_lanes, lanes_to_i32,
// linked from a built libringmm) against a flat-index variant with 4-byte loads, for batches of short
// rows (4096 × 64², where the library's passes took most of a 925 µs call: performance log,
// "int8 batches in lane pairs") and for one large matrix. Each variant's output is checked equal to
// the library's before it is timed; times are the median of 20 launches, event-timed.
//   nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -O3 -Iinclude -I<build>/include \
//        -o /tmp/i8_pack_ab lab/harnesses/i8_pack_ab.cu <build>/src/libringmm.a -Xcompiler -fopenmp -lgomp -ldl
//   /tmp/i8_pack_ab
// The variant reads rows of whole 4-byte groups (cols % 4 == 0, rows 4-byte aligned) along their
// rows (rs = cols' pitch, cs = 1), writes max-plus's lanes, and unpacks with α = 1̄ and β = 0̄: the
// layouts and scalars of the batches that ringmm.matmul routes by size.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ringmm/detail/cuda_backend.hpp"
#include "ringmm/semiring.hpp"

using namespace ringmm;

namespace {

constexpr std::int8_t sentinel = -128;  // max-plus's i8 0̄

__device__ std::uint32_t word(std::int16_t lo, std::int16_t hi) {
  return std::uint32_t(std::uint16_t(lo)) | std::uint32_t(std::uint16_t(hi)) << 16;
}

// One thread a 4-byte group of a row: four lanes, as four words (A: both lanes the element) or two
// (B: columns 2q and 2q + 1 in one word), stored with one vector store.
__global__ void pack_flat(const std::int8_t* from, index_t rows, index_t cols, index_t rs, index_t batch, index_t stride,
                          bool pairs, std::uint32_t* to) {
  const std::int16_t zero = MaxPlus<i16x2>::zero().lo;
  const index_t groups = cols / 4, total = batch * rows * groups;
  for (index_t g = index_t(blockIdx.x) * blockDim.x + threadIdx.x; g < total; g += index_t(gridDim.x) * blockDim.x) {
    const index_t row = g / groups, q = g % groups, member = row / rows, r = row % rows;
    const std::uint32_t bits = *reinterpret_cast<const std::uint32_t*>(from + member * stride + r * rs + 4 * q);
    std::int16_t v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const auto x = std::int8_t(bits >> (8 * i));
      v[i] = x == sentinel ? zero : std::int16_t(x);
    }
    if (pairs)
      *reinterpret_cast<uint2*>(to + row * (cols / 2) + 2 * q) = uint2{word(v[0], v[1]), word(v[2], v[3])};
    else
      *reinterpret_cast<uint4*>(to + row * cols + 4 * q) =
          uint4{word(v[0], v[0]), word(v[1], v[1]), word(v[2], v[2]), word(v[3], v[3])};
  }
}

// One thread two words of the product: four i32 outputs, stored with one vector store (n % 4 == 0).
__global__ void unpack_flat(const std::uint32_t* product, index_t m, index_t n, index_t batch, std::int32_t* c) {
  const std::int16_t zero = MaxPlus<i16x2>::zero().lo;
  const index_t groups = n / 4, total = batch * m * groups;
  for (index_t g = index_t(blockIdx.x) * blockDim.x + threadIdx.x; g < total; g += index_t(gridDim.x) * blockDim.x) {
    const uint2 w = *reinterpret_cast<const uint2*>(product + 2 * g);
    const std::int16_t v[4] = {std::int16_t(w.x), std::int16_t(w.x >> 16), std::int16_t(w.y), std::int16_t(w.y >> 16)};
    int4 out;
    int* o = &out.x;
#pragma unroll
    for (int i = 0; i < 4; ++i) o[i] = v[i] == zero ? MaxPlus<std::int32_t>::zero() : std::int32_t(v[i]);
    *reinterpret_cast<int4*>(c + 4 * g) = out;
  }
}

template <class F> double median_us(F&& launch) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  launch();
  for (int rep = 0; rep < 20; ++rep) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::nth_element(times.begin(), times.begin() + 10, times.end());
  return times[10] * 1e3;
}

template <class T> std::vector<T> to_host(const T* device, std::size_t count) {
  std::vector<T> host(count);
  cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

}  // namespace

int main() {
  struct Shape {
    index_t batch, n;  // batch members of n × n
  };
  const int threads = 256;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::printf("%-14s %-8s %12s %12s %8s %s\n", "shape", "pass", "library us", "flat us", "ratio", "same");
  for (const Shape s : {Shape{4096, 64}, Shape{1024, 128}, Shape{256, 256}, Shape{1, 8192}}) {
    const index_t n = s.n, count = s.batch * n * n;
    std::vector<std::int8_t> host(static_cast<std::size_t>(count));
    std::uint64_t state = 12345;
    for (auto& x : host) x = std::int8_t((state = state * 6364136223846793005ull + 1442695040888963407ull) >> 56);
    std::int8_t* from = nullptr;
    std::uint32_t *words_lib = nullptr, *words_flat = nullptr;
    std::int32_t *c_lib = nullptr, *c_flat = nullptr;
    cudaMalloc(&from, count);
    cudaMalloc(&words_lib, count * 4);
    cudaMalloc(&words_flat, count * 4);
    cudaMalloc(&c_lib, count * 4);
    cudaMalloc(&c_flat, count * 4);
    cudaMemcpy(from, host.data(), count, cudaMemcpyHostToDevice);
    const unsigned grid = unsigned(std::min<index_t>((count / 4 + threads - 1) / threads, index_t(sms) * 32));
    char name[32];
    std::snprintf(name, sizeof name, "%lld x %lld^2", static_cast<long long>(s.batch), static_cast<long long>(n));
    for (const bool pairs : {false, true}) {
      const index_t words = pairs ? count / 2 : count;
      const double lib = median_us([&] {
        cuda_detail::i8_to_lanes(true, from, n, n, n, 1, s.batch, n * n, pairs, sentinel, words_lib, nullptr);
      });
      const double flat = median_us([&] { pack_flat<<<grid, threads>>>(from, n, n, n, s.batch, n * n, pairs, words_flat); });
      const bool same = to_host(words_lib, std::size_t(words)) == to_host(words_flat, std::size_t(words));
      std::printf("%-14s %-8s %12.1f %12.1f %8.2f %s\n", name, pairs ? "pack B" : "pack A", lib, flat, lib / flat,
                  same ? "yes" : "NO");
    }
    // Unpack the B-packed words as an m × n product of n/2 words a row.
    const double lib = median_us([&] {
      cuda_detail::lanes_to_i32(true, words_lib, n, n, s.batch, c_lib, n, 1, n * n, MaxPlus<std::int32_t>::one(),
                                MaxPlus<std::int32_t>::zero(), nullptr);
    });
    const double flat = median_us([&] { unpack_flat<<<grid, threads>>>(words_lib, n, n, s.batch, c_flat); });
    const bool same = to_host(c_lib, std::size_t(count)) == to_host(c_flat, std::size_t(count));
    std::printf("%-14s %-8s %12.1f %12.1f %8.2f %s\n", name, "unpack", lib, flat, lib / flat, same ? "yes" : "NO");
    cudaFree(from);
    cudaFree(words_lib);
    cudaFree(words_flat);
    cudaFree(c_lib);
    cudaFree(c_flat);
  }
  const cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) {
    std::printf("CUDA error: %s\n", cudaGetErrorString(status));
    return 1;
  }
  return 0;
}
