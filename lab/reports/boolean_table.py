#!/usr/bin/env python3
"""docs/perf/boolean.md from `ringmm bench` records of or-and (issue 13): the tensor-core routes
beside the SIMT kernel and cuBLAS's bf16 GEMM of the same runs, and the issue's targets.

    python3 lab/reports/boolean_table.py [CAMPAIGN.jsonl] --out docs/perf/boolean.md
    python3 lab/reports/boolean_table.py --routes auto.json int8.json --simt simt.json [--odd run1.json ...] [--cpu b1.json] --out docs/perf/boolean.md

A campaign (default: the latest of kind "boolean", lab/reports/campaigns.py) holds the runs below as
parts: routes-* (the --routes runs, routes-auto first), simt, odd-* and cpu. Files name them directly:

--routes: runs of `ringmm bench --semiring or-and --type u8 [--boolean-mma R]` (the kernel name
    says the route: "ringmm" is the automatic one, "ringmm mma-int8" a named route);
--simt: a run with --border pad (the SIMT kernels, named "ringmm auto pad");
--odd: repeated runs of `ringmm bench --semiring or-and --type u8 --shapes 4096,4097`: the 4097³
    target is judged on the median of their time ratios (a ratio of two medians moves a few per
    cent from run to run), in place of the --routes run's single ratio;
--cpu: a CPU run of `ringmm bench --type u8,b1 --semiring or-and` (gemm_b1 beside u8 or-and).
"""

import argparse
import statistics

import campaigns

# The issue's targets: (shape, Tupd/s at least) and 4097³ within 5 % of 4096³'s time.
RATE_TARGETS = [(8192, 200.0), (4096, 100.0), (1024, 20.0)]
ODD_SHAPE_LIMIT = 1.05
CPU_SPEEDUP_TARGET = 20.0  # b1 over u8 or-and at 2048³ on the CPU


def load(paths):
    return campaigns.read_all(paths)


def parts(records, prefix):
    """The records of each part that starts with prefix, in part order: [[records], ...]."""
    names = sorted({r.get("part", "") for r in records if r.get("part", "").startswith(prefix)},
                   key=lambda n: (n != prefix + "auto", n))
    return [[r for r in records if r.get("part") == n] for n in names]


def cube(r):
    return r["m"] if "m" in r and r["m"] == r["n"] == r["k"] else None


def route_of(r):
    kernel = r["kernel"]
    if kernel == "ringmm":
        return "auto (bits)"
    if kernel.startswith("ringmm mma-"):
        return kernel[len("ringmm "):]
    return "SIMT" if "pad" in kernel or "predicate" in kernel else kernel


def tera(x):
    return f"{x / 1e12:.1f}"


def odd_ratios(runs):
    """4097³ time over 4096³ time of the default route, one ratio per run (a list of record lists)."""
    ratios = []
    for records in runs:
        t = {r["m"]: r["seconds"] for r in records
             if r["backend"] == "cuda" and r["semiring"] == "or-and" and r["kernel"] == "ringmm" and cube(r)}
        if 4096 in t and 4097 in t:
            ratios.append(t[4097] / t[4096])
    return ratios


def gpu_section(routes, simt, odd_runs):
    rows = {}  # shape -> {column: Tupd/s}
    bf16 = {}
    for r in routes + simt:
        n = cube(r)
        if n is None or r["product"] != "gemm":
            continue
        if r["backend"] == "cuda" and r["semiring"] == "or-and":
            rows.setdefault(n, {})[route_of(r)] = r["updates_per_s"]
        elif r["backend"] == "cublas" and r.get("type") == "bf16":
            bf16.setdefault(n, r["updates_per_s"])  # multiply-adds per second, from the first (default route's) run
    columns = ["auto (bits)", "mma-int8", "SIMT"]
    out = ["| n (n×n×n) | " + " | ".join(f"{c} Tupd/s" for c in columns) + " | cuBLAS bf16 T MAC/s | bits ÷ bf16 |",
           "| --- | " + " | ".join("---" for _ in columns) + " | --- | --- |"]
    for n in sorted(rows):
        cells = [tera(rows[n][c]) if c in rows[n] else "–" for c in columns]
        best = rows[n].get("auto (bits)")
        ratio = f"{best / bf16[n]:.2f}" if best and n in bf16 else "–"
        out.append(f"| {n} | " + " | ".join(cells) + f" | {tera(bf16[n]) if n in bf16 else '–'} | {ratio} |")
    auto = {n: v["auto (bits)"] for n, v in rows.items() if "auto (bits)" in v}
    targets = ["| target | measured | |", "| --- | --- | --- |"]
    for n, limit in RATE_TARGETS:
        if n in auto:
            got = auto[n] / 1e12
            targets.append(f"| ≥ {limit:g} Tupd/s at {n}³ | {got:.1f} | {'met' if got >= limit else 'missed'} |")
    ratios = sorted(odd_ratios(odd_runs))
    if ratios:
        median = statistics.median(ratios)
        spread = ", ".join(f"{100 * (x - 1):+.1f}" for x in ratios)
        targets.append(f"| 4097³ within 5 % of 4096³ (time), median of {len(ratios)} runs | {100 * (median - 1):+.1f} % "
                       f"(runs: {spread} %) | {'met' if median <= ODD_SHAPE_LIMIT else 'missed'} |")
    elif 4096 in auto and 4097 in auto:
        # Time per update is what "costs what 4096³ costs" compares; times scale with the work.
        slower = (4097 ** 3 / auto[4097]) / (4096 ** 3 / auto[4096])
        targets.append(f"| 4097³ within 5 % of 4096³ (time) | {100 * (slower - 1):+.1f} % | "
                       f"{'met' if slower <= ODD_SHAPE_LIMIT else 'missed'} |")
    return out, targets


