// Autotuning on the GPU: forced split-K parts (Context::cuda_split_k) and tune cache entries give
// the reference's results and are what describe_cuda_choice reports; `ringmm tune` writes a cache
// that `ringmm bench` then reports as the source of its choice. Label gpu; skips without a device.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_testing.hpp"
#include "measure/random_data.hpp"
#include "ringmm/cuda/configs.hpp"
#include "ringmm/cuda/device.hpp"
#include "ringmm/cpu/reference.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm/tune.hpp"

namespace {

using namespace ringmm;
namespace fs = std::filesystem;
using ringmm::testing::DeviceCopy;

// C = A·B over S (row-major, M×K by K×N) on device buffers with ctx, and the CPU reference's C.
template <class S> struct Product {
  using T = typename S::value_type;
  index_t m, n, k;
  std::vector<T> a, b, expected;
  Product(index_t m_, index_t n_, index_t k_) : m(m_), n(n_), k(k_) {
    a = measure::random_vector<S>(std::size_t(m * k), 1, k);
    b = measure::random_vector<S>(std::size_t(k * n), 2, k);
    expected.assign(std::size_t(m * n), S::zero());
    auto p = detail::make_problem<S>(Op::N, row_major<const T>(a.data(), m, k), Op::N,
                                     row_major<const T>(b.data(), k, n), row_major(expected.data(), m, n), S::one(),
                                     S::zero());
    cpu::reference_gemm<S>(p);
  }
  std::vector<T> on_gpu(const Context& ctx) const {
    const DeviceCopy<T> da(a), db(b);
    std::vector<T> c(std::size_t(m * n), S::one());  // not 0̄: an unwritten entry shows
    const DeviceCopy<T> dc(c);
    gemm<S>(ctx, Op::N, row_major<const T>(da.ptr, m, k), Op::N, row_major<const T>(db.ptr, k, n),
            row_major(dc.ptr, m, n));
    dc.to_host(c);
    return c;
  }
};

Context cuda_context() {
  Context ctx;
  ctx.backend = Backend::cuda;
  return ctx;
}

// Points RINGMM_TUNE_CACHE at a file of this test's own for its lifetime, and re-reads it.
class CacheFile {
 public:
  CacheFile() {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("ringmm_tune_test_" + std::to_string(::getpid()) + "_" + test->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    if (const char* old = std::getenv("RINGMM_TUNE_CACHE")) old_ = old;
    ::setenv("RINGMM_TUNE_CACHE", path().c_str(), 1);
    reload_tune_cache();
  }
  ~CacheFile() {
    if (old_) ::setenv("RINGMM_TUNE_CACHE", old_->c_str(), 1);
    else ::unsetenv("RINGMM_TUNE_CACHE");
    reload_tune_cache();
    fs::remove_all(dir_);
  }
  std::string path() const { return (dir_ / "cache.txt").string(); }
  const fs::path& dir() const { return dir_; }
  void write(const std::vector<tune::Entry>& entries) const {
    tune::Cache cache;
    cache.key = current_tune_key();
    for (const tune::Entry& e : entries) cache.put(e);
    tune::write_file(path(), cache);
    reload_tune_cache();
  }

 private:
  fs::path dir_;
  std::optional<std::string> old_;
};

tune::Entry entry(const tune::ShapeClass& shape, std::string config, BorderPolicy border, int split) {
  tune::Entry e;
  e.shape = shape;
  e.config = std::move(config);
  e.border = border;
  e.split_k = split;
  e.updates_per_s = e.heuristic_updates_per_s = 1e12;
  return e;
}

// On the small kernel, split-K's parts meet in thread block clusters where the GPU has them
// (compute capability 9.0; this build is native): members of one batch only, no remainder, at most
// 8 of them; every other split reduces through the workspace. describe_cuda_choice reports what
// runs; NamedSplitsOfKMatchReference checks the results of both.
TEST(ForcedSplitK, PartsMeetInClustersWhereTheGpuHasThem) {
  RINGMM_SKIP_WITHOUT_GPU();
  const bool clusters = cuda_detail::compute_capability() >= 90;
  const Product<MaxPlus<float>> f32(70, 90, 1000);
  Context ctx = cuda_context();
  auto choice = [&](const char* config, int parts) {
    ctx.cuda_config = config;
    ctx.cuda_split_k = parts;
    return describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 70, 90, 1000);
  };
  EXPECT_EQ(choice("small64", 2).split_in_clusters, clusters);
  EXPECT_EQ(f32.on_gpu(ctx), f32.expected);
  EXPECT_EQ(choice("small64", 8).text(),
            std::string("small64 split 8") + (clusters ? " in clusters" : "") + " (caller)");
  EXPECT_EQ(f32.on_gpu(ctx), f32.expected);
  EXPECT_FALSE(choice("small64", 1).split_in_clusters);
  EXPECT_FALSE(choice("small64", 7).split_in_clusters);   // 6 chunks of 144 and a remainder
  EXPECT_FALSE(choice("small64", 16).split_in_clusters);  // 15 chunks of 64 and a remainder
  EXPECT_FALSE(choice("small32", 2).split_in_clusters);   // four tiles a block
  EXPECT_FALSE(choice("b64x64_k16_t4x4_blk", 2).split_in_clusters);
}

TEST(ForcedSplitK, ForcedPartsGiveTheReference) {
  RINGMM_SKIP_WITHOUT_GPU();
  const Product<MaxPlus<float>> f32(70, 90, 1000);
  const Product<MinPlus<std::int32_t>> i32(33, 129, 777);
  for (int parts : {1, 2, 3, 8, 64}) {
    Context ctx = cuda_context();
    ctx.cuda_split_k = parts;
    EXPECT_EQ(f32.on_gpu(ctx), f32.expected) << parts << " parts";
    EXPECT_EQ(i32.on_gpu(ctx), i32.expected) << parts << " parts";
    // The parts that run: chunks of K a multiple of 16 long, so 64 parts of 1000 run as 63 of 16.
    EXPECT_EQ(describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 70, 90, 1000).split_k, parts == 64 ? 63 : parts);
    EXPECT_EQ(describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 70, 90, 1000).source, "caller");
    // With each configuration, and the small kernel, named for the parts.
    std::vector<std::string> configs = {"small16", "small64"};
    for (const auto& c : cuda_detail::config_table) configs.emplace_back(c.name);
    for (const std::string& config : configs) {
      ctx.cuda_config = config;
      EXPECT_EQ(f32.on_gpu(ctx), f32.expected) << parts << " parts, " << config;
      EXPECT_EQ(describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 70, 90, 1000).config, config);
    }
  }
}

