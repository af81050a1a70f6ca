// Tuning harness for the CUDA engine (not the official benchmark, which is `ringmm bench`): times
// the public gemm / gemm_batched / syrk on device buffers of random data for the issue's target
// cases and prints updates/s. CUDA events around each call, 2 warm-up calls, median of 10.
//
//   cuda_engine_bench [results.json] [quick]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "ringmm/ringmm.hpp"

namespace {

using namespace ringmm;

#define CHECK(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

__device__ std::uint32_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return std::uint32_t(x);
}

// Random values inside each semiring's accepted range (integer tropical: |x| ≤ R).
template <class T> __global__ void fill_random(T* p, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count; i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t h = mix(i * 0x9e3779b97f4a7c15ULL + seed);
    if constexpr (std::is_same_v<T, i16x2>) p[i] = {std::int16_t(int(h % 8193) - 4096), std::int16_t(int((h >> 16) % 8193) - 4096)};
    else if constexpr (std::is_same_v<T, std::int32_t>) p[i] = std::int32_t(h % 2000001) - 1000000;
    else p[i] = T((double(h % 2001) - 1000.0) / 1000.0);
  }
}

struct Record {
  std::string semiring, type, product, kernel, border;
  index_t m, n, k, batch;
  double seconds, updates_per_s;
};

std::string device_name() {
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  return prop.name;
}

double median_seconds(const std::function<void()>& call, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int w = 0; w < 2; ++w) call();
  CHECK(cudaDeviceSynchronize());
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(start));
    call();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    times.push_back(ms * 1e-3);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

template <class T> T* device_random(std::size_t count, std::uint64_t seed) {
  T* p = nullptr;
  CHECK(cudaMalloc(&p, std::max<std::size_t>(1, count) * sizeof(T)));
  fill_random<T><<<1024, 256>>>(p, count, seed);
  CHECK(cudaGetLastError());
  return p;
}

std::vector<Record> records;

