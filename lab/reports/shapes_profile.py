#!/usr/bin/env python3
"""docs/perf/shapes-profile.md: what bounds each of issue 12's rows, from the ncu CSVs that
lab/device/shapes_profile.sh writes (one file per row, ringmm's kernels of one `ringmm bench`
call: its warm-up and one timed repetition on device buffers, then host-to-host calls).

    python3 lab/reports/shapes_profile.py [FILE ...] [--results lab/results] [--out docs/perf/shapes-profile.md]
    python3 lab/reports/shapes_profile.py --pack <date>-<device>[-<tag>] FILE.csv ...   # a session's CSVs → campaign

Without FILEs it reads the latest campaign of kind "shapes-profile" (lab/reports/campaigns.py): one
record per kernel launch (suite "ncu", part: the row, id, kernel, grid, block, metrics {name:
[value, unit]}). FILEs are ncu's CSVs of one session, named <anything>-<row>.csv, or campaigns.
For each row: every kernel of the timed call with its time, and
for the longest one its registers, occupancy, compute and DRAM throughput, cycles between a warp's
instructions and the three largest stall reasons (cycles per issued instruction). Exit status 1
when there are no files.
"""
import argparse
import csv
import io
import pathlib
import re
import sys

import campaigns

KIND = "shapes-profile"
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio")

# The rows in issue 12's order: file suffix, what the row is.
ROWS = [
    ("batch64", "batch 4096 × 64³ max-plus f32"), ("batch64i32", "batch 4096 × 64³ max-plus i32"),
    ("batch32", "batch 4096 × 32³ max-plus f32"), ("batch16", "batch 100 000 × 16³ max-plus f32"),
    ("s256", "256³ max-plus f32"), ("s512", "512³ max-plus f32"), ("s1000", "1000³ max-plus f32"),
    ("s2000", "2000³ max-plus f32"), ("s65536x64x64", "65536×64×64 max-plus f32"),
    ("s64x64x65536", "64×64×65536 max-plus f32"), ("s131072x16x16", "131072×16×16 max-plus f32"),
    ("s8192x8192x32", "8192×8192×32 max-plus f32"), ("s4096", "4096³ max-plus f32"),
    ("s4097", "4097³ max-plus f32"), ("i32", "4096³ max-plus i32"), ("i16x2", "4096³ max-plus i16x2"),
    ("f64", "4096³ max-plus f64"), ("maxmin", "4096³ max-min f32"),
]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def kernels(path):
    """The kernels of one CSV in launch order: {id, name, grid, block, metrics{name: value}}."""
    text = path.read_text(errors="replace")
    start = text.find('"ID","Process ID"')
    if start < 0:
        return []
    launches = {}
    for r in csv.DictReader(io.StringIO(text[start:])):
        k = launches.setdefault(r["ID"], {"id": int(r["ID"]), "name": r["Kernel Name"], "grid": r["Grid Size"],
                                          "block": r["Block Size"], "device": r.get("Device", ""), "metrics": {}})
        k["metrics"][r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])
    return sorted(launches.values(), key=lambda k: k["id"])


def launch_records(path):
    """A CSV's launches as campaign records (suite "ncu", part: the row)."""
    return [{"suite": "ncu", "device": k["device"], "part": path.stem.rsplit("-", 1)[1], "id": k["id"], "kernel": k["name"], "grid": k["grid"],
             "block": k["block"], "metrics": {m: list(v) for m, v in k["metrics"].items()}} for k in kernels(path)]


def rows_of(paths):
    """{row: launches} of ncu CSVs (the row is the name's last "-<row>") or campaigns (the part)."""
    by_row = {}
    for path in paths:
        if path.suffix == ".csv":
            by_row[path.stem.rsplit("-", 1)[1]] = kernels(path)
            continue
        for r in campaigns.read(path):
            by_row.setdefault(r["part"], []).append({"id": r["id"], "name": r["kernel"], "grid": r["grid"],
                                                     "block": r["block"],
                                                     "metrics": {m: tuple(v) for m, v in r["metrics"].items()}})
    return {row: sorted(launches, key=lambda k: k["id"]) for row, launches in by_row.items()}


def short_name(name):
    base = re.match(r"(?:void )?(?:[\w:]+::)?(\w+)", name).group(1)
    small = re.search(r"SmallTile<(\d+)", name)
    tile = re.search(r"Tile<(\d+), (\d+)", name)
    return base + (f" T{small.group(1)}" if small else f" {tile.group(1)}×{tile.group(2)}" if tile else "")


