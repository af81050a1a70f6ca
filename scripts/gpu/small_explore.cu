// Times the small kernel's tile, pipeline and grid variants (SmallTile's parameters, a persistent
// or a block-per-group grid) against each other on issue 12's small and skinny shapes, f32 and
// i32 max-plus, kernel only (CUDA events, median of --reps after a warm-up). Every variant's C
// must equal the first variant's exactly (max-plus is exact in any k order), else it exits 1.
// Measurement only: not part of the library. Build and run on the GPU machine:
//   nvcc -std=c++20 --expt-relaxed-constexpr -arch=sm_90a -O3 -Iinclude \
//        scripts/gpu/small_explore.cu -o small_explore && ./small_explore [--reps 10] [--shape N] > out.json
// Prints one JSON object per line (shape, variant, seconds, 10¹² updates/s) and a table on stderr.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ringmm/cuda/small_kernel.cuh"

namespace ringmm::cuda_detail {
// The library's definition lives in src/cuda/device.cu; this program links none of it.
int multiprocessor_count() {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}
}  // namespace ringmm::cuda_detail

using namespace ringmm;
using namespace ringmm::cuda_detail;

struct Shape {
  const char* name;
  index_t batch, m, n, k;
};

struct Variant {
  std::string name;
  std::function<void(const SmallArgs<MaxPlus<float>>&, cudaStream_t)> f32;
  std::function<void(const SmallArgs<MaxPlus<std::int32_t>>&, cudaStream_t)> i32;
};

template <int T, int BK, int MB, int ST> Variant variant(int blocks_per_sm) {
  const std::string name = "T" + std::to_string(T) + " bk" + std::to_string(BK) + " mb" + std::to_string(MB) +
                           " st" + std::to_string(ST) + (blocks_per_sm ? " persistent" : " per-group");
  return {name,
          [=](const SmallArgs<MaxPlus<float>>& a, cudaStream_t s) {
            launch_small_tile<MaxPlus<float>, SmallTile<T, BK, MB, ST>>(a, blocks_per_sm, s);
          },
          [=](const SmallArgs<MaxPlus<std::int32_t>>& a, cudaStream_t s) {
            launch_small_tile<MaxPlus<std::int32_t>, SmallTile<T, BK, MB, ST>>(a, blocks_per_sm, s);
          }};
}

// What the engine runs: SmallTile<T>'s defaults, grid chosen by launch_small_tile.
template <int T> Variant engine_variant() {
  return {"T" + std::to_string(T) + " engine",
          [](const SmallArgs<MaxPlus<float>>& a, cudaStream_t s) {
            launch_small_tile<MaxPlus<float>, SmallTile<T>>(a, -1, s);
          },
          [](const SmallArgs<MaxPlus<std::int32_t>>& a, cudaStream_t s) {
            launch_small_tile<MaxPlus<std::int32_t>, SmallTile<T>>(a, -1, s);
          }};
}

// Each tile edge's variants; the first is the engine's.
std::vector<Variant> variants(int tile) {
  if (tile == 64)
    return {engine_variant<64>(),     variant<64, 16, 3, 1>(3), variant<64, 16, 3, 1>(0),
            variant<64, 16, 3, 2>(3), variant<64, 16, 4, 1>(4), variant<64, 16, 4, 1>(0),
            variant<64, 16, 4, 2>(4), variant<64, 32, 3, 2>(3), variant<64, 32, 2, 2>(2)};
  if (tile == 32)
    return {engine_variant<32>(),     variant<32, 16, 3, 1>(3), variant<32, 16, 3, 1>(0),
            variant<32, 16, 3, 2>(3), variant<32, 16, 2, 2>(2), variant<32, 16, 2, 2>(0),
            variant<32, 8, 3, 2>(3),  variant<32, 8, 4, 2>(4),  variant<32, 8, 4, 1>(4)};
  return {engine_variant<16>(),    variant<16, 8, 3, 1>(3), variant<16, 8, 3, 1>(0),
          variant<16, 8, 3, 2>(3), variant<16, 8, 2, 2>(2), variant<16, 8, 2, 2>(0),
          variant<16, 4, 3, 2>(3), variant<16, 4, 4, 2>(4), variant<16, 4, 4, 1>(4)};
}

