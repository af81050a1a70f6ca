// Machine-readable benchmark records (schema: lab/results/README.md), written as JSON or CSV.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ringmm/types.hpp"

namespace ringmm::measure {

struct Record {
  std::string suite;    // bench, microbench, ladder
  std::string device;   // CPU model or GPU name
  std::string backend;  // cpu, cuda, openblas, cublas, ceiling
  std::string kernel;   // ringmm kernel or the baseline's name
  std::string semiring, type;
  std::string product;  // gemm, batched, syrk, or a microbench level
  std::optional<index_t> m, n, k, batch;
  std::optional<double> seconds, seconds_with_transfers, updates_per_s, flops_per_s;
  std::optional<double> host_seconds, graph_seconds;  // `ringmm bench --calls`: per call, host and in a CUDA graph
  std::string date;
  std::string choice;  // ringmm on CUDA: what the engine ran and why (CudaChoice::text); empty = absent
};

// True when `path` ends in .json or .csv, the formats write_records knows; check it before a long run.
bool is_results_path(const std::string& path);
// Writes the records as JSON (a list of objects) or CSV (a header line of every key), chosen by
// the extension. The file appears complete or not at all (temporary file, then rename).
void write_records(const std::string& path, const std::vector<Record>& records);

}  // namespace ringmm::measure
