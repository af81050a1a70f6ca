// ringmm tune: measures the CUDA engine's kernel choices (configuration × border × split of K) on
// one representative shape per class and writes the tune cache (ringmm/tune.hpp) that the engine
// then reads for calls of those classes.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/gpu_measure.hpp"
#include "ringmm/ringmm.hpp"
#include "ringmm/tune.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

struct Shape {
  index_t m, n, k, batch;
};

std::string shape_text(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
         (s.batch > 1 ? "x" + std::to_string(s.batch) : "");
}

// The representative shapes of each named class (docs/perf/shapes.md's table: a shape per regime). Each lies
// in a different power-of-two shape class.
struct NamedClass {
  std::string_view name;
  std::vector<Shape> shapes;
};
const std::vector<NamedClass>& named_classes() {
  static const std::vector<NamedClass> classes = {
      {"small", {{64, 64, 64, 1024}, {32, 32, 32, 4096}, {256, 256, 256, 1}}},
      {"mid", {{1024, 1024, 1024, 1}, {2048, 2048, 2048, 1}}},
      {"skinny", {{8192, 8192, 32, 1}, {131072, 16, 16, 1}, {2048, 128, 128, 1}, {64, 64, 65536, 1}}},
      {"large", {{4096, 4096, 4096, 1}, {8192, 8192, 8192, 1}}},
  };
  return classes;
}

// "small,mid", "all", or explicit MxNxK[xBATCH] items, mixed.
std::vector<Shape> parse_classes(const std::string& text) {
  std::vector<Shape> shapes;
  for (const std::string& item : split_list(text, "--classes")) {
    bool named = false;
    for (const NamedClass& c : named_classes())
      if (item == c.name || item == "all") {
        shapes.insert(shapes.end(), c.shapes.begin(), c.shapes.end());
        named = true;
      }
    if (named) continue;
    if (item.find('x') == std::string::npos)
      throw UsageError("--classes", "'" + item + "' is neither a class (small, mid, skinny, large, all) nor MxNxK[xBATCH]");
    std::vector<index_t> dims;
    for (std::size_t start = 0;;) {
      const std::size_t x = item.find('x', start);
      dims.push_back(parse_integer(item.substr(start, x == std::string::npos ? std::string::npos : x - start),
                                   "--classes", 1, index_t(1) << 24));
      if (x == std::string::npos) break;
      start = x + 1;
    }
    if (dims.size() != 3 && dims.size() != 4) throw UsageError("--classes", "'" + item + "' is not MxNxK[xBATCH]");
    shapes.push_back({dims[0], dims[1], dims[2], dims.size() == 4 ? dims[3] : 1});
  }
  return shapes;
}

// One way to run a class: a configuration (or small16/32/64), a border, a split of K.
struct Candidate {
  std::string config;
  BorderPolicy border;  // automatic for the small kernel
  int split;
  std::string text() const {
    return config + (border == BorderPolicy::automatic ? "" : " " + std::string(to_string(border))) + " split " +
           std::to_string(split);
  }
};

// Whether a candidate runs the kernels the heuristics choose (describe_cuda_choice's words).
bool same_kernels(const Candidate& c, const CudaChoice& heuristic) {
  const std::string border = c.border == BorderPolicy::automatic ? "" : std::string(to_string(c.border));
  return c.config == heuristic.config && border == heuristic.border && index_t(c.split) == heuristic.split_k;
}

// Every configuration of the table in both borders, and the small kernel where M or N is at most
// 128 or both are at most 2048 (its regime and the mid sizes, whose large tiles fill a few waves
// at most); each with K uncut and, for a single product, cut into 2, 3, 4, 6, 8, 16 parts of at
// least 32 while the parts' tiles stay within four waves of the machine (two blocks per SM), past
// which a split only adds work.
std::vector<Candidate> candidates(const Shape& s, int sms) {
  std::vector<Candidate> out;
  auto splits = [&](index_t tile_m, index_t tile_n) {
    std::vector<int> parts = {1};
    if (s.batch != 1) return parts;
    const index_t tiles = ((s.m + tile_m - 1) / tile_m) * ((s.n + tile_n - 1) / tile_n);
    for (int p : {2, 3, 4, 6, 8, 16})
      if (s.k / p >= 32 && tiles * p <= 8 * index_t(sms)) parts.push_back(p);
    return parts;
  };
  for (const CudaConfiguration& cfg : cuda_configurations())
    for (BorderPolicy border : {BorderPolicy::pad, BorderPolicy::predicate})
      for (int p : splits(cfg.block_m, cfg.block_n)) out.push_back({cfg.name, border, p});
  if (std::min(s.m, s.n) <= 128 || std::max(s.m, s.n) <= 2048)
    for (int tile : {16, 32, 64})
      for (int p : splits(tile, tile)) out.push_back({"small" + std::to_string(tile), BorderPolicy::automatic, p});
  return out;
}

