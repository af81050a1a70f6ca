#!/usr/bin/env python3
"""Compare ringmm's own rows of two or three sets of `ringmm bench` records, case by case.

    python3 lab/reports/compare_runs.py --new NEW.json... --old OLD.json... [--recorded REC...]
                                  [--tolerance 0.03] [--out table.md [--title TEXT]] [--report-only]
    python3 lab/reports/compare_runs.py --campaign CAMPAIGN.jsonl --run RUN [--recorded REC...] ...

`new` and `old` come from one device run (the current binary and the previous commit's, measured
back to back); `recorded` are the figures recorded before the change (a campaign in lab/results).
A comparison campaign (kinds registry-compare, nan-policy) holds both sides of each run: its
records carry "run" and "binary" (new or old), and --run picks one run. A case is
(semiring, type, product, m, n, k, batch); ringmm's row is its `engine` record where plus-times
went to cuBLAS, else its `ringmm` record (as lab/reports/targets.py reads them). Exit status 1 when a
new rate falls more than the tolerance below the old binary's or the recorded figure.
"""
import argparse
import pathlib
import sys

import campaigns


def load(paths):
    return campaigns.read_all(paths or [])


def ours(records):
    """{case: updates/s} of ringmm's own kernel."""
    rates, engine = {}, set()
    for r in records:
        if r.get("backend") != "cuda" or r.get("kernel") not in ("engine", "ringmm"):
            continue
        case = (r["semiring"], r["type"], r["product"], r["m"], r["n"], r["k"], r.get("batch", 1))
        if r["kernel"] == "engine":
            engine.add(case)
            rates[case] = r["updates_per_s"]
        elif case not in engine:
            rates[case] = r["updates_per_s"]
    return rates


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--new", nargs="+")
    parser.add_argument("--old", nargs="+")
    parser.add_argument("--campaign", help="a comparison campaign holding both binaries' records")
    parser.add_argument("--run", help="the campaign's run to compare (its records' \"run\")")
    parser.add_argument("--recorded", nargs="*")
    parser.add_argument("--tolerance", type=float, default=0.03)
    parser.add_argument("--out")
    parser.add_argument("--title", help="a heading and note written above the table in --out")
    parser.add_argument("--report-only", action="store_true", help="exit 0 even when a case is slower")
    args = parser.parse_args()
    if args.campaign:
        run = [r for r in load([args.campaign]) if args.run is None or r.get("run") == args.run]
        new = ours([r for r in run if r.get("binary") == "new"])
        old = ours([r for r in run if r.get("binary") == "old"])
    elif args.new and args.old:
        new, old = ours(load(args.new)), ours(load(args.old))
    else:
        parser.error("give --campaign, or --new and --old")
    recorded = ours(load(args.recorded))
    if not new:
        sys.exit("compare_runs: no ringmm rows in --new")

    lines = ["| semiring | type | product | shape | new | old binary | new/old | recorded | new/recorded |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    slow = []
    for case in sorted(new):
        semiring, typ, product, m, n, k, batch = case
        shape = f"{m}×{n}×{k}" + (f" ×{batch}" if batch != 1 else "")
        cells = [semiring, typ, product, shape, f"{new[case] / 1e12:.2f}"]
        for reference in (old, recorded):
            if case in reference:
                ratio = new[case] / reference[case]
                cells += [f"{reference[case] / 1e12:.2f}", f"{ratio:.3f}"]
                if ratio < 1 - args.tolerance:
                    slow.append((case, ratio))
            else:
                cells += ["", "new pair" if reference is old else ""]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\nRates: 10¹² updates/s of ringmm's own kernel (median of the bench's repetitions).\n"
    if args.out:
        pathlib.Path(args.out).write_text((args.title + "\n\n" if args.title else "") + text)
    print(text)
    for case, ratio in slow:
        print(f"SLOWER by more than {args.tolerance:.0%}: {case} ratio {ratio:.3f}")
    sys.exit(1 if slow and not args.report_only else 0)


if __name__ == "__main__":
    main()
