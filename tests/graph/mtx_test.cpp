// The Matrix Market reader (src/io/mtx.cpp): valid files of each accepted kind, and one test per
// malformed file, each expecting an error that names the file, the line and the problem.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "ringmm/error.hpp"
#include "ringmm/mtx.hpp"

namespace ringmm {
namespace {

namespace fs = std::filesystem;

mtx::Graph parse(const std::string& text) {
  std::istringstream in(text);
  return mtx::read(in, "g.mtx");
}

// The error of reading `text`: format_error, naming g.mtx and containing every part.
void expect_refused(const std::string& text, std::initializer_list<std::string> parts) {
  try {
    parse(text);
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format_error) << e.what();
    EXPECT_EQ(e.subject(), "g.mtx");
    for (const std::string& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << "'" << part << "' not in: " << e.what();
  }
}

const std::string general = "%%MatrixMarket matrix coordinate real general\n";

TEST(Mtx, RealGeneralWithCommentsAndBlankLines) {
  const mtx::Graph g = parse(general + "% a comment\n%\n\n3 3 3\n1 2 0.5\n\n2 3 -1.25e1\n% inside\n3 1 7\n");
  EXPECT_EQ(g.vertices, 3);
  ASSERT_EQ(g.edges.size(), 3u);
  EXPECT_EQ(g.edges[0].from, 0);
  EXPECT_EQ(g.edges[0].to, 1);
  EXPECT_EQ(g.edges[0].weight, 0.5);
  EXPECT_EQ(g.edges[1].weight, -12.5);
  EXPECT_EQ(g.edges[2].from, 2);
  EXPECT_EQ(g.edges[2].to, 0);
}

TEST(Mtx, IntegerSymmetricPatternAndCrlf) {
  mtx::Graph g = parse("%%MatrixMarket matrix coordinate integer general\r\n2 2 1\r\n2 1 -4\r\n");
  ASSERT_EQ(g.edges.size(), 1u);
  EXPECT_EQ(g.edges[0].weight, -4.0);
  g = parse("%%MatrixMarket MATRIX Coordinate Real Symmetric\n3 3 2\n2 1 3\n3 3 1\n");
  ASSERT_EQ(g.edges.size(), 3u);  // 2–1 both ways, the diagonal entry once
  EXPECT_TRUE(g.edges[0].from == 1 && g.edges[0].to == 0 && g.edges[1].from == 0 && g.edges[1].to == 1);
  EXPECT_EQ(g.edges[1].weight, 3.0);
  g = parse("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n");
  ASSERT_EQ(g.edges.size(), 2u);
  EXPECT_EQ(g.edges[1].weight, 1.0);
  g = parse(general + "0 0 0\n");
  EXPECT_EQ(g.vertices, 0);
  EXPECT_TRUE(g.edges.empty());
}

TEST(Mtx, ReadsAFile) {
  const fs::path path = fs::temp_directory_path() / ("ringmm_mtx_test_" + std::to_string(::getpid()) + ".mtx");
  std::ofstream(path) << general << "2 2 1\n1 2 3\n";
  const mtx::Graph g = mtx::read(path.string());
  fs::remove(path);
  EXPECT_EQ(g.vertices, 2);
  EXPECT_THROW(mtx::read(path.string()), Error);  // gone now: io_error
}

TEST(Mtx, BadHeader) {
  expect_refused("", {"empty file"});
  expect_refused("3 3 1\n1 1 1\n", {"line 1", "not a Matrix Market file"});
  expect_refused("%%MatrixMarket matrix coordinate real\n1 1 0\n", {"line 1", "bad header"});
  expect_refused("%%MatrixMarket vector coordinate real general\n1 1 0\n", {"object 'vector'"});
  expect_refused("%%MatrixMarket matrix array real general\n1 1\n0\n", {"array", "coordinate"});
  expect_refused("%%MatrixMarket matrix coordinate complex general\n1 1 0\n", {"complex"});
  expect_refused("%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", {"skew-symmetric"});
  expect_refused("%%MatrixMarket matrix coordinate real sideways\n1 1 0\n", {"symmetry 'sideways'"});
}

TEST(Mtx, BadSizeLine) {
  expect_refused(general + "% only comments\n", {"ends before the size line"});
  expect_refused(general + "3 3\n", {"line 2", "bad size line"});
  expect_refused(general + "3 x 1\n", {"bad size line"});
  expect_refused(general + "3 -3 1\n", {"bad size line"});
}

TEST(Mtx, LongOrBinaryLinesAreQuotedShortly) {
  expect_refused(general + "3 3 1\n1 2 " + std::string(10000, 'a') + "x\n", {"...' is not a number"});
  try {
    parse(general + "3 3 1\n1 2 \x01\x02\n");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'??' is not a number"), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 200u);
  }
}

TEST(Mtx, NonSquare) { expect_refused(general + "3 4 1\n1 1 1\n", {"line 2", "3x4", "must be square"}); }

TEST(Mtx, WrongCounts) {
  expect_refused(general + "2 2 5\n1 1 1\n", {"ends after 1 of the 5 entries"});
  expect_refused(general + "2 2 1\n1 2 1\n2 1 1\n", {"line 4", "more entries than the 1"});
}

// Repeated entries are legal, so a file may list more than n² of them; all are kept, in order.
TEST(Mtx, MoreRepeatedEntriesThanTheMatrixHolds) {
  const mtx::Graph g = parse(general + "2 2 5\n1 2 3\n1 2 1\n2 1 4\n2 1 2\n1 2 5\n");
  ASSERT_EQ(g.edges.size(), 5u);
  const double weights[] = {3, 1, 4, 2, 5};
  for (std::size_t e = 0; e < 5; ++e) EXPECT_EQ(g.edges[e].weight, weights[e]);
  EXPECT_EQ(g.edges[4].from, 0);
  EXPECT_EQ(g.edges[4].to, 1);
  // A claim far past anything the file holds is not allocated: it reads as truncated.
  expect_refused(general + "2 2 4000000000000\n1 2 3\n", {"ends after 1 of the 4000000000000 entries"});
}

TEST(Mtx, Truncated) {
  expect_refused(general + "3 3 3\n1 2 1\n2 3 1\n", {"ends after 2 of the 3 entries", "truncated"});
  expect_refused(general + "3 3 2\n1 2 1\n2 3", {"line 4", "expected 'row col value'"});
}

TEST(Mtx, IndexOutOfRange) {
  expect_refused(general + "3 3 1\n0 1 1\n", {"line 3", "(0, 1) is out of range 1..3"});
  expect_refused(general + "3 3 1\n1 4 1\n", {"(1, 4) is out of range"});
  expect_refused(general + "3 3 1\n1.5 2 1\n", {"must be integers"});
}

TEST(Mtx, NonNumericNanAndInfiniteWeights) {
  expect_refused(general + "3 3 1\n1 2 abc\n", {"line 3", "'abc' is not a number"});
  expect_refused(general + "3 3 1\n1 2 1.5x\n", {"'1.5x' is not a number"});
  expect_refused(general + "3 3 1\n1 2 nan\n", {"line 3", "weight is NaN"});
  expect_refused(general + "3 3 1\n1 2 -inf\n", {"infinite"});
  expect_refused(general + "3 3 1\n1 2 1e999\n", {"out of the range"});
  expect_refused("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n", {"'1.5' is not an integer"});
  expect_refused("%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2 1\n", {"expected 'row col'"});
}

}  // namespace
}  // namespace ringmm
