// The two published Aᵀ·A kernels of docs/seeds.md (f64 plus-times), measurement only: C = Aᵀ·A with
// A stored k×n row-major, C n×n row-major.
//   naive      one thread per entry of C, both operands straight from global memory;
//   optimised  48×48 tiles of C, 16×16 threads holding 3×3 entries each, k-tiles of 16 staged in
//              shared memory with the next one prefetched into registers, only the tiles on or
//              below the diagonal computed and mirrored into the upper triangle.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "lab_kernels.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/gpu_timer.cuh"
#include "ringmm/cuda/check.hpp"

namespace ringmm::lab {

using namespace ringmm::measure;

namespace {

__global__ void seed003_naive_kernel(const double* a, index_t n, index_t k, double* c) {
  const index_t j = index_t(blockIdx.x) * blockDim.x + threadIdx.x, i = index_t(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= n || j >= n) return;
  double sum = 0;
  for (index_t kk = 0; kk < k; ++kk) sum += a[kk * n + i] * a[kk * n + j];
  c[i * n + j] = sum;
}

constexpr int kTile = 48, kThreads = 16, kPer = 3, kDepth = 16;
constexpr int kLoads = 2 * kDepth * kTile / (kThreads * kThreads);  // per thread per k-tile: 6

__global__ void __launch_bounds__(kThreads * kThreads) seed003_optimised_kernel(const double* a, index_t n, index_t k,
                                                                                double* c) {
  const int bi = int(blockIdx.y), bj = int(blockIdx.x);
  if (bj > bi) return;  // the upper triangle is mirrored
  __shared__ double rows_s[kDepth][kTile], cols_s[kDepth][kTile];  // A[k][i0 + x], A[k][j0 + x]
  const index_t i0 = index_t(bi) * kTile, j0 = index_t(bj) * kTile;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y), tid = ty * kThreads + tx;
  double prefetch[kLoads];
  auto fetch = [&](index_t k0) {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int e = tid + l * kThreads * kThreads, half = e / (kDepth * kTile), w = e % (kDepth * kTile);
      const int kk = w / kTile, x = w % kTile;
      const index_t col = (half == 0 ? i0 : j0) + x, kg = k0 + kk;
      prefetch[l] = (col < n && kg < k) ? a[kg * n + col] : 0.0;
    }
  };
  auto deposit = [&] {
#pragma unroll
    for (int l = 0; l < kLoads; ++l) {
      const int e = tid + l * kThreads * kThreads, half = e / (kDepth * kTile), w = e % (kDepth * kTile);
      (half == 0 ? rows_s : cols_s)[w / kTile][w % kTile] = prefetch[l];
    }
  };
  double acc[kPer][kPer] = {};
  fetch(0);
  for (index_t k0 = 0; k0 < k; k0 += kDepth) {
    deposit();
    __syncthreads();
    if (k0 + kDepth < k) fetch(k0 + kDepth);  // the next tile's loads overlap this tile's work
#pragma unroll
    for (int kk = 0; kk < kDepth; ++kk) {
      double x[kPer], y[kPer];
#pragma unroll
      for (int r = 0; r < kPer; ++r) x[r] = rows_s[kk][ty + r * kThreads], y[r] = cols_s[kk][tx + r * kThreads];
#pragma unroll
      for (int r = 0; r < kPer; ++r)
#pragma unroll
        for (int q = 0; q < kPer; ++q) acc[r][q] += x[r] * y[q];
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < kPer; ++r)
#pragma unroll
    for (int q = 0; q < kPer; ++q) {
      const index_t i = i0 + ty + r * kThreads, j = j0 + tx + q * kThreads;
      if (i < n && j < n && j <= i) c[i * n + j] = c[j * n + i] = acc[r][q];
    }
}

void launch(const std::string& kernel, const double* a, index_t n, index_t k, double* c) {
  if (kernel == "seed003-naive") {
    const dim3 block(32, 8);
    seed003_naive_kernel<<<dim3(unsigned((n + 31) / 32), unsigned((n + 7) / 8)), block>>>(a, n, k, c);
  } else if (kernel == "seed003-optimised") {
    const unsigned tiles = unsigned((n + kTile - 1) / kTile);
    seed003_optimised_kernel<<<dim3(tiles, tiles), dim3(kThreads, kThreads)>>>(a, n, k, c);
  } else {
    throw Error(Errc::invalid_argument, "kernel",
                "unknown published Aᵀ·A kernel '" + kernel + "' (known: seed003-naive, seed003-optimised)");
  }
  cuda_check(cudaGetLastError(), "Aᵀ·A study kernel launch");
}

void check_shape(index_t n, index_t k) {
  require_device();
  if (n <= 0 || k <= 0 || (n + 7) / 8 > 65535) throw Error(Errc::invalid_argument, "n", "Aᵀ·A shapes must be positive");
}

}  // namespace

std::vector<std::string> seed003_kernels() { return {"seed003-naive", "seed003-optimised"}; }

void seed003_syrk(const std::string& kernel, const double* a, index_t n, index_t k, double* c) {
  check_shape(n, k);
  const DeviceBuffer<double> da(std::size_t(n * k), nullptr), dc(std::size_t(n * n), nullptr);
  cuda_check(cudaMemcpy(da.get(), a, std::size_t(n * k) * sizeof(double), cudaMemcpyHostToDevice), "upload A");
  launch(kernel, da.get(), n, k, dc.get());
  cuda_check(cudaDeviceSynchronize(), "Aᵀ·A study kernel");
  cuda_check(cudaMemcpy(c, dc.get(), std::size_t(n * n) * sizeof(double), cudaMemcpyDeviceToHost), "download C");
}

Timing time_seed003(const std::string& kernel, index_t n, index_t k, int reps) {
  check_shape(n, k);
  std::vector<double> host(std::size_t(n * k));
  for (std::size_t e = 0; e < host.size(); ++e) host[e] = double(e % 7) - 3;
  const DeviceBuffer<double> da(host.size(), nullptr), dc(std::size_t(n * n), nullptr);
  cuda_check(cudaMemcpy(da.get(), host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice), "upload A");
  Timing t;
  t.kernel_seconds = median_seconds(reps, EventClock(nullptr), [&](int) { launch(kernel, da.get(), n, k, dc.get()); });
  return t;
}

}  // namespace ringmm::lab
