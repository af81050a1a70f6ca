// A/B of variants of src/cuda/viterbi_step.cuh: the fused Viterbi step's vector form at B = 4096,
// S = 512 (issue 10's shape), 300 steps timed with events (best of 3), and a checksum of one step's
// backpointers and scores so that variants can be checked against each other. Each variant is a
// copy of the header in its own folder, compiled here and run on the GPU machine:
//   nvcc -std=c++20 -arch=sm_90a -O3 -I<variant folder> -Iinclude -o h_<name> scripts/gpu/viterbi_step_ab.cu
//   ./h_<name> <name>
// (-Isrc/cuda for the tree's own.) docs/performance-log.md has the variants measured.
#include <cstdio>
#include <vector>
#include <utility>
#include <cstdint>
#include "viterbi_step.cuh"
using namespace ringmm::detail;
__global__ void fill(float* x, long n, unsigned seed) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < n; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[e] = -4.0f * float(h & 0xffffff) / float(0x1000000);
  }
}
int main(int argc, char** argv) {
  const long B = 4096, S = 512; const int steps = 300;
  float *delta, *next, *trans, *trans_t, *emit; int* bp;
  cudaMalloc(&delta, B * S * 4); cudaMalloc(&next, B * S * 4); cudaMalloc(&trans, S * S * 4); cudaMalloc(&trans_t, S * S * 4);
  cudaMalloc(&emit, B * S * 4); cudaMalloc(&bp, B * S * 4);
  fill<<<1024, 256>>>(delta, B * S, 1); fill<<<1024, 256>>>(trans, S * S, 2); fill<<<1024, 256>>>(emit, B * S, 3);
  viterbi::transpose<float><<<1024, 256>>>(trans, S, trans_t);
  dim3 grid(S / viterbi::tile_n, B / viterbi::tile_m);  // each variant names its block tile
  auto step = [&] { viterbi::step_kernel<float, true><<<grid, viterbi::threads>>>(delta, trans, trans_t, emit, B, S, next, bp); std::swap(delta, next); };
  // checksum of one step from the fixed start
  step();
  cudaDeviceSynchronize();
  std::vector<int> h(B * S); std::vector<float> f(B * S);
  cudaMemcpy(h.data(), bp, B * S * 4, cudaMemcpyDeviceToHost); cudaMemcpy(f.data(), delta, B * S * 4, cudaMemcpyDeviceToHost);
  long long sb = 0; double sf = 0; for (long e = 0; e < B * S; ++e) sb += h[e] * (e % 7 + 1), sf += f[e];
  for (int w = 0; w < 20; ++w) step();
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 3; ++rep) {
    cudaEventRecord(a); for (int t = 0; t < steps; ++t) step(); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
  }
  const double us = 1000.0 * best / steps;
  printf("%s: %.2f us/step  %.3f e12 upd/s  checksum bp %lld delta %.6f  err %s\n", argc > 1 ? argv[1] : "?", us,
         double(B) * S * S / us / 1e6, sb, sf, cudaGetErrorString(cudaGetLastError()));
}
