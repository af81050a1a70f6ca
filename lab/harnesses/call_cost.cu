// Where the host time of a small ringmm call goes: each runtime query and step the engine makes on
// its way to the launch, timed alone in a loop, beside the whole call (lab/device/calls_run.sh
// builds and runs it; the performance log has its findings).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "ringmm/ringmm.hpp"
#include "ringmm/tune.hpp"

namespace {

__global__ void empty_kernel(float* p) {
  if (p && threadIdx.x == 1024) *p = 0;
}

// Microseconds per call of `f`, over rounds of 200 calls with the stream drained between them
// (so that launches never wait for room in the queue); the median round.
double microseconds(cudaStream_t stream, const std::function<void()>& f) {
  std::vector<double> rounds;
  for (int r = 0; r < 31; ++r) {
    cudaStreamSynchronize(stream);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 200; ++i) f();
    rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 200);
  }
  cudaStreamSynchronize(stream);
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main() {
  using namespace ringmm;
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const index_t n = 64;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  cudaMalloc(&a, n * n * sizeof(float));
  cudaMalloc(&b, n * n * sizeof(float));
  cudaMalloc(&c, n * n * sizeof(float));
  cudaMemset(a, 0, n * n * sizeof(float));
  cudaMemset(b, 0, n * n * sizeof(float));
  Context ctx;
  ctx.backend = Backend::cuda;
  ctx.cuda_stream = stream;
  auto gemm_call = [&](const Context& x) {
    gemm<MaxPlus<float>>(x, Op::N, row_major<const float>(a, n, n), Op::N, row_major<const float>(b, n, n),
                         row_major(c, n, n));
  };
  gemm_call(ctx);
  Context named = ctx;
  named.cuda_config = "small64";
  Context untuned = ctx;
  untuned.tune_cache = false;
  cudaPointerAttributes attr{};
  int device = 0, count = 0;
  cudaStreamCaptureStatus capture{};
  std::string why;
  const std::vector<std::pair<const char*, std::function<void()>>> steps = {
      {"empty kernel <<<>>>", [&] { empty_kernel<<<1, 32, 0, stream>>>(nullptr); }},
      {"cudaPointerGetAttributes", [&] { cudaPointerGetAttributes(&attr, a); }},
      {"cudaGetDevice", [&] { cudaGetDevice(&device); }},
      {"cudaGetDeviceCount", [&] { cudaGetDeviceCount(&count); }},
      {"cudaStreamIsCapturing", [&] { cudaStreamIsCapturing(stream, &capture); }},
      {"cudaGetLastError", [&] { cudaGetLastError(); }},
      {"cuda_device_available", [&] { cuda_device_available(&why); }},
      {"Context::resolved_backend", [&] { ctx.resolved_backend(); }},
      {"describe_cuda_choice 64^3", [&] { describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, n, n, n, 1, false); }},
      {"gemm max-plus f32 64^3", [&] { gemm_call(ctx); }},
      {"  with cuda_config small64", [&] { gemm_call(named); }},
      {"  with tune_cache off", [&] { gemm_call(untuned); }},
  };
  std::printf("%-32s %10s\n", "step", "us/call");
  for (const auto& [name, f] : steps) std::printf("%-32s %10.3f\n", name, microseconds(stream, f));
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cudaStreamDestroy(stream);
  return 0;
}
