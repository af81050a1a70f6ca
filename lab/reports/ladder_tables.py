#!/usr/bin/env python3
"""Markdown tables for docs/perf/ladder.md, generated from the JSON records of `ringmm-lab microbench`
and `ringmm-lab ladder`.

    lab/reports/ladder_tables.py [CAMPAIGN.jsonl | microbench-X.json ladder-X.json ...]

Without arguments it reads the latest campaign of kind "ladder" (lab/reports/campaigns.py), whose
parts microbench-<run> and ladder-<run> are the runs' files. Microbench files (parts) give the ceiling table (one column per run when several are given); ladder files
give the ladder table (the last ladder file; earlier ones add a "run A" column for the spread). The
ladder's "% best ceiling" takes the last microbench file's ceilings, else the ladder file's own
reg-reg records (`ringmm-lab ladder` measures them in the same run).
"""
import sys

import campaigns

DESIGN_REG_REG = {  # DESIGN.md, register-to-register, 10^12 updates/s
    ("plus-times", "f32"): "22.3", ("plus-times", "f64"): "12.1",
    ("max-plus", "f32"): "14.5", ("min-plus", "f32"): "14.5",
    ("max-plus", "i32"): "16.2–16.5", ("max-plus", "i16x2"): "32.3",
    ("max-plus", "f64"): "3.0", ("min-plus", "f64"): "3.0",
}
LEVELS = ["reg-reg", "smem-one", "smem-both"]


def load(path):
    return campaigns.read(path)


def ceiling_table(runs):
    pairs = []
    for rec in runs[-1]:
        key = (rec["semiring"], rec["type"])
        if key not in pairs:
            pairs.append(key)
    head = "| semiring | type | " + " | ".join(LEVELS) + " | DESIGN reg-reg |"
    if len(runs) > 1:
        head += " reg-reg, other runs |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for key in pairs:
        rate = {r["product"]: r["updates_per_s"] / 1e12 for r in runs[-1] if (r["semiring"], r["type"]) == key}
        row = f"| {key[0]} | {key[1]} | " + " | ".join(f"{rate[l]:.2f}" for l in LEVELS)
        row += f" | {DESIGN_REG_REG.get(key, '–')} |"
        if len(runs) > 1:
            others = [r["updates_per_s"] / 1e12 for run in runs[:-1] for r in run
                      if (r["semiring"], r["type"]) == key and r["product"] == "reg-reg"]
            row += " " + ", ".join(f"{x:.2f}" for x in others) + " |"
        lines.append(row)
    return "\n".join(lines)


def products(run):
    return [r for r in run if r["backend"] != "ceiling"]


def ladder_table(runs, ceilings):
    last = products(runs[-1])
    reg = {(r["semiring"], r["type"]): max(x["updates_per_s"] for x in ceilings
                                           if (x["semiring"], x["type"]) == (r["semiring"], r["type"]))
           for r in last}
    cublas = {(r["semiring"], r["m"]): r["updates_per_s"] for r in last if r["backend"] == "cublas"}
    head = "| semiring | size | kernel | ms | ms with transfers | 10¹² upd/s | % best ceiling | % cuBLAS |"
    if len(runs) > 1:
        head += " 10¹² upd/s, run A |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in last:
        key = (r["semiring"], r["type"])
        xfer = f"{r['seconds_with_transfers'] * 1e3:.2f}" if "seconds_with_transfers" in r else "–"
        cb = cublas.get((r["semiring"], r["m"]))
        row = (f"| {r['semiring']} {r['type']} | {r['m']}³ | {r['kernel']} | {r['seconds'] * 1e3:.3f} | {xfer} | "
               f"{r['updates_per_s'] / 1e12:.2f} | {100 * r['updates_per_s'] / reg[key]:.0f} % | "
               + (f"{100 * r['updates_per_s'] / cb:.0f} % |" if cb else "– |"))
        if len(runs) > 1:
            prev = [x["updates_per_s"] / 1e12 for run in runs[:-1] for x in products(run)
                    if (x["semiring"], x["m"], x["kernel"]) == (r["semiring"], r["m"], r["kernel"])]
            row += " " + (", ".join(f"{p:.2f}" for p in prev) or "–") + " |"
        lines.append(row)
    return "\n".join(lines)


def runs(paths, kind):
    """The runs of one kind ("microbench" or "ladder"): a file each, or a campaign's parts in order."""
    out = []
    for p in paths:
        if p.endswith(".jsonl"):
            records = load(p)
            names = sorted({r["part"] for r in records if r.get("part", "").startswith(kind + "-")})
            out += [[r for r in records if r.get("part") == n] for n in names]
        elif kind in p.rsplit("/", 1)[-1]:
            out.append(load(p))
    return out


def main(paths):
    paths = paths or [str(campaigns.latest("ladder"))]
    micro = runs(paths, "microbench")
    ladder = runs(paths, "ladder")
    if micro:
        print(ceiling_table(micro))
        print()
    if ladder:
        ceilings = micro[-1] if micro else [r for r in ladder[-1] if r["backend"] == "ceiling"]
        print(ladder_table(ladder, ceilings))


if __name__ == "__main__":
    main(sys.argv[1:])