def cpu_section(records):
    """b1 or-and against u8 or-and per shape and thread count (kernel names end in " t<threads>")."""
    rates = {}  # (n, threads) -> {"u8": rate, "b1": rate, "b1 C": rate}
    for r in records:
        n = cube(r)
        if n is None or r["backend"] != "cpu" or r["semiring"] != "or-and":
            continue
        threads = r["kernel"].rsplit(" t", 1)[1] if " t" in r["kernel"] else "default"
        column = "u8" if r["type"] == "u8" else ("b1, b1 C" if "b1-out" in r["kernel"] else "b1, u8 C")
        rates.setdefault((n, threads), {})[column] = r["updates_per_s"]
    out = ["| n (n×n×n) | threads | u8 Gupd/s | b1, u8 C Gupd/s | b1, b1 C Gupd/s | b1 ÷ u8 | target ≥ 20× at 2048³ |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for (n, threads), v in sorted(rates.items()):
        if "u8" not in v or "b1, u8 C" not in v:
            continue
        ratio = v["b1, u8 C"] / v["u8"]
        verdict = ("met" if ratio >= CPU_SPEEDUP_TARGET else "missed") if n == 2048 else ""
        b1c = f"{v['b1, b1 C'] / 1e9:.0f}" if "b1, b1 C" in v else "–"
        out.append(f"| {n} | {threads} | {v['u8'] / 1e9:.1f} | {v['b1, u8 C'] / 1e9:.0f} | {b1c} | {ratio:.0f}× | {verdict} |")
    return out if len(out) > 2 else []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("campaign", nargs="?", help="a campaign of kind boolean (default: the latest, unless --routes)")
    parser.add_argument("--routes", nargs="+", default=[])
    parser.add_argument("--simt", nargs="*", default=[])
    parser.add_argument("--odd", nargs="*", default=[])
    parser.add_argument("--cpu", nargs="*", default=[])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.routes:
        routes = load(args.routes)
        simt, odd, cpu = load(args.simt), [load([path]) for path in args.odd], load(args.cpu)
        source = ", ".join(f"`{p}`" for p in args.routes + args.simt + args.odd + args.cpu)
    else:
        path = args.campaign or campaigns.latest("boolean")
        if not path:
            parser.error("no --routes and no campaign of kind boolean in lab/results")
        records = load([path])
        routes = [r for run in parts(records, "routes-") for r in run]
        simt = [r for r in records if r.get("part") == "simt"]
        odd = parts(records, "odd-")
        cpu = [r for r in records if r.get("part") == "cpu"]
        source = f"the campaign `{campaigns.label(path)}`"
    if not routes:
        parser.error("no --routes records")
    table, targets = gpu_section(routes, simt, odd)
    device = next((r["device"] for r in routes if r["backend"] == "cuda"), "the GPU")
    lines = ["# Boolean products (or-and) on tensor cores", "",
             "Generated by lab/reports/boolean_table.py (lab/reports/make_docs.sh) from " + source + ".", "",
             f"## {device}: `ringmm bench --semiring or-and --type u8`", "",
             "Updates per second (10¹² i, j, k triples a second, median of the run's repetitions) on device",
             "buffers. auto: the default route, 1-bit AND+POPC MMA (bits packed along K); mma-int8: 0/1 bytes",
             "on integer MMA (`--boolean-mma int8`); SIMT: ringmm's bitwise kernel (`--border pad`). cuBLAS",
             "bf16: `cublasGemmEx` on 0/1 bf16 data in the first --routes run, the tensor-core reference.", ""]
    lines += table + ["", "## Targets (issue 13)", ""] + targets
    if odd:
        lines += ["", "The 4097³ target takes the median over the --odd runs (`ringmm bench --shapes 4096,4097`, each",
                  "the median of its repetitions): one run's ratio, such as the table's above, moves several per",
                  "cent from run to run."]
    cpu = cpu_section(cpu) if cpu else []
    if cpu:
        lines += ["", "## CPU: bit-packed b1 against u8 or-and (the development machine, 2 cores)", "",
                  "`ringmm bench --backend cpu --semiring or-and --type u8,b1 --threads 1,2`: gemm_b1 (AND with",
                  "early-exit OR on the widest vectors the CPU has) beside u8 or-and on the same booleans.", ""] + cpu
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(table + [""] + targets))


if __name__ == "__main__":
    main()
