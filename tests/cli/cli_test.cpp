// Runs the built `ringmm` binary: `multiply` must reproduce numpy's products of the committed
// fixtures; mistakes must give one error line, the right exit status, and no output file.
// Over 500 lines because it is one fixture (a temporary directory and the binary) serving every
// command's cases; each command's cases sit under a heading of their own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ringmm/context.hpp"
#include "ringmm/npy.hpp"

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int status = -1;
  std::string out, err;
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringmm_cli_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string fixture(const std::string& name) { return std::string(RINGMM_CLI_FIXTURES) + "/" + name + ".npy"; }

  // Runs `ringmm <args>` with stdout and stderr captured to files; `env` (VAR=value ...) is set for it.
  Outcome ringmm(const std::string& args, const std::string& env = "") const {
    const std::string out = path("stdout.txt"), err = path("stderr.txt");
    const std::string command =
        env + " '" + std::string(RINGMM_CLI_BINARY) + "' " + args + " >'" + out + "' 2>'" + err + "'";
    const int raw = std::system(command.c_str());
    Outcome r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
  }

  static std::string slurp(const std::string& file) {
    std::ifstream in(file);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // A refused command: exit status, one "ringmm <cmd>: error: ..." line containing `part`, no output.
  void expect_error(const std::string& args, int status, const std::string& part, const std::string& command = "multiply") {
    const Outcome r = ringmm(args);
    EXPECT_EQ(r.status, status) << args << "\n" << r.err;
    const std::string prefix = "ringmm " + command + ": error: ";
    EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
    EXPECT_NE(r.err.find(part), std::string::npos) << "expected '" << part << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(path("c.npy"))) << "a refused command left an output file";
  }

  fs::path dir_;
};

template <class T> std::vector<T> values(const ringmm::npy::Matrix& m) {
  std::vector<T> v(m.data.size() / sizeof(T));
  std::memcpy(v.data(), m.data.data(), m.data.size());
  return v;
}

}  // namespace

TEST_F(CliTest, MaxPlusF32MatchesNumpyExactly) {
  const Outcome r = ringmm("multiply --semiring max-plus --a " + fixture("max_plus_f32_a") + " --b " +
                       fixture("max_plus_f32_b") + " --out " + path("c.npy") + " --backend cpu");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto got = ringmm::npy::read(path("c.npy"));
  const auto expected = ringmm::npy::read(fixture("max_plus_f32_c"));
  EXPECT_EQ(got.rows, expected.rows);
  EXPECT_EQ(got.cols, expected.cols);
  EXPECT_EQ(values<float>(got), values<float>(expected));  // -inf included
}

TEST_F(CliTest, FortranOrderInputGivesTheSameProduct) {
  const Outcome r = ringmm("multiply --semiring max-plus --a " + fixture("max_plus_f32_a_fortran") + " --b " +
                       fixture("max_plus_f32_b") + " --out=" + path("c.npy") + " --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
  EXPECT_EQ(values<float>(ringmm::npy::read(path("c.npy"))), values<float>(ringmm::npy::read(fixture("max_plus_f32_c"))));
}

TEST_F(CliTest, MaxPlusI32MatchesNumpyExactly) {
  const Outcome r = ringmm("multiply --semiring max-plus --type i32 --a " + fixture("max_plus_i32_a") + " --b " +
                       fixture("max_plus_i32_b") + " --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  const auto got = ringmm::npy::read(path("c.npy"));
  EXPECT_EQ(got.dtype, ringmm::DType::i32);
  EXPECT_EQ(values<std::int32_t>(got), values<std::int32_t>(ringmm::npy::read(fixture("max_plus_i32_c"))));
}

TEST_F(CliTest, MaxPlusI16x2AndOrAndBoolMatchNumpy) {
  Outcome r = ringmm("multiply --semiring max-plus --a " + fixture("max_plus_i16x2_a") + " --b " +
                     fixture("max_plus_i16x2_b") + " --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = ringmm::npy::read(path("c.npy"));
  EXPECT_EQ(got.dtype, ringmm::DType::i16x2);
  EXPECT_EQ(values<std::int16_t>(got), values<std::int16_t>(ringmm::npy::read(fixture("max_plus_i16x2_c"))));
  fs::remove(path("c.npy"));
  r = ringmm("multiply --semiring or-and --a " + fixture("or_and_bool_a") + " --b " + fixture("or_and_bool_b") + " --out " +
             path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  got = ringmm::npy::read(path("c.npy"));
  EXPECT_EQ(got.dtype, ringmm::DType::u8);
  EXPECT_EQ(values<std::uint8_t>(got), values<std::uint8_t>(ringmm::npy::read(fixture("or_and_u8_c"))));
}

TEST_F(CliTest, InfoWithoutAGpuSaysSoPlainly) {
  if (ringmm::cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  const Outcome r = ringmm("info");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("gpu       none ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("insufficient"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  nccl    "), std::string::npos) << r.out;
}

TEST_F(CliTest, BenchChecksItsOutputFolderBeforeRunning) {
  expect_error("bench --backend cpu --shapes 64 --out /nonexistent-ringmm-folder/x.json", 2, "does not exist", "bench");
}

TEST_F(CliTest, MinMaxIsCheckedExactAndMaxTimesRefusesNegativeInputs) {
  const Outcome r = ringmm("multiply --semiring min-max --a " + fixture("max_plus_f32_a") + " --b " +
                           fixture("max_plus_f32_b") + " --out " + path("c.npy") + " --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
  fs::remove(path("c.npy"));
  expect_error("multiply --semiring max-times --a " + fixture("plus_times_f32_a") + " --b " +
                   fixture("plus_times_f32_b") + " --out " + path("c.npy") + " --backend cpu",
               1, "is outside the inputs max-times f32 accepts (finite nonnegative values)");
}

// log-plus through the registry's CLI: a product with a whole −∞ row, checked against log-sum-exp
// in long double; +∞ and NaN inputs refused with the semiring's domain and no output.
TEST_F(CliTest, LogPlusMultipliesAndRefusesPlusInfinityAndNaN) {
  const float ninf = -INFINITY;
  const int m = 4, k = 5, n = 3;
  std::vector<float> a = {-1.5f, -0.25f, ninf, -3.0f, -0.5f,  //
                          ninf,  ninf,   ninf, ninf,  ninf,   // a row of −∞: a row of −∞ in C
                          0.0f,  -20.0f, 7.5f, -2.0f, ninf,   //
                          -60.0f, 40.0f, -0.75f, 1.0f, -9.0f};
  std::vector<float> b = {-0.5f, ninf, 2.0f,  -1.0f, -40.0f, ninf, ninf, 3.0f, -0.125f,
                          -2.5f, ninf, -7.0f, 0.0f,  1.5f,   ninf};
  ringmm::npy::write(path("a.npy"), ringmm::DType::f32, m, k, a.data());
  ringmm::npy::write(path("b.npy"), ringmm::DType::f32, k, n, b.data());
  const std::string ab =
      " --semiring log-plus --backend cpu --a " + path("a.npy") + " --b " + path("b.npy") + " --out " + path("c.npy");
  const Outcome r = ringmm("multiply" + ab + " --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (within rounding bound)"), std::string::npos) << r.out;
  const auto c = values<float>(ringmm::npy::read(path("c.npy")));
  ASSERT_EQ(c.size(), std::size_t(m * n));
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long double sum = 0;
      for (int kk = 0; kk < k; ++kk) sum += std::exp((long double)a[i * k + kk] + (long double)b[kk * n + j]);
      const long double ref = std::log(sum);  // −∞ for the empty sum
      if (std::isinf(ref)) EXPECT_EQ(c[i * n + j], ninf) << i << "," << j;
      else EXPECT_NEAR(c[i * n + j], double(ref), 2e-5 + 1e-6 * std::fabs(double(ref))) << i << "," << j;
    }
  fs::remove(path("c.npy"));
  a[7] = INFINITY;
  ringmm::npy::write(path("a.npy"), ringmm::DType::f32, m, k, a.data());
  expect_error("multiply" + ab, 1, "element (1, 2) = inf is outside the inputs log-plus f32 accepts (finite values or −∞)");
  a[7] = ninf;
  b[4] = NAN;
  ringmm::npy::write(path("a.npy"), ringmm::DType::f32, m, k, a.data());
  ringmm::npy::write(path("b.npy"), ringmm::DType::f32, k, n, b.data());
  expect_error("multiply" + ab, 1, "element (1, 1) = nan is outside the inputs log-plus f32 accepts");
}

TEST_F(CliTest, PlusTimesF32MatchesNumpyWithinRounding) {
  for (const std::string& b : {"--b " + fixture("plus_times_f32_b"), "--transb --b " + fixture("plus_times_f32_bt")}) {
    const Outcome r = ringmm("multiply --a " + fixture("plus_times_f32_a") + " " + b + " --out " + path("c.npy"));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("shape     M=13 N=11 K=17"), std::string::npos) << r.out;
    const auto got = values<float>(ringmm::npy::read(path("c.npy")));
    const auto expected = values<float>(ringmm::npy::read(fixture("plus_times_f32_c")));
    ASSERT_EQ(got.size(), expected.size());
    // |A|, |B| <= 1 and K = 17: both sides are within 2·17·ε·17 of the exact value.
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 4 * 17 * 17 * 1.2e-7) << i;
    fs::remove(path("c.npy"));
  }
}

TEST_F(CliTest, AlphaAndBetaWithC0) {
  // max-plus: C = (alpha + A⊗B) max (beta + C0) with C0 = numpy's product: beta = -inf leaves alpha + C.
  const Outcome r = ringmm("multiply --semiring max-plus --a " + fixture("max_plus_i32_a") + " --b " +
                       fixture("max_plus_i32_b") + " --c " + fixture("max_plus_i32_c") + " --alpha 5 --beta -inf --out " +
                       path("c.npy") + " --check");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto got = values<std::int32_t>(ringmm::npy::read(path("c.npy")));
  const auto plain = values<std::int32_t>(ringmm::npy::read(fixture("max_plus_i32_c")));
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], plain[i] + 5);
}