struct Outcome {
  std::string choice;
  double seconds = 0;
};

}  // namespace

int tune_command(const Args& args) {
  const Options opt(args, {{"semiring", true}, {"type", true}, {"classes", true}, {"reps", true}, {"out", true},
                           {"dry-run", false}});
  const auto pairs = selected_pairs(opt, "max-plus", "f32");
  const std::vector<Shape> shapes = parse_classes(opt.get_or("classes", "all"));
  const int reps = int(opt.integer_or("reps", 10, 1, 100000));
  const bool dry_run = opt.flag("dry-run");
  // "off", "0", ...: RINGMM_TUNE_CACHE's words for no cache name no file here (any key will do).
  if (opt.has("out") && tune::cache_path({"gpu", 1, "0"}, opt.get("out")->c_str(), nullptr, nullptr).empty())
    throw UsageError("--out", "'" + *opt.get("out") + "' names no file; give a file or a directory");
  std::string why;
  if (!cuda_device_available(&why)) throw Error(Errc::backend_unavailable, "cuda", "tune needs a GPU: " + why);

  const tune::CacheKey key = current_tune_key();
  const std::string path = opt.has("out") ? tune::cache_path(key, opt.get("out")->c_str(), nullptr, nullptr)
                                          : tune::cache_path(key);
  if (path.empty() && !dry_run)
    throw Error(Errc::invalid_argument, "--out", "the tune cache is off (RINGMM_TUNE_CACHE) or has no home; name a file");

  std::cout << "tuning on " << key.gpu << " (" << key.sms << " SMs), ringmm " << key.version << "; median of " << reps
            << " after a warm-up; cache " << (path.empty() ? "(none)" : path) << (dry_run ? " (dry run)" : "") << "\n";
  Context base;
  base.backend = Backend::cuda;
  base.tune_cache = false;  // the heuristics, never an older cache
  std::vector<std::pair<tune::Entry, std::string>> results;  // and the heuristic's choice, for the table
  for (const auto& [kind, type] : pairs) {
    for (const Shape& s : shapes) {
      const std::string label = std::string(to_string(kind)) + " " + std::string(to_string(type)) + " " + shape_text(s);
      const CudaChoice heuristic = describe_cuda_choice(base, kind, type, s.m, s.n, s.k, s.batch);
      // The cache chooses among the kernels; routes taken before them are the engine's to keep.
      if (heuristic.route != "kernels") {
        std::cout << label << ": skipped (runs on " << heuristic.route << ")\n";
        continue;
      }
      const std::vector<Candidate> list = candidates(s, key.sms);
      std::cout << label << ": " << list.size() << " candidates; heuristic " << heuristic.text() << std::endl;
      if (dry_run) {
        for (const Candidate& c : list) std::cout << "  " << c.text() << "\n";
        continue;
      }
      const measure::Product product = s.batch > 1 ? measure::Product::batched : measure::Product::gemm;
      const double updates = double(s.m) * double(s.n) * double(s.k) * double(s.batch) * lanes(type);
      auto time = [&](const Context& ctx) {
        return measure::time_ringmm(ctx, kind, type, product, s.m, s.n, s.k, s.batch, reps, measure::HostMemory::none)
            .kernel_seconds;
      };
      // The heuristic's run opens the class after the host made its operands, with the GPU's
      // clock still low from idling: timed first only, it looked up to 2.4 × slower than the
      // same kernels timed next (the H100's first runs), and candidates that matched it "won".
      // It is timed again after the candidates, and the faster of the two stands.
      double heuristic_seconds = time(base);
      std::optional<Candidate> best;
      double best_seconds = 0;
      for (std::size_t i = 0; i < list.size(); ++i) {
        const Candidate& c = list[i];
        Context ctx = base;
        ctx.cuda_config = c.config;
        ctx.border = c.border;
        ctx.cuda_split_k = c.split;
        try {
          const double seconds = time(ctx);
          std::cout << "  [" << i + 1 << "/" << list.size() << "] " << c.text() << ": " << fixed(updates / seconds * 1e-12, 3)
                    << " Tupd/s" << std::endl;
          if (!best || seconds < best_seconds) best = c, best_seconds = seconds;
        } catch (const Error& e) {
          std::cout << "  [" << i + 1 << "/" << list.size() << "] " << c.text() << ": failed: " << e.what() << std::endl;
        }
      }
      heuristic_seconds = std::min(heuristic_seconds, time(base));
      // The heuristics stay unless a candidate other than their own choice beats them by more than
      // timing noise (2 %) twice: in the sweep, and timed again beside them, back to back (the
      // best of many noisy candidates would otherwise win by noise alone).
      const bool challenger = best && !same_kernels(*best, heuristic) && best_seconds < 0.98 * heuristic_seconds;
      if (challenger) {
        Context ctx = base;
        ctx.cuda_config = best->config, ctx.border = best->border, ctx.cuda_split_k = best->split;
        best_seconds = time(ctx);
        heuristic_seconds = std::min(heuristic_seconds, time(base));
      }
      tune::Entry entry;
      entry.shape = tune::class_of(kind, type, s.m, s.n, s.k, s.batch);
      entry.heuristic_updates_per_s = updates / heuristic_seconds;
      if (challenger && best_seconds < 0.98 * heuristic_seconds) {
        entry.config = best->config;
        entry.border = best->border;
        entry.split_k = best->split;
        entry.updates_per_s = updates / best_seconds;
      } else {
        entry.config = std::string(tune::keep_heuristic);
        entry.updates_per_s = entry.heuristic_updates_per_s;
      }
      results.emplace_back(entry, heuristic.text());
    }
  }
  if (dry_run) return 0;

  // The winners against the heuristics' choice, one line per class.
  auto cell = [](const std::string& text, std::size_t width) {
    return text + std::string(text.size() < width ? width - text.size() : 1, ' ');
  };
  std::cout << "\n" << cell("class (power-of-two bucket)", 41) << cell("heuristic", 43) << cell("Tupd/s", 9)
            << cell("tuned", 43) << cell("Tupd/s", 9) << "gain\n";
  for (const auto& [e, heuristic] : results) {
    const tune::ShapeClass& c = e.shape;
    const std::string cls = std::string(to_string(c.kind)) + " " + std::string(to_string(c.type)) + " " +
                            shape_text({c.m, c.n, c.k, c.batch});
    const std::string tuned =
        e.keeps_heuristic() ? std::string("(heuristic kept)") : Candidate{e.config, e.border, e.split_k}.text();
    std::cout << cell(cls, 41) << cell(heuristic, 43) << cell(fixed(e.heuristic_updates_per_s * 1e-12, 3), 9)
              << cell(tuned, 43) << cell(fixed(e.updates_per_s * 1e-12, 3), 9)
              << fixed(e.updates_per_s / e.heuristic_updates_per_s, 2) << "x\n";
  }

  // Entries of other classes already in the file stay; a file that does not read is replaced.
  tune::Cache cache;
  cache.key = key;
  try {
    if (auto old = tune::read_file(path, key)) cache = std::move(*old);
  } catch (const Error& e) {
    std::cout << "note: replacing " << path << ", which does not read as this machine's cache: " << e.what() << "\n";
  }
  for (const auto& result : results) cache.put(result.first);
  tune::write_file(path, cache);
  reload_tune_cache();
  std::cout << "wrote " << path << " (" << results.size() << " classes tuned, " << cache.entries.size() << " in the cache)\n";
  return 0;
}

}  // namespace ringmm::tools
