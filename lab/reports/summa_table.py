#!/usr/bin/env python3
"""Scaling table of `ringmm summa` records: time, rate and efficiency per run.

    python3 lab/reports/summa_table.py [FILE ...] [--markdown] [--out docs/perf/summa-scaling.md]

Efficiency E = R(grid) / (P · R(1×1)), R the rate, against the fastest 1×1 record of the same run (a file, or a campaign's part: one build on one
machine), semiring, type, size and residence: for strong scaling (the same n on every grid) that is T(1×1) / (P · T(grid)).
A part without a 1×1 record of its size is measured against the part its records name in `baseline_part` (another
machine of the same kind in the same campaign); such efficiencies are marked †.
Weak-scaling records (`weak_base` n₀, as `summa_scaling.sh weak:n₀` writes them: n ≈ n₀·√P, so that every GPU holds about
n₀² elements of each matrix) are measured against the 1×1 record of n₀ and show n as "n (weak n₀)". Times exclude host↔device
staging, as `ringmm summa` reports them; recv/bound is the
mean bytes a rank received over the 2D lower bound (M·K + K·N)/√P. Runs with `--resident` keep the matrices on the devices:
their staging column is empty and "distribution ms" is the one-time distribution of A, B and C to the devices, which
"ms with distribution" adds to the product's time.

Without FILEs it reads the latest campaign of kind "summa" (lab/reports/campaigns.py). With --out it also writes the
distributed APSP's table (`ringmm apsp --summa`, lab/device/apsp_scaling.sh) from the latest campaign of kind "apsp-dist"
(or --apsp FILE ...).
"""
import argparse
import pathlib
import sys

import campaigns


def load(paths, one_run=False):
    """The SUMMA records, apart from the one-GPU runs made alongside others (spread_rows shows those)."""
    records = campaigns.read_all(paths)
    for r in records:
        if one_run:
            r["_file"] = "one run"
    return [r for r in records if r.get("suite") == "summa" and "alongside" not in r]


def spread_rows(records):
    """One-GPU runs on each GPU of a host, alone and with every GPU running one (`scaleout_run.sh spread`)."""
    runs = [r for r in records if r.get("suite") == "summa" and "alongside" in r]
    return [[r["_file"], r.get("device", "?"), r["semiring"], r["type"], str(r["n"]), str(r["gpu"]), str(r["alongside"]),
             f"{r['seconds'] * 1e3:.1f}", f"{r['updates_per_s'] / 1e12:.2f}"]
            for r in sorted(runs, key=lambda r: (r["_file"], r["semiring"], r["n"], r["alongside"], r["gpu"]))]


SPREAD_HEAD = ["run", "device", "semiring", "type", "n", "GPU", "GPUs at work", "ms", "10¹² upd/s"]
SPREAD_TEXT = ("`ringmm summa --grid 1x1 --resident` on each GPU of the host alone, then on all of them at once (one "
               "process per GPU, lab/device/scaleout_run.sh spread): whether the GPUs differ, and whether they hold "
               "their rate when all of them work, as in a SUMMA run. A 1x1 run of n = 32768 multiplies the same "
               "local products (32768 × 32768 × 1024 per step) as each rank of a 2x2 run of n = 65536.")


def size_of(r):
    """What a run's efficiency is measured at: ("strong", n), or ("weak", n₀) for weak scaling."""
    return ("weak", r["weak_base"]) if "weak_base" in r else ("strong", r["n"])


def variant_label(r):
    """The variant, with the NCCL setting a run was made under where it differs from NCCL's own choice, and how
    the panels' moves shared the GPU with the products (panel_comm: the CTAs NCCL's kernels may take, and whether
    the communication stream came first) where the record says."""
    channels = r.get("nccl_max_channels")
    label = r["variant"] + (f", NCCL ≤ {channels} channels" if channels else "")
    return label + (f" ({r['panel_comm']})" if r.get("panel_comm") and r["ranks"] > 1 else "")


