// ringmm hmm viterbi|forward: best paths or log-likelihoods of many sequences under one HMM, from
// .npy files, or timed on random models (--bench).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "args.hpp"
#include "commands.hpp"
#include "measure/hmm_timing.hpp"
#include "measure/records.hpp"
#include "measure/timer.hpp"
#include "ringmm/hmm.hpp"
#include "ringmm/npy.hpp"
#include "ringmm/ringmm.hpp"
#include "support.hpp"

namespace ringmm::tools {

namespace {

struct HmmRequest {
  bool viterbi = true;
  std::string init_path, trans_path, emit_path, out_path;
  std::optional<std::string> scores_path;
  index_t batch = 0;
  Context ctx;
};

std::string dims(index_t rows, index_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// Values the model may hold: finite or −∞. The first other one is refused, naming the file.
template <class T> void check_log_values(const T* x, index_t count, const std::string& path) {
  for (index_t e = 0; e < count; ++e)
    if (!(x[e] < std::numeric_limits<T>::infinity()))
      throw Error(Errc::value_out_of_range, path,
                  "element " + std::to_string(e) + " (row-major) is " + (std::isnan(x[e]) ? "nan" : "+inf") +
                      "; log-probabilities must be finite or -inf");
}

template <class T>
int run_files(const HmmRequest& req, npy::Matrix& init, npy::Matrix& trans, npy::Matrix& emit) {
  const index_t states = trans.rows, batch = req.batch, steps = emit.rows / batch;
  const T* init_data = init.view<T>().data;
  check_log_values(init_data, states, req.init_path);
  check_log_values(trans.view<T>().data, states * states, req.trans_path);
  check_log_values(emit.view<T>().data, emit.rows * emit.cols, req.emit_path);
  const HmmModel<T> model{batch, states, steps, init_data, trans.view<T>().data, emit.view<T>().data};
  Context ctx = req.ctx;
  ctx.backend = Backend::cpu;  // host arrays; the GPU is for --bench (device-resident models)
  std::vector<T> values(static_cast<std::size_t>(batch));
  std::vector<std::int32_t> path;
  double seconds = 0;
  if (req.viterbi) {
    path.resize(std::size_t(batch * steps));
    seconds = measure::HostClock{}([&] { hmm_viterbi<T>(ctx, model, path.data(), values.data()); });
  } else {
    seconds = measure::HostClock{}([&] { hmm_forward<T>(ctx, model, values.data()); });
  }
  const DType type = dtype_of<T>::value;
  std::cout << "hmm       " << (req.viterbi ? "viterbi" : "forward") << " (" << to_string(type) << ")\n"
            << "shape     B=" << batch << " S=" << states << " T=" << steps << "\n"
            << "backend   cpu\n"
            << "time      " << fixed(seconds * 1e3, 3) << " ms\n";
  if (req.viterbi) {
    // Both files or neither: the scores go first, so a failure leaves no paths without them.
    if (req.scores_path) npy::write(*req.scores_path, type, batch, 1, values.data());
    try {
      npy::write(req.out_path, DType::i32, batch, steps, path.data());
    } catch (...) {
      if (req.scores_path) std::remove(req.scores_path->c_str());
      throw;
    }
    std::cout << "wrote     " << req.out_path << " (" << dims(batch, steps) << " i32 paths)\n";
    if (req.scores_path) std::cout << "wrote     " << *req.scores_path << " (" << dims(batch, 1) << " scores)\n";
  } else {
    npy::write(req.out_path, type, batch, 1, values.data());
    std::cout << "wrote     " << req.out_path << " (" << dims(batch, 1) << " log-likelihoods)\n";
  }
  return 0;
}

int run_bench(const Options& opt, bool viterbi, const std::vector<std::string>& sizes) {
  if (sizes.size() != 3) throw UsageError("--bench", "takes three numbers B,S,T (sequences, states, steps)");
  const index_t batch = parse_integer(sizes[0], "--bench B", 1, index_t(1) << 40);
  const index_t states = parse_integer(sizes[1], "--bench S", 1, std::numeric_limits<std::int32_t>::max());
  const index_t steps = parse_integer(sizes[2], "--bench T", 1, std::numeric_limits<std::int32_t>::max());
  const DType type = parse_dtype(opt.get_or("type", "f32"), "--type");
  if (type != DType::f32 && type != DType::f64) throw UsageError("--type", "HMMs take f32 or f64");
  const int reps = int(opt.integer_or("reps", 3, 1, 1000));
  const std::string step_name = opt.get_or("step", "fused");
  if (step_name != "fused" && step_name != "gemm-argmax") throw UsageError("--step", "'" + step_name + "' is not fused or gemm-argmax");
  if (opt.has("step") && !viterbi) throw UsageError("--step", "goes with viterbi only");
  const ViterbiStep step = step_name == "fused" ? ViterbiStep::fused : ViterbiStep::gemm_argmax;
  std::optional<std::string> record_path = opt.get("record");
  if (record_path) check_results_path(*record_path, "--record");
  Context ctx;
  ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  ctx.on_notice = [](std::string_view note) { std::cerr << "ringmm hmm: note: " << note << "\n"; };
  const Backend backend = ctx.resolved_backend();

  double seconds;
  if (backend == Backend::cuda) {
    seconds = measure::time_hmm_cuda(ctx, viterbi, type, batch, states, steps, reps, step);
  } else {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      std::mt19937_64 rng(1);
      std::uniform_real_distribution<double> u(0, 1);
      auto draw = [&] { return T(std::log(1.0 - u(rng))); };
      std::vector<T> init(static_cast<std::size_t>(states)), trans(std::size_t(states * states)), emit(std::size_t(steps * batch * states));
      for (auto* v : {&init, &trans, &emit})
        for (T& x : *v) x = draw();
      std::vector<T> values(static_cast<std::size_t>(batch));
      std::vector<std::int32_t> path(viterbi ? std::size_t(batch * steps) : 0);
      const HmmModel<T> model{batch, states, steps, init.data(), trans.data(), emit.data()};
      return measure::median_seconds(reps, [&] {
        if (viterbi) hmm_viterbi<T>(ctx, model, path.data(), values.data());
        else hmm_forward<T>(ctx, model, values.data());
      });
    };
    seconds = type == DType::f32 ? run(0.0f) : run(0.0);
  }
  const double updates = double(batch) * double(states) * double(states) * double(steps);
  const double rate = updates / seconds;
  std::cout << "hmm       " << (viterbi ? "viterbi" : "forward") << " (" << to_string(type) << "), random model\n"
            << "shape     B=" << batch << " S=" << states << " T=" << steps << "\n"
            << "backend   " << to_string(backend)
            << (backend == Backend::cuda ? std::string(" (device-resident model") + (viterbi ? ", step " + step_name : "") + ")" : "")
            << "\n"
            << "time      " << fixed(seconds * 1e3, 3) << " ms (median of " << reps << ")\n"
            << "rate      " << scientific(rate) << " updates/s (B*S*S*T / time"
            << (viterbi ? ", backpointers and traceback included" : "") << ")\n";
  if (record_path) {
    measure::Record r;
    r.suite = "hmm";
    r.device = backend == Backend::cuda ? gpu_name() : cpu_model();
    r.backend = std::string(to_string(backend));
    r.kernel = viterbi ? (backend == Backend::cuda ? "hmm_viterbi " + step_name : "hmm_viterbi") : "hmm_forward";
    r.semiring = viterbi ? "max-plus" : "log-plus";
    r.type = std::string(to_string(type));
    r.product = viterbi ? "viterbi" : "forward";
    r.m = batch, r.n = states, r.k = states, r.batch = steps;
    r.seconds = seconds;
    r.updates_per_s = rate;
    r.date = utc_timestamp();
    measure::write_records(*record_path, {r});
    std::cout << "wrote     " << *record_path << "\n";
  }
  return 0;
}

}  // namespace

int hmm_command(const Args& args) {
  if (args.empty() || (args[0] != "viterbi" && args[0] != "forward"))
    throw UsageError("hmm", args.empty() ? "needs 'viterbi' or 'forward' (see 'ringmm help hmm')"
                                         : "'" + args[0] + "' is not 'viterbi' or 'forward'");
  const bool viterbi = args[0] == "viterbi";
  const Options opt(Args(args.begin() + 1, args.end()),
                    {{"init", true}, {"trans", true}, {"emit", true}, {"batch", true}, {"out", true}, {"scores", true},
                     {"type", true}, {"backend", true}, {"bench", true}, {"reps", true}, {"record", true}, {"step", true}});
  if (auto bench = opt.get("bench")) {
    for (const char* file_option : {"init", "trans", "emit", "out", "scores", "batch"})
      if (opt.has(file_option)) throw UsageError(std::string("--") + file_option, "does not go with --bench (a random model)");
    return run_bench(opt, viterbi, split_list(*bench, "--bench"));
  }
  for (const char* bench_option : {"reps", "record", "type", "step"})
    if (opt.has(bench_option)) throw UsageError(std::string("--") + bench_option, "goes with --bench only");
  HmmRequest req;
  req.viterbi = viterbi;
  req.init_path = opt.required("init");
  req.trans_path = opt.required("trans");
  req.emit_path = opt.required("emit");
  req.out_path = opt.required("out");
  req.scores_path = opt.get("scores");
  if (req.scores_path && !viterbi) throw UsageError("--scores", "goes with viterbi only (forward writes its log-likelihoods to --out)");
  req.batch = opt.integer_or("batch", 1, 1, std::numeric_limits<std::int64_t>::max());
  req.ctx.backend = parse_backend(opt.get_or("backend", "auto"), "--backend");
  if (req.ctx.backend == Backend::cuda)
    throw UsageError("--backend", "hmm on .npy files runs on the CPU; the CUDA backend is timed with --bench");

  npy::Matrix init = npy::read(req.init_path);
  npy::Matrix trans = npy::read(req.trans_path);
  npy::Matrix emit = npy::read(req.emit_path);
  if (trans.dtype != DType::f32 && trans.dtype != DType::f64)
    throw Error(Errc::unsupported, req.trans_path, "holds " + std::string(to_string(trans.dtype)) + "; HMMs take f32 or f64");
  for (const auto& [x, path] : {std::pair<const npy::Matrix&, const std::string&>{init, req.init_path}, {emit, req.emit_path}})
    if (x.dtype != trans.dtype)
      throw Error(Errc::unsupported, path,
                  "holds " + std::string(to_string(x.dtype)) + " but " + req.trans_path + " holds " + std::string(to_string(trans.dtype)) +
                      " (ringmm does not convert element types; save the arrays with one dtype)");
  const index_t states = trans.rows;
  if (trans.cols != states || states == 0)
    throw Error(Errc::dimension_mismatch, req.trans_path, "the transition matrix must be S x S with S >= 1, got " + dims(trans.rows, trans.cols));
  if (!((init.rows == 1 && init.cols == states) || (init.cols == 1 && init.rows == states)))
    throw Error(Errc::dimension_mismatch, req.init_path,
                "the initial log-probabilities must be 1 x " + std::to_string(states) + " or " + std::to_string(states) +
                    " x 1 (S from " + req.trans_path + "), got " + dims(init.rows, init.cols));
  if (emit.cols != states)
    throw Error(Errc::dimension_mismatch, req.emit_path,
                "emissions must be (T*B) x S with S = " + std::to_string(states) + " (from " + req.trans_path + "), got " +
                    dims(emit.rows, emit.cols));
  if (emit.rows == 0 || emit.rows % req.batch != 0)
    throw Error(Errc::dimension_mismatch, req.emit_path,
                "has " + std::to_string(emit.rows) + " rows, not a positive multiple of --batch " + std::to_string(req.batch) +
                    " (rows are step-major: row t*B + b is step t of sequence b)");
  if (trans.dtype == DType::f32) return run_files<float>(req, init, trans, emit);
  return run_files<double>(req, init, trans, emit);
}

}  // namespace ringmm::tools
