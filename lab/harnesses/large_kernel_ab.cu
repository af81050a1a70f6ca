// A/B of the large kernel's tile variants (include/ringmm/cuda/gemm_kernel.cuh: Tile<...>) on the
// sign-known f32 max-plus update (FADD, FADD, VIMNMX3 for two updates) and on the generic one, pad
// mode, square products. The data are all < 0, so both updates give the same bits: each variant's C
// (either update) is compared bit for bit with the engine's tile's generic C, which is spot-checked
// against a host reference. Times are the median of event-timed launches (the kernel alone, no host
// work of a gemm call). Registers and spills of each instance come from cudaFuncGetAttributes.
// Built and run on the GPU machine (lab/device/calls_run.sh largeab, no build step needed):
//   nvcc -std=c++20 -O3 -arch=sm_90a --expt-relaxed-constexpr -Iinclude -o /tmp/large_ab \
//     lab/harnesses/large_kernel_ab.cu && /tmp/large_ab [edge ...]
// docs/performance-log.md has the variants measured.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness_common.cuh"
#include "ringmm/cuda/gemm_kernel.cuh"

namespace {

using namespace ringmm;
using namespace ringmm::cuda_detail;
using S = MaxPlus<float>;

// Values in [-16, -1/256] in steps of 1/256: no zero, so no signed-zero difference between the
// updates.
void fill(float* p, long count, unsigned seed, cudaStream_t stream) {
  fill_steps<<<1024, 256, 0, stream>>>(p, count, seed, -1.0f / 256, -1.0f / 256);
}

struct Variant {
  const char* name;
  int bm, bn;
  void (*launch)(const KernelArgs<S>&, cudaStream_t);
  cudaFuncAttributes attributes;
};

template <class Cfg> void launch_tile(const KernelArgs<S>& args, cudaStream_t stream) {
  const unsigned blocks = unsigned((args.m / Cfg::BM) * (args.n / Cfg::BN));
  gemm_kernel<S, Cfg, Border::pad><<<blocks, Cfg::threads, 0, stream>>>(args);
}

template <class Cfg> Variant variant(const char* name) {
  Variant v{name, Cfg::BM, Cfg::BN, &launch_tile<Cfg>, {}};
  cudaFuncGetAttributes(&v.attributes, gemm_kernel<S, Cfg, Border::pad>);
  return v;
}

constexpr Place sm = Place::smem;

}  // namespace

int main(int argc, char** argv) {
  std::vector<index_t> edges;
  for (int i = 1; i < argc; ++i) edges.push_back(std::atol(argv[i]));
  if (edges.empty()) edges = {4096, 8192, 2048};
  // The first is the engine's b128x128_k8_t8x8_bcyc (configs.hpp); the rest differ in one or two
  // parameters: blocks per SM (registers), k-tile, tile shape, thread tile.
  Variant variants[] = {
      variant<Tile<128, 128, 8, 8, 8, 4, 4, sm, sm, 2>>("128x128 k8 t8x8 2/SM"),
      variant<Tile<128, 128, 8, 8, 8, 4, 4, sm, sm, 1>>("128x128 k8 t8x8 1/SM"),
      variant<Tile<128, 128, 16, 8, 8, 4, 4, sm, sm, 2>>("128x128 k16 t8x8 2/SM"),
      variant<Tile<128, 64, 8, 8, 4, 4, 4, sm, sm, 2>>("128x64 k8 t8x4 2/SM"),
      variant<Tile<128, 64, 8, 8, 4, 4, 4, sm, sm, 3>>("128x64 k8 t8x4 3/SM"),
      variant<Tile<128, 64, 16, 8, 4, 4, 4, sm, sm, 3>>("128x64 k16 t8x4 3/SM"),
      variant<Tile<256, 128, 8, 16, 8, 4, 4, sm, sm, 1>>("256x128 k8 t16x8 1/SM"),
      variant<Tile<128, 256, 8, 8, 16, 4, 4, sm, sm, 1>>("128x256 k8 t8x16 1/SM"),
      variant<Tile<64, 64, 16, 4, 4, 4, 4, sm, sm, 2>>("64x64 k16 t4x4 2/SM"),
  };
  for (const Variant& v : variants)
    printf("%-24s %3d registers, %4zu bytes of spills\n", v.name, v.attributes.numRegs, v.attributes.localSizeBytes);

  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  unsigned* known;  // the sign scan's word: nonzero = every value in the domain
  cudaMalloc(&known, sizeof(unsigned));
  cudaMemset(known, 0xff, sizeof(unsigned));
  int failures = 0;
  printf("%-6s %-24s %-8s %10s %8s  %s\n", "edge", "variant", "update", "ms", "Tupd/s", "C against the first");
  for (const index_t e : edges) {
    const long count = long(e) * e;
    float *a, *b, *c;
    cudaMalloc(&a, count * 4);
    cudaMalloc(&b, count * 4);
    cudaMalloc(&c, count * 4);
    fill(a, count, 1, stream);
    fill(b, count, 2, stream);
    KernelArgs<S> args{};
    args.a = a, args.a_rs = 1, args.a_cs = e;  // pad mode: A stored k-major
    args.b = b, args.b_rs = e, args.b_cs = 1;
    args.c = c, args.c_rs = e, args.c_cs = 1;
    args.m = args.n = args.k = e;
    args.alpha = S::one(), args.beta = S::zero();
    std::vector<float> reference(count), result(count), host_a(count), host_b(count);
    cudaMemcpy(host_a.data(), a, count * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(host_b.data(), b, count * 4, cudaMemcpyDeviceToHost);
    bool first = true;
    const int reps = e >= 8192 ? 7 : 21;
    for (const Variant& v : variants) {
      if (e % v.bm != 0 || e % v.bn != 0) continue;
      args.tiles_n = int(e / v.bn);
      for (const bool sign_known_update : {false, true}) {
        args.sign_known = sign_known_update ? known : nullptr;
        cudaMemsetAsync(c, 0xff, count * 4, stream);  // NaN: every entry must be written
        v.launch(args, stream);
        cudaMemcpyAsync(result.data(), c, count * 4, cudaMemcpyDeviceToHost, stream);
        if (!finished(stream, v.name)) return 2;
        const char* check = "same bits";
        if (first) {
          reference = result;
          check = "(reference: 64 entries against the host)";
          for (int t = 0; t < 64; ++t) {  // corners included
            const index_t i = spot(t, e, 7919 * 131), j = spot(t, e, 104729);
            float best = -INFINITY;
            for (index_t k = 0; k < e; ++k) best = std::fmax(best, host_a[k * e + i] + host_b[k * e + j]);
            if (best != reference[i * e + j]) {
              check = "REFERENCE WRONG";
              ++failures;
              break;
            }
          }
          first = false;
        } else if (std::memcmp(reference.data(), result.data(), count * 4) != 0) {
          check = "DIFFERS";
          ++failures;
        }
        const double ms = median_ms([&] { v.launch(args, stream); }, stream, reps - 2, 2);
        printf("%-6ld %-24s %-8s %10.3f %8.2f  %s\n", long(e), v.name, sign_known_update ? "sign" : "generic", ms,
               double(e) * double(e) * double(e) / ms / 1e9, check);
        fflush(stdout);
      }
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  const cudaError_t err = cudaDeviceSynchronize();
  printf("%s; %d variant(s) differ\n", cudaGetErrorString(err), failures);
  return err == cudaSuccess && failures == 0 ? 0 : 1;
}
