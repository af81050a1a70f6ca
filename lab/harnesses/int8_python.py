"""ringmm.matmul on int8 operands: the C++ i8 gemm (16-bit lane pairs on the GPU) against the
widening that ringmm.matmul did before (the framework's int32 copies, then the int32 product), for
torch tensors on the GPU and numpy arrays on the CUDA backend. Each result is checked against the
other route's before it is timed.

Usage: python3 lab/harnesses/int8_python.py [--shapes 8192,4096,2048,1000] [--batches 4096x64,64x512]
                                            [--reps 5] [--out F.jsonl]
Prints one line a case, 10¹² updates/s (the median of --reps calls, each waited for), and writes
them as JSON lines to --out.
"""

import argparse
import json
import statistics
import time

import numpy as np
import torch

import ringmm
from ringmm import _narrow


def widened_route(a, b, semiring):
    """What ringmm.matmul did with int8 operands before: widen them in their framework, multiply int32."""
    return ringmm.matmul(_narrow.widen(a, semiring, "a"), _narrow.widen(b, semiring, "b"), semiring)


def seconds(call, reps, sync):
    call()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="8192,4096,2048,1000")
    parser.add_argument("--batches", default="4096x64,64x512", help="members x n: batches of n³ products")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    records = []
    rng = np.random.default_rng(1)
    for n in (int(s) for s in args.shapes.split(",") if s):
        a = rng.integers(-128, 128, (n, n), dtype=np.int8)
        b = rng.integers(-128, 128, (n, n), dtype=np.int8)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        tb_view = tb.T.contiguous().T  # b's values, read down its columns
        cases = {
            "torch cuda": (lambda: ringmm.matmul(ta, tb, "max_plus"), lambda: widened_route(ta, tb, "max_plus")),
            "torch cuda b.T": (lambda: ringmm.matmul(ta, tb_view, "max_plus"),
                               lambda: widened_route(ta, tb_view, "max_plus")),
            "numpy on cuda": (lambda: ringmm.matmul(a, b, "max_plus", backend="cuda"),
                              lambda: ringmm.matmul(_narrow.widen(a, "max_plus", "a"), _narrow.widen(b, "max_plus", "b"),
                                                    "max_plus", backend="cuda")),
        }
        for where, (direct, widened) in cases.items():
            got, want = direct(), widened()
            same = bool((got.cpu() == want.cpu()).all()) if where.startswith("torch") else bool(np.array_equal(got, want))
            record = {"shape": n, "where": where, "same_as_widened": same}
            for route, call in (("int8 entry", direct), ("widened int32", widened)):
                s = seconds(call, args.reps, torch.cuda.synchronize)
                record[route] = n**3 / s / 1e12
            records.append(record)
            print(f"{n}^3 {where:14s} int8 entry {record['int8 entry']:6.2f}  widened int32 {record['widened int32']:6.2f}"
                  f"  ({record['int8 entry'] / record['widened int32']:.2f}x)  same: {same}", flush=True)
    for spec in filter(None, args.batches.split(",")):
        members, n = (int(v) for v in spec.split("x"))
        a = rng.integers(-128, 128, (members, n, n), dtype=np.int8)
        b = rng.integers(-128, 128, (members, n, n), dtype=np.int8)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        direct, widened = lambda: ringmm.matmul(ta, tb, "max_plus"), lambda: widened_route(ta, tb, "max_plus")
        same = bool((direct().cpu() == widened().cpu()).all())
        record = {"shape": n, "batch": members, "where": "torch cuda batch", "same_as_widened": same}
        for route, call in (("int8 entry", direct), ("widened int32", widened)):
            record[route] = members * n**3 / seconds(call, args.reps, torch.cuda.synchronize) / 1e12
        records.append(record)
        print(f"{members} x {n}^3 torch cuda batch int8 entry {record['int8 entry']:6.2f}  widened int32 "
              f"{record['widened int32']:6.2f}  ({record['int8 entry'] / record['widened int32']:.2f}x)  same: {same}",
              flush=True)
    if args.out:
        with open(args.out, "w") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