def rows(records):
    # The baseline comes from the same file: one file is one build and one machine.
    key = lambda r: (r["_file"], r.get("device"), r["semiring"], r.get("product", "gemm"), r["type"], size_of(r),
                     r.get("resident", False))
    # Against the fastest one-GPU record of the key, whatever its block: the best one GPU does alone.
    base = {}
    for r in records:
        if r["ranks"] == 1:
            base[key(r)] = max(base.get(key(r), 0.0), r["updates_per_s"])
    out = []
    for r in sorted(records, key=lambda r: (r["_file"], r.get("device"), r["semiring"], r.get("product", "gemm"), r["type"],
                                            size_of(r), r["ranks"], r["grid_rows"], r["variant"], r.get("panel_comm", ""))):
        r1 = base.get(key(r))
        # A part without a 1x1 run of its size may name another part of the same campaign (the same kind of
        # machine) whose 1x1 run serves: its efficiency is marked †.
        borrowed = r1 is None and "baseline_part" in r
        if borrowed:
            r1 = base.get((r["baseline_part"],) + key(r)[1:])
        eff = r["updates_per_s"] / (r["ranks"] * r1) if r1 else None
        n = f"{r['n']} (weak {r['weak_base']})" if "weak_base" in r else str(r["n"])
        bound = r["bytes_received_mean"] / r["lower_bound_bytes"] if r["lower_bound_bytes"] else 0.0
        resident = r.get("resident", False)
        distribution = r.get("distribution_seconds", 0)
        semiring = r["semiring"] + (" argmax" if r.get("product") == "argmax" else "")
        out.append([r["_file"].removesuffix(".json"), r.get("device", "?"), semiring, r["type"], n, f"{r['grid_rows']}x{r['grid_cols']}",
                    variant_label(r), str(r["block"]), f"{r['seconds'] * 1e3:.1f}", f"{r['updates_per_s'] / 1e12:.2f}",
                    "" if eff is None else f"{eff:.3f}" + (" †" if borrowed else ""), f"{bound:.3f}",
                    "" if resident else f"{r.get('staging_seconds', 0) * 1e3:.0f}",
                    f"{distribution * 1e3:.0f}" if resident else "",
                    f"{(r['seconds'] + distribution) * 1e3:.1f}" if resident else ""])
    return out


def apsp_rows(records):
    """The distributed APSP's runs, each against the 1×1 run of the same file (or campaign part), device and n."""
    key = lambda r: (r["_file"], r.get("device"), r["type"], r["n"])
    base = {key(r): r["seconds"] for r in records if r["ranks"] == 1}
    out = []
    for r in sorted(records, key=lambda r: (r["_file"], r.get("device"), r["type"], r["n"], r["ranks"],
                                            r["grid_rows"])):
        t1 = base.get(key(r))
        out.append([r["_file"].removesuffix(".json"), r.get("device", "?"), r["type"],
                    str(r["n"]), f"{r['grid_rows']}x{r['grid_cols']}", str(r["block"]), str(r.get("reps", "")),
                    f"{r['seconds']:.3f}", f"{r['updates_per_s'] / 1e12:.2f}", f"{r['updates_per_s'] / 1e12 / r['ranks']:.2f}",
                    "" if t1 is None else f"{t1 / (r['ranks'] * r['seconds']):.3f}"])
    return out


APSP_HEAD = ["run", "device", "type", "n", "grid", "block", "reps", "solve s", "10¹² upd/s", "per GPU", "efficiency"]
APSP_TEXT = ("`ringmm apsp --summa --bench n --backend cuda`: shortest paths with successors on device-resident blocks, "
             "solve time of the slowest rank (the median of `reps` solves; a single solve includes one-time costs), "
             "n³/time updates/s in all and per GPU, efficiency T(1×1) / (P · T(grid)) against the 1×1 run of the same n "
             "where there is one.")


def markdown(head, table):
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in table]) + "\n"


HEAD = ["run", "device", "semiring", "type", "n", "grid", "variant", "block", "ms", "10¹² upd/s", "efficiency",
        "recv/bound", "staging ms", "distribution ms", "ms with distribution"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=pathlib.Path, help="records (default: the latest summa campaign)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--out", type=pathlib.Path, help="write the Markdown table here (implies --markdown)")
    parser.add_argument("--apsp", nargs="*", type=pathlib.Path,
                        help="distributed APSP records for --out (default: the latest apsp-dist campaign)")
    parser.add_argument("--one-run", action="store_true",
                        help="the files are one run (one record per file, as summa_scaling.sh writes them)")
    args = parser.parse_args()
    files = args.files or [p for p in [campaigns.latest("summa")] if p]
    if not files:
        sys.exit("summa_table.py: no campaign of kind summa in lab/results")
    table = rows(load(files, args.one_run))
    if args.markdown or args.out:
        text = markdown(HEAD, table)
        print(text, end="")
        if args.out:
            apsp_files = args.apsp if args.apsp is not None else [p for p in [campaigns.latest("apsp-dist")] if p]
            apsp = [r for r in campaigns.read_all(apsp_files) if r.get("suite") == "apsp"]
            page = ("# SUMMA scaling\n\nGenerated by `lab/reports/summa_table.py` from "
                    + ", ".join(f"`{campaigns.label(p)}`" for p in files)
                    + "; do not edit by hand. " + __doc__.split("\n\n")[2].replace("\n", " ") + "\n\n" + text)
            spread = spread_rows(campaigns.read_all(files))
            if spread:
                page += "\n## One GPU at a time and all at once\n\n" + SPREAD_TEXT + "\n\n" + markdown(SPREAD_HEAD, spread)
            if apsp:
                page += ("\n## Distributed APSP\n\nFrom " + ", ".join(f"`{campaigns.label(p)}`" for p in apsp_files)
                         + ". " + APSP_TEXT + "\n\n" + markdown(APSP_HEAD, apsp_rows(apsp)))
            args.out.write_text(page)
    else:
        widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(HEAD)] if table else []
        for row in [HEAD] + table:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))


if __name__ == "__main__":
    main()