TEST(ForcedSplitK, ImpossibleSplitsAreRefusedBeforeAnyWrite) {
  RINGMM_SKIP_WITHOUT_GPU();
  using T = float;
  std::vector<T> a(512, 1), b(512, 2), c(48, 7);
  const DeviceCopy<T> da(a), db(b), dc(c);
  // 4×4×64 (batch 1) or a batch of 2×2×64 products, members 128 elements apart (C: 4).
  auto refused = [&](int parts, index_t batch) {
    Context ctx = cuda_context();
    ctx.cuda_split_k = parts;
    try {
      if (batch == 1)
        gemm<MaxPlus<T>>(ctx, Op::N, row_major<const T>(da.ptr, 4, 64), Op::N, row_major<const T>(db.ptr, 64, 4),
                         row_major(dc.ptr, 4, 4));
      else
        gemm_batched<MaxPlus<T>>(ctx, Op::N, row_major<const T>(da.ptr, 2, 64), 128, Op::N,
                                 row_major<const T>(db.ptr, 64, 2), 128, row_major(dc.ptr, 2, 2), 4, batch);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument);
      EXPECT_EQ(e.subject(), "cuda_split_k");
      return true;
    }
    return false;
  };
  EXPECT_TRUE(refused(-1, 1));
  EXPECT_TRUE(refused(65, 1));  // more parts than K
  EXPECT_TRUE(refused(2, 3));   // a batch
  std::vector<T> after(c.size());
  dc.to_host(after);
  EXPECT_EQ(after, c) << "a refused call wrote C";
  EXPECT_FALSE(refused(64, 1));  // parts of one
  dc.to_host(after);
  EXPECT_EQ(after[0], 3);  // max over k of 1 + 2
}

