#!/usr/bin/env python3
"""docs/perf/shapes.md: issue 12's table ("Speed where the workloads are") from one session of
`ringmm bench` records, the campaign lab/device/shapes_runs.sh measures.

    python3 lab/reports/shapes_table.py [FILE ... | --session NAME] [--results lab/results] [--out docs/perf/shapes.md]

Without FILEs it reads the latest campaign of kind "shapes" (<results>/shapes/<date>-<device>[-<tag>].jsonl,
lab/reports/campaigns.py); --session names another one (its file name without .jsonl). Named FILEs
(a campaign, or one session's JSON files) are taken as one session. Every figure comes from the
records: ringmm's rows (backend cuda; for plus-times f32/f64 the `engine` record, ringmm's own
kernel, where the default route went to cuBLAS) and the pair's register-register microbenchmark
ceiling (backend ceiling, product reg-reg) from the same part (file), else the same session. The figures "before" and the targets
are the issue's. A row without records says "not measured". Exit status 0 whether or not the
targets are met (the table says so); 1 when there are no records at all.
"""
import argparse
import pathlib
import re
import sys
from collections import namedtuple

import campaigns
import speed_table
from targets import UNIT, Finder

ROOT = campaigns.ROOT
KIND = "shapes"

Row = namedtuple("Row", "semiring type product m n k batch before target note", defaults=("",))


# Issue 12's table, one row per measured shape and pair: (semiring, type, product, m, n, k, batch,
# the figure before this work in 10¹² updates/s (i16x2: lanes), the target rate).
TABLE = [
    Row("max-plus", "f32", "batched", 64, 64, 64, 4096, "6.5", 12.0),
    Row("max-plus", "i32", "batched", 64, 64, 64, 4096, "2.9", 12.0),
    Row("max-plus", "f32", "batched", 32, 32, 32, 4096, "1.4", 5.0),
    Row("max-plus", "f32", "batched", 16, 16, 16, 100000, "—", 2.0, "and runs correctly (the GPU tests)"),
    Row("max-plus", "f32", "gemm", 256, 256, 256, 1, "0.59", 2.0),
    Row("max-plus", "f32", "gemm", 512, 512, 512, 1, "3.7", 6.0),
    Row("max-plus", "f32", "gemm", 1000, 1000, 1000, 1, "6.8 (published kernel 7.75)", 10.0),
    Row("max-plus", "f32", "gemm", 2000, 2000, 2000, 1, "9.1", 12.0),
    Row("max-plus", "f32", "gemm", 65536, 64, 64, 1, "5.1", 10.0),
    Row("max-plus", "f32", "gemm", 64, 64, 65536, 1, "4.0", 10.0),
    Row("max-plus", "f32", "gemm", 131072, 16, 16, 1, "0.87", 3.0),
    Row("max-plus", "f32", "gemm", 8192, 8192, 32, 1, "9.1", 11.0),
    Row("max-plus", "f32", "gemm", 4096, 4096, 4096, 1, "12.1", 13.5),
    Row("max-plus", "f32", "gemm", 8192, 8192, 8192, 1, "12.4", 13.5),
    Row("min-plus", "f32", "gemm", 4096, 4096, 4096, 1, "12.1", 13.5),
    Row("min-plus", "f32", "gemm", 8192, 8192, 8192, 1, "12.4", 13.5),
    Row("max-plus", "i32", "gemm", 4096, 4096, 4096, 1, "14.5", 15.5),
    Row("max-plus", "i32", "gemm", 8192, 8192, 8192, 1, "15.2", 15.5),
    Row("max-plus", "i16x2", "gemm", 4096, 4096, 4096, 1, "27.1", 30.0),
    Row("max-plus", "i16x2", "gemm", 8192, 8192, 8192, 1, "28.6", 30.0),
    Row("max-plus", "f64", "gemm", 4096, 4096, 4096, 1, "4.8", 5.0),
    Row("max-plus", "f64", "gemm", 8192, 8192, 8192, 1, "4.85", 5.0),
    Row("max-min", "f32", "gemm", 4096, 4096, 4096, 1, "7.8", 8.0),
    Row("max-min", "i32", "gemm", 4096, 4096, 4096, 1, "7.8", 8.0),
]
ODD_LIMIT = 1.03   # t(4097³) / t(4096³), every pair; before: 5–9 % slower
HOST_LIMIT = 1.5   # 4096³ max-plus f32 host → host over the same product on device buffers; before: 29 vs 5.7 ms
HOST_CASE = ("max-plus", "f32", 4096)
SUFFIXES = (" pinned-host", " transA", " b1-out")  # records of other experiments, not the default call


