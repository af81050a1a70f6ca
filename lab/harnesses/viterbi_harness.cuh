// What the two Viterbi step harnesses (viterbi_step_ab.cu, viterbi_logprob_ab.cu) share, so that
// their data, checksums and timings are the same measure: B = 4096, S = 512 (issue 10's shape),
// log-probabilities uniform in [−4, 0], a checksum of one step's backpointers and scores, and 300
// steps timed with events (best of 3) after 20 of warm-up.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace viterbi_harness {

inline constexpr long batch = 4096, states = 512;
inline constexpr int timed_steps = 300;

__global__ void fill(float* x, long n, unsigned seed) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < n; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    x[e] = -4.0f * float(h & 0xffffff) / float(0x1000000);
  }
}

struct Checksum {
  long long bp = 0;
  double delta = 0;
  bool operator!=(const Checksum& o) const { return bp != o.bp || delta != o.delta; }
};
// Of one step's B×S backpointers and scores (device arrays; waits for the device).
inline Checksum checksum(const int* bp, const float* delta) {
  cudaDeviceSynchronize();
  std::vector<int> h(batch * states);
  std::vector<float> f(batch * states);
  cudaMemcpy(h.data(), bp, h.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(f.data(), delta, f.size() * 4, cudaMemcpyDeviceToHost);
  Checksum c;
  for (long e = 0; e < batch * states; ++e) c.bp += h[e] * (e % 7 + 1), c.delta += f[e];
  return c;
}

// Times `step` (which launches one step and swaps its buffers) and prints the line the A/B logs hold.
template <class Step> void time_and_report(const char* name, Step&& step, const Checksum& c) {
  for (int w = 0; w < 20; ++w) step();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  for (int rep = 0; rep < 3; ++rep) {
    cudaEventRecord(a);
    for (int t = 0; t < timed_steps; ++t) step();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
  }
  const double us = 1000.0 * best / timed_steps;
  printf("%s: %.2f us/step  %.3f e12 upd/s  checksum bp %lld delta %.6f  err %s\n", name, us,
         double(batch) * states * states / us / 1e6, c.bp, c.delta, cudaGetErrorString(cudaGetLastError()));
}

}  // namespace viterbi_harness
