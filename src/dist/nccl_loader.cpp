#include "nccl_loader.hpp"

#include <string>

#include "shared_library.hpp"

namespace ringmm::dist::detail {

const NcclApi& nccl() {
  static const NcclApi api = [] {
    // The soname of the NCCL the header describes, then the file the build found: the
    // nvidia-nccl wheel of the GPU machines lies off the dynamic linker's path.
    const ringmm::detail::SharedLibrary library{"libnccl.so." + std::to_string(NCCL_MAJOR), RINGMM_NCCL_BUILD_PATH};
    NcclApi a;
    library.resolve(a.get_unique_id, "ncclGetUniqueId");
    library.resolve(a.comm_init_rank, "ncclCommInitRank");
    library.resolve(a.comm_init_rank_config, "ncclCommInitRankConfig");
    library.resolve(a.comm_destroy, "ncclCommDestroy");
    library.resolve(a.broadcast, "ncclBroadcast");
    library.resolve(a.send, "ncclSend");
    library.resolve(a.recv, "ncclRecv");
    library.resolve(a.group_start, "ncclGroupStart");
    library.resolve(a.group_end, "ncclGroupEnd");
    library.resolve(a.error_string, "ncclGetErrorString");
    return a;
  }();
  return api;
}

}  // namespace ringmm::dist::detail