def builtin_pairs():
    """Every (semiring, type) pair the library builds, from include/ringmm/builtins.def."""
    path = ROOT / "include" / "ringmm" / "builtins.def"
    if not path.exists():
        return []
    ids = dict(re.findall(r'RINGMM_SEMIRING\((\w+), "([^"]+)"', path.read_text()))
    return [(ids.get(s, s.replace("_", "-")), t) for s, t in re.findall(r"^RINGMM_BUILTIN\((\w+), (\w+),", path.read_text(), re.M)]


class Session(Finder):
    """targets.Finder over one session's records, each tagged with its file in '_file'."""

    def ours(self, semiring, typ, product, m, n=None, k=None, batch=1):
        found = super().ours(semiring, typ, product, m, n, k, batch)
        if found:
            return found
        # A kernel name that carries the configuration ("ringmm <config> <border>"), if bench names one.
        n = m if n is None else n
        k = m if k is None else k
        for r in self.records:
            kernel = r.get("kernel", "")
            if (r.get("backend"), r.get("semiring"), r.get("type"), r.get("product")) == ("cuda", semiring, typ, product) \
                    and kernel.startswith("ringmm ") and not kernel.endswith(SUFFIXES) \
                    and (r.get("m"), r.get("n"), r.get("k"), r.get("batch", 1)) == (m, n, k, batch):
                return r
        return None

    def ceiling_of(self, r, semiring, typ):
        """The pair's reg-reg ceiling from the record's own file (the same run), else the session."""
        if r is not None:
            same = Finder([x for x in self.records if x.get("_file") == r.get("_file")]).ceiling(semiring, typ)
            if same:
                return same
        return self.ceiling(semiring, typ)


def latest_session(results, session=None):
    """The named campaign of kind shapes, else the latest one, as a list of one path (or none)."""
    if session:
        path = pathlib.Path(results) / KIND / f"{session}.jsonl"
        return [path] if path.exists() else []
    found = campaigns.latest(KIND, results)
    return [found] if found else []


def load_tagged(paths):
    """Records with their run in '_file': a campaign's part, else the file's name."""
    return campaigns.read_all(paths)


def shape_text(m, n, k, batch=1):
    text = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
    if batch == 1:
        return text
    return (f"{batch:,}".replace(",", " ") if batch >= 10000 else str(batch)) + f" × {text}"


def kernel_text(r):
    """The kernel a record names, its forced configuration, and the engine's choice where recorded
    (`ringmm bench`'s "choice": configuration, border, split of K, and whether the tune cache chose)."""
    return (r.get("kernel", "") + (f" ({r['config']})" if r.get("config") else "") +
            (f": {r['choice']}" if r.get("choice") else ""))


def informative(r):
    """Whether a record says more about the kernel than the default names do."""
    return r is not None and (bool(r.get("config")) or bool(r.get("choice")) or
                              r.get("kernel", "").removesuffix(" pinned-host") not in ("ringmm", "engine"))


