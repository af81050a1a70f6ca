// The tune cache's host logic (ringmm/tune.hpp): shape classes, the file format and its strict
// parsing, where the file lives. No GPU needed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ringmm/error.hpp"
#include "ringmm/tune.hpp"

namespace ringmm {
namespace {

namespace fs = std::filesystem;

const tune::CacheKey h100{"NVIDIA H100 80GB HBM3", 132, "0.1.0"};

tune::Entry entry(SemiringKind kind, DType type, index_t m, index_t n, index_t k, index_t batch, std::string config,
                  BorderPolicy border, int split) {
  tune::Entry e;
  e.shape = tune::class_of(kind, type, m, n, k, batch);
  e.config = std::move(config);
  e.border = border;
  e.split_k = split;
  e.updates_per_s = 12.5e12;
  e.heuristic_updates_per_s = 11e12;
  return e;
}

tune::Cache sample() {
  tune::Cache cache;
  cache.key = h100;
  cache.put(entry(SemiringKind::max_plus, DType::f32, 4096, 4096, 4096, 1, "b128x128_k8_t8x8_bcyc", BorderPolicy::pad, 1));
  cache.put(entry(SemiringKind::min_plus, DType::i32, 64, 64, 65536, 1, "small64", BorderPolicy::automatic, 8));
  cache.put(entry(SemiringKind::max_plus, DType::f64, 64, 64, 64, 1024, "heuristic", BorderPolicy::automatic, 0));
  return cache;
}

// The error parse throws for `text` (a valid header, then `body`), or "" when it parses.
std::string parse_error(const std::string& body, const tune::CacheKey& expected = h100) {
  const std::string text = "ringmm-tune-cache 1\ngpu NVIDIA H100 80GB HBM3\nsms 132\nversion 0.1.0\n" + body;
  try {
    tune::parse(text, expected);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format_error);
    return e.what();
  }
  return "";
}

TEST(TuneCache, BucketsArePowersOfTwoRoundedUp) {
  EXPECT_EQ(tune::bucket(0), 1);
  EXPECT_EQ(tune::bucket(1), 1);
  EXPECT_EQ(tune::bucket(2), 2);
  EXPECT_EQ(tune::bucket(3), 4);
  EXPECT_EQ(tune::bucket(1000), 1024);
  EXPECT_EQ(tune::bucket(1024), 1024);
  EXPECT_EQ(tune::bucket(4097), 8192);
  const auto a = tune::class_of(SemiringKind::max_plus, DType::f32, 1000, 1000, 1000);
  const auto b = tune::class_of(SemiringKind::max_plus, DType::f32, 1024, 513, 999);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.packed(), b.packed());
  EXPECT_EQ(a.m, 1024);
}

TEST(TuneCache, EveryFieldOfAClassChangesItsKey) {
  const auto base = tune::class_of(SemiringKind::max_plus, DType::f32, 64, 128, 256, 8);
  auto differs = [&](tune::ShapeClass other) {
    EXPECT_FALSE(other == base);
    EXPECT_NE(other.packed(), base.packed());
  };
  differs(tune::class_of(SemiringKind::min_plus, DType::f32, 64, 128, 256, 8));
  differs(tune::class_of(SemiringKind::max_plus, DType::i32, 64, 128, 256, 8));
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 128, 128, 256, 8));
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 64, 64, 256, 8));
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 64, 128, 512, 8));
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 64, 128, 256, 16));
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 64, 128, 256, 8, true));
  // M and N are not interchangeable.
  differs(tune::class_of(SemiringKind::max_plus, DType::f32, 128, 64, 256, 8));
}

TEST(TuneCache, SerialiseThenParseGivesTheSameCache) {
  const tune::Cache cache = sample();
  const tune::Cache back = tune::parse(tune::serialize(cache), h100);
  EXPECT_EQ(back.key, h100);
  ASSERT_EQ(back.entries.size(), cache.entries.size());
  for (std::size_t i = 0; i < cache.entries.size(); ++i) {
    const tune::Entry &a = cache.entries[i], &b = back.entries[i];
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.config, b.config);
    EXPECT_EQ(a.border, b.border);
    EXPECT_EQ(a.split_k, b.split_k);
    EXPECT_DOUBLE_EQ(a.updates_per_s, b.updates_per_s);
    EXPECT_DOUBLE_EQ(a.heuristic_updates_per_s, b.heuristic_updates_per_s);
  }
  EXPECT_TRUE(back.entries[2].keeps_heuristic());
  const tune::Entry* found = back.find(tune::class_of(SemiringKind::min_plus, DType::i32, 50, 33, 40000));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->config, "small64");
  EXPECT_EQ(back.find(tune::class_of(SemiringKind::min_plus, DType::i32, 50, 33, 40000, 2)), nullptr);
}

