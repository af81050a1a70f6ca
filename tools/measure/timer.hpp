// The one timing rule of every ringmm benchmark: an untimed warm-up, then the median of `reps`
// timed runs. A clock times one region: HostClock here (calls that finish before they return);
// the GPU measurements add CUDA events and a device-synchronised wall clock (gpu_timer.cuh).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace ringmm::measure {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

struct HostClock {
  template <class F> double operator()(F&& f) const {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

// run(0) is the warm-up (through the clock, so that it has finished when timing starts); run(1)
// to run(reps) are timed. run receives its index so that it can rotate input sets.
template <class Clock, class Run> double median_seconds(int reps, Clock&& clock, Run&& run) {
  clock([&] { run(0); });
  std::vector<double> seconds;
  for (int r = 1; r <= reps; ++r) seconds.push_back(clock([&] { run(r); }));
  return median(std::move(seconds));
}

template <class F> double median_seconds(int reps, F&& f) {
  return median_seconds(reps, HostClock{}, [&](int) { f(); });
}

}  // namespace ringmm::measure
