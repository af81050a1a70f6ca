// ringmm info: what this build contains and what it runs on.
#include <omp.h>

#include <iostream>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "measure/gpu_measure.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

// Defined by the distributed layer (ringmm_dist), which the tool links when it has MPI.
#ifndef RINGMM_HAVE_NCCL
#define RINGMM_HAVE_NCCL 0
#endif

namespace ringmm::tools {

int info_command(const Args& args) {
  const Options opt(args, {});
  auto yes_no = [](bool b) { return b ? "yes" : "no"; };
  std::cout << "ringmm " << version() << "\n\n"
            << "backends compiled in\n"
            << "  cpu     yes\n"
            << "  cuda    " << yes_no(cuda_compiled()) << (cuda_compiled() ? " (architectures " + cuda_architectures() + ")" : "") << "\n"
            << "  blas    " << yes_no(blas_compiled()) << " (OpenBLAS: CPU plus-times baseline)\n"
            << "  mpi     " << yes_no(mpi_compiled()) << " (distributed SUMMA)\n"
            << "  nccl    " << yes_no(RINGMM_HAVE_NCCL) << " (SUMMA between GPUs)\n\n"
            << "cpu       " << cpu_model() << ", " << omp_get_max_threads() << " threads\n"
            << "cpu isa   " << to_string(resolved_cpu_isa(CpuIsa::automatic)) << " (the CPU kernels' widest; this CPU's is "
            << to_string(detected_cpu_isa()) << "; RINGMM_CPU_ISA=generic|avx2|avx512 lowers it)\n";
  std::string why;
  if (cuda_device_available(&why)) {
    for (const std::string& device : measure::describe_devices()) std::cout << "gpu       " << device << "\n";
  } else {
    std::cout << "gpu       none (" << why << ")\n";
  }
  Context automatic;
  automatic.on_notice = [](std::string_view) {};
  std::cout << "default   the automatic backend runs on " << to_string(automatic.resolved_backend()) << "\n\n";

  std::cout << "semiring x type        ";
  for (DType t : all_dtypes) std::cout << std::string(to_string(t)) << std::string(7 - to_string(t).size(), ' ');
  std::cout << "\n";
  for (SemiringKind s : all_semirings) {
    const std::string name(to_string(s));
    std::cout << "  " << name << std::string(21 - name.size(), ' ');
    for (DType t : all_dtypes) std::cout << (is_supported(s, t) ? "yes    " : "-      ");
    std::cout << "\n";
  }
  std::cout << "\n" << b1_type_name << " (bit-packed booleans, ringmm/bits.hpp; CPU): ";
  std::string kinds;
  for (SemiringKind s : all_semirings)
    if (b1_supports(s)) kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(s));
  std::cout << kinds << "\n";
  return 0;
}

}  // namespace ringmm::tools