PRODUCT = re.compile(r"gemm_kernel|small_kernel")


def timed_call(launches):
    """The first timed call: bench runs a warm-up call, then the timed one on device buffers (then
    host-to-host calls), so the launches open with one call's kernels twice over. Returns the
    second copy: the shortest prefix holding a product kernel that the launches after it repeat
    (a call may open with repeated kernels of its own, the scans or packs of A and B)."""
    sig = [(k["name"], k["grid"], k["block"]) for k in launches]
    for p in range(1, len(sig) // 2 + 1):
        if sig[:p] == sig[p:2 * p] and any(PRODUCT.search(name) for name, _, _ in sig[:p]):
            return launches[p:2 * p]
    return launches


def duration_us(k):
    value, unit = k["metrics"].get("Duration", ("", ""))
    v = number(value)
    if v is None:
        return None
    return v / 1e3 if unit == "ns" else v * 1e3 if unit == "ms" else v


def metric(k, name, fmt="{:.0f}"):
    v = number(k["metrics"].get(name, ("", ""))[0])
    return "–" if v is None else fmt.format(v)


def stalls(k):
    found = [(m.group(1), number(v[0])) for name, v in k["metrics"].items() if (m := STALL.fullmatch(name))]
    found = sorted(((n, v) for n, v in found if v is not None), key=lambda x: -x[1])[:3]
    return ", ".join(f"{n.replace('_', ' ')} {v:.1f}" for n, v in found) or "–"


def markdown(files):
    by_row = rows_of(files)
    names = [campaigns.label(p) if p.suffix == ".jsonl" else p.name for p in files]
    out = ["# What bounds issue 12's rows (ncu)", "",
           "Generated by `lab/reports/shapes_profile.py` (lab/reports/make_docs.sh) from " +
           ", ".join(f"`{n}`" for n in names[:1]) +
           (f" and {len(files) - 1} more of its session" if len(files) > 1 else "") + " (lab/device/shapes_profile.sh).",
           "ncu locks the SM clock at its base (1.59 GHz on the H100), so its times run about 20 % longer than "
           "`ringmm bench`'s, and no tune cache was read: these are the heuristic's choices. Kernels: the timed call's "
           "on device buffers, in launch order, µs each. The longest kernel's columns: "
           "registers a thread; achieved / theoretical occupancy; compute (SM) and DRAM throughput as a share of "
           "peak; warp cycles per issued instruction and its three largest stall reasons (cycles of each, per "
           "issued instruction; \"not selected\" means another warp issued: the scheduler is busy).", "",
           "| row | kernels (µs) | regs | occupancy % | SM % | DRAM % | cycles / issue | largest stalls |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for suffix, title in ROWS:
        launches = timed_call(by_row.get(suffix, []))
        if not launches:
            out.append(f"| {title} | not profiled | – | – | – | – | – | – |")
            continue
        listed = ", ".join(f"{short_name(k['name'])} {duration_us(k):.1f}" for k in launches if duration_us(k) is not None)
        main = max(launches, key=lambda k: duration_us(k) or 0)
        occupancy = f"{metric(main, 'Achieved Occupancy')} / {metric(main, 'Theoretical Occupancy')}"
        out.append(f"| {title} | {listed} | {metric(main, 'Registers Per Thread')} | {occupancy} | "
                   f"{metric(main, 'Compute (SM) Throughput')} | {metric(main, 'DRAM Throughput')} | "
                   f"{metric(main, 'Warp Cycles Per Issued Instruction', '{:.1f}')} | {stalls(main)} |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    parser.add_argument("--results", type=pathlib.Path, default=campaigns.RESULTS)
    parser.add_argument("--out", type=pathlib.Path)
    parser.add_argument("--pack", metavar="NAME", help="write the CSVs as the campaign <results>/shapes-profile/NAME.jsonl")
    args = parser.parse_args()
    if args.pack:
        out = args.results / KIND / f"{args.pack}.jsonl"
        campaigns.write(out, [r for path in sorted(args.files) for r in launch_records(path)])
        print(f"wrote {out}")
        return
    files = sorted(args.files) or [p for p in [campaigns.latest(KIND, args.results)] if p]
    if not files:
        sys.exit(f"shapes_profile.py: no campaign {KIND}/*.jsonl in {args.results} (lab/device/shapes_profile.sh measures it)")
    text = markdown(files)
    if args.out:
        args.out.write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
