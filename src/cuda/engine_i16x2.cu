// Instantiates the CUDA backend (every configuration, both border modes) for these semirings.
#include "engine.cuh"

RINGMM_CUDA_INSTANTIATE(::ringmm::MaxPlus<::ringmm::i16x2>)
RINGMM_CUDA_INSTANTIATE(::ringmm::MinPlus<::ringmm::i16x2>)