TEST(TunedEngine, AnEntryForcingAConfigurationIsHonoured) {
  RINGMM_SKIP_WITHOUT_GPU();
  const CacheFile file;
  const Product<MaxPlus<float>> p(100, 120, 300);
  const auto shape = tune::class_of(SemiringKind::max_plus, DType::f32, 100, 120, 300);
  const Context ctx = cuda_context();
  const std::vector<tune::Entry> choices = {
      entry(shape, "b64x64_k16_t4x4_blk", BorderPolicy::predicate, 2),
      entry(shape, "b128x128_k8_t8x8_bcyc", BorderPolicy::pad, 1),
      entry(shape, "small32", BorderPolicy::automatic, 3),
  };
  for (const tune::Entry& e : choices) {
    file.write({e});
    const CudaChoice c = describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 100, 120, 300);
    EXPECT_EQ(c.source, "tune cache");
    EXPECT_EQ(c.config, e.config);
    EXPECT_EQ(c.border, e.border == BorderPolicy::automatic ? "" : std::string(to_string(e.border)));
    EXPECT_EQ(c.split_k, e.split_k);
    EXPECT_EQ(p.on_gpu(ctx), p.expected) << c.text();
    // Another class, a named configuration, or the cache turned off: not the cache's choice.
    EXPECT_EQ(describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 100, 120, 600).source, "heuristic");
    Context named = ctx;
    named.border = BorderPolicy::pad;
    EXPECT_EQ(describe_cuda_choice(named, SemiringKind::max_plus, DType::f32, 100, 120, 300).source, "caller");
    Context off = ctx;
    off.tune_cache = false;
    EXPECT_EQ(describe_cuda_choice(off, SemiringKind::max_plus, DType::f32, 100, 120, 300).source, "heuristic");
  }
  file.write({entry(shape, "heuristic", BorderPolicy::automatic, 0)});
  EXPECT_EQ(describe_cuda_choice(ctx, SemiringKind::max_plus, DType::f32, 100, 120, 300).source,
            "tune cache (heuristic kept)");
  EXPECT_EQ(p.on_gpu(ctx), p.expected);
}

TEST(TunedEngine, ACorruptCacheIsIgnored) {
  RINGMM_SKIP_WITHOUT_GPU();
  const CacheFile file;
  std::ofstream(file.path()) << "ringmm-tune-cache 1\ngpu some other GPU\nsms 1\nversion 0\n";
  reload_tune_cache();
  const Product<MaxPlus<float>> p(100, 120, 300);
  EXPECT_EQ(describe_cuda_choice(cuda_context(), SemiringKind::max_plus, DType::f32, 100, 120, 300).source, "heuristic");
  EXPECT_EQ(p.on_gpu(cuda_context()), p.expected);
}

#ifdef RINGMM_CLI_BINARY
int run(const std::string& command) {
  const int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(TuneCommand, WritesACacheThatBenchReportsAsItsChoice) {
  RINGMM_SKIP_WITHOUT_GPU();
  const CacheFile file;
  const std::string tool = "'" + std::string(RINGMM_CLI_BINARY) + "'";
  const fs::path log = file.dir() / "log.txt";
  ASSERT_EQ(run(tool + " tune --classes 64x64x64 --reps 1 --out '" + file.path() + "' >'" + log.string() + "' 2>&1"), 0)
      << slurp(log);
  const tune::Cache cache = *tune::read_file(file.path(), current_tune_key());
  ASSERT_EQ(cache.entries.size(), 1u);
  EXPECT_EQ(cache.entries[0].shape, tune::class_of(SemiringKind::max_plus, DType::f32, 64, 64, 64));

  const fs::path results = file.dir() / "bench.json";
  ASSERT_EQ(run("RINGMM_TUNE_CACHE='" + file.path() + "' " + tool +
                " bench --backend cuda --semiring max-plus --type f32 --shapes 64x64x64 --reps 1 --out '" +
                results.string() + "' >'" + log.string() + "' 2>&1"),
            0)
      << slurp(log);
  const std::string json = slurp(results);
  EXPECT_NE(json.find("\"choice\": \""), std::string::npos) << json;
  EXPECT_NE(json.find("(tune cache"), std::string::npos) << json;
  EXPECT_NE(slurp(log).find("choice: "), std::string::npos) << slurp(log);
}
#endif

}  // namespace
