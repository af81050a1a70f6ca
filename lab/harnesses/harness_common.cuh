// What the kernel A/B harnesses (small_kernel_ab.cu, large_kernel_ab.cu) share: deterministic
// device data (the same values on every run, from a hash of the index, so that variants compare bit
// for bit) and event timing.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

// p[e] = bias + scale · (one of 4096 steps), the step a hash of (e, seed): a few ties per row.
__global__ void fill_steps(float* p, long count, unsigned seed, float scale, float bias) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    p[e] = bias + scale * float(h % 4096u);
  }
}

// The median of `reps` event-timed runs of launch() on `stream`, after `warmup` untimed ones, in ms.
template <class Launch> double median_ms(Launch&& launch, cudaStream_t stream, int reps, int warmup) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  for (int rep = 0; rep < warmup + reps; ++rep) {
    cudaEventRecord(start, stream);
    launch();
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep >= warmup) times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}
