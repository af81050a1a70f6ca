// Times the published tropical GEMM kernel (the one behind CuTropicalGEMM.jl) the way `ringmm
// bench` times a call, so that docs/perf/shapes.md can set the two side by side from one session.
// Its code is never part of this repository: lab/device/speed_run.sh builds it from the public
// source (lab/device/published_source.sh) into a shared library, which this program opens.
//
//   published_kernel --lib libpublished.so --shapes 256,1000,2048x128x128 [--reps 20] --out FILE.jsonl
//
// The library's entry point, for f32 max-plus: FLOAT_maxplus(m, n, k, A, B, C, alpha, beta, 'N',
// 'N') on column-major device matrices, C ← max(alpha + A ⊗ B, beta + C) in the tropical sense;
// alpha = 0 and beta = −∞ give C = A ⊗ B. It launches on the legacy default stream, so the events
// are recorded there. Inputs rotate as `ringmm bench` rotates them (tools/measure/gpu_timer.cuh:
// rotation_sets): when one set of A, B, C fits in L2, successive calls read different A and B, so
// that neither side is timed on operands left in L2 by the previous call. Before timing, sampled
// entries of C from every set are compared with a host reference (sums and maxima of floats are
// exact, so they must be equal); a mismatch writes no record.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using MaxPlusFn = void (*)(int, int, int, float*, float*, float*, float, float, char, char);

struct Shape {
  int m, n, k;
};

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// "N" for N³ or "MxNxK", comma-separated.
std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int m = 0, n = 0, k = 0;
    char tail = 0;
    if (std::sscanf(item.c_str(), "%dx%dx%d%c", &m, &n, &k, &tail) == 3) {
    } else if (std::sscanf(item.c_str(), "%d%c", &m, &tail) == 1) {
      n = k = m;
    } else {
      throw std::invalid_argument("--shapes: '" + item + "' is neither N nor MxNxK");
    }
    if (m < 1 || n < 1 || k < 1) throw std::invalid_argument("--shapes: '" + item + "' has a dimension below 1");
    shapes.push_back({m, n, k});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return shapes;
}

