#!/usr/bin/env python3
"""The kernels of one profiled run, by name and grid, from `ncu --metrics gpu__time_duration.sum --csv`.

Usage: kernel_times.py RUN.csv [--top N]

Prints the total time, then each (kernel, grid) group's time, launch count and share, longest first.
ncu runs kernels one at a time at its own clocks, so the total exceeds the run's own timing; the
shares are what to compare.
"""
import argparse
import collections
import csv
import re
import sys

UNITS = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0, "s": 1e3, "second": 1e3}


def kernel_name(demangled):
    """The function's name without namespaces, template arguments or parameters."""
    name = re.sub(r"\(anonymous namespace\)::|<unnamed>::", "", demangled)
    name = re.sub(r"^void ", "", name)
    return re.split(r"[<(]", name, maxsplit=1)[0].split("::")[-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    rows = [r for r in csv.reader(open(args.csv, newline="")) if len(r) > 10]
    if not rows:
        sys.exit(f"{args.csv}: no ncu rows")
    head, rows = rows[0], rows[1:]
    col = {name: head.index(name) for name in ("Kernel Name", "Grid Size", "Metric Value", "Metric Unit")}
    total = collections.defaultdict(float)
    count = collections.Counter()
    for r in rows:
        unit = r[col["Metric Unit"]]
        if unit not in UNITS:
            sys.exit(f"{args.csv}: unknown time unit {unit!r}")
        key = (kernel_name(r[col["Kernel Name"]]), r[col["Grid Size"]])
        total[key] += float(r[col["Metric Value"]].replace(",", "")) * UNITS[unit]
        count[key] += 1
    whole = sum(total.values())
    print(f"{whole:.1f} ms in {sum(count.values())} kernels (ncu's clocks)")
    print(f"{'ms':>9} {'share':>6} {'launches':>8}  kernel (grid)")
    for key, ms in sorted(total.items(), key=lambda kv: -kv[1])[: args.top]:
        print(f"{ms:9.2f} {100 * ms / whole:5.1f}% {count[key]:8d}  {key[0]} {key[1]}")


if __name__ == "__main__":
    main()
