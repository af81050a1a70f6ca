// The `ringmm` command-line tool: a table of subcommands, global --help / --version, and
// `ringmm help <command>`. Exit status: 0 success, 1 runtime failure, 2 usage mistake.
#include <iostream>
#include <string>
#include <string_view>

#include "args.hpp"
#include "commands.hpp"
#include "ringmm/context.hpp"
#include "ringmm/dispatch.hpp"
#include "ringmm/error.hpp"

namespace ringmm::tools {

#ifndef RINGMM_TOOL_HAS_SUMMA
#define RINGMM_TOOL_HAS_SUMMA 0
#endif

std::string usage_text(std::string_view usage) {
  auto joined = [](const auto& items) {
    std::string list;
    for (const auto& item : items) list += (list.empty() ? "" : ", ") + std::string(to_string(item));
    return list;
  };
  std::string text(usage);
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{semirings}", joined(all_semirings)},
                                   {"{types}", joined(all_dtypes)}})
    for (std::size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), value);
  return text;
}

namespace {

#if !RINGMM_TOOL_HAS_SUMMA
int summa_unavailable(const Args&) {
  throw Error(Errc::backend_unavailable, "summa",
              mpi_compiled() ? "this build of the tool has no SUMMA command (the distributed layer was not built)"
                             : "this build of ringmm has no MPI (configure with RINGMM_ENABLE_MPI=ON)");
}
#endif

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  std::string_view summary;
  std::string_view usage;  // empty: the command answers --help itself
};

