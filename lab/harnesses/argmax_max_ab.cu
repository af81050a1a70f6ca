// A/B of the argmax max kernel's tiles (include/ringmm/cuda/argmax.cuh: ArgmaxTileOf, blocks per
// SM) on f32 min-plus data ≥ 0, with the sign-known pair step and the generic update. Every variant
// records the same k-tiles of 16, so its sums and tiles are compared bit for bit with the library's
// tile (ArgmaxTile, two blocks per SM), whose results are spot-checked against a host reference
// (the minimum, and the tile of its first k). Times are the median of event-timed launches of the
// max kernel alone (no packing, no locate). Registers and spills come from cudaFuncGetAttributes.
// Built and run on the GPU machine (lab/device/calls_run.sh argmaxab, no build step needed):
//   nvcc -std=c++20 -O3 -arch=sm_90a --expt-relaxed-constexpr -Iinclude -o /tmp/argmax_ab \
//     lab/harnesses/argmax_max_ab.cu && /tmp/argmax_ab [MxNxK ...]
// docs/performance-log.md has the variants measured.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "harness_common.cuh"
#include "ringmm/cuda/argmax.cuh"

namespace {

using namespace ringmm;
using namespace ringmm::cuda_detail;
using S = MinPlus<float>;

struct Shape {
  index_t m, n, k;
};

struct Variant {
  const char* name;
  int bm, bn;
  std::size_t panel_bytes;
  void (*launch)(const ArgmaxMaxArgs<S>&, unsigned blocks, cudaStream_t);
  cudaFuncAttributes attributes;
};

template <class Cfg, int MinBlocks> void launch_tile(const ArgmaxMaxArgs<S>& args, unsigned blocks, cudaStream_t stream) {
  argmax_max_kernel<S, Cfg, MinBlocks><<<blocks, Cfg::threads, ArgmaxPanels<S, Cfg>::bytes, stream>>>(args);
}

template <class Cfg, int MinBlocks> Variant variant(const char* name) {
  constexpr std::size_t bytes = ArgmaxPanels<S, Cfg>::bytes;
  if (bytes > 48 * 1024)
    cudaFuncSetAttribute(argmax_max_kernel<S, Cfg, MinBlocks>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes));
  Variant v{name, Cfg::BM, Cfg::BN, bytes, &launch_tile<Cfg, MinBlocks>, {}};
  cudaFuncGetAttributes(&v.attributes, argmax_max_kernel<S, Cfg, MinBlocks>);
  return v;
}

