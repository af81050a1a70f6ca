// Instantiates the CUDA backend (every configuration, both border modes) for these semirings.
#include "engine.cuh"

RINGMM_CUDA_INSTANTIATE(::ringmm::PlusTimes<std::int32_t>)
RINGMM_CUDA_INSTANTIATE(::ringmm::MaxMin<std::int32_t>)