constexpr Command command_table[] = {
    {"multiply", multiply_command, "multiply two .npy matrices over a semiring",
     R"(usage: ringmm multiply --a A.npy --b B.npy --out C.npy [options]

Computes C = alpha * (op(A) * op(B)) + beta * C0 over a semiring and writes C.npy (row-major).

  --a FILE          A (.npy, 2-D; '<i2' arrays of shape (r, c, 2) are i16x2; float16 '<f2' is read
                    widened to f32; int8 '|i1' multiplies in i32 (on a GPU, A and B both int8, as
                    16-bit lane pairs) with its own sentinel: -128 is -inf for max-plus, 127 is
                    +inf for min-plus, the only two it takes)
  --b FILE          B (.npy, same element type as A once widened)
  --out FILE        where to write C; written only when the product succeeded
  --c FILE          C0 to accumulate into (then beta defaults to the semiring's one)
  --semiring S      {semirings} (default: plus-times)
  --type T          {types}, or b1 (below) (default: the files' type; must match them)
  --transa          use op(A) = A transposed
  --transb          use op(B) = B transposed
  --alpha X         scale of the product (number, inf or -inf; default: the semiring's one)
  --beta X          scale of C0 (needs --c)
  --backend B       auto (default), cpu, cuda
  --border P        auto (default), pad, predicate (CUDA border handling)
  --own-kernels     plus-times f32/f64 on ringmm's kernels instead of OpenBLAS / cuBLAS
  --check           compare with the reference product; on a mismatch C is not written

b1, bit-packed booleans (on the CPU): --type b1 with --semiring or-and writes C as uint8 0/1 (or
packed, --packed-out); with plus-times (the default semiring) as int32 counts of the k where both
are true. The files hold booleans packed along their rows, told apart by their dtype: uint8 bytes
by np.packbits, ceil(cols/8) a row, or uint32 words ('<u4'), ceil(cols/32) a row with column c at
bit c % 32 of word c / 32 (least significant bit first); bits past cols are ignored. A as M x K
(np.packbits(A, axis=1)) and B as its transpose N x K with --transb (np.packbits(B.T, axis=1))
are used as they are; A with --transa (K x M) and B without --transb (K x N) are repacked first.
  --a-cols N        bits per row of the packed A file (rows are padded to whole bytes or words)
  --b-cols N        bits per row of the packed B file
  --bitorder O      big (numpy's default) or little: the bit order of every uint8 file, --c and
                    --out included; uint32 words have theirs fixed (an explicit big is refused
                    beside them)
  --packed-out      or-and: write C packed (M x ceil(N/8) uint8); --c is then packed as well,
                    uint8 or uint32
  --packed-dtype D  uint8 (default) or uint32: the packed C's dtype (uint32: M x ceil(N/32)
                    words, tail bits zero); needs --packed-out
)"},
    {"einsum", einsum_command, "contract .npy tensors over a semiring, as numpy's einsum writes it",
     R"(usage: ringmm einsum SPEC A.npy [B.npy ...] --out C.npy [options]

Contracts the tensors as SPEC says, over a semiring: the product is taken across the operands and
the semiring's sum over every index absent from the output ('ij,jk->ik' is a matrix product,
'bij,bjk->bik' a batched one, 'ii->i' a diagonal, 'ij->i' a row-wise sum). Without '->' the output
holds the indices that appear once, in alphabetical order (numpy's rule). The operands are
contracted pair by pair from the left, each pair one batched product; an index nothing later needs
is summed away first. Every axis is named by a letter ('...' is for ringmm.einsum in Python, which
also chooses the contraction order).

  SPEC              the expression, e.g. 'ijk,jkl->il' (quote it for the shell)
  A.npy B.npy ...   the operands (.npy of any rank, one element type), one per term of SPEC
  --out FILE        where to write the result (.npy); written only when every step succeeded
  --semiring S      {semirings} (default: max-plus)
  --backend B       auto (default), cpu, cuda

Each step prints its pairwise contraction and time.
)"},
    {"apsp", apsp_command, "all-pairs shortest paths with routes (blocked Floyd-Warshall)",
     R"(usage: ringmm apsp GRAPH --out D.npy [--next NEXT.npy] [--route I J] [options]
       ringmm apsp --bench N [--density P] [--seed S] [--reps R] [--record FILE] [options]
       mpirun -n P ringmm apsp GRAPH --summa [--grid PRxPC] [--block NB] --out D.npy [options]

Shortest paths between every pair of vertices of a weighted directed graph, with the successor
matrix that spells out each path. Blocked Floyd-Warshall over min-plus (max-plus with --longest)
whose block updates are argmax products. Vertices are numbered from 0 (also for .mtx files).

  GRAPH             a Matrix Market file (.mtx: coordinate, real/integer/pattern, general or
                    symmetric; pattern edges weigh 1; repeated entries keep the best weight) or a
                    dense .npy adjacency (f32 or f64, square, +inf for no edge)
  --out FILE        D.npy: distances (+inf where unreachable; -inf with --longest); D[i][i] = 0
  --next FILE       NEXT.npy (i32): the vertex after i on a shortest i->j path, -1 where j is
                    unreachable, NEXT[i][i] = i
  --route I J       print the path from I to J and its length ("no path" if unreachable)
  --longest         longest paths (exact on DAGs); refused if a positive cycle exists
  --type T          f32 or f64 (default: the .npy file's type; f64 for .mtx; f32 for --bench)
  --backend B       auto (default), cpu, cuda
  --block N         vertices per Floyd-Warshall round (default 1024 on CUDA, 128 on the CPU;
                    at most 1024 on CUDA)
  --threads N       CPU threads (default: OpenMP's; with --summa, per rank: the node's cores
                    divided by its ranks)

  --bench N         time a random graph of N vertices instead of reading one: edges with
                    probability --density (default 1), weights uniform in [1, 100), --seed S
  --reps R          solve R times and report the median (default 1)
  --record FILE     also write the timing as a .json or .csv record (suite "apsp")

  --summa           distributed over the ranks of mpirun: rank 0 reads the graph file and writes
                    the outputs (each rank makes its part of a --bench graph); the matrices are
                    spread block-cyclically with --block as both the layout's block and the
                    Floyd-Warshall block. On the GPUs (one per rank, resident blocks) when every
                    rank has one (--backend auto, with CUDA and NCCL) or with --backend cuda: the
                    same results as one GPU with that block; else on the CPUs: those of the CPU
                    backend with that block (not with --record)
  --grid PRxPC      process grid for --summa (default: the near-square factorisation of P with
                    PR >= PC: a round's strip is shared by the PR ranks of a process column, and
                    its column panel, with the successors, travels along the process rows)

A negative cycle (positive with --longest) is an error that lists the vertices on it; nothing is
written then. Outputs are written only after a successful solve. The rate printed is n^3 over the
solve time (distances and successors, without host<->device copies).
)"},
    {"bench", bench_command, "time products and compare with baselines and ceilings",
     R"(usage: ringmm bench [options]

Times ringmm on random data (warm-up, then the median of --reps runs) and prints one row per
case as it finishes, beside its baselines: on the CPU, OpenBLAS sgemm/dgemm of the same shape
and, for plus-times f32/f64, ringmm's blocked kernel; on CUDA, cuBLAS for plus-times and the
register-register microbenchmark ceiling for every semiring and type (cuBLAS of the same
precision for log-plus too, whose target is a share of it). plus-times f32/f64 run
through the vendor BLAS by default (OpenBLAS, cuBLAS); ringmm's own kernel is timed beside them.

  --backend B       auto (default), cpu, cuda
  --semiring LIST   comma-separated from {semirings}, or all (default: all)
  --type LIST       comma-separated from {types}, or all (default: all); only the
                    supported pairs of the two lists run. b1 (bit-packed booleans, gemm on the
                    CPU: or-and with a u8 C and with a b1 C, plus-times as counts) runs only when
                    named, on the u8 or-and rows' data; its or-and row notes its rate over theirs.
                    bf16 and f16 (with any semiring of f32) and i8 (max-plus, min-plus; i32
                    accumulation), only when named, time gemm of narrow operands with C in f32
                    or i32, after the other rows; each notes its rate over the f32 (i32) row of
                    the run, if any
  --shapes LIST     comma-separated N (N x N x N) or MxNxK
                    (default: 256,512 on the CPU; 4096,8192,4097 on CUDA)
  --product P       gemm (default), batched, syrk (C = A^T A with A KxN; needs M = N), argmax
                    (gemm_argmax: C and the index of each winning term; max-plus, min-plus,
                    max-min, max-times and min-max only)
  --batch N         members of a batched product (default 8 for batched, else 1)
  --reps N          timed repetitions per case (default 10)
  --out FILE        also write the records as .json or .csv (lab/results/README.md)
  --threads LIST    CPU thread counts, comma-separated, or all (every thread): each case runs
                    on each, ringmm and OpenBLAS alike; kernel names then end in " t<N>"
                    (default: OpenMP's default, names unchanged); CPU only
  --ceilings        also report every microbenchmark level (reg-reg, smem-one, smem-both); CUDA only
  --config NAME     force one CUDA kernel configuration (default: heuristic; a wrong name lists them)
  --border P        auto (default), pad, predicate (CUDA border handling)
  --tf32            log-plus f32 on CUDA: the shift trick's GEMM on TF32 tensor cores
                    (about 10^-3 absolute error; README "log-plus"); kernel name "ringmm tf32"
  --boolean-mma R   or-and on CUDA: auto (default), int8 (0/1 bytes on integer MMA) or bits
                    (1-bit AND+POPC MMA); kernel name "ringmm mma-<R>" when named. or-and runs
                    beside cuBLAS's bf16 GEMM (0/1 data), the tensor-core reference; CUDA only
  --host-memory M   pageable (default) or pinned: where the host operands of ms+xfer live;
                    pinned runs name every kernel "<name> pinned-host"; CUDA only
  --transpose-a     ringmm reads A as the transpose of a KxM matrix (op(A) = T; kernel names end
                    in " transA"; cuBLAS beside it still reads A as MxK); CUDA only, not syrk
  --calls N         also make N calls of each case back to back on device buffers and note the
                    host's time per call (entry to return), the device's per call on one stream,
                    and the device's per call when they are one CUDA graph (records "ringmm
                    calls"); CUDA only
  --sign-known      fold the random operands into the sign-known domain (max-plus f32: values
                    <= 0, min-plus f32: values >= 0), whose large products take the three-input
                    integer minimum on Hopper (kernel names end in " sign-known"); CUDA only
  --trust-inputs    skip the input check (Context::trust_inputs; the integer, max-times and
                    log-plus pairs check their values, which costs a pass and a wait per call)

Rates count one update per (i, j, k) and per i16x2 lane; syrk counts the n(n+1)/2 outputs of the
triangle it computes.
)"},
    {"tune", tune_command, "measure the CUDA kernel choices per class of shapes; write the tune cache",
     R"(usage: ringmm tune [--semiring LIST] [--type LIST] [--classes LIST] [--reps N] [--out PATH] [--dry-run]

Times the CUDA engine's kernel choices on one representative shape per class and writes the tune
cache that the engine reads for calls whose kernels it chooses (no --config, --border or split
named). Candidates: every configuration in both borders, and the small kernel (small16, small32,
small64) where M or N is at most 128 or both are at most 1024; each with K uncut and, for single
products, cut into 2, 4, 8 and 16 parts where the parts stay at least 32 long and within four
waves of blocks. Each is timed on device buffers (warm-up, then the median of --reps runs)
beside the heuristics' own choice, which stays unless a candidate is more than 2 % faster. Pairs
whose calls run on cuBLAS, the tensor cores (or-and) or the shift trick (log-plus) are skipped.
Needs a GPU.

  --semiring LIST   comma-separated from {semirings}, or all (default: max-plus)
  --type LIST       comma-separated from {types}, or all (default: f32); only the
                    supported pairs of the two lists run
  --classes LIST    comma-separated: small (64x64x64x1024, 32x32x32x4096, 256^3), mid (1024^3,
                    2048^3), skinny (8192x8192x32, 131072x16x16, 2048x128x128, 64x64x65536),
                    large (4096^3, 8192^3), all (default), or shapes MxNxK[xBATCH]
  --reps N          timed repetitions per candidate (default 10)
  --out PATH        the cache file, or a directory to hold it (default: $RINGMM_TUNE_CACHE, else
                    $XDG_CACHE_HOME/ringmm/ or ~/.cache/ringmm/); entries of other classes
                    already there are kept
  --dry-run         list the classes and candidates; measure and write nothing

A call is in a class when its M, N, K and batch round up to the same powers of two (1000^3 is in
the class of 1024^3). The cache file is named after the GPU model, its SM count and ringmm's
version; RINGMM_TUNE_CACHE=off turns reading it off. `ringmm bench` records which choice ran.
)"},
    {"hmm", hmm_command, "HMM Viterbi paths or forward log-likelihoods of many sequences",
     R"(usage: ringmm hmm viterbi --init PI.npy --trans A.npy --emit E.npy --batch B --out PATHS.npy [--scores SCORES.npy]
       ringmm hmm forward --init PI.npy --trans A.npy --emit E.npy --batch B --out LOGLIK.npy
       ringmm hmm viterbi|forward --bench B,S,T [--type f32|f64] [--backend B] [--reps N] [--record FILE] [--step K]

Runs B sequences of T steps through an HMM with S states, all in the log domain (f32 or f64;
values finite or -inf for forbidden; nan and +inf are refused). Each step is one (B x S)(S x S)
product: max-plus with backpointers for viterbi, log-plus for forward.

  --init FILE       initial log-probabilities, shape (1, S) or (S, 1)
  --trans FILE      transition log-probabilities, (S, S): row s, column s' = log P(s' | s)
  --emit FILE       emission log-scores, (T*B, S), step-major: row t*B + b is step t of sequence b
                    (numpy: E.reshape(T*B, S) for E of shape (T, B, S))
  --batch B         sequences (default 1); T = rows of --emit / B
  --out FILE        viterbi: the best paths, (B, T) int32; forward: the log-likelihoods, (B, 1)
  --scores FILE     viterbi: the best paths' log-scores, (B, 1)
  --backend B       auto (default) or cpu for files (they run on the CPU); with --bench also cuda

  --bench B,S,T     time a random model instead (generated on the device for CUDA): prints the
                    median time and B*S*S*T / time in updates/s (viterbi: backpointers and the
                    traceback included)
  --type T          f32 (default) or f64, with --bench
  --reps N          timed repetitions after one warm-up (default 3)
  --record FILE     also write the measurement as a .json or .csv record (suite "hmm")
  --step K          viterbi on CUDA: fused (default; one kernel per step) or gemm-argmax
                    (the library's gemm_argmax plus an emission kernel), for comparison

Ties go to the smallest previous state and the smallest final state; a sequence with no path of
finite score gets score -inf and path -1 at every step. Nothing is written when a check fails.
)"},
    {"info", info_command, "show the build, the backends and the devices",
     R"(usage: ringmm info

Prints the version, the backends compiled in, CPU threads, the GPUs present and the table of
supported semiring and element type pairs.
)"},
    {"demo", demo_command, "multiply example matrices over every semiring and check them",
     R"(usage: ringmm demo [--backend auto|cpu|cuda] [--size N]

Multiplies random example matrices over every built-in semiring ({semirings}; max-plus
also over i32 and i16x2), checks each against the CPU reference and prints throughput and
PASS/FAIL. Runs on the GPU when one is present, else on the CPU.
Exits 1 when any product fails its check.

  --backend B       auto (default), cpu, cuda
  --size N          the largest dimension (default 640 on the CPU, 2048 on the GPU)
)"},
    {"summa",
#if RINGMM_TOOL_HAS_SUMMA
     summa_command,
#else
     summa_unavailable,
#endif
     "distributed SUMMA product over MPI (run under mpirun)",
#if RINGMM_TOOL_HAS_SUMMA
     ""},  // summa_command prints its own usage
#else
     R"(usage: mpirun -n P ringmm summa [options]

Distributed SUMMA multiplication over MPI (broadcast and ring variants). This build
of the tool does not include it: it needs MPI (RINGMM_ENABLE_MPI=ON) and the distributed layer.
)"},
#endif
};

const Command* find_command(std::string_view name) {
  for (const Command& c : command_table)
    if (c.name == name) return &c;
  return nullptr;
}

void print_overview(std::ostream& os) {
  os << "usage: ringmm <command> [options]\n"
        "       ringmm help <command> | --help | --version\n\n"
        "Dense matrix multiplication over semirings.\n\ncommands:\n";
  for (const Command& c : command_table) {
    os << "  " << c.name << std::string(12 - c.name.size(), ' ') << c.summary;
#if !RINGMM_TOOL_HAS_SUMMA
    if (c.name == "summa") os << " (not in this build)";
#endif
    os << "\n";
  }
  os << "\nExit status: 0 success, 1 runtime failure, 2 usage mistake.\n";
}

int unknown_command(std::string_view name) {
  std::cerr << "ringmm: error: " << name << ": unknown command (see 'ringmm --help')" << std::endl;
  return 2;
}

}  // namespace

int main_dispatch(const Args& argv) {
  if (argv.empty()) {
    print_overview(std::cerr);
    return 2;
  }
  const std::string& first = argv.front();
  if (first == "--help" || first == "-h") {
    print_overview(std::cout);
    return 0;
  }
  if (first == "--version") {
    std::cout << "ringmm " << version() << "\n";
    return 0;
  }
  if (first == "help") {
    if (argv.size() == 1) {
      print_overview(std::cout);
      return 0;
    }
    const Command* c = find_command(argv[1]);
    if (!c) return unknown_command(argv[1]);
    if (c->usage.empty()) return run_guarded(c->name, [&] { return c->run({"--help"}); });
    std::cout << usage_text(c->usage);
    return 0;
  }
  const Command* command = find_command(first);
  if (!command) return unknown_command(first);
  const Args rest(argv.begin() + 1, argv.end());
  for (const std::string& arg : rest) {
    if (!command->usage.empty() && (arg == "--help" || arg == "-h")) {
      std::cout << usage_text(command->usage);
      return 0;
    }
  }
  return run_guarded(command->name, [&] { return command->run(rest); });
}

}  // namespace ringmm::tools

int main(int argc, char** argv) { return ringmm::tools::main_dispatch(ringmm::tools::Args(argv + 1, argv + argc)); }
