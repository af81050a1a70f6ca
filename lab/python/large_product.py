#!/usr/bin/env python3
"""A large f32 max-plus product on torch CUDA tensors through ringmm.matmul, beside the same product
through the C++ API (issue 11: at 4096³, within 2 % of the C++ rate).

    python lab/python/large_product.py [--ringmm build/tools/ringmm] [--size 4096] [--reps 20] [--out large.json]

Both are timed alike: CUDA events around each call, median of --reps after a warm-up; the C++
figure comes from `ringmm bench --backend cuda --semiring max-plus --type f32 --shapes SIZE`.
Needs a CUDA device, torch, and the package built with its CUDA backend; exits with an error otherwise.
"""

import argparse

from common import (cpp_seconds, event_seconds, median, print_table, print_targets, record, require_cuda, target,
                    write_results)

LIMIT_PERCENT = 2.0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ringmm", default="build/tools/ringmm", help="the ringmm tool, for the C++ rate")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", help="results file (.json)")
    args = parser.parse_args()
    torch = require_cuda()
    import ringmm

    n = args.size
    a = torch.rand(n, n, device="cuda") * 8 - 4
    b = torch.rand(n, n, device="cuda") * 8 - 4
    python = median(event_seconds(torch, lambda i: ringmm.matmul(a, b, "max_plus"), args.reps))
    cpp = cpp_seconds(args.ringmm, n, args.reps)

    records = [record("ringmm.matmul torch", torch, n, n, n, python),
               record("ringmm bench (C++ API)", torch, n, n, n, cpp)]
    shortfall = (1 - cpp / python) * 100  # how much lower the Python rate is, in % of the C++ rate
    targets = [target(f"Python rate below C++ at {n}^3 f32 max-plus", shortfall, LIMIT_PERCENT, "%",
                      shortfall <= LIMIT_PERCENT)]
    print(f"{n}x{n}x{n} f32 max-plus on {torch.cuda.get_device_name()}; median of {args.reps} calls")
    print_table(["call", "ms", "10^12 upd/s", "of C++"],
                [[r["kernel"], f"{r['seconds'] * 1e3:.3f}", f"{r['updates_per_s'] / 1e12:.2f}",
                  f"{cpp / r['seconds']:.3f}"] for r in records])
    print_targets(targets)
    write_results(args.out, "large_product", torch, records, targets)


if __name__ == "__main__":
    main()