TEST_F(CliTest, UsageMistakesExitWith2) {
  const std::string ab = " --a " + fixture("max_plus_f32_a") + " --b " + fixture("max_plus_f32_b") + " --out " + path("c.npy");
  expect_error("multiply --bogus 1" + ab, 2, "--bogus: unknown option");
  expect_error("multiply --b " + fixture("max_plus_f32_b") + " --out " + path("c.npy"), 2, "--a: required option is missing");
  expect_error("multiply" + ab + " --alpha", 2, "--alpha: missing value");
  expect_error("multiply" + ab + " --alpha 1.5x", 2, "--alpha: '1.5x' is not a number");
  expect_error("multiply" + ab + " --semiring tropical", 2, "unknown value 'tropical'");
  expect_error("multiply" + ab + " --semiring or-and --type f32", 2, "or-and is not available for element type f32");
  expect_error("multiply" + ab + " --transa=yes", 2, "--transa: is a switch and takes no value");
  expect_error("multiply" + ab + " --beta 1", 2, "--beta: needs --c");
  expect_error("multiply" + ab + " stray", 2, "stray: unexpected argument");
}

TEST_F(CliTest, RuntimeFailuresExitWith1AndWriteNothing) {
  const std::string out = " --out " + path("c.npy");
  expect_error("multiply --a " + path("absent.npy") + " --b " + fixture("max_plus_f32_b") + out, 1,
               path("absent.npy") + ": cannot open for reading");
  std::ofstream(path("junk.npy")) << "this is not a numpy file";
  expect_error("multiply --a " + path("junk.npy") + " --b " + fixture("max_plus_f32_b") + out, 1,
               path("junk.npy") + ": not a .npy file");
  // A is 9x14, so B must have 14 rows; A itself (9x14) does not fit.
  expect_error("multiply --a " + fixture("max_plus_f32_a") + " --b " + fixture("max_plus_f32_a") + out, 1,
               "inner dimensions 14 and 9 differ (--transa/--transb transpose)");
  expect_error("multiply --semiring or-and --a " + fixture("max_plus_f32_a") + " --b " + fixture("max_plus_f32_b") + out, 1,
               "or-and is not available for element type f32 (supported: u8)");
  expect_error("multiply --a " + fixture("max_plus_f32_a") + " --b " + fixture("max_plus_i32_b") + out, 1,
               "holds i32 but");
  expect_error("multiply --semiring max-plus --type f64 --a " + fixture("max_plus_f32_a") + " --b " +
                   fixture("max_plus_f32_b") + out,
               1, "holds f32 but --type is f64");
  expect_error("multiply --semiring max-plus --a " + fixture("max_plus_i32_a") + " --b " + fixture("max_plus_i32_b") +
                   " --alpha 0.5" + out,
               1, "--alpha: value 0.5");
}

// op(A) and op(B) can both be 37x29: the message must show which dimensions disagree.
TEST_F(CliTest, InnerDimensionErrorNamesBothOperandsAndTheNumbers) {
  const std::vector<float> zeros(29 * 37);
  ringmm::npy::write(path("a.npy"), ringmm::DType::f32, 29, 37, zeros.data());
  ringmm::npy::write(path("b.npy"), ringmm::DType::f32, 37, 29, zeros.data());
  expect_error("multiply --a " + path("a.npy") + " --transa --b " + path("b.npy") + " --out " + path("c.npy"), 1,
               path("b.npy") + ": op(A) is 37x29 (" + path("a.npy") + ", transposed) but op(B) is 37x29 (" +
                   path("b.npy") + "): inner dimensions 29 and 37 differ\n");
}

