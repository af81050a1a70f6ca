// Instantiates the CUDA backend (every configuration, both border modes) for these semirings.
#include "engine.cuh"

RINGMM_CUDA_INSTANTIATE(::ringmm::MaxPlus<std::int32_t>)
RINGMM_CUDA_INSTANTIATE(::ringmm::MinPlus<std::int32_t>)
