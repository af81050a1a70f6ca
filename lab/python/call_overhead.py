#!/usr/bin/env python3
"""The overhead of a ringmm.matmul call on small products, beside the C++ call (issue 11: at most
10 µs above it).

    python lab/python/call_overhead.py [--ringmm build/tools/ringmm] [--reps 2000] [--out overhead.json] [--cpu]

On the GPU, the product: 64×64×64 f32 max-plus on torch CUDA tensors, 8 operand sets rotated as
`ringmm bench` rotates them. Python figures, each the median over --reps calls after a warm-up:
  events        CUDA events around each call (allocating its result), as `ringmm bench` times the
                C++ call: the overhead is this minus the C++ time;
  events, out=  the same into a preallocated out;
  loop          back-to-back calls, wall time per call between two synchronisations: the rate at
                which a Python loop issues products.
On the host, 1³, 8³ and 64³ f32 max-plus on numpy arrays and torch CPU tensors, each call timed by
the host clock as `ringmm bench --backend cpu` times the C++ call (median over --reps calls), with
and without out=; the targets are taken at 64³.
Needs a CUDA device, torch, and the package built with its CUDA backend, and exits with an error
otherwise; --cpu runs the host figures alone (torch optional), on any machine.
"""

import argparse
import time

from common import (cpp_record, cpp_seconds, event_seconds, host_seconds, median, print_table, print_targets, record,
                    require_cuda, target, write_results)

SIZE, SETS, LIMIT_US = 64, 8, 10.0
HOST_SIZES = (1, 8, 64)


def cuda_figures(torch, ringmm, tool, reps):
    """The torch CUDA records, the C++ time and the target (64³ f32 max-plus)."""
    a = [torch.rand(SIZE, SIZE, device="cuda") * 8 - 4 for _ in range(SETS)]
    b = [torch.rand(SIZE, SIZE, device="cuda") * 8 - 4 for _ in range(SETS)]
    out = torch.empty(SIZE, SIZE, device="cuda")
    plain = median(event_seconds(torch, lambda i: ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus"), reps, 100))
    into = median(event_seconds(torch, lambda i: ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus", out=out),
                                reps, 100))
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(reps):
        ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus")
    torch.cuda.synchronize()
    loop = (time.perf_counter() - start) / reps
    cpp = cpp_seconds(tool, SIZE, reps)

    records = [record("ringmm.matmul torch, events", torch, SIZE, SIZE, SIZE, plain),
               record("ringmm.matmul torch out=, events", torch, SIZE, SIZE, SIZE, into),
               record("ringmm.matmul torch, loop", torch, SIZE, SIZE, SIZE, loop),
               record("ringmm bench (C++ API), events", torch, SIZE, SIZE, SIZE, cpp)]
    overhead_us = (plain - cpp) * 1e6
    return records, cpp, target("call overhead above C++ (64^3 f32 max-plus)", overhead_us, LIMIT_US, "us",
                                overhead_us <= LIMIT_US)


def host_figures(torch, ringmm, tool, reps):
    """Per size: the host records (numpy, torch CPU tensors if torch is there, the C++ call last), and
    the targets at the largest size."""
    import numpy as np

    rng = np.random.default_rng(11)
    tables, targets, device = [], [], None
    for size in HOST_SIZES:
        cpp = cpp_record(tool, size, reps, "cpu")
        device = cpp["device"]
        # One operand set, as `ringmm bench --backend cpu` times the C++ call.
        a, b = (rng.random((size, size), np.float32) * 8 - 4 for _ in range(2))
        out = np.empty((size, size), np.float32)
        calls = {"numpy": lambda i: ringmm.matmul(a, b, "max_plus"),
                 "numpy out=": lambda i: ringmm.matmul(a, b, "max_plus", out=out)}
        if torch is not None:
            ta, tb, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
            calls["torch cpu"] = lambda i: ringmm.matmul(ta, tb, "max_plus")
            calls["torch cpu out="] = lambda i: ringmm.matmul(ta, tb, "max_plus", out=tout)
        rows = []
        for name, call in calls.items():
            seconds = median(host_seconds(call, reps, 100))
            rows.append(record(f"ringmm.matmul {name}, host clock", None, size, size, size, seconds, device=device,
                               backend="cpu"))
        rows.append(record("ringmm bench (C++ API), host clock", None, size, size, size, cpp["seconds"], device=device,
                           backend="cpu"))
        tables.append((size, rows))
    size, rows = tables[-1]
    for framework in ("numpy", "torch cpu"):
        for r in rows:
            if r["kernel"] != f"ringmm.matmul {framework}, host clock":
                continue
            overhead_us = (r["seconds"] - rows[-1]["seconds"]) * 1e6
            targets.append(target(f"host call overhead above C++ ({size}^3 f32 max-plus, {framework})",
                                  overhead_us, LIMIT_US, "us", overhead_us <= LIMIT_US))
    return tables, targets, device


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ringmm", default="build/tools/ringmm", help="the ringmm tool, for the C++ time")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--out", help="results file (.json)")
    parser.add_argument("--cpu", action="store_true", help="the host figures alone (no CUDA device needed)")
    args = parser.parse_args()
    if args.cpu:
        try:
            import torch
        except ImportError:
            torch = None
    else:
        torch = require_cuda()
    import ringmm

    tables, host_targets, host_device = host_figures(torch, ringmm, args.ringmm, args.reps)
    for size, rows in tables:
        print(f"{size}x{size}x{size} f32 max-plus on the host ({host_device}); median of {args.reps} calls")
        print_table(["call", "us/call", "above C++ us"],
                    [[r["kernel"], f"{r['seconds'] * 1e6:.2f}", f"{(r['seconds'] - rows[-1]['seconds']) * 1e6:+.2f}"]
                     for r in rows])
    records = [r for _, rows in tables for r in rows]
    targets = host_targets
    device = host_device
    if not args.cpu:
        cuda_records, cpp, cuda_target = cuda_figures(torch, ringmm, args.ringmm, args.reps)
        print(f"{SIZE}x{SIZE}x{SIZE} f32 max-plus on {torch.cuda.get_device_name()}; median of {args.reps} calls")
        print_table(["call", "us/call", "above C++ us"],
                    [[r["kernel"], f"{r['seconds'] * 1e6:.2f}", f"{(r['seconds'] - cpp) * 1e6:+.2f}"]
                     for r in cuda_records])
        records = cuda_records + records
        targets = [cuda_target] + targets
        device = None  # torch's CUDA device names the run
    print_targets(targets)
    write_results(args.out, "call_overhead", torch, records, targets, device)


if __name__ == "__main__":
    main()
