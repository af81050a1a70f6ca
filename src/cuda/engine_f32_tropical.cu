// Instantiates the CUDA backend (every configuration, both border modes) for these semirings.
#include "engine.cuh"

RINGMM_CUDA_INSTANTIATE(::ringmm::MaxPlus<float>)
RINGMM_CUDA_INSTANTIATE(::ringmm::MinPlus<float>)
