// The Python extension's own CUDA kernels (device_kernels.cu, compiled by nvcc apart from the
// nanobind module): strided copies, which arrays that only expose __cuda_array_interface__ need
// since no framework is there to copy them, and the HMM emission scores gathered into the
// step-major layout ringmm::hmm_viterbi reads. Plain types only, so that the host compiler and
// nvcc read this header alike. Each function queues its work on `stream` and returns the launch's
// status.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace ringmm_py::device {

inline constexpr int max_dims = 8;

// dst[i] = src[i] for every index i of `shape`; strides in elements, any sign, 0 to broadcast.
struct StridedCopy {
  int ndim = 0;
  std::int64_t shape[max_dims] = {}, dst_stride[max_dims] = {}, src_stride[max_dims] = {};
};
cudaError_t strided_copy(void* dst, const void* src, int element_bytes, const StridedCopy& layout, cudaStream_t stream);

// Where the emission log-score of sequence b at step t in state s comes from: scores[b, t, s], or
// table[s, v] with the symbol v = observations[b, t]. Strides in elements (0 for a single sequence).
struct EmissionSource {
  const void* scores = nullptr;
  std::int64_t score_stride[3] = {};  // b, t, s
  const void* table = nullptr;
  std::int64_t table_stride[2] = {};  // s, v
  std::int64_t symbols = 0;           // the table's columns
  const void* observations = nullptr;
  int observation_bytes = 4;  // int32 or int64
  std::int64_t observation_stride[2] = {};  // b, t
};

// emit[(t·B + b)·S + s] for every sequence b, step t and state s, in float (f64 false) or double.
// *first_bad (device memory, set to ~0 by the caller) receives the smallest such index whose
// symbol is outside 0..symbols−1 or whose score is NaN or +inf.
cudaError_t fill_emissions(void* emit, bool f64, std::int64_t batch, std::int64_t steps, std::int64_t states,
                           const EmissionSource& source, unsigned long long* first_bad, cudaStream_t stream);

}  // namespace ringmm_py::device
