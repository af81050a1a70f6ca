// A/B of variants of src/cuda/viterbi_logprob.cuh, the Viterbi step for log-probability models, at
// issue 10's shape, launched as hmm.cu launches it (programmatic dependent launch) and measured as
// viterbi_harness.cuh says. The data and the checksum are viterbi_step_ab.cu's, so the two
// harnesses' checksums must agree. Each variant is a copy of the header in its own folder,
// compiled here and run on the GPU:
//   nvcc -std=c++20 -arch=sm_90a -O3 -I<variant folder> -Iinclude -o l_<name> lab/harnesses/viterbi_logprob_ab.cu
//   ./l_<name> <name> [N: run the first step N times, checking that the checksums agree]
// (-Isrc/cuda for the tree's own.) docs/performance-log.md has the variants measured.
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "viterbi_harness.cuh"
#include "viterbi_logprob.cuh"
using namespace ringmm::detail;
using viterbi_harness::fill;
int main(int argc, char** argv) {
  const long B = viterbi_harness::batch, S = viterbi_harness::states;
  const long pitch = viterbi_logprob::transposed_pitch(B);
  float *delta, *next, *delta_t, *next_t, *trans, *trans_t, *emit; int* bp;
  cudaMalloc(&delta, B * S * 4); cudaMalloc(&next, B * S * 4); cudaMalloc(&delta_t, pitch * S * 4); cudaMalloc(&next_t, pitch * S * 4);
  cudaMalloc(&trans, S * S * 4); cudaMalloc(&trans_t, S * S * 4); cudaMalloc(&emit, B * S * 4); cudaMalloc(&bp, B * S * 4);
  fill<<<1024, 256>>>(trans, S * S, 2); fill<<<1024, 256>>>(emit, B * S, 3);
  viterbi::transpose<float><<<1024, 256>>>(trans, S, S, S, trans_t);
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
  const int runs = argc > 2 ? atoi(argv[2]) : 1;
  viterbi_harness::Checksum first;
  int differing = 0;
  for (int r = 0; r < runs; ++r) {
    fill<<<1024, 256>>>(delta, B * S, 1);
    viterbi::transpose<float><<<1024, 256>>>(delta, B, S, pitch, delta_t);
    step();
    const viterbi_harness::Checksum c = viterbi_harness::checksum(bp, delta);
    if (r == 0) first = c;
    else differing += c != first;
  }
  if (runs > 1) printf("%d runs of the first step, %d with other checksums\n", runs, differing);
  viterbi_harness::time_and_report(argc > 1 ? argv[1] : "?", step, first);
}
