// libFuzzer target: ringmm::mtx::read on arbitrary bytes. An input must give a graph whose edges
// lie inside it with finite weights, or throw ringmm::Error whose message is one short line of
// printable text (the CLI prints it); a crash, a sanitizer report or any other exception is a finding.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "ringmm/error.hpp"
#include "ringmm/mtx.hpp"

namespace {
[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_mtx: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const ringmm::mtx::Graph g = ringmm::mtx::read(in, "g.mtx");
    if (g.vertices < 0) finding("negative vertex count");
    for (const ringmm::mtx::Edge& e : g.edges) {
      if (e.from < 0 || e.from >= g.vertices || e.to < 0 || e.to >= g.vertices) finding("edge outside the graph");
      if (!std::isfinite(e.weight)) finding("a weight that is not finite");
    }
  } catch (const ringmm::Error& e) {
    if (e.code() != ringmm::Errc::format_error) finding("an error other than format_error");
    const std::size_t length = std::strlen(e.what());
    if (length > 400) finding("an error message longer than 400 characters");
    for (const char* c = e.what(); *c; ++c)
      if (static_cast<unsigned char>(*c) < 0x20) finding("an error message holds a control character");
  }
  return 0;
}
