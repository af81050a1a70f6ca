#!/usr/bin/env python3
"""ringmm.einsum on the GPU (issue 27's targets), on torch CUDA tensors, f32:

    python lab/python/einsum_bench.py [--reps 5] [--out einsum.jsonl] [--mis-vertices 200] [--only pair|tse|mis]

  pair      "ijabc,abckl->ijkl" (64·64 × 16·16·16 × 64·64: one 4096³ product) beside ringmm.matmul
            on the same product (max-plus), and beside torch.einsum (plus-times);
  tse       torch-semiring-einsum (when installed): log_einsum and its max einsum
            (log_viterbi_einsum_forward, which also finds the argmax) beside ringmm.einsum over
            log-plus and max-plus, on that package's own benchmark ('ak,ak,ak->a', A = 10,
            K = 100..1000), a batched pair and a 3-operand chain; each with torch's peak memory;
  mis       the maximum independent set of a random 3-regular graph (networkx) through
            ringmm.networks on CUDA, path search (opt_einsum's random-greedy) included.
Times are medians of --reps runs between synchronisations, after a warm-up. Peak memory is
torch.cuda.max_memory_allocated above the operands: the allocations torch makes (ringmm.einsum's
intermediates are torch tensors; the CUDA engine's own workspace pool is not counted).
"""

import argparse
import json
import sys
import time


def timed(torch, run, reps):
    run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def peak_bytes(torch, run):
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    run()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", help="append the records to this JSON Lines file")
    parser.add_argument("--mis-vertices", type=int, default=200)
    parser.add_argument("--only", choices=["pair", "tse", "mis"], help="run one part alone")
    args = parser.parse_args()
    import torch

    import ringmm
    if not torch.cuda.is_available() or "cuda" not in ringmm.info()["backends"]:
        sys.exit("error: needs torch with a CUDA device and ringmm's CUDA backend")
    device = torch.cuda.get_device_name()
    records = []

    def record(case, kernel, seconds, updates=None, **extra):
        r = {"case": case, "kernel": kernel, "seconds": seconds, "device": device, **extra}
        if updates:
            r["updates_per_s"] = updates / seconds
        records.append(r)
        if args.out:  # one record a line as each finishes, so that a run cut short keeps them
            with open(args.out, "a") as f:
                f.write(json.dumps(r) + "\n")
        rate = f"{updates / seconds / 1e12:8.2f}" if updates else " " * 8
        print(f"{case:38s} {kernel:44s} {seconds * 1e3:10.3f} ms {rate}", flush=True)

    gen = torch.Generator(device="cuda").manual_seed(0)
    rand = lambda *shape: torch.rand(shape, generator=gen, device="cuda") * 8 - 4  # noqa: E731

    # ---- one pair that is one product
    run_part = lambda part: args.only in (None, part)  # noqa: E731
    a, b = rand(64, 64, 16, 16, 16), rand(16, 16, 16, 64, 64)
    a2, b2 = a.reshape(4096, 4096), b.reshape(4096, 4096)
    updates = 4096.0 ** 3
    for semiring in ("max_plus", "plus_times") if run_part("pair") else ():
        record("pair ijabc,abckl->ijkl", f"ringmm.einsum {semiring}",
               timed(torch, lambda: ringmm.einsum("ijabc,abckl->ijkl", a, b, semiring=semiring), args.reps), updates)
        record("pair ijabc,abckl->ijkl", f"ringmm.matmul {semiring} (same product)",
               timed(torch, lambda: ringmm.matmul(a2, b2, semiring), args.reps), updates)
    if run_part("pair"):
        record("pair ijabc,abckl->ijkl", "torch.einsum (plus_times)",
               timed(torch, lambda: torch.einsum("ijabc,abckl->ijkl", a, b), args.reps), updates)

    # ---- torch-semiring-einsum
    try:
        import torch_semiring_einsum as tse
    except ImportError:
        tse = None
        print("torch-semiring-einsum is not installed: its rows are skipped", flush=True)
    cases = [("ak,ak,ak->a", [(10, k)] * 3) for k in (100, 500, 1000)]
    cases += [("bij,bjk->bik", [(16, 256, 256), (16, 256, 256)]), ("ij,jk,kl->il", [(128, 128)] * 3),
              ("ij,jk,kl->il", [(256, 256)] * 3)]
    for equation, shapes in cases if run_part("tse") else ():
        operands = [rand(*s) for s in shapes]
        name = f"{equation} {'x'.join(str(n) for n in shapes[0])}" + ("" if len(set(shapes)) == 1 else " ...")
        for semiring, theirs in (("log_plus", "log_einsum"), ("max_plus", "log_viterbi_einsum_forward")):
            ours = lambda: ringmm.einsum(equation, *operands, semiring=semiring)  # noqa: E731
            record(name, f"ringmm.einsum {semiring}", timed(torch, ours, args.reps),
                   peak_bytes=peak_bytes(torch, ours))
            if tse is not None:
                compiled = tse.compile_equation(equation)
                run = (lambda: tse.log_einsum(compiled, *operands)) if theirs == "log_einsum" else \
                    (lambda: tse.log_viterbi_einsum_forward(compiled, *operands))
                record(name, f"torch-semiring-einsum {theirs}", timed(torch, run, args.reps),
                       peak_bytes=peak_bytes(torch, run))

    # ---- a tropical tensor network
    try:
        import networkx as nx
    except ImportError:
        nx = None
        print("networkx is not installed: the MIS row is skipped", flush=True)
    if nx is not None and run_part("mis"):
        import ringmm.networks as rn
        graph = nx.random_regular_graph(3, args.mis_vertices, seed=1)
        edges = list(graph.edges())
        start = time.perf_counter()
        path, info = rn.path("mis", edges, args.mis_vertices, optimize="random-greedy")
        search = time.perf_counter() - start
        start = time.perf_counter()
        size = rn.max_independent_set_size(edges, args.mis_vertices, optimize=path, device="cuda")
        torch.cuda.synchronize()
        contract = time.perf_counter() - start
        record(f"MIS random 3-regular n={args.mis_vertices}", "path search (random-greedy)", search,
               largest_intermediate=info.largest_intermediate, peak_bytes=info.peak_bytes)
        record(f"MIS random 3-regular n={args.mis_vertices}", "contraction on CUDA", contract, mis=size)
        record(f"MIS random 3-regular n={args.mis_vertices}", "total", search + contract, mis=size)


if __name__ == "__main__":
    main()
