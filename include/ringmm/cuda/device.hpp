// Host functions the engine template calls that are compiled once, into libringmm
// (src/cuda/device.cu), for every semiring.
#pragma once

#include <string>

#include "ringmm/cuda/configs.hpp"

namespace ringmm::cuda_detail {

bool is_device_pointer(const void* p);  // device or managed memory
int multiprocessor_count();             // of the current device
ConfigId find_config(const std::string& name);  // throws invalid_argument naming cuda_config

}  // namespace ringmm::cuda_detail