template <class S>
void time_case(const char* semiring, const char* type, const char* product, index_t m, index_t n, index_t k,
               index_t batch, const std::string& config, BorderPolicy border, double lanes = 1.0) {
  using T = typename S::value_type;
  const bool syrk = std::string(product) == "syrk";
  const bool gemm_of_syrk = std::string(product) == "gemm-of-syrk";  // the same Aᵀ·A through gemm
  T* a = device_random<T>(std::size_t(m * k * batch), 1);
  T* b = device_random<T>(std::size_t(k * n * batch), 2);
  T* c = device_random<T>(std::size_t(m * n * batch), 3);
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_config = config;
  ctx.border = border;
  std::function<void()> call;
  if (syrk) {  // C (n×n) = Aᵀ·A, A k×n row-major
    call = [&] { ringmm::syrk<S>(ctx, Op::N, row_major<const T>(a, k, n), row_major(c, n, n)); };
  } else if (gemm_of_syrk) {
    call = [&] {
      gemm<S>(ctx, Op::T, row_major<const T>(a, k, n), Op::N, row_major<const T>(a, k, n), row_major(c, n, n));
    };
  } else if (batch > 1) {
    call = [&] {
      gemm_batched<S>(ctx, Op::N, row_major<const T>(a, m, k), m * k, Op::N, row_major<const T>(b, k, n), k * n,
                      row_major(c, m, n), m * n, batch);
    };
  } else {
    call = [&] { gemm<S>(ctx, Op::N, row_major<const T>(a, m, k), Op::N, row_major<const T>(b, k, n), row_major(c, m, n)); };
  }
  const double seconds = median_seconds(call, 10);
  // Counting as bench/results/README.md: each i16x2 lane is an update; syrk counts its triangle.
  const double updates = (syrk ? double(n) * double(n + 1) / 2 * double(k) : double(m) * double(n) * double(k)) *
                         double(batch) * lanes;
  records.push_back({semiring, type, product, config.empty() ? "auto" : config, std::string(to_string(border)), m, n, k,
                     batch, seconds, updates / seconds});
  std::printf("%-10s %-6s %-13s %5lld x %5lld x %5lld x %2lld  %-24s %-9s %9.3f ms  %7.2f e12 upd/s%s\n", semiring,
              type, product, (long long)m, (long long)n, (long long)k, (long long)batch,
              config.empty() ? "auto" : config.c_str(), std::string(to_string(border)).c_str(), seconds * 1e3,
              updates / seconds * 1e-12, lanes > 1 ? " (lanes)" : "");
  std::fflush(stdout);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "";
  const bool quick = argc > 2 && std::string(argv[2]) == "quick";
  const auto automatic = BorderPolicy::automatic;
  try {
    for (index_t s : {4096, 4097, 8192}) {
      time_case<MaxPlus<float>>("max-plus", "f32", "gemm", s, s, s, 1, "", automatic);
      time_case<MinPlus<float>>("min-plus", "f32", "gemm", s, s, s, 1, "", automatic);
      time_case<MaxPlus<std::int32_t>>("max-plus", "i32", "gemm", s, s, s, 1, "", automatic);
      if (quick && s == 8192) break;
      time_case<MaxPlus<i16x2>>("max-plus", "i16x2", "gemm", s, s, s, 1, "", automatic, 2.0);
      time_case<MaxPlus<double>>("max-plus", "f64", "gemm", s, s, s, 1, "", automatic);
      time_case<PlusTimes<float>>("plus-times", "f32", "gemm", s, s, s, 1, "", automatic);
    }
    time_case<MaxPlus<float>>("max-plus", "f32", "batched", 1024, 1024, 1024, 20, "", automatic);
    time_case<MaxPlus<std::int32_t>>("max-plus", "i32", "batched", 1024, 1024, 1024, 20, "", automatic);
    for (index_t s : {4096, 8192}) {
      time_case<MaxPlus<float>>("max-plus", "f32", "syrk", s, s, s, 1, "", automatic);
      time_case<MaxPlus<float>>("max-plus", "f32", "gemm-of-syrk", s, s, s, 1, "", automatic);
    }
    // Configurations and border policies side by side.
    for (const char* config : {"b128x128_k8_t8x8_bcyc", "b64x64_k16_t4x4_blk", "b128x64_k8_t8x4_cyc", "b64x64_k16_t4x4_p01",
                               "b64x64_k16_t4x4_p10", "b64x64_k16_t4x4_p11"})
      for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
        time_case<MaxPlus<float>>("max-plus", "f32", "gemm", 4097, 4097, 4097, 1, config, border);
    for (const char* config : {"b128x128_k8_t8x8_bcyc", "b64x64_k16_t4x4_blk"}) {
      for (index_t s : {4096, 4097}) {
        time_case<MaxPlus<float>>("max-plus", "f32", "gemm", s, s, s, 1, config, BorderPolicy::pad);
        time_case<MaxPlus<std::int32_t>>("max-plus", "i32", "gemm", s, s, s, 1, config, BorderPolicy::pad);
        time_case<PlusTimes<float>>("plus-times", "f32", "gemm", s, s, s, 1, config, BorderPolicy::pad);
        time_case<MaxPlus<i16x2>>("max-plus", "i16x2", "gemm", s, s, s, 1, config, BorderPolicy::pad, 2.0);
      }
      time_case<MaxPlus<double>>("max-plus", "f64", "gemm", 4096, 4096, 4096, 1, config, BorderPolicy::pad);
      time_case<MaxPlus<float>>("max-plus", "f32", "gemm", 1000, 1000, 1000, 1, config, automatic);
      time_case<MaxPlus<float>>("max-plus", "f32", "batched", 1024, 1024, 1024, 20, config, automatic);
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "ringmm error: %s\n", e.what());
    return 1;
  }
  if (!out.empty()) {
    FILE* f = std::fopen(out.c_str(), "w");
    if (!f) return 1;
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof(date), "%Y-%m-%d", std::gmtime(&now));
    const std::string device = device_name();
    std::fprintf(f, "[\n");
    for (std::size_t i = 0; i < records.size(); ++i) {
      const Record& r = records[i];
      std::fprintf(f,
                   "  {\"suite\": \"cuda-engine\", \"device\": \"%s\", \"backend\": \"cuda\", \"kernel\": \"%s/%s\", "
                   "\"semiring\": \"%s\", \"type\": \"%s\", \"product\": \"%s\", \"m\": %lld, \"n\": %lld, \"k\": %lld, "
                   "\"batch\": %lld, \"seconds\": %.6e, \"updates_per_s\": %.6e%s, \"date\": \"%s\"}%s\n",
                   device.c_str(), r.kernel.c_str(), r.border.c_str(), r.semiring.c_str(), r.type.c_str(),
                   r.product.c_str(), (long long)r.m, (long long)r.n, (long long)r.k, (long long)r.batch, r.seconds,
                   r.updates_per_s,
                   r.semiring == "plus-times" ? (", \"flops_per_s\": " + std::to_string(2 * r.updates_per_s)).c_str() : "",
                   date, i + 1 < records.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
