// A/B of variants of src/cuda/viterbi_step.cuh: the fused Viterbi step's vector form, measured as
// viterbi_harness.cuh says, with a checksum so that variants can be checked against each other.
// Each variant is a copy of the header in its own folder, compiled here and run on the GPU machine:
//   nvcc -std=c++20 -arch=sm_90a -O3 -I<variant folder> -Iinclude -o h_<name> lab/harnesses/viterbi_step_ab.cu
//   ./h_<name> <name>
// (-Isrc/cuda for the tree's own.) docs/performance-log.md has the variants measured.
#include <utility>

#include "viterbi_harness.cuh"
#include "viterbi_step.cuh"
using namespace ringmm::detail;
using viterbi_harness::fill;
int main(int argc, char** argv) {
  const long B = viterbi_harness::batch, S = viterbi_harness::states;
  float *delta, *next, *trans, *trans_t, *emit; int* bp;
  cudaMalloc(&delta, B * S * 4); cudaMalloc(&next, B * S * 4); cudaMalloc(&trans, S * S * 4); cudaMalloc(&trans_t, S * S * 4);
  cudaMalloc(&emit, B * S * 4); cudaMalloc(&bp, B * S * 4);
  fill<<<1024, 256>>>(delta, B * S, 1); fill<<<1024, 256>>>(trans, S * S, 2); fill<<<1024, 256>>>(emit, B * S, 3);
  viterbi::transpose<float><<<1024, 256>>>(trans, S, S, S, trans_t);
  dim3 grid(S / viterbi::tile_n, B / viterbi::tile_m);  // each variant names its block tile
  auto step = [&] { viterbi::step_kernel<float, true><<<grid, viterbi::threads>>>(delta, trans, trans_t, emit, B, S, next, bp); std::swap(delta, next); };
  step();  // the checksum of one step from the fixed start
  viterbi_harness::time_and_report(argc > 1 ? argv[1] : "?", step, viterbi_harness::checksum(bp, delta));
}