// Empty inputs with huge dimensions: m·n once wrapped round (a 144-byte C.npy and exit 0), or
// reached the library as a null C, or std::vector's max_size().
TEST_F(CliTest, ProductTooLargeForMemoryIsRefusedUpFront) {
  auto empty = [&](const std::string& name, ringmm::index_t cols) {
    ringmm::npy::write(path(name), ringmm::DType::f32, 0, cols, nullptr);
    return path(name);
  };
  const std::string tail = " --transa --out " + path("c.npy") + " --semiring max-plus";
  expect_error("multiply --a " + empty("a.npy", 4611686018427387905) + " --b " + empty("b.npy", 4) + tail, 1,
               path("c.npy") + ": C would be 4611686018427387905x4 f32 = 73.8 EB, more than this machine's ");
  expect_error("multiply --a " + empty("a40.npy", ringmm::index_t(1) << 40) + " --b " + path("a40.npy") + tail, 1,
               "C would be 1099511627776x1099511627776 f32 = 4.84 YB, more than");
  expect_error("multiply --a " + empty("a31.npy", ringmm::index_t(1) << 31) + " --b " + path("a31.npy") + tail, 1,
               "C would be 2147483648x2147483648 f32 = 18.4 EB, more than");
  // Fits in 64 bits, not in memory; --check would hold two of them.
  expect_error("multiply --a " + empty("a20.npy", ringmm::index_t(1) << 20) + " --b " + path("a20.npy") + tail + " --check",
               1, "C would be 1048576x1048576 f32 = 4.4 TB (twice that with --check), more than this machine's ");
  // A small product of the same empty inputs is still computed: all 0̄ (-inf for max-plus).
  const Outcome r = ringmm("multiply --a " + empty("a3.npy", 3) + " --b " + empty("b2.npy", 2) + tail);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto c = ringmm::npy::read(path("c.npy"));
  EXPECT_EQ(c.rows, 3);
  EXPECT_EQ(c.cols, 2);
  for (float x : values<float>(c)) EXPECT_EQ(x, -INFINITY);
}

// Through a pipe, a header claiming 2 GB with 128 bytes behind it fails at once.
TEST_F(CliTest, TruncatedInputFromAPipeFailsFast) {
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (16000, 16000), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  std::ofstream(path("claims.npy"), std::ios::binary)
      << std::string("\x93NUMPY\x01\x00", 8) + char(header.size() + 1) + '\0' + header + '\n';
  const Outcome r = ringmm("multiply --a /dev/stdin --b " + fixture("max_plus_f32_b") + " --out " + path("c.npy") +
                           " < '" + path("claims.npy") + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("/dev/stdin: data truncated"), std::string::npos) << r.err;
  const std::string piped = "cat '" + path("claims.npy") + "' | '" + std::string(RINGMM_CLI_BINARY) +
                            "' multiply --a /dev/stdin --b " + fixture("max_plus_f32_b") + " --out " + path("c.npy") +
                            " 2>'" + path("err.txt") + "'";
  const int raw = std::system(piped.c_str());
  EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 1) << raw;
  EXPECT_NE(slurp(path("err.txt")).find("/dev/stdin: data truncated: shape (16000, 16000) needs 2048000000 bytes but the "
                                        "file has 0"),
            std::string::npos)
      << slurp(path("err.txt"));
  EXPECT_FALSE(fs::exists(path("c.npy")));
}

TEST_F(CliTest, GlobalHelpVersionAndUnknownCommand) {
  Outcome r = ringmm("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("multiply"), std::string::npos);
  r = ringmm("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "ringmm " + std::string(ringmm::version()) + "\n");
  r = ringmm("help bench");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: ringmm bench", 0), 0u) << r.out;
  r = ringmm("multiply -h");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: ringmm multiply", 0), 0u) << r.out;
  r = ringmm("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("frobnicate: unknown command"), std::string::npos) << r.err;
  r = ringmm("");
  EXPECT_EQ(r.status, 2);
}

// cuBLAS and NCCL are opened when a command first calls them: loading cuBLAS with the program
// cost every run, `ringmm --version` included, ~90 ms and ~200 MB (lab/reports/startup.py).
TEST_F(CliTest, CommandsWithoutGpuWorkLoadNeitherCublasNorNccl) {
  for (const char* args : {"--version", "help bench", "info", "demo --backend cpu --size 8"}) {
    const Outcome r = ringmm(args, "LD_DEBUG=files");  // glibc's loader lists each library it opens
    ASSERT_EQ(r.status, 0) << args << "\n" << r.err;
    if (r.err.find("file=libc.so") == std::string::npos) GTEST_SKIP() << "the dynamic loader ignores LD_DEBUG";
    for (const char* library : {"libcublas", "libnccl"})
      EXPECT_EQ(r.err.find(library), std::string::npos) << "ringmm " << args << " loaded " << library;
  }
}

TEST_F(CliTest, InfoAndDemo) {
  Outcome r = ringmm("info");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("max-plus"), std::string::npos);
  r = ringmm("demo --backend cpu --size 48");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("10 of 10 products PASS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max-times   f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("min-max     f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("log-plus    f32"), std::string::npos) << r.out;
  // --size is the largest dimension: k was once size + 2 for small sizes.
  r = ringmm("demo --backend cpu --size 3");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("A 3x3, B 3x3,"), std::string::npos) << r.out;
  r = ringmm("demo --backend cpu --size 1");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("A 1x1, B 1x1,"), std::string::npos) << r.out;
}

