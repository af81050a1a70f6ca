// ringmm microbench: the GPU's throughput ceilings per semiring and element type (the
// microbenchmarks docs/seeds.md describes).
#include <iostream>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/gpu_measure.hpp"
#include "measure/records.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

int microbench_command(const Args& args) {
  const Options opt(args, {{"semiring", true}, {"type", true}, {"out", true}});
  const auto pairs = selected_pairs(opt);
  const auto out = opt.get("out");
  if (out) check_results_path(*out, "--out");
  std::string why;
  if (!cuda_device_available(&why)) throw Error(Errc::backend_unavailable, "cuda", "microbench needs a GPU: " + why);

  const std::string device = gpu_name(), date = utc_timestamp();
  std::vector<measure::Record> records;
  std::cout << "device: " << device << "\n"
            << "semiring    type   level       10^12 updates/s\n";
  for (const auto& [kind, type] : pairs) {
    for (const measure::Ceiling& c : measure::microbench(kind, type)) {
      const std::string s(to_string(kind)), t(to_string(type));
      std::cout << s << std::string(12 - s.size(), ' ') << t << std::string(7 - t.size(), ' ') << c.level
                << std::string(c.level.size() < 12 ? 12 - c.level.size() : 1, ' ') << fixed(c.updates_per_second * 1e-12, 2)
                << std::endl;
      measure::Record r;
      r.suite = "microbench";
      r.device = device;
      r.backend = "ceiling";
      r.kernel = "microbench";
      r.semiring = s;
      r.type = t;
      r.product = c.level;
      r.updates_per_s = c.updates_per_second;
      if (kind == SemiringKind::plus_times) r.flops_per_s = 2 * c.updates_per_second;
      r.date = date;
      records.push_back(r);
    }
  }
  if (out) {
    measure::write_records(*out, records);
    std::cout << "wrote " << *out << " (" << records.size() << " records)\n";
  }
  return 0;
}

}  // namespace ringmm::tools
