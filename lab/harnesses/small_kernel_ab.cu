// A/B of the small kernel's tile variants (include/ringmm/cuda/small_kernel.cuh: SmallTile<T, BK,
// MinBlocks>) on the mid sizes and batches where the engine runs it, f32 max-plus. Each variant's C
// is compared bit for bit with the first variant's (a build the engine runs, which the GPU tests
// check against the CPU reference); then each is timed as the median of event-timed single
// launches (back to back: the kernel's own time, no host work of a gemm call). Built and run on the
// GPU machine:
//   nvcc -std=c++20 -O3 -arch=sm_90a --expt-relaxed-constexpr -Iinclude -o /tmp/small_ab \
//     lab/harnesses/small_kernel_ab.cu && /tmp/small_ab
// (lab/device/calls_run.sh smallab). docs/performance-log.md has the variants measured.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "harness_common.cuh"
#include "ringmm/cuda/small_kernel.cuh"

namespace {

using namespace ringmm;
using namespace ringmm::cuda_detail;
using S = MaxPlus<float>;

// Values in [-8, 8) in steps of 1/256.
void fill(float* p, long count, unsigned seed, cudaStream_t stream) {
  fill_steps<<<1024, 256, 0, stream>>>(p, count, seed, 1.0f / 256, -8.0f);
}

struct Shape {
  const char* name;
  index_t m, n, k, batch;
};

struct Variant {
  const char* name;
  void (*launch)(SmallArgs<S>, cudaStream_t);
};

template <class Tile> Variant variant(const char* name) { return {name, &launch_small_tile<S, Tile>}; }

}  // namespace

int main() {
  const Shape shapes[] = {{"1000^3", 1000, 1000, 1000, 1},     {"512^3", 512, 512, 512, 1},
                          {"2048x128x128", 2048, 128, 128, 1}, {"1024^3", 1024, 1024, 1024, 1},
                          {"4096 x 64^3", 64, 64, 64, 4096},   {"999x1001x997", 999, 1001, 997, 1},
                          {"4096 x 32^3", 32, 32, 32, 4096},   {"100000 x 16^3", 16, 16, 16, 100000}};
  // The engine takes the first where the blocks exceed two per SM and the third where they fit
  // (heuristics.hpp: small_min_blocks); the last two on the batches of their edge (small_tile).
  const Variant variants[] = {variant<SmallTile<64>>("T64 BK16 4/SM"), variant<SmallTile<64, 32>>("T64 BK32 4/SM"),
                              variant<SmallTile<64, 16, 2>>("T64 BK16 2/SM"), variant<SmallTile<64, 32, 2>>("T64 BK32 2/SM"),
                              variant<SmallTile<32>>("T32 BK16 3/SM"), variant<SmallTile<16>>("T16 BK8 3/SM")};
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  int failures = 0;
  printf("%-14s %-20s %10s %8s  %s\n", "shape", "variant", "us", "Tupd/s", "C vs default");
  for (const Shape& sh : shapes) {
    const long a_count = long(sh.m * sh.k * sh.batch), b_count = long(sh.k * sh.n * sh.batch),
               c_count = long(sh.m * sh.n * sh.batch);
    float *a, *b, *c;
    cudaMalloc(&a, a_count * 4);
    cudaMalloc(&b, b_count * 4);
    cudaMalloc(&c, c_count * 4);
    fill(a, a_count, 1, stream);
    fill(b, b_count, 2, stream);
    detail::Problem<S> p{};
    p.a = {a, sh.m, sh.k, sh.k, 1};
    p.b = {b, sh.k, sh.n, sh.n, 1};
    p.c = {c, sh.m, sh.n, sh.n, 1};
    p.alpha = S::one(), p.beta = S::zero();
    p.batch = sh.batch, p.stride_a = sh.m * sh.k, p.stride_b = sh.k * sh.n, p.stride_c = sh.m * sh.n;
    const SmallArgs<S> args = small_args(p);
    std::vector<float> reference(c_count), result(c_count);
    bool first = true;
    for (const Variant& v : variants) {
      cudaMemsetAsync(c, 0xff, c_count * 4, stream);  // NaN: every entry must be written
      v.launch(args, stream);
      cudaMemcpyAsync(result.data(), c, c_count * 4, cudaMemcpyDeviceToHost, stream);
      cudaStreamSynchronize(stream);
      const char* check = "same bits";
      if (first) {
        reference = result;
        check = "(reference)";
      } else if (std::memcmp(reference.data(), result.data(), c_count * 4) != 0) {
        check = "DIFFERS";
        ++failures;
      }
      first = false;
      const double us = 1000.0 * median_ms([&] { v.launch(args, stream); }, stream, 50, 10);
      const double updates = double(sh.m) * double(sh.n) * double(sh.k) * double(sh.batch);
      printf("%-14s %-20s %10.2f %8.2f  %s\n", sh.name, v.name, us, updates / us / 1e6, check);
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  const cudaError_t err = cudaDeviceSynchronize();
  printf("%s; %d variant(s) differ from the default\n", cudaGetErrorString(err), failures);
  return err == cudaSuccess && failures == 0 ? 0 : 1;
}