TEST(TuneCache, PutReplacesTheEntryOfTheSameClass) {
  tune::Cache cache = sample();
  cache.put(entry(SemiringKind::max_plus, DType::f32, 3000, 4000, 2500, 1, "b64x64_k16_t4x4_blk", BorderPolicy::predicate, 1));
  EXPECT_EQ(cache.entries.size(), 3u);
  EXPECT_EQ(cache.entries[0].config, "b64x64_k16_t4x4_blk");
}

TEST(TuneCache, ParsingIsStrictAndNamesTheLine) {
  EXPECT_EQ(parse_error(""), "");
  EXPECT_EQ(parse_error("# a comment\n\nmax-plus f32 64 64 64 1 gemm heuristic - - 1e12 1e12\n"), "");
  EXPECT_NE(parse_error("max-plus f32 64 64 64 1 gemm heuristic - -\n").find("line 5: an entry has 12 fields"),
            std::string::npos);
  EXPECT_NE(parse_error("max-plus f32 64 64 64 1 gemm heuristic - - 1e12 1e12 extra\n").find("12 fields"),
            std::string::npos);
  // Each refused line, and words its reason must hold.
  const std::pair<const char*, const char*> bad[] = {
      {"max-plus f32 63 64 64 1 gemm heuristic - - 1e12 1e12", "power of two"},
      {"max-plus f32 64 64 64 1 gemm b1x1 pad 1 1e12 1e12", "unknown CUDA configuration 'b1x1'"},
      {"max-plus f32 64 64 64 1 gemm heuristic pad - 1e12 1e12", "takes no border"},
      {"max-plus f32 64 64 64 1 gemm small32 pad 1 1e12 1e12", "the small kernel takes no border"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk - 1 1e12 1e12", "needs pad or predicate"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk auto 1 1e12 1e12", "border: pad, predicate or -"},
      {"max-plus f32 64 64 64 4 gemm b64x64_k16_t4x4_blk pad 2 1e12 1e12", "only a single product"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk pad 0 1e12 1e12", "parts must be 1 to 4096"},
      {"max-plus f32 64 64 1 1 gemm b64x64_k16_t4x4_blk pad 2 1e12 1e12", "more parts than the class's K (1)"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk pad 4294967298 1e12 1e12", "out of range"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk pad two 1e12 1e12", "not a whole number"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk pad 1 -1e12 1e12", "positive rate"},
      {"max-plus f32 64 64 64 1 gemm b64x64_k16_t4x4_blk pad 1 nan 1e12", "positive rate"},
      {"max-plus f32 64 32 64 1 syrk b64x64_k16_t4x4_blk pad 1 1e12 1e12", "syrk"},
      {"max-plus f32 64 64 64 1 gemv b64x64_k16_t4x4_blk pad 1 1e12 1e12", "product: gemm or syrk"},
      {"max-plush f32 64 64 64 1 gemm heuristic - - 1e12 1e12", "max-plush"},
      {"or-and f32 64 64 64 1 gemm heuristic - - 1e12 1e12", "or-and"},
  };
  for (const auto& [line, reason] : bad) {
    const std::string why = parse_error(std::string(line) + "\n");
    EXPECT_NE(why.find("line 5: "), std::string::npos) << line << " -> '" << why << "'";
    EXPECT_NE(why.find(reason), std::string::npos) << line << " -> '" << why << "'";
  }
  const std::string twice = "max-plus f32 64 64 64 1 gemm heuristic - - 1e12 1e12\n";
  EXPECT_NE(parse_error(twice + twice).find("line 6: class: listed twice"), std::string::npos);
}

TEST(TuneCache, AHeaderForAnotherMachineOrVersionIsRefused) {
  const std::string text = tune::serialize(sample());
  for (const tune::CacheKey& other : {tune::CacheKey{"NVIDIA H200", 132, "0.1.0"}, tune::CacheKey{h100.gpu, 114, "0.1.0"},
                                      tune::CacheKey{h100.gpu, 132, "0.2.0"}}) {
    try {
      tune::parse(text, other);
      ADD_FAILURE() << "a cache for another key was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format_error);
      EXPECT_NE(std::string(e.what()).find("written for NVIDIA H100 80GB HBM3 (132 SMs), ringmm 0.1.0"), std::string::npos)
          << e.what();
    }
  }
  for (const std::string broken : {std::string("ringmm-tune-cache 2\n"), std::string("not a cache\n"),
                                   std::string("ringmm-tune-cache 1\ngpu NVIDIA H100 80GB HBM3\n"),
                                   std::string("ringmm-tune-cache 1\nsms 132\n"), std::string()}) {
    EXPECT_THROW(tune::parse(broken, h100), Error) << broken;
  }
}

TEST(TuneCache, TheFileIsFoundFromTheEnvironment) {
  const std::string name = tune::file_name(h100);
  EXPECT_EQ(name, "ringmm-tune-NVIDIA_H100_80GB_HBM3-132sm-0.1.0.txt");
  EXPECT_EQ(tune::cache_path(h100, "off", "/xdg", "/home/u"), "");
  EXPECT_TRUE(tune::disabled("off"));
  EXPECT_FALSE(tune::disabled(nullptr));
  EXPECT_EQ(tune::cache_path(h100, "/some/file.txt", "/xdg", "/home/u"), "/some/file.txt");
  EXPECT_EQ(tune::cache_path(h100, "/some/dir/", "/xdg", "/home/u"), "/some/dir/" + name);
  const std::string dir = fs::temp_directory_path().string();
  EXPECT_EQ(tune::cache_path(h100, dir.c_str(), "/xdg", "/home/u"), (fs::path(dir) / name).string());
  EXPECT_EQ(tune::cache_path(h100, "", "/xdg", "/home/u"), "/xdg/ringmm/" + name);
  EXPECT_EQ(tune::cache_path(h100, nullptr, nullptr, "/home/u"), "/home/u/.cache/ringmm/" + name);
  EXPECT_EQ(tune::cache_path(h100, nullptr, nullptr, nullptr), "");
}

TEST(TuneCache, WriteThenReadTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("ringmm_tune_cache_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string path = (dir / "sub" / "cache.txt").string();
  EXPECT_FALSE(tune::read_file(path, h100).has_value());
  tune::write_file(path, sample());
  const auto back = tune::read_file(path, h100);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->entries.size(), 3u);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  std::ofstream(path, std::ios::app) << "garbage\n";
  EXPECT_THROW(tune::read_file(path, h100), Error);
  fs::remove_all(dir);
}

TEST(TuneCache, AChoiceReadsAsOneLine) {
  CudaChoice c{"kernels", "b64x64_k16_t4x4_blk", "predicate", 4, "tune cache"};
  EXPECT_EQ(c.text(), "b64x64_k16_t4x4_blk predicate split 4 (tune cache)");
  c = {"kernels", "small32", "", 1, "heuristic"};
  EXPECT_EQ(c.text(), "small32 split 1 (heuristic)");
  c = {"cublas", "b128x128_k8_t8x8_bcyc", "pad", 1, "heuristic"};
  EXPECT_EQ(c.text(), "cublas (heuristic)");
  c = {"kernels", "small64", "", 8, "heuristic", true};
  EXPECT_EQ(c.text(), "small64 split 8 in clusters (heuristic)");
}

TEST(TuneCache, DescribingTheChoiceNeedsAGpu) {
  if (cuda_device_available()) GTEST_SKIP() << "a device is present";
  try {
    describe_cuda_choice(Context{}, SemiringKind::max_plus, DType::f32, 64, 64, 64);
    ADD_FAILURE() << "no error without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable);
  }
  EXPECT_THROW(current_tune_key(), Error);
}

}  // namespace
}  // namespace ringmm