template <class T> std::vector<T> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-1000, 1000);
  std::vector<T> v(count);
  for (auto& x : v) x = T(d(rng));
  return v;
}

template <class S>
int run_shape(const Shape& sh, const char* type, int tile, int reps,
              std::function<void(const SmallArgs<S>&, cudaStream_t)> Variant::*pick) {
  using T = element_t<S>;
  const std::size_t a_count = std::size_t(sh.batch * sh.m * sh.k), b_count = std::size_t(sh.batch * sh.k * sh.n),
                    c_count = std::size_t(sh.batch * sh.m * sh.n);
  T *a, *b, *c;
  cudaMalloc(&a, a_count * sizeof(T));
  cudaMalloc(&b, b_count * sizeof(T));
  cudaMalloc(&c, c_count * sizeof(T));
  const std::vector<T> ha = random_values<T>(a_count, 1), hb = random_values<T>(b_count, 2);
  cudaMemcpy(a, ha.data(), a_count * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(b, hb.data(), b_count * sizeof(T), cudaMemcpyHostToDevice);
  detail::Problem<S> p{};
  p.a = {a, sh.m, sh.k, sh.k, 1};
  p.b = {b, sh.k, sh.n, sh.n, 1};
  p.c = {c, sh.m, sh.n, sh.n, 1};
  p.alpha = scalar_t<S>(S::one()), p.beta = scalar_t<S>(S::zero());
  p.batch = sh.batch, p.stride_a = sh.m * sh.k, p.stride_b = sh.k * sh.n, p.stride_c = sh.m * sh.n;
  const SmallArgs<S> args = small_args(p);
  const double updates = double(sh.batch) * double(sh.m) * double(sh.n) * double(sh.k);
  std::vector<T> first, mine(c_count);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  int failures = 0;
  for (const Variant& v : variants(tile)) {
    cudaMemset(c, 0, c_count * sizeof(T));
    (v.*pick)(args, nullptr);  // warm-up, and the result checked below
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::fprintf(stderr, "%s %s: %s\n", sh.name, v.name.c_str(), cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
    cudaMemcpy(mine.data(), c, c_count * sizeof(T), cudaMemcpyDeviceToHost);
    bool same = true;
    if (first.empty()) first = mine;
    else same = std::memcmp(first.data(), mine.data(), c_count * sizeof(T)) == 0;
    failures += !same;
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
      cudaEventRecord(start);
      (v.*pick)(args, nullptr);
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    const double seconds = times[times.size() / 2] * 1e-3;
    std::printf("{\"shape\": \"%s\", \"type\": \"%s\", \"variant\": \"%s\", \"seconds\": %.9g, "
                "\"rate\": %.4g, \"matches\": %s}\n",
                sh.name, type, v.name.c_str(), seconds, updates / seconds / 1e12, same ? "true" : "false");
    std::fprintf(stderr, "%-22s %-4s %-30s %9.2f us %7.2f %s\n", sh.name, type, v.name.c_str(), seconds * 1e6,
                 updates / seconds / 1e12, same ? "" : "MISMATCH");
  }
  cudaFree(a), cudaFree(b), cudaFree(c);
  return failures;
}

int main(int argc, char** argv) {
  int reps = 10, only = -1;  // --shape N: only the N-th shape (for ncu)
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--shape")) only = std::atoi(argv[i + 1]);
  }
  const Shape shapes[] = {{"4096x64^3", 4096, 64, 64, 64},     {"4096x32^3", 4096, 32, 32, 32},
                          {"100000x16^3", 100000, 16, 16, 16}, {"65536x64x64", 1, 65536, 64, 64},
                          {"131072x16x16", 1, 131072, 16, 16}, {"256x64x64x1024", 256, 64, 64, 1024}};
  const int tiles[] = {64, 32, 16, 64, 16, 64};
  int failures = 0;
  for (int s = 0; s < 6; ++s)
    if (only < 0 || only == s) failures += run_shape<MaxPlus<float>>(shapes[s], "f32", tiles[s], reps, &Variant::f32);
  if (only < 0) failures += run_shape<MaxPlus<std::int32_t>>(shapes[0], "i32", 64, reps, &Variant::i32);
  if (failures) std::fprintf(stderr, "%d variant(s) differ from the first\n", failures);
  return failures ? 1 : 0;
}
