// SharedLibrary (src/core/shared_library.hpp), the loader behind cuBLAS and NCCL opened on first
// use: a missing library or symbol is an Error that names it and says why.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ringmm/error.hpp"
#include "shared_library.hpp"

namespace ringmm {
namespace {

TEST(SharedLibrary, OpensTheFirstCandidateThatLoadsAndResolvesItsFunctions) {
  const detail::SharedLibrary library{"libringmm-no-such-library.so.1", "libm.so.6"};
  double (*cosine)(double) = nullptr;
  library.resolve(cosine, "cos");
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
}

TEST(SharedLibrary, MissingLibraryNamesItAndEveryReason) {
  try {
    detail::SharedLibrary library{"libringmm-no-such-library.so.1", "/nonexistent/libringmm-other.so"};
    FAIL() << "a missing library loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable);
    EXPECT_EQ(e.subject(), "libringmm-no-such-library.so.1");
    const std::string what = e.what();
    EXPECT_NE(what.find("libringmm-no-such-library.so.1: cannot open shared object file"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/libringmm-other.so"), std::string::npos) << what;
  }
}

TEST(SharedLibrary, MissingSymbolNamesItAndTheLibrary) {
  const detail::SharedLibrary library{"libm.so.6"};
  void (*missing)() = nullptr;
  try {
    library.resolve(missing, "ringmm_no_such_function");
    FAIL() << "a missing symbol resolved";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable);
    EXPECT_EQ(e.subject(), "libm.so.6");
    EXPECT_NE(std::string(e.what()).find("ringmm_no_such_function"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ringmm
