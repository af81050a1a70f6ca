// What the commands that run under mpirun (summa_command.cpp, apsp_summa.cpp) share: MPI's
// lifetime, the agreement on the command line, CPU threads per rank, the error text.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

#include "commands.hpp"
#include "ringmm/dist.hpp"
#if RINGMM_HAVE_NCCL
#include "ringmm/dist_device.hpp"
#endif

namespace ringmm::tools {

// Initialises MPI for the command when the process has not (the tool's main does not).
class MpiSession {
 public:
  MpiSession() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owns_ = true;
    }
  }
  ~MpiSession() {
    if (owns_) MPI_Finalize();
  }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

// Collective: every rank must have the same command line; then parse errors are the same
// everywhere. Throws Errc::distributed_mismatch on every rank otherwise.
inline void agree_on_command_line(const Args& args, const std::string& command) {
  std::string joined;
  for (const auto& arg : args) joined += arg + '\n';
  std::uint64_t fingerprint = 1469598103934665603ull;
  for (unsigned char ch : joined) fingerprint = (fingerprint ^ ch) * 1099511628211ull;
  std::string shown = "'";
  for (const auto& arg : args) shown += (shown.size() > 1 ? " " : "") + arg;
  dist::check_agreement(MPI_COMM_WORLD, {{"command line", std::int64_t(fingerprint >> 1), shown + "'"}}, command);
}

// Collective. Where the ranks' local work runs: --backend auto takes the devices when this build has
// NCCL and every rank has a GPU of its own (the device set-up agrees on that everywhere), else the
// CPU; --backend cuda insists on them. `command` names the tool in the refusal.
inline Backend ranks_backend(const dist::Grid& grid, Backend requested, const std::string& command) {
  if (requested == Backend::cpu) return Backend::cpu;
#if RINGMM_HAVE_NCCL
  try {
    const dist::DeviceDistMatrix<float> probe(grid, 1, 1, 1);  // sets up each rank's device and NCCL
    return Backend::cuda;
  } catch (const Error&) {
    if (requested == Backend::cuda) throw;
    return Backend::cpu;
  }
#else
  (void)grid;
  if (requested == Backend::cuda)
    throw Error(Errc::backend_unavailable, "--backend",
                command + " runs on the GPUs only in builds with CUDA and NCCL, which this one lacks");
  return Backend::cpu;
#endif
}

// CPU threads per rank when --threads is not given: the node's cores shared among its ranks.
inline int default_threads(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  return std::max(1, int(std::thread::hardware_concurrency()) / node_ranks);
}

// The error text as run_guarded would print it.
inline std::string describe(const Error& e) {
  return e.subject().empty() ? std::string(to_string(e.code())) + ": " + e.what() : e.what();
}

}  // namespace ringmm::tools
