// A/B of variants of src/cuda/viterbi_logprob.cuh, the Viterbi step for log-probability models, at
// B = 4096, S = 512 (issue 10's shape): 300 steps launched as hmm.cu launches them (programmatic
// dependent launch), timed with events (best of 3), and a checksum of one step's backpointers and
// scores. The data and the checksum are viterbi_step_ab.cu's, so the two harnesses' checksums must
// agree. Each variant is a copy of the header in its own folder, compiled here and run on the GPU:
//   nvcc -std=c++20 -arch=sm_90a -O3 -I<variant folder> -Iinclude -o l_<name> scripts/gpu/viterbi_logprob_ab.cu
//   ./l_<name> <name> [N: run the first step N times, checking that the checksums agree]
// (-Isrc/cuda for the tree's own.) docs/performance-log.md has the variants measured.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "viterbi_logprob.cuh"
using namespace ringmm::detail;
__global__ void fill(float* x, long n, unsigned seed) {  // uniform in [−4, 0]: log-probabilities
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < n; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[e] = -4.0f * float(h & 0xffffff) / float(0x1000000);
  }
}
__global__ void transpose(const float* x, long states, float* y) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < states * states; e += long(gridDim.x) * blockDim.x)
    y[(e % states) * states + e / states] = x[e];
}
int main(int argc, char** argv) {
  const long B = 4096, S = 512; const int steps = 300;
  const long pitch = viterbi_logprob::transposed_pitch(B);
  float *delta, *next, *delta_t, *next_t, *trans, *trans_t, *emit; int* bp;
  cudaMalloc(&delta, B * S * 4); cudaMalloc(&next, B * S * 4); cudaMalloc(&delta_t, pitch * S * 4); cudaMalloc(&next_t, pitch * S * 4);
  cudaMalloc(&trans, S * S * 4); cudaMalloc(&trans_t, S * S * 4); cudaMalloc(&emit, B * S * 4); cudaMalloc(&bp, B * S * 4);
  fill<<<1024, 256>>>(delta, B * S, 1); fill<<<1024, 256>>>(trans, S * S, 2); fill<<<1024, 256>>>(emit, B * S, 3);
  transpose<<<1024, 256>>>(trans, S, trans_t);
  viterbi_logprob::transpose_delta<<<1024, 256>>>(delta, B, S, pitch, delta_t);
  cudaLaunchAttribute overlap{};
  overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  overlap.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(S / viterbi_logprob::tile_n, B / viterbi_logprob::tile_m);
  config.blockDim = dim3(viterbi_logprob::threads);
  config.attrs = &overlap;
  config.numAttrs = 1;
  auto step = [&] {
    cudaLaunchKernelEx(&config, viterbi_logprob::step_kernel<32>, (const float*)delta, (const float*)delta_t, ringmm::index_t(pitch),
                       (const float*)trans, (const float*)trans_t, (const float*)emit, ringmm::index_t(B), ringmm::index_t(S), next, next_t, bp);
    std::swap(delta, next); std::swap(delta_t, next_t);
  };
  // Checksum of one step from the fixed start; with a second argument N, the step is run N times
  // from the same start and every run must give the same checksums (a race inside the step would
  // show as a difference; the chain of steps under programmatic dependent launch is checked by
  // tests/cuda/hmm_test.cpp's multi-step cases against the CPU).
  std::vector<int> h(B * S); std::vector<float> f(B * S);
  long long sb = 0; double sf = 0;
  const int runs = argc > 2 ? atoi(argv[2]) : 1;
  int differing = 0;
  for (int r = 0; r < runs; ++r) {
    fill<<<1024, 256>>>(delta, B * S, 1);
    viterbi_logprob::transpose_delta<<<1024, 256>>>(delta, B, S, pitch, delta_t);
    step();
    cudaDeviceSynchronize();
    cudaMemcpy(h.data(), bp, B * S * 4, cudaMemcpyDeviceToHost); cudaMemcpy(f.data(), delta, B * S * 4, cudaMemcpyDeviceToHost);
    long long b1 = 0; double f1 = 0; for (long e = 0; e < B * S; ++e) b1 += h[e] * (e % 7 + 1), f1 += f[e];
    if (r == 0) sb = b1, sf = f1;
    else differing += b1 != sb || f1 != sf;
  }
  if (runs > 1) printf("%d runs of the first step, %d with other checksums\n", runs, differing);
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