def shape_rows(s):
    out = []
    for row in TABLE:
        r = s.ours(row.semiring, row.type, row.product, row.m, row.n, row.k, row.batch)
        ceiling = s.ceiling_of(r, row.semiring, row.type)
        target = f"≥ {row.target:g}" + (f", {row.note}" if row.note else "")
        cells = {"shape": shape_text(row.m, row.n, row.k, row.batch), "pair": f"{row.semiring} {row.type}",
                 "before": row.before, "target": target, "ceiling": f"{ceiling / UNIT:.1f}" if ceiling else "–",
                 "record": r}
        if r is None:
            cells.update(rate="not measured", ms="–", share="–", met=None)
        else:
            rate = r["updates_per_s"] / UNIT
            cells.update(rate=f"{rate:.2f}" + (" lanes" if row.type == "i16x2" else ""), ms=f"{r['seconds'] * 1e3:.3f}",
                         share=f"{100 * r['updates_per_s'] / ceiling:.0f} %" if ceiling else "–", met=rate >= row.target)
        out.append(cells)
    return out


def odd_rows(s):
    pairs = builtin_pairs()
    for r in s.records:  # pairs the records have that the header does not (another build)
        key = (r.get("semiring"), r.get("type"))
        if r.get("backend") == "cuda" and r.get("product") == "gemm" and r.get("m") == 4096 and key not in pairs:
            pairs.append(key)
    out = []
    for semiring, typ in pairs:
        even, odd = s.ours(semiring, typ, "gemm", 4096), s.ours(semiring, typ, "gemm", 4097)
        cells = {"pair": f"{semiring} {typ}", "record": odd or even}
        if even and odd:
            ratio = odd["seconds"] / even["seconds"]
            cells.update(even=f"{even['seconds'] * 1e3:.3f}", odd=f"{odd['seconds'] * 1e3:.3f}", ratio=f"{ratio:.3f}",
                         rates=f"{even['updates_per_s'] / UNIT:.2f} / {odd['updates_per_s'] / UNIT:.2f}",
                         met=ratio <= ODD_LIMIT)
        else:
            missing = " and ".join(f"{n}³" for n, r in ((4096, even), (4097, odd)) if r is None)
            cells.update(even=f"{even['seconds'] * 1e3:.3f}" if even else "–",
                         odd=f"{odd['seconds'] * 1e3:.3f}" if odd else "–", ratio=f"not measured ({missing})",
                         rates="–", met=None)
        out.append(cells)
    return out


def host_rows(s):
    semiring, typ, n = HOST_CASE
    out = []
    pinned = [r for r in s.records if r.get("backend") == "cuda" and r.get("kernel", "").endswith(" pinned-host")
              and (r.get("semiring"), r.get("type"), r.get("product"), r.get("m"), r.get("n"), r.get("k")) ==
              (semiring, typ, "gemm", n, n, n)]
    for memory, r in (("pageable (default)", s.ours(semiring, typ, "gemm", n)), ("pinned", pinned[0] if pinned else None)):
        if memory == "pinned" and r is None:
            continue  # an extra figure, not a row of the issue
        cells = {"shape": shape_text(n, n, n), "pair": f"{semiring} {typ}", "memory": memory, "record": r,
                 "extra": memory == "pinned"}
        if r is None or not r.get("seconds_with_transfers"):
            cells.update(device="–" if r is None else f"{r['seconds'] * 1e3:.2f}", host="not measured", ratio="–", met=None)
        else:
            ratio = r["seconds_with_transfers"] / r["seconds"]
            cells.update(device=f"{r['seconds'] * 1e3:.2f}", host=f"{r['seconds_with_transfers'] * 1e3:.2f}",
                         ratio=f"{ratio:.2f} ×", met=ratio <= HOST_LIMIT)
        out.append(cells)
    return out


def verdict(met):
    return "–" if met is None else ("yes" if met else "**no**")


def table(head, rows, keys, kernel_column):
    if kernel_column:
        head, keys = head + ["kernel"], keys + ["kernel"]
        for row in rows:
            row["kernel"] = kernel_text(row["record"]) if row["record"] else "–"
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for row in rows:
        lines.append("| " + " | ".join(verdict(row["met"]) if key == "met" else str(row[key]) for key in keys) + " |")
    return lines