Shape parse(const char* text) {
  Shape s{};
  if (std::sscanf(text, "%ldx%ldx%ld", &s.m, &s.n, &s.k) != 3) s.m = s.n = s.k = std::atol(text);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) shapes.push_back(parse(argv[i]));
  if (shapes.empty()) shapes = {{16384, 16384, 1024}, {8192, 8192, 8192}, {4096, 4096, 4096}};
  // The first is the library's; the others change the tile, the thread tile or the blocks per SM
  // (the register bound: 255, 128 or 85 a thread).
  Variant variants[] = {
      variant<ArgmaxTile, 2>("128x64 t8x4 2/SM (lib)"),
      variant<ArgmaxTileOf<128, 64, 8, 4>, 1>("128x64 t8x4 1/SM"),
      variant<ArgmaxTileOf<128, 128, 8, 8>, 1>("128x128 t8x8 1/SM"),
      variant<ArgmaxTileOf<64, 64, 4, 4>, 2>("64x64 t4x4 2/SM"),
      variant<ArgmaxTileOf<64, 64, 4, 4>, 3>("64x64 t4x4 3/SM"),
  };
  for (const Variant& v : variants)
    printf("%-24s %3d registers, %4zu bytes of spills, %6zu bytes of panels\n", v.name, v.attributes.numRegs,
           v.attributes.localSizeBytes, v.panel_bytes);

  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  unsigned* known;  // the sign scan's word: nonzero = every value in the domain (here ≥ 0)
  cudaMalloc(&known, sizeof(unsigned));
  cudaMemset(known, 0xff, sizeof(unsigned));
  int failures = 0;
  printf("%-18s %-24s %-8s %10s %8s  %s\n", "shape", "variant", "update", "ms", "Tupd/s", "sums and tiles against the first");
  for (const Shape& s : shapes) {
    const long a_count = long(s.m) * s.k, b_count = long(s.k) * s.n, c_count = long(s.m) * s.n;
    float *a, *b, *sum;
    std::int32_t* tile;
    cudaMalloc(&a, a_count * 4);
    cudaMalloc(&b, b_count * 4);
    cudaMalloc(&sum, c_count * 4);
    cudaMalloc(&tile, c_count * 4);
    // Values in [1/256, 16] in steps of 1/256: no zero, so both updates give the same bits.
    fill_steps<<<1024, 256, 0, stream>>>(a, a_count, 1, 1.0f / 256, 1.0f / 256);
    fill_steps<<<1024, 256, 0, stream>>>(b, b_count, 2, 1.0f / 256, 1.0f / 256);
    // Packed as the library packs: A(i, k) at a[k·m + i], B(k, j) at b[k·n + j].
    ArgmaxMaxArgs<S> args{a, b, sum, tile, s.m, s.n, s.k, 0, 0, 0, nullptr};
    std::vector<float> ref_sum(c_count), got_sum(c_count), host_a(a_count), host_b(b_count);
    std::vector<std::int32_t> ref_tile(c_count), got_tile(c_count);
    cudaMemcpy(host_a.data(), a, a_count * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(host_b.data(), b, b_count * 4, cudaMemcpyDeviceToHost);
    char label[64];
    std::snprintf(label, sizeof label, "%ldx%ldx%ld", long(s.m), long(s.n), long(s.k));
    const double updates = double(s.m) * double(s.n) * double(s.k);
    const int reps = updates > 1e11 ? 7 : 21;
    bool first = true;
    for (const Variant& v : variants) {
      if (s.m % v.bm != 0 || s.n % v.bn != 0 || s.k % ArgmaxTile::BK != 0) continue;
      args.tiles_n = int(s.n / v.bn);
      const unsigned blocks = unsigned((s.m / v.bm) * (s.n / v.bn));
      for (const bool sign_known_update : {false, true}) {
        args.sign_known = sign_known_update ? known : nullptr;
        cudaMemsetAsync(sum, 0xff, c_count * 4, stream);  // NaN and −1: every entry must be written
        cudaMemsetAsync(tile, 0xff, c_count * 4, stream);
        v.launch(args, blocks, stream);
        cudaMemcpyAsync(got_sum.data(), sum, c_count * 4, cudaMemcpyDeviceToHost, stream);
        cudaMemcpyAsync(got_tile.data(), tile, c_count * 4, cudaMemcpyDeviceToHost, stream);
        if (!finished(stream, v.name)) return 2;
        const char* check = "same bits";
        if (first) {
          ref_sum = got_sum, ref_tile = got_tile;
          check = "(reference: 64 entries against the host)";
          for (int t = 0; t < 64; ++t) {  // corners included
            const index_t i = spot(t, s.m, 7919 * 131), j = spot(t, s.n, 104729);
            float best = INFINITY;
            index_t first_k = -1;
            for (index_t k = 0; k < s.k; ++k)
              if (const float term = host_a[k * s.m + i] + host_b[k * s.n + j]; term < best) best = term, first_k = k;
            if (best != ref_sum[i * s.n + j] || first_k / ArgmaxTile::BK != ref_tile[i * s.n + j]) {
              check = "REFERENCE WRONG";
              ++failures;
              break;
            }
          }
          first = false;
        } else if (std::memcmp(ref_sum.data(), got_sum.data(), c_count * 4) != 0 ||
                   std::memcmp(ref_tile.data(), got_tile.data(), c_count * 4) != 0) {
          check = "DIFFERS";
          ++failures;
        }
        const double ms = median_ms([&] { v.launch(args, blocks, stream); }, stream, reps - 2, 2);
        printf("%-18s %-24s %-8s %10.3f %8.2f  %s\n", label, v.name, sign_known_update ? "sign" : "generic", ms,
               updates / ms / 1e9, check);
        fflush(stdout);
      }
    }
    cudaFree(a);
    cudaFree(b);
    cudaFree(sum);
    cudaFree(tile);
  }
  const cudaError_t err = cudaDeviceSynchronize();
  printf("%s; %d variant(s) differ\n", cudaGetErrorString(err), failures);
  return err == cudaSuccess && failures == 0 ? 0 : 1;
}