TEST_F(CliTest, BenchWritesRecords) {
  Outcome r = ringmm("bench --backend cpu --semiring max-plus --type f32 --shapes 16,8x12x20 --reps 1 --out " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[2/2]"), std::string::npos) << r.out;
  const std::string json = slurp(path("r.json"));
  EXPECT_EQ(json.rfind("[\n  {\"suite\": \"bench\"", 0), 0u) << json;
  EXPECT_NE(json.find("\"semiring\": \"max-plus\""), std::string::npos);
  r = ringmm("bench --backend cpu --semiring or-and --shapes 16 --reps 1 --out " + path("r.csv"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(path("r.csv")).rfind("suite,device,backend,kernel,semiring,type,product,m,n,k,batch,seconds,", 0), 0u);
  expect_error("bench --out " + path("r.txt"), 2, "must end in .json or .csv", "bench");
  expect_error("bench --shapes 16x16", 2, "--shapes: '16x16' is neither N nor MxNxK", "bench");
  expect_error("bench --product syrk --shapes 8x16x4", 2, "M must equal N", "bench");
  expect_error("bench --reps 0", 2, "--reps: '0' is out of range", "bench");
}

TEST_F(CliTest, BenchThreadsNameEveryKernel) {
  const Outcome r = ringmm("bench --backend cpu --semiring max-plus,plus-times --type f32 --shapes 16 --reps 1 "
                           "--threads 1,2 --out " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[4/4]"), std::string::npos) << r.out;
  const std::string json = slurp(path("r.json"));
  EXPECT_NE(json.find("\"kernel\": \"ringmm t1\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kernel\": \"ringmm t2\""), std::string::npos) << json;
  expect_error("bench --threads 0", 2, "--threads: '0' is out of range", "bench");
}

// Narrow operand types: their rows run after the others and compare with the accumulator type's.
TEST_F(CliTest, BenchTimesNarrowTypes) {
  const Outcome r = ringmm("bench --backend cpu --semiring max-plus,max-min --type f32,i32,bf16,i8 --shapes 16 --reps 1 "
                           "--out " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("[7/7]"), std::string::npos) << r.out;  // f32, i32, bf16 twice each; i8 max-plus only
  EXPECT_NE(r.out.find("over f32 operands of this run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over i32 operands of this run"), std::string::npos) << r.out;
  const std::string json = slurp(path("r.json"));
  EXPECT_NE(json.find("\"type\": \"bf16\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"type\": \"i8\""), std::string::npos) << json;
  expect_error("bench --type i8 --semiring max-min", 2, "i8 in max-plus and min-plus", "bench");
  expect_error("bench --type bf16 --product argmax", 2, "narrow types (bf16, f16, i8) time gemm only", "bench");
  expect_error("bench --type f32,f16 --calls 10", 2, "--calls: applies to the registry's types, not to bf16, f16 or i8", "bench");
}

TEST_F(CliTest, BenchChecksItsCudaOptions) {
  // The ladder and the ceilings' own command live in the lab's executable (ringmm-lab).
  expect_error("bench --ladder", 2, "--ladder: unknown option", "bench");
  const Outcome microbench = ringmm("microbench");
  EXPECT_EQ(microbench.status, 2);
  EXPECT_NE(microbench.err.find("microbench: unknown command"), std::string::npos) << microbench.err;
  expect_error("bench --tune", 2, "--tune: unknown option", "bench");  // the sweep is ringmm-lab tune-cpu
  expect_error("bench --host-memory mapped", 2, "--host-memory: unknown value 'mapped'", "bench");
  expect_error("bench --backend cpu --host-memory pinned", 1, "times CUDA transfers", "bench");
  expect_error("bench --backend cpu --calls 100", 1, "--calls: times calls on device buffers", "bench");
  expect_error("bench --backend cpu --sign-known", 1, "--sign-known: times the CUDA kernels' sign-known update", "bench");
  expect_error("bench --calls 0", 2, "--calls: '0' is out of range", "bench");
  expect_error("bench --product syrk --transpose-a", 2, "--transpose-a: syrk computes", "bench");
  expect_error("bench --backend cpu --transpose-a", 1, "--transpose-a: applies to the CUDA backend", "bench");
}

TEST_F(CliTest, TuneChecksItsArgumentsThenNeedsAGpu) {
  expect_error("tune --classes huge", 2, "--classes: 'huge' is neither a class", "tune");
  expect_error("tune --classes 64x64", 2, "'64x64' is not MxNxK[xBATCH]", "tune");
  expect_error("tune --reps 0", 2, "--reps", "tune");
  expect_error("tune --semiring max-plus --type u8", 2, "max-plus", "tune");
  expect_error("tune --size 3", 2, "--size", "tune");
  expect_error("tune --out off", 2, "--out: 'off' names no file", "tune");  // not RINGMM_TUNE_CACHE's off
  const Outcome help = ringmm("tune --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("usage: ringmm tune"), std::string::npos) << help.out;
  if (ringmm::cuda_device_available()) GTEST_SKIP() << "a GPU is present";
  expect_error("tune", 1, "tune needs a GPU", "tune");
  expect_error("tune --dry-run --classes small", 1, "tune needs a GPU", "tune");
}

// ---- ringmm apsp --------------------------------------------------------------------------------

namespace {
// 0 → 1 → 2 → 3 (length 4) beats 0 → 2 → 3 (5); the edge 3 → 1 is negative; 4 is isolated.
const char* const small_graph =
    "%%MatrixMarket matrix coordinate real general\n% a comment\n5 5 6\n1 2 1\n2 3 2\n1 3 4\n3 4 1\n4 2 -1\n2 4 5\n";

void write_text(const std::string& file, const std::string& text) { std::ofstream(file) << text; }
}  // namespace

TEST_F(CliTest, ApspWritesDistancesAndSuccessors) {
  write_text(path("g.mtx"), small_graph);
  const Outcome r = ringmm("apsp " + path("g.mtx") + " --out " + path("c.npy") + " --next " + path("n.npy") + " --block 2");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto d = ringmm::npy::read(path("c.npy"));
  const auto next = ringmm::npy::read(path("n.npy"));
  EXPECT_EQ(d.dtype, ringmm::DType::f64);
  EXPECT_EQ(next.dtype, ringmm::DType::i32);
  const double inf = INFINITY;
  EXPECT_EQ(values<double>(d), (std::vector<double>{0, 1, 3, 4, inf, inf, 0, 2, 3, inf, inf, 0, 0, 1, inf, inf, -1, 1, 0, inf,
                                                    inf, inf, inf, inf, 0}));
  EXPECT_EQ(values<std::int32_t>(next), (std::vector<std::int32_t>{0, 1, 1, 1, -1, -1, 1, 2, 2, -1, -1, 3, 2, 3, -1,
                                                                   -1, 1, 1, 3, -1, -1, -1, -1, -1, 4}));
  EXPECT_NE(r.out.find("updates/s"), std::string::npos) << r.out;
}

TEST_F(CliTest, ApspPrintsRoutes) {
  write_text(path("g.mtx"), small_graph);
  Outcome r = ringmm("apsp " + path("g.mtx") + " --route 0 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("route     0 to 3: 0 -> 1 -> 2 -> 3 (length 4, 3 edges)"), std::string::npos) << r.out;
  r = ringmm("apsp --route 3 2 " + path("g.mtx"));
  EXPECT_NE(r.out.find("route     3 to 2: 3 -> 1 -> 2 (length 1, 2 edges)"), std::string::npos) << r.out;
  r = ringmm("apsp " + path("g.mtx") + " --route 0 4");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("route     0 to 4: no path"), std::string::npos) << r.out;
  r = ringmm("apsp " + path("g.mtx") + " --route 2 2");
  EXPECT_NE(r.out.find("route     2 to 2: 2 (length 0, 0 edges)"), std::string::npos) << r.out;
  expect_error("apsp " + path("g.mtx") + " --out " + path("c.npy") + " --route 0 5", 2, "vertex 5 is out of range", "apsp");
  expect_error("apsp " + path("g.mtx") + " --route 0", 2, "needs two vertices", "apsp");
  expect_error("apsp " + path("g.mtx") + " --route 0 x", 2, "--route", "apsp");
}

// A zero-weight cycle (3 → 5 → 4 → 3) whose vertices fall into two blocks of 4, and a file that
// repeats entries more often than a 2x2 matrix has entries (the best weight of each stays).
TEST_F(CliTest, ApspRoutesAroundZeroWeightCyclesAndReadsRepeatedEntries) {
  write_text(path("z.mtx"),
             "%%MatrixMarket matrix coordinate real general\n8 8 11\n1 8 2\n4 6 0\n7 1 2\n3 6 1\n4 8 0\n8 7 1\n"
             "1 2 2\n5 4 0\n6 5 0\n3 1 1\n3 6 0\n");
  for (const char* block : {"1", "3", "4", "8"}) {
    const Outcome r = ringmm("apsp " + path("z.mtx") + " --route 3 0 --backend cpu --block " + block);
    ASSERT_EQ(r.status, 0) << "block " << block << ": " << r.err;
    EXPECT_NE(r.out.find("route     3 to 0: 3 -> 7 -> 6 -> 0 (length 3, 3 edges)"), std::string::npos) << r.out;
  }
  write_text(path("rep.mtx"), "%%MatrixMarket matrix coordinate real general\n2 2 5\n1 2 3\n1 2 1\n2 1 4\n2 1 2\n1 2 5\n");
  const Outcome r = ringmm("apsp " + path("rep.mtx") + " --backend cpu --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<double>(ringmm::npy::read(path("c.npy"))), (std::vector<double>{0, 1, 2, 0}));
}

TEST_F(CliTest, ApspReadsNpyAndSymmetricMtxAndLongestPaths) {
  const float inf = INFINITY;
  const std::vector<float> w{inf, 2, inf, inf, inf, 3, 1, inf, inf};  // 0 → 1 → 2 → 0
  ringmm::npy::write(path("g.npy"), ringmm::DType::f32, 3, 3, w.data());
  Outcome r = ringmm("apsp " + path("g.npy") + " --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<float>(ringmm::npy::read(path("c.npy"))), (std::vector<float>{0, 2, 5, 4, 0, 3, 1, 3, 0}));
  write_text(path("s.mtx"), "%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 4\n3 2 1\n");
  r = ringmm("apsp " + path("s.mtx") + " --route 2 0");
  EXPECT_NE(r.out.find("2 -> 1 -> 0 (length 5, 2 edges)"), std::string::npos) << r.out << r.err;
  write_text(path("dag.mtx"), "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 2 1\n2 4 1\n1 3 1\n3 4 5\n");
  r = ringmm("apsp " + path("dag.mtx") + " --longest --route 0 3");
  EXPECT_NE(r.out.find("0 -> 2 -> 3 (length 6, 2 edges)"), std::string::npos) << r.out << r.err;
  write_text(path("cyc.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 1 1\n");
  fs::remove(path("c.npy"));
  expect_error("apsp " + path("cyc.mtx") + " --longest --backend cpu --out " + path("c.npy"), 1, "positive cycle", "apsp");
}

TEST_F(CliTest, ApspRefusesBadGraphsAndWritesNothing) {
  auto refused = [&](const std::string& graph, int status, const std::string& part) {
    expect_error("apsp " + graph + " --backend cpu --out " + path("c.npy") + " --next " + path("n.npy"), status, part, "apsp");
    EXPECT_FALSE(fs::exists(path("n.npy"))) << graph;
  };
  write_text(path("bad.mtx"), "%%MatrixMarket matrix coordinate real\n2 2 1\n1 2 1\n");
  refused(path("bad.mtx"), 1, "bad header");
  write_text(path("trunc.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1\n");
  refused(path("trunc.mtx"), 1, "ends after 1 of the 3 entries");
  write_text(path("nan.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n");
  refused(path("nan.mtx"), 1, "line 3: weight is NaN");
  write_text(path("range.mtx"), "%%MatrixMarket matrix coordinate real general\n3 3 1\n1 4 2\n");
  refused(path("range.mtx"), 1, "out of range");
  const std::vector<float> rect(6, 1.0f);
  ringmm::npy::write(path("rect.npy"), ringmm::DType::f32, 2, 3, rect.data());
  refused(path("rect.npy"), 1, "2x3; it must be square");
  std::vector<double> nan_weights(4, 1.0);
  nan_weights[1] = NAN;
  ringmm::npy::write(path("nan.npy"), ringmm::DType::f64, 2, 2, nan_weights.data());
  refused(path("nan.npy"), 1, "weight (0, 1) is NaN");
  const std::vector<std::int32_t> ints(4, 1);
  ringmm::npy::write(path("int.npy"), ringmm::DType::i32, 2, 2, ints.data());
  refused(path("int.npy"), 1, "f32 or f64");
  write_text(path("neg.mtx"), "%%MatrixMarket matrix coordinate real general\n4 4 4\n1 2 1\n2 3 -2\n3 2 1\n4 4 -1\n");
  refused(path("neg.mtx"), 1, "negative cycle");
  const Outcome r = ringmm("apsp " + path("neg.mtx") + " --backend cpu --out " + path("c.npy"));
  EXPECT_NE(r.err.find("3 vertices lie on one (0-based): 1, 2, 3"), std::string::npos) << r.err;
  refused(path("missing.mtx"), 1, "cannot open");
  write_text(path("huge.mtx"), "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 0\n");
  refused(path("huge.mtx"), 1, "more than this machine's");
  refused(path("graph.txt"), 1, "expected a .mtx");
  expect_error("apsp " + path("bad.mtx"), 2, "nothing to do", "apsp");
  expect_error("apsp --out " + path("c.npy"), 2, "no graph given", "apsp");
  expect_error("apsp --bench 0", 2, "--bench", "apsp");
}

TEST_F(CliTest, ApspBenchWritesARecord) {
  const Outcome r = ringmm("apsp --bench 100 --density 0.5 --backend cpu --block 32 --reps 2 --record " + path("r.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("median of 2"), std::string::npos) << r.out;
  const std::string json = slurp(path("r.json"));
  EXPECT_NE(json.find("\"suite\": \"apsp\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"kernel\": \"blocked-fw-argmax b=32\""), std::string::npos) << json;
}

namespace {

// ---- ringmm hmm -------------------------------------------------------------------------------

class HmmCliTest : public CliTest {
 protected:
  // A 2-state model, B = 2 sequences of T = 3 steps; state 1 → 0 forbidden.
  void write_model(float emit_nan_at = -1) {
    const float ninf = -INFINITY;
    const float init[] = {std::log(0.6f), std::log(0.4f)};
    const float trans[] = {std::log(0.7f), std::log(0.3f), ninf, 0.0f};
    std::vector<float> emit = {-1, -2, -3, -0.5f, -1, -1, -2, -0.1f, -0.2f, -3, -1, -1};  // row t*B + b
    if (emit_nan_at >= 0) emit[std::size_t(emit_nan_at)] = NAN;
    ringmm::npy::write(path("init.npy"), ringmm::DType::f32, 1, 2, init);
    ringmm::npy::write(path("trans.npy"), ringmm::DType::f32, 2, 2, trans);
    ringmm::npy::write(path("emit.npy"), ringmm::DType::f32, 6, 2, emit.data());
  }
  std::string files() const {
    return "--init '" + path("init.npy") + "' --trans '" + path("trans.npy") + "' --emit '" + path("emit.npy") + "' --batch 2";
  }
};

TEST_F(HmmCliTest, ViterbiAndForwardWriteTheirFiles) {
  write_model();
  Outcome r = ringmm("hmm viterbi " + files() + " --out '" + path("paths.npy") + "' --scores '" + path("scores.npy") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto paths = ringmm::npy::read(path("paths.npy"));
  ASSERT_EQ(paths.dtype, ringmm::DType::i32);
  ASSERT_EQ(paths.rows, 2);
  ASSERT_EQ(paths.cols, 3);
  // Brute force over the 8 paths of each sequence.
  const float ninf = -INFINITY;
  const float init[] = {std::log(0.6f), std::log(0.4f)}, trans[] = {std::log(0.7f), std::log(0.3f), ninf, 0.0f};
  const float emit[] = {-1, -2, -3, -0.5f, -1, -1, -2, -0.1f, -0.2f, -3, -1, -1};
  const auto got = values<std::int32_t>(paths);
  const auto scores = values<float>(ringmm::npy::read(path("scores.npy")));
  for (int b = 0; b < 2; ++b) {
    float best = ninf;
    int best_code = -1;
    for (int code = 0; code < 8; ++code) {
      const int s0 = code >> 2 & 1, s1 = code >> 1 & 1, s2 = code & 1;
      const float v = init[s0] + emit[b * 2 + s0] + trans[s0 * 2 + s1] + emit[(2 + b) * 2 + s1] + trans[s1 * 2 + s2] +
                      emit[(4 + b) * 2 + s2];
      if (v > best) best = v, best_code = code;
    }
    EXPECT_EQ(got[std::size_t(b * 3)], best_code >> 2 & 1);
    EXPECT_EQ(got[std::size_t(b * 3 + 1)], best_code >> 1 & 1);
    EXPECT_EQ(got[std::size_t(b * 3 + 2)], best_code & 1);
    EXPECT_NEAR(scores[std::size_t(b)], best, 1e-5);
  }
  r = ringmm("hmm forward " + files() + " --out '" + path("loglik.npy") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(ringmm::npy::read(path("loglik.npy")).rows, 2);
}

TEST_F(HmmCliTest, BadInputsWriteNothing) {
  write_model(5);
  const std::string out = " --out '" + path("c.npy") + "'";
  expect_error("hmm viterbi " + files() + out, 1, "nan", "hmm");
  write_model();
  std::string batch_of_4 = files();
  batch_of_4.replace(batch_of_4.find("--batch 2"), 9, "--batch 4");
  expect_error("hmm viterbi " + batch_of_4 + out, 1, "multiple of --batch 4", "hmm");
  expect_error("hmm forward --init '" + path("init.npy") + "' --trans '" + path("emit.npy") + "' --emit '" + path("emit.npy") +
                   "' --batch 2" + out,
               1, "S x S", "hmm");
  expect_error("hmm viterbi --init '" + path("trans.npy") + "' --trans '" + path("trans.npy") + "' --emit '" + path("emit.npy") +
                   "' --batch 2" + out,
               1, "initial", "hmm");
  expect_error("hmm forward " + files() + " --batch 4" + out, 2, "more than once", "hmm");
  expect_error("hmm backward " + files() + out, 2, "'backward'", "hmm");
  expect_error("hmm viterbi --bench 2,3" , 2, "B,S,T", "hmm");
  expect_error("hmm viterbi --bench 2,3,4 --out '" + path("c.npy") + "'", 2, "--out", "hmm");
  // The scores file is not left behind when the paths cannot be written.
  const Outcome r = ringmm("hmm viterbi " + files() + " --scores '" + path("s.npy") + "' --out '" + path("no/such/dir/p.npy") + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(fs::exists(path("s.npy")));
}

TEST_F(HmmCliTest, BenchRunsOnTheCpuAndWritesARecord) {
  const Outcome r = ringmm("hmm viterbi --bench 4,8,5 --backend cpu --reps 1 --record '" + path("r.json") + "'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("updates/s"), std::string::npos) << r.out;
  EXPECT_NE(slurp(path("r.json")).find("\"suite\": \"hmm\""), std::string::npos);
}

}  // namespace

// b1: np.packbits files (K = 77, not a whole number of bytes) against numpy's products, in both
// bit orders, with B as its transpose (read as it is) and as itself (repacked by the tool).
TEST_F(CliTest, B1PackedFilesMatchNumpy) {
  const std::string cols = " --a-cols 77 --b-cols 77";
  for (const std::string order : {"big", "little"}) {
    const std::string ab = " --type b1 --a " + fixture("b1_a_" + order) + " --b " + fixture("b1_bt_" + order) +
                           " --transb" + cols + " --bitorder " + order + " --out " + path("c.npy");
    Outcome r = ringmm("multiply --semiring or-and" + ab + " --check");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("shape     M=9 N=13 K=77"), std::string::npos) << r.out;
    auto got = ringmm::npy::read(path("c.npy"));
    EXPECT_EQ(got.dtype, ringmm::DType::u8);
    EXPECT_EQ(values<std::uint8_t>(got), values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c")))) << order;
    fs::remove(path("c.npy"));
    r = ringmm("multiply --semiring plus-times" + ab);  // counts
    ASSERT_EQ(r.status, 0) << r.err;
    got = ringmm::npy::read(path("c.npy"));
    EXPECT_EQ(got.dtype, ringmm::DType::i32);
    EXPECT_EQ(values<std::int32_t>(got), values<std::int32_t>(ringmm::npy::read(fixture("b1_counts_c")))) << order;
    fs::remove(path("c.npy"));
  }
  // A as its transpose (K x M = 77 x 9 bits, --transa): repacked.
  Outcome t = ringmm("multiply --semiring or-and --type b1 --a " + fixture("b1_at_big") + " --transa --a-cols 9 --b " +
                     fixture("b1_bt_big") + " --transb --b-cols 77 --out " + path("c.npy"));
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(values<std::uint8_t>(ringmm::npy::read(path("c.npy"))), values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c"))));
  fs::remove(path("c.npy"));
  // B as itself (K x N = 77 x 13 bits), packed output: numpy's np.packbits(C, axis=1).
  const Outcome r = ringmm("multiply --semiring or-and --type b1 --a " + fixture("b1_a_big") + " --b " +
                           fixture("b1_b_big") + " --a-cols 77 --b-cols 13 --packed-out --check --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
  const auto got = ringmm::npy::read(path("c.npy"));
  EXPECT_EQ(got.rows, 9);
  EXPECT_EQ(got.cols, 2);
  EXPECT_EQ(values<std::uint8_t>(got), values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c_packed_big"))));
}

// alpha = 0 with a packed C0 keeps C0 (its pad bits cleared); alpha = 1 ORs the product in; counts
// with alpha and beta.
TEST_F(CliTest, B1AlphaBetaAndPackedC0) {
  const std::string ab = " --type b1 --a " + fixture("b1_a_big") + " --b " + fixture("b1_bt_big") +
                         " --transb --a-cols 77 --b-cols 77 --out " + path("c.npy");
  std::vector<std::uint8_t> c0(9 * 2);  // 9x13 bits, big order: the second byte's low 3 bits are padding
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = std::uint8_t(i * 37 + 11);
  ringmm::npy::write(path("c0.npy"), ringmm::DType::u8, 9, 2, c0.data());
  Outcome r = ringmm("multiply --semiring or-and" + ab + " --c " + path("c0.npy") + " --packed-out --alpha 0 --check");
  ASSERT_EQ(r.status, 0) << r.err;
  auto got = values<std::uint8_t>(ringmm::npy::read(path("c.npy")));
  ASSERT_EQ(got.size(), c0.size());
  for (std::size_t i = 0; i < c0.size(); ++i) EXPECT_EQ(got[i], i % 2 ? c0[i] & 0xf8 : c0[i]) << i;
  fs::remove(path("c.npy"));
  r = ringmm("multiply --semiring or-and" + ab + " --c " + path("c0.npy") + " --packed-out --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
  got = values<std::uint8_t>(ringmm::npy::read(path("c.npy")));
  const auto product = values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c_packed_big")));
  for (std::size_t i = 0; i < c0.size(); ++i) EXPECT_EQ(got[i], (i % 2 ? c0[i] & 0xf8 : c0[i]) | product[i]) << i;
  fs::remove(path("c.npy"));

  std::vector<std::int32_t> counts0(9 * 13);
  for (std::size_t i = 0; i < counts0.size(); ++i) counts0[i] = std::int32_t(i * 7) - 300;
  ringmm::npy::write(path("counts0.npy"), ringmm::DType::i32, 9, 13, counts0.data());
  r = ringmm("multiply --semiring plus-times" + ab + " --c " + path("counts0.npy") + " --alpha 3 --beta -2 --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
  const auto counts = values<std::int32_t>(ringmm::npy::read(fixture("b1_counts_c")));
  const auto sums = values<std::int32_t>(ringmm::npy::read(path("c.npy")));
  ASSERT_EQ(sums.size(), counts.size());
  for (std::size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sums[i], 3 * counts[i] - 2 * counts0[i]) << i;
}

TEST_F(CliTest, B1MistakesAreClearErrors) {
  const std::string a = " --a " + fixture("b1_a_big"), bt = " --b " + fixture("b1_bt_big") + " --transb";
  const std::string out = " --out " + path("c.npy");
  expect_error("multiply --type b1" + a + bt + " --b-cols 77" + out, 2,
               "--a-cols: --type b1 needs the bits per row of the packed A file");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77" + out, 2, "--b-cols: --type b1 needs");
  expect_error("multiply --semiring max-plus --type b1" + a + bt + " --a-cols 77 --b-cols 77" + out, 2,
               "b1 products are or-and and plus-times");
  expect_error("multiply --semiring or-and" + a + bt + " --a-cols 77" + out, 2, "--a-cols: applies to --type b1");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77 --b-cols 77 --packed-out" + out, 2,
               "--packed-out: counts are int32");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77 --b-cols 77 --bitorder middle" + out, 2,
               "--bitorder: unknown value 'middle' (valid: big, little)");
  // 10 bytes per row hold 73 to 80 bits.
  expect_error("multiply --type b1" + a + bt + " --a-cols 72 --b-cols 77" + out, 1,
               fixture("b1_a_big") + ": has 10 bytes per row, which hold 73 to 80 bits, but --a-cols is 72");
  expect_error("multiply --type b1" + a + bt + " --a-cols 81 --b-cols 77" + out, 1, "but --a-cols is 81");
  // The K of A and of B^T must agree (A: 80 bits per row here, B^T: 77).
  expect_error("multiply --type b1" + a + bt + " --a-cols 80 --b-cols 77" + out, 1, "inner dimensions 80 and 77 differ");
  expect_error("multiply --type b1 --a " + fixture("or_and_bool_a") + bt + " --a-cols 10 --b-cols 77" + out, 1,
               "holds numpy bools; --type b1 reads uint8 bytes packed by np.packbits");
  expect_error("multiply --type b1 --a " + fixture("max_plus_i32_a") + bt + " --a-cols 12 --b-cols 77" + out, 1,
               "holds i32; --type b1 reads uint8");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77 --b-cols 77 --c " + fixture("b1_or_and_c") + out, 1,
               "holds u8 but C is i32");
  expect_error("multiply --semiring or-and --type b1" + a + bt + " --a-cols 77 --b-cols 77 --packed-out --c " +
                   fixture("b1_or_and_c") + out,
               1, "C0 is 9x13 but with --packed-out C is 9x2 bytes (9x13 bits)");
  expect_error("multiply --semiring or-and --type b1" + a + bt + " --a-cols 77 --b-cols 77 --backend cuda" + out, 2,
               "b1 products from files run on the CPU");
}

// b1 as 32-bit words ('<u4', column c at bit c % 32 of word c / 32; the fixtures' tail bits are
// set, so they must be ignored): the same C as the np.packbits files, and as u8 or-and and i32
// plus-times on the booleans unpacked here, bit by bit, from the words.
TEST_F(CliTest, B1Uint32WordsMatchPackbitsFilesAndUnpackedBooleans) {
  const auto or_and_c = values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c")));
  const auto counts_c = values<std::int32_t>(ringmm::npy::read(fixture("b1_counts_c")));
  const std::string cols = " --a-cols 77 --b-cols 77 --transb --out " + path("c.npy");
  const std::string words = " --type b1 --a " + fixture("b1_a_u32") + " --b " + fixture("b1_bt_u32") + cols;
  const std::string bytes = " --type b1 --a " + fixture("b1_a_big") + " --b " + fixture("b1_bt_big") + cols;
  std::vector<std::uint8_t> from_bytes;
  for (const std::string& files : {bytes, words}) {
    Outcome r = ringmm("multiply --semiring or-and" + files + " --check");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
    const auto c = values<std::uint8_t>(ringmm::npy::read(path("c.npy")));
    if (files == bytes) from_bytes = c;
    else EXPECT_EQ(c, from_bytes) << "uint32 words and np.packbits bytes of the same booleans differ";
    EXPECT_EQ(c, or_and_c);
    fs::remove(path("c.npy"));
  }
  Outcome r = ringmm("multiply --semiring plus-times" + words);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(b1: A uint32, B uint32)"), std::string::npos) << r.out;
  EXPECT_EQ(values<std::int32_t>(ringmm::npy::read(path("c.npy"))), counts_c);
  fs::remove(path("c.npy"));

  // The booleans decoded from the words by the layout's rule, multiplied unpacked.
  auto unpack = [&](const std::string& name, ringmm::index_t cols) {
    const auto file = ringmm::npy::read(fixture(name), {.uint32_words = true});
    EXPECT_TRUE(file.uint32_words) << name;
    const auto w = values<std::uint32_t>(file);
    std::vector<std::uint8_t> u8(std::size_t(file.rows * cols));
    for (ringmm::index_t i = 0; i < file.rows; ++i)
      for (ringmm::index_t c = 0; c < cols; ++c)
        u8[std::size_t(i * cols + c)] = (w[std::size_t(i * file.cols + c / 32)] >> (c % 32)) & 1u;
    return std::pair{u8, file.rows};
  };
  const auto [a_u8, m] = unpack("b1_a_u32", 77);
  const auto [bt_u8, n] = unpack("b1_bt_u32", 77);
  ringmm::npy::write(path("a_u8.npy"), ringmm::DType::u8, m, 77, a_u8.data());
  ringmm::npy::write(path("bt_u8.npy"), ringmm::DType::u8, n, 77, bt_u8.data());
  const std::vector<std::int32_t> a_i32(a_u8.begin(), a_u8.end()), bt_i32(bt_u8.begin(), bt_u8.end());
  ringmm::npy::write(path("a_i32.npy"), ringmm::DType::i32, m, 77, a_i32.data());
  ringmm::npy::write(path("bt_i32.npy"), ringmm::DType::i32, n, 77, bt_i32.data());
  r = ringmm("multiply --semiring or-and --type u8 --a " + path("a_u8.npy") + " --b " + path("bt_u8.npy") + " --transb --out " +
             path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<std::uint8_t>(ringmm::npy::read(path("c.npy"))), from_bytes);
  fs::remove(path("c.npy"));
  r = ringmm("multiply --semiring plus-times --type i32 --a " + path("a_i32.npy") + " --b " + path("bt_i32.npy") +
             " --transb --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<std::int32_t>(ringmm::npy::read(path("c.npy"))), counts_c);
  fs::remove(path("c.npy"));

  // One file of each kind: --bitorder is the uint8 file's (little here, big by default).
  for (const std::string& mixed :
       {" --a " + fixture("b1_a_u32") + " --b " + fixture("b1_bt_little") + " --bitorder little",
        " --a " + fixture("b1_a_big") + " --b " + fixture("b1_bt_u32")}) {
    r = ringmm("multiply --semiring or-and --type b1" + mixed + cols);
    ASSERT_EQ(r.status, 0) << mixed << "\n" << r.err;
    EXPECT_EQ(values<std::uint8_t>(ringmm::npy::read(path("c.npy"))), or_and_c) << mixed;
    fs::remove(path("c.npy"));
  }
  // A as its transpose (77 rows of 9 bits, 23 tail bits set in each word), repacked.
  r = ringmm("multiply --semiring or-and --type b1 --a " + fixture("b1_at_u32") + " --transa --a-cols 9 --b " +
             fixture("b1_bt_u32") + " --transb --b-cols 77 --out " + path("c.npy"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<std::uint8_t>(ringmm::npy::read(path("c.npy"))), or_and_c);
}

// --packed-out --packed-dtype uint32 writes C as '<u4' words with zero tail bits (the fixture is
// numpy's); a uint32 C0 is read as the operands are, its tail bits ignored.
TEST_F(CliTest, B1PackedOutAsUint32Words) {
  const std::string ab = " --semiring or-and --type b1 --a " + fixture("b1_a_u32") + " --b " + fixture("b1_bt_big") +
                         " --transb --a-cols 77 --b-cols 77 --packed-out --out " + path("c.npy");
  Outcome r = ringmm("multiply" + ab + " --packed-dtype uint32 --check");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("(9x1 uint32: 9x13 b1 packed, least significant bit first)"), std::string::npos) << r.out;
  auto got = ringmm::npy::read(path("c.npy"), {.uint32_words = true});
  EXPECT_TRUE(got.uint32_words);
  EXPECT_EQ(got.rows, 9);
  EXPECT_EQ(got.cols, 1);
  const auto product = values<std::uint32_t>(ringmm::npy::read(fixture("b1_or_and_c_u32"), {.uint32_words = true}));
  EXPECT_EQ(values<std::uint32_t>(got), product);
  fs::remove(path("c.npy"));
  r = ringmm("multiply" + ab + " --packed-dtype uint8");  // the default, named
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(values<std::uint8_t>(ringmm::npy::read(path("c.npy"))),
            values<std::uint8_t>(ringmm::npy::read(fixture("b1_or_and_c_packed_big"))));
  fs::remove(path("c.npy"));

  std::vector<std::uint32_t> c0(9);  // 13 bits a row; the other 19 are garbage
  for (std::size_t i = 0; i < c0.size(); ++i) c0[i] = std::uint32_t(i * 0x9e3779b9u + 0x1234567u);
  ringmm::npy::write_uint32(path("c0.npy"), 9, 1, c0.data());
  r = ringmm("multiply" + ab + " --packed-dtype uint32 --c " + path("c0.npy") + " --alpha 0 --check");
  ASSERT_EQ(r.status, 0) << r.err;
  got = ringmm::npy::read(path("c.npy"), {.uint32_words = true});
  for (std::size_t i = 0; i < c0.size(); ++i) EXPECT_EQ(values<std::uint32_t>(got)[i], c0[i] & 0x1fffu) << i;
  fs::remove(path("c.npy"));
  r = ringmm("multiply" + ab + " --c " + path("c0.npy") + " --check");  // uint32 C0, uint8 C
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("check     PASS (exact)"), std::string::npos) << r.out;
}

TEST_F(CliTest, B1Uint32MistakesAreClearErrors) {
  const std::string a = " --a " + fixture("b1_a_u32"), bt = " --b " + fixture("b1_bt_u32") + " --transb";
  const std::string out = " --out " + path("c.npy");
  // 3 words per row hold 65 to 96 bits.
  expect_error("multiply --type b1" + a + bt + " --a-cols 64 --b-cols 77" + out, 1,
               fixture("b1_a_u32") + ": has 3 uint32 words per row, which hold 65 to 96 bits, but --a-cols is 64 "
                                     "(32-bit words pack ceil(cols / 32) = 2 words per row)");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77 --b-cols 97" + out, 1,
               fixture("b1_bt_u32") + ": has 3 uint32 words per row, which hold 65 to 96 bits, but --b-cols is 97");
  expect_error("multiply --type b1 --a " + fixture("max_plus_i32_a") + bt + " --a-cols 12 --b-cols 77" + out, 1,
               "holds i32; --type b1 reads uint8 bytes packed by np.packbits or uint32 words ('<u4')");
  expect_error("multiply --type b1 --a " + fixture("max_plus_f32_a") + bt + " --a-cols 14 --b-cols 77" + out, 1,
               "holds f32; --type b1 reads uint8 bytes");
  // An explicit --bitorder big is for np.packbits bytes; words are least significant bit first.
  expect_error("multiply --type b1 --a " + fixture("b1_a_big") + bt + " --a-cols 77 --b-cols 77 --bitorder big" + out, 1,
               fixture("b1_bt_u32") + ": holds uint32 words, whose bits are read least significant first");
  expect_error("multiply --semiring or-and --type b1 --a " + fixture("b1_a_big") + " --b " + fixture("b1_bt_big") +
                   " --transb --a-cols 77 --b-cols 77 --bitorder big --packed-out --packed-dtype uint32" + out,
               2, "--bitorder: big applies to uint8 files only");
  expect_error("multiply --semiring or-and --type b1" + a + bt + " --a-cols 77 --b-cols 77 --packed-dtype uint32" + out, 2,
               "--packed-dtype: needs --packed-out");
  expect_error("multiply --semiring or-and --type b1" + a + bt + " --a-cols 77 --b-cols 77 --packed-out --packed-dtype u4" + out,
               2, "--packed-dtype: unknown value 'u4' (valid: uint8, uint32)");
  expect_error("multiply --semiring or-and" + a + bt + " --packed-dtype uint32" + out, 2, "--packed-dtype: applies to --type b1");
  // '<u4' is packed bits only: not an element type, nor a C0 of counts or of a u8 C.
  expect_error("multiply --semiring or-and" + a + bt + out, 1, "unsupported dtype '<u4'");
  expect_error("multiply --type b1" + a + bt + " --a-cols 77 --b-cols 77 --c " + fixture("b1_or_and_c_u32") + out, 1,
               "unsupported dtype '<u4'");
  expect_error("multiply --semiring or-and --type b1" + a + bt + " --a-cols 77 --b-cols 77 --packed-out --c " +
                   fixture("b1_a_u32") + out,
               1, "C0 is 9x3 but with --packed-out C is 9x1 uint32 words (9x13 bits)");
}

TEST_F(CliTest, BenchTimesB1BesideU8) {
  const Outcome r = ringmm("bench --backend cpu --semiring or-and,plus-times --type u8,b1 --shapes 65x130x200 --reps 1 "
                           "--out " + path("b1.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("or-and     b1     65x130x200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("plus-times b1     65x130x200"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("u8 C over u8 or-and of this run: "), std::string::npos) << r.out;
  const std::string json = slurp(path("b1.json"));
  EXPECT_NE(json.find("\"kernel\": \"ringmm b1-out\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"type\": \"b1\""), std::string::npos) << json;
  expect_error("bench --backend cpu --semiring max-plus --type b1 --shapes 64", 2, "b1 products are or-and and plus-times",
               "bench");
  expect_error("bench --backend cpu --semiring or-and --type b1 --product syrk --shapes 64", 2, "b1 times gemm only",
               "bench");
}
