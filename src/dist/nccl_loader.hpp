// NCCL, opened on first use like cuBLAS (src/core/shared_library.hpp says why): only the device
// path of SUMMA (summa_nccl.cpp) calls it, and every run of the tool would load it otherwise.
#pragma once

#include <nccl.h>

namespace ringmm::dist::detail {

// Types from NCCL's own prototypes.
struct NcclApi {
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclCommInitRankConfig) comm_init_rank_config;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclSend) send;
  decltype(&ncclRecv) recv;
  decltype(&ncclGroupStart) group_start;
  decltype(&ncclGroupEnd) group_end;
  decltype(&ncclGetErrorString) error_string;
};

// Loads libnccl on the first call (thread-safe); throws Error(backend_unavailable) naming the
// library when it cannot be loaded, and tries again on the next call.
const NcclApi& nccl();

}  // namespace ringmm::dist::detail
