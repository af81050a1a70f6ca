// What the kernel A/B harnesses (small_kernel_ab.cu, large_kernel_ab.cu, argmax_max_ab.cu) share:
// deterministic device data (the same values on every run, from a hash of the index, so that
// variants compare bit for bit), event timing, and the checks around a variant's first run.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
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

// Waits for `stream`; on an error prints it after `what` and returns false.
inline bool finished(cudaStream_t stream, const char* what) {
  const cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) printf("%s: %s\n", what, cudaGetErrorString(err));
  return err == cudaSuccess;
}

// Spot check t of 64 along an extent: the first and the last entry, the others spread by `step`.
inline long spot(int t, long extent, long step) { return t == 0 ? 0 : t == 63 ? extent - 1 : (long(t) * step) % extent; }
