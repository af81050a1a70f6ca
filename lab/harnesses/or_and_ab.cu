// A/B of or-and's tensor-core route (include/ringmm/cuda/or_and_mma.cuh) outside the library:
// the bits route at 4096³ and 4097³ (issue 13's pair), timed with events (median of 40 calls, each
// packing and multiplying as the engine's call does), in alternating rounds so that both sizes see
// the same clocks. A variant is a copy of the header under <folder>/ringmm/cuda/, found first;
// <build>/include is a configured CUDA build's folder, which holds the generated ringmm/config.hpp:
//   nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -O3 [-I<folder>] -Iinclude -I<build>/include -o h lab/harnesses/or_and_ab.cu
//   ./h <name>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "ringmm/cuda/or_and_mma.cuh"
#include "ringmm/gemm.hpp"

namespace ringmm::cuda_detail {
// The two library functions the header calls (src/cuda/device.cu), for this one device.
int multiprocessor_count() {
  static int count = [] {
    int c = 0;
    cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, 0);
    return c;
  }();
  return count;
}
cudaMemPool_t workspace_pool() {
  static cudaMemPool_t pool = [] {
    cudaMemPool_t p;
    cudaDeviceGetDefaultMemPool(&p, 0);
    std::uint64_t keep = ~0ull;
    cudaMemPoolSetAttribute(p, cudaMemPoolAttrReleaseThreshold, &keep);
    return p;
  }();
  return pool;
}
}  // namespace ringmm::cuda_detail

using namespace ringmm;

__global__ void fill(std::uint8_t* x, long n, unsigned seed) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < n; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    x[e] = (h & 63) == 0;  // sparse: about a third of C stays 0 at 4096
  }
}

struct Size {
  long n;
  std::uint8_t *a, *b, *c;
};

double time_us(const Size& s, cudaEvent_t e0, cudaEvent_t e1) {
  const index_t n = s.n;
  auto p = detail::make_problem<OrAnd>(Op::N, MatrixView<const std::uint8_t>{s.a, n, n, n, Layout::row_major}, Op::N,
                                       MatrixView<const std::uint8_t>{s.b, n, n, n, Layout::row_major},
                                       MatrixView<std::uint8_t>{s.c, n, n, n, Layout::row_major}, 1, 0);
  std::vector<float> t;
  for (int r = 0; r < 40; ++r) {
    cudaEventRecord(e0);
    cuda_detail::or_and_mma::multiply<cuda_detail::or_and_mma::Route::bits>(p, nullptr);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return 1000.0 * t[t.size() / 2];
}

int main(int argc, char** argv) {
  std::vector<Size> sizes;
  for (long n : {4096L, 4097L}) {
    Size s{n};
    cudaMalloc(&s.a, n * n), cudaMalloc(&s.b, n * n), cudaMalloc(&s.c, n * n);
    fill<<<1024, 256>>>(s.a, n * n, 1), fill<<<1024, 256>>>(s.b, n * n, 2);
    sizes.push_back(s);
  }
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0), cudaEventCreate(&e1);
  for (const Size& s : sizes) time_us(s, e0, e1);  // warm-up
  long ones = 0;
  {
    std::vector<std::uint8_t> c(4097 * 4097);
    cudaMemcpy(c.data(), sizes[1].c, c.size(), cudaMemcpyDeviceToHost);
    for (auto v : c) ones += v;
  }
  for (int round = 0; round < 3; ++round) {
    const double t0 = time_us(sizes[0], e0, e1), t1 = time_us(sizes[1], e0, e1);
    std::printf("%s round %d: 4096^3 %.1f us, 4097^3 %.1f us, ratio %.3f (ones in C at 4097: %ld) %s\n",
                argc > 1 ? argv[1] : "?", round, t0, t1, t1 / t0, ones, cudaGetErrorString(cudaGetLastError()));
  }
}
