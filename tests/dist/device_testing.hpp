// What the device tests (dist_device_test) share: one grid per shape for the whole program, with
// its NCCL communicators, and the reason every rank skips alike where the device path cannot run.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "dist_testing.hpp"
#include "ringmm/dist_device.hpp"

namespace ringmm::testing {

// The grids of this program, one per shape, made on first use with their NCCL communicators and
// kept to the end: making communicators takes most of a second per grid, which every case of
// every test would pay otherwise. Released in TearDown, which runs before MPI_Finalize.
class SharedGrids : public ::testing::Environment {
 public:
  static const dist::Grid& get(int rows, int cols) {
    std::unique_ptr<dist::Grid>& grid = grids()[{rows, cols}];
    if (!grid) grid = std::make_unique<dist::Grid>(MPI_COMM_WORLD, rows, cols);
    return *grid;
  }
  void TearDown() override { grids().clear(); }

 private:
  static std::map<std::pair<int, int>, std::unique_ptr<dist::Grid>>& grids() {
    static std::map<std::pair<int, int>, std::unique_ptr<dist::Grid>> all;
    return all;
  }
};
inline const ::testing::Environment* const shared_grids = ::testing::AddGlobalTestEnvironment(new SharedGrids);

// Why the device tests cannot run here ("" when they can), found once: a rank without a GPU, or
// ranks that would share one. The device set-up refuses alike on every rank.
inline const std::string& reason_to_skip() {
  static const std::string reason = [] {
    int have = cuda_device_available() ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &have, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!have) return std::string("needs a CUDA device on every rank");
    try {
      dist::DeviceDistMatrix<float> one(SharedGrids::get(1, world_size()), 1, 1, 1);
    } catch (const Error& e) {
      if (e.subject() == "ranks" || e.subject() == "device") return std::string(e.what());
      throw;
    }
    return std::string();
  }();
  return reason;
}

#define RINGMM_SKIP_WITHOUT_A_GPU_PER_RANK()                           \
  do {                                                                \
    if (!reason_to_skip().empty()) GTEST_SKIP() << reason_to_skip(); \
  } while (0)

// Options of a device call: the cuda backend and `variant`.
inline dist::Options device_options(dist::Variant variant = dist::Variant::broadcast) {
  dist::Options options;
  options.variant = variant;
  options.context.backend = Backend::cuda;
  return options;
}

// Root's matrix scattered to the devices.
template <class T> dist::DeviceDistMatrix<T> on_devices(const dist::Grid& grid, MatrixView<const T> x, index_t nb) {
  dist::DeviceDistMatrix<T> d(grid, x.rows, x.cols, nb);
  dist::scatter<T>(grid, x, d, 0);
  return d;
}

}  // namespace ringmm::testing
