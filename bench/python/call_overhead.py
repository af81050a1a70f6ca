#!/usr/bin/env python3
"""The overhead of a ringmm.matmul call on small torch CUDA tensors, beside the C++ call (issue 11:
at most 10 µs above it).

    python bench/python/call_overhead.py [--ringmm build/tools/ringmm] [--reps 2000] [--out overhead.json]

The product: 64×64×64 f32 max-plus, 8 operand sets rotated as `ringmm bench` rotates them. Python
figures, each the median over --reps calls after a warm-up:
  events        CUDA events around each call (allocating its result), as `ringmm bench` times the
                C++ call: the overhead is this minus the C++ time;
  events, out=  the same into a preallocated out;
  loop          back-to-back calls, wall time per call between two synchronisations: the rate at
                which a Python loop issues products.
Needs a CUDA device, torch, and the package built with its CUDA backend; exits with an error otherwise.
"""

import argparse
import time

from common import (cpp_seconds, event_seconds, median, print_table, print_targets, record, require_cuda, target,
                    write_results)

SIZE, SETS, LIMIT_US = 64, 8, 10.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ringmm", default="build/tools/ringmm", help="the ringmm tool, for the C++ time")
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--out", help="results file (.json)")
    args = parser.parse_args()
    torch = require_cuda()
    import ringmm

    a = [torch.rand(SIZE, SIZE, device="cuda") * 8 - 4 for _ in range(SETS)]
    b = [torch.rand(SIZE, SIZE, device="cuda") * 8 - 4 for _ in range(SETS)]
    out = torch.empty(SIZE, SIZE, device="cuda")
    plain = median(event_seconds(torch, lambda i: ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus"), args.reps, 100))
    into = median(event_seconds(torch, lambda i: ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus", out=out),
                                args.reps, 100))
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(args.reps):
        ringmm.matmul(a[i % SETS], b[i % SETS], "max_plus")
    torch.cuda.synchronize()
    loop = (time.perf_counter() - start) / args.reps
    cpp = cpp_seconds(args.ringmm, SIZE, args.reps)

    records = [record("ringmm.matmul torch, events", torch, SIZE, SIZE, SIZE, plain),
               record("ringmm.matmul torch out=, events", torch, SIZE, SIZE, SIZE, into),
               record("ringmm.matmul torch, loop", torch, SIZE, SIZE, SIZE, loop),
               record("ringmm bench (C++ API), events", torch, SIZE, SIZE, SIZE, cpp)]
    overhead_us = (plain - cpp) * 1e6
    targets = [target("call overhead above C++ (64^3 f32 max-plus)", overhead_us, LIMIT_US, "us",
                      overhead_us <= LIMIT_US)]
    print(f"{SIZE}x{SIZE}x{SIZE} f32 max-plus on {torch.cuda.get_device_name()}; median of {args.reps} calls")
    print_table(["call", "us/call", "above C++ us"],
                [[r["kernel"], f"{r['seconds'] * 1e6:.2f}", f"{(r['seconds'] - cpp) * 1e6:+.2f}"] for r in records])
    print_targets(targets)
    write_results(args.out, "call_overhead", torch, records, targets)


if __name__ == "__main__":
    main()