std::string utc_now() {
  char text[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

struct DeviceMatrix {
  float* p = nullptr;
  explicit DeviceMatrix(std::size_t count) { check(cudaMalloc(&p, count * sizeof(float)), "cudaMalloc"); }
  ~DeviceMatrix() { cudaFree(p); }
  DeviceMatrix(DeviceMatrix&& other) noexcept : p(std::exchange(other.p, nullptr)) {}
  DeviceMatrix(const DeviceMatrix&) = delete;
  DeviceMatrix& operator=(const DeviceMatrix&) = delete;
};

// ringmm bench's rule: one set when a set overflows L2, else enough sets to span three L2s (2 to 8).
int rotation_sets(double bytes_per_set) {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  if (bytes_per_set > l2) return 1;
  return int(std::clamp(std::ceil(3.0 * l2 / std::max(bytes_per_set, 1.0)), 2.0, 8.0));
}

// The median as tools/measure/timer.hpp takes it (the mean of the middle two of an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// One input set: A and B on the host (for the reference) and on the device.
struct InputSet {
  std::vector<float> a, b;
  DeviceMatrix da, db;
  InputSet(const Shape& s, std::mt19937& rng)
      : a(std::size_t(s.m) * s.k), b(std::size_t(s.k) * s.n), da(a.size()), db(b.size()) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& x : a) x = value(rng);
    for (float& x : b) x = value(rng);
    check(cudaMemcpy(da.p, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy A");
    check(cudaMemcpy(db.p, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy B");
  }
};

struct Timing {
  double seconds = 0;  // median of the timed calls
  int checked = 0;     // entries of C compared with the reference, over every set
  int sets = 0;        // input sets the calls rotated through
};

// One shape: every set's call checked (the warm-up), then the median of `reps` event-timed calls.
Timing time_shape(MaxPlusFn fn, const Shape& s, int reps) {
  const std::size_t c_count = std::size_t(s.m) * s.n;
  const double set_bytes = double(std::size_t(s.m) * s.k + std::size_t(s.k) * s.n + c_count) * sizeof(float);
  Timing t;
  t.sets = rotation_sets(set_bytes);
  std::mt19937 rng(29);
  std::vector<InputSet> sets;
  sets.reserve(t.sets);
  for (int i = 0; i < t.sets; ++i) sets.emplace_back(s, rng);
  DeviceMatrix dc(c_count);
  check(cudaMemset(dc.p, 0, c_count * sizeof(float)), "cudaMemset C");
  const float alpha = 0.0f, beta = -INFINITY;
  const auto call = [&](const InputSet& x) { fn(s.m, s.n, s.k, x.da.p, x.db.p, dc.p, alpha, beta, 'N', 'N'); };

  // The four corners and random entries; column-major: (i, j) at i + j·rows.
  std::vector<float> c(c_count);
  std::uniform_int_distribution<int> row(0, s.m - 1), col(0, s.n - 1);
  for (const InputSet& x : sets) {
    call(x);
    check(cudaGetLastError(), "FLOAT_maxplus");
    check(cudaMemcpy(c.data(), dc.p, c_count * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy C");
    std::vector<std::pair<int, int>> entries = {{0, 0}, {s.m - 1, 0}, {0, s.n - 1}, {s.m - 1, s.n - 1}};
    while (entries.size() < 260) entries.emplace_back(row(rng), col(rng));
    for (const auto& [i, j] : entries) {
      float want = -INFINITY;
      for (int l = 0; l < s.k; ++l)
        want = std::max(want, x.a[i + std::size_t(l) * s.m] + x.b[l + std::size_t(j) * s.k]);
      const float got = c[i + std::size_t(j) * s.m];
      if (got != want) {
        char text[160];
        std::snprintf(text, sizeof text, "C(%d, %d) = %.9g, the reference %.9g", i, j, double(got), double(want));
        throw std::runtime_error(text);
      }
    }
    t.checked += int(entries.size());
  }

  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<double> seconds;
  for (int r = 1; r <= reps; ++r) {
    check(cudaEventRecord(start, nullptr), "cudaEventRecord");
    call(sets[r % t.sets]);
    check(cudaEventRecord(stop, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    seconds.push_back(double(ms) * 1e-3);
  }
  check(cudaGetLastError(), "FLOAT_maxplus");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  t.seconds = median(std::move(seconds));
  return t;
}

int run(int argc, char** argv) {
  std::string lib, shapes_text, out;
  int reps = 20;
  const std::string usage = "usage: published_kernel --lib LIB.so --shapes LIST [--reps R] --out FILE.jsonl";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s\n  LIST: comma-separated N (for N³) or MxNxK; R: timed calls per shape (20)\n", usage.c_str());
      return 0;
    }
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--lib") lib = value;
    else if (flag == "--shapes") shapes_text = value;
    else if (flag == "--out") out = value;
    else if (flag == "--reps") {
      char* end = nullptr;
      const long parsed = std::strtol(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || parsed < 1 || parsed > 100000)
        throw std::invalid_argument("--reps: '" + value + "' is not a count from 1 to 100000");
      reps = int(parsed);
    } else {
      throw std::invalid_argument("unknown option " + flag + " (--lib, --shapes, --reps, --out)");
    }
  }
  if (lib.empty() || shapes_text.empty() || out.empty()) throw std::invalid_argument(usage);
  const std::vector<Shape> shapes = parse_shapes(shapes_text);

  void* handle = dlopen(lib.c_str(), RTLD_NOW);
  if (!handle) throw std::runtime_error("cannot open " + lib + ": " + dlerror());
  const auto fn = reinterpret_cast<MaxPlusFn>(dlsym(handle, "FLOAT_maxplus"));
  if (!fn) throw std::runtime_error(lib + " has no FLOAT_maxplus (built without -DTropicalMaxPlus -DFP32?)");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");

  std::FILE* file = std::fopen(out.c_str(), "w");
  if (!file) throw std::runtime_error("cannot write " + out);
  int failures = 0;
  for (const Shape& s : shapes) {
    try {
      const Timing t = time_shape(fn, s, reps);
      const double seconds = t.seconds, updates = double(s.m) * double(s.n) * double(s.k);
      std::fprintf(file,
                   "{\"suite\": \"bench\", \"device\": \"%s\", \"backend\": \"cuda\", \"kernel\": \"published\", "
                   "\"semiring\": \"max-plus\", \"type\": \"f32\", \"product\": \"gemm\", \"m\": %d, \"n\": %d, "
                   "\"k\": %d, \"batch\": 1, \"seconds\": %.9g, \"updates_per_s\": %.9g, \"date\": \"%s\", "
                   "\"checked\": %d, \"input_sets\": %d}\n",
                   prop.name, s.m, s.n, s.k, seconds, updates / seconds, utc_now().c_str(), t.checked, t.sets);
      std::fflush(file);
      std::printf("published %dx%dx%d: %.4f ms, %.3f x 10^12 updates/s (%d entries checked, %d input set%s)\n", s.m,
                  s.n, s.k, seconds * 1e3, updates / seconds * 1e-12, t.checked, t.sets, t.sets == 1 ? "" : "s");
    } catch (const std::exception& e) {
      ++failures;
      std::printf("published %dx%dx%d: FAILED: %s\n", s.m, s.n, s.k, e.what());
    }
  }
  std::fclose(file);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "published_kernel: %s\n", e.what());
    return 2;
  }
}
