#!/usr/bin/env python3
"""Start-up time and memory of the `ringmm` tool for commands that need no GPU work.

    python3 lab/reports/startup.py [--tool build/tools/ringmm] [--runs 20] [--out startup.json]

Each command runs --runs times; the record keeps the median wall time and the largest resident
memory (ru_maxrss of the child, through os.wait4). Targets (issue 9): --version, help and
CPU-only commands start in at most 20 ms with at most 30 MB. Prints a table with each target's
verdict; exits 0 either way (this is a measurement, not a test).
"""
import argparse
import json
import os
import statistics
import subprocess
import time

COMMANDS = [["--version"], ["help"], ["help", "bench"], ["info"],
            ["demo", "--backend", "cpu", "--size", "8"]]
TARGET_SECONDS, TARGET_BYTES = 0.020, 30 * 2**20


def run_once(argv):
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"startup: {' '.join(argv)} exited with status {os.waitstatus_to_exitcode(status)}")
    return seconds, usage.ru_maxrss * 1024  # Linux reports kB


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", default="build/tools/ringmm")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args()
    records = []
    print(f"{'command':32} {'median ms':>10} {'max RSS MB':>11}  target (20 ms, 30 MB)")
    for command in COMMANDS:
        runs = [run_once([args.tool] + command) for _ in range(args.runs)]
        seconds = statistics.median(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        verdict = "met" if seconds <= TARGET_SECONDS and rss <= TARGET_BYTES else "missed"
        print(f"{' '.join(command):32} {seconds * 1e3:10.1f} {rss / 2**20:11.1f}  {verdict}")
        records.append({"suite": "startup", "backend": "cpu", "kernel": "ringmm " + " ".join(command),
                        "seconds": seconds, "max_rss_bytes": rss, "runs": args.runs,
                        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    if args.out:
        with open(args.out, "w") as f:
            json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()
