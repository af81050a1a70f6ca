// Deterministic device data for the kernel A/B harnesses (small_kernel_ab.cu, large_kernel_ab.cu):
// the same values on every run, from a hash of the index, so that variants compare bit for bit.
#pragma once

#include <cuda_runtime.h>

// p[e] = bias + scale · (one of 4096 steps), the step a hash of (e, seed): a few ties per row.
__global__ void fill_steps(float* p, long count, unsigned seed, float scale, float bias) {
  for (long e = blockIdx.x * long(blockDim.x) + threadIdx.x; e < count; e += long(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(e) * 2654435761u ^ seed * 40503u;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    p[e] = bias + scale * float(h % 4096u);
  }
}
