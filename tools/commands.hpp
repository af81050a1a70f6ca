// The subcommands of the `ringmm` tool. Each takes its arguments after the command name and
// returns the process exit code; main.cpp holds the table that maps names onto them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ringmm::tools {

using Args = std::vector<std::string>;

int multiply_command(const Args& args);
int einsum_command(const Args& args);      // a tensor contraction on .npy files (ringmm/contract.hpp)
int bench_command(const Args& args);
int info_command(const Args& args);
int demo_command(const Args& args);
int tune_command(const Args& args);        // needs the CUDA backend and a device
int summa_command(const Args& args);       // needs MPI; run under mpirun
int apsp_command(const Args& args);        // all-pairs shortest paths (ringmm/apsp.hpp)
int hmm_command(const Args& args);         // HMM Viterbi / forward over many sequences (ringmm/hmm.hpp)

// A usage text with {semirings} and {types} replaced by the registry's lists (builtins.def).
std::string usage_text(std::string_view usage);

}  // namespace ringmm::tools