def markdown(records, sources):
    s = Session(records)
    shapes, odd, host = shape_rows(s), odd_rows(s), host_rows(s)
    every = [row for row in shapes + odd + host if not row.get("extra")]
    kernel_column = any(informative(row["record"]) for row in every)
    device = next((r.get("device") for r in records if r.get("device")), "?")
    date = min((r.get("date", "") for r in records), default="") or "?"
    met = sum(1 for row in every if row["met"])
    missed = sum(1 for row in every if row["met"] is False)
    absent = sum(1 for row in every if row["met"] is None)
    out = [f"Device: {device}; first record {date}; from {', '.join(f'`{p}`' for p in sources)}.", "",
           f"**{met} targets met, {missed} missed, {absent} not measured.**", "",
           "## Shapes", "",
           "10¹² semiring updates per second on device buffers (i16x2: lanes), the median of the run's "
           "repetitions; ceiling: the pair's register-register microbenchmark in the same run; before: "
           "the issue's figure before this work.", ""]
    out += table(["shape", "semiring, type", "before", "measured", "ms", "reg-reg ceiling", "of ceiling", "target", "met"],
                 shapes, ["shape", "pair", "before", "rate", "ms", "ceiling", "share", "target", "met"], kernel_column)
    out += ["", "## 4097³ against 4096³, every pair", "",
            f"Time ratio t(4097³) / t(4096³) of each pair the library builds (4097³ does 0.07 % more updates); target "
            f"≤ {ODD_LIMIT:.2f}, before: 5–9 % slower. plus-times f32/f64 are ringmm's own kernel (`engine`), which "
            "the default route replaces with cuBLAS.", ""]
    out += table(["semiring, type", "4096³ ms", "4097³ ms", "time ratio", "10¹² upd/s 4096³ / 4097³", "met"], odd,
                 ["pair", "even", "odd", "ratio", "rates", "met"], kernel_column)
    out += ["", "## Host to host", "",
            "`gemm` on host buffers (`ringmm bench`'s ms+xfer, `seconds_with_transfers`: copies in, product, copy "
            f"out) against the same product on device buffers; target ≤ {HOST_LIMIT:g} ×, before: 29 ms against "
            "5.7 ms. The pinned row (`--host-memory pinned`), where measured, is for comparison.", ""]
    out += table(["shape", "semiring, type", "host memory", "device buffers ms", "host → host ms", "ratio", "met"], host,
                 ["shape", "pair", "memory", "device", "host", "ratio", "met"], kernel_column)
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=pathlib.Path, help="one session's records (default: the latest session)")
    parser.add_argument("--results", type=pathlib.Path, default=campaigns.RESULTS)
    parser.add_argument("--session", help="this campaign instead of the latest, e.g. 2026-11-25-h100-a")
    parser.add_argument("--out", type=pathlib.Path, help="also write the page as Markdown here")
    args = parser.parse_args()
    files = args.files or latest_session(args.results, args.session)
    if not files:
        what = f"campaign {KIND}/{args.session}.jsonl" if args.session else f"{KIND}/*.jsonl"
        print(f"lab/reports/shapes_table.py: no {what} in {args.results} (lab/device/shapes_runs.sh measures them)",
              file=sys.stderr)
        sys.exit(1)
    records = load_tagged(files)
    text = markdown(records, [campaigns.label(p) for p in files])
    print(text, end="")
    if args.out:
        header = ("# Speed where the workloads are\n\nGenerated by `lab/reports/shapes_table.py` (lab/reports/make_docs.sh) "
                  "from the latest campaign of kind speed (issue 29's targets, measured by `lab/device/speed_run.sh`, "
                  "lab/reports/speed_table.py) and the latest of kind shapes (issue 12's table, measured by "
                  "`lab/device/shapes_runs.sh`); do not edit by hand.\n\n")
        speed = "\n".join(speed_table.latest_section(args.results)) + "\n\n# Issue 12's shapes\n\n"
        args.out.write_text(header + speed + text)


if __name__ == "__main__":
    main()
