// The products a benchmark times, on the CPU and on the GPU.
#pragma once

namespace ringmm::measure {

// gemm: C = A·B (A m×k, B k×n); batched: a strided batch of them; syrk: C = Aᵀ·A with A k×n, so m = n;
// argmax: gemm_argmax of the gemm shape, C and the index of each winning term (semirings whose ⊕
// selects).
enum class Product { gemm, batched, syrk, argmax };

}  // namespace ringmm::measure
