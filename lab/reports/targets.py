#!/usr/bin/env python3
"""Check the CUDA engine's targets (issue 3) against `ringmm bench` records and print the table.

    python3 lab/reports/targets.py [FILE ...] [--out docs/perf/cuda-targets.md]

Without FILEs it reads the latest campaign of kind "targets" (lab/reports/campaigns.py), the runs of
`lab/device/device_run.sh <tag> build bench`.

Every figure comes from the records: ringmm's rows (backend cuda), cuBLAS measured in the same run
(backend cublas) and the microbenchmark ceilings (backend ceiling). Exit status 1 when a target
is missed or its records are absent.
"""
import argparse
import pathlib
import sys

import campaigns

UNIT = 1e12


def load(paths):
    return campaigns.read_all(paths)


class Finder:
    def __init__(self, records):
        self.records = records

    def one(self, backend, semiring, typ, product, m, n=None, k=None, batch=1, kernel=None):
        n = m if n is None else n
        k = m if k is None else k
        for r in self.records:
            if (r.get("backend"), r.get("semiring"), r.get("type"), r.get("product")) != (backend, semiring, typ, product):
                continue
            if kernel and r.get("kernel") != kernel:
                continue
            if (r.get("m"), r.get("n"), r.get("k"), r.get("batch", 1)) == (m, n, k, batch):
                return r
        return None

    def ours(self, semiring, typ, product, m, n=None, k=None, batch=1):
        """ringmm's own kernel: the `engine` record where plus-times went to cuBLAS, else `ringmm`."""
        return (self.one("cuda", semiring, typ, product, m, n, k, batch, kernel="engine")
                or self.one("cuda", semiring, typ, product, m, n, k, batch, kernel="ringmm"))

    def ceiling(self, semiring, typ):
        for r in self.records:
            if (r.get("backend"), r.get("semiring"), r.get("type"), r.get("product")) == ("ceiling", semiring, typ, "reg-reg"):
                return r["updates_per_s"]
        return None

    def pairs(self):
        seen = []
        for r in self.records:
            key = (r.get("semiring"), r.get("type"))
            if r.get("backend") == "cuda" and r.get("product") == "gemm" and key not in seen:
                seen.append(key)
        return seen


def rate(r):
    return r["updates_per_s"] / UNIT


def check(records):
    """Rows of (target, required, measured, met)."""
    f = Finder(records)
    rows = []

    def absolute(label, semiring, typ, floor, unit="10¹² upd/s"):
        for size in (4096, 8192):
            r = f.ours(semiring, typ, "gemm", size)
            ceiling = f.ceiling(semiring, typ)
            if r is None:
                rows.append((f"{label} {size}³", f"≥ {floor} {unit}", "not measured", False))
                continue
            note = f" ({100 * r['updates_per_s'] / ceiling:.0f} % of the {ceiling / UNIT:.1f} ceiling)" if ceiling else ""
            rows.append((f"{label} {size}³", f"≥ {floor} {unit}", f"{rate(r):.2f}{note}", rate(r) >= floor))

    absolute("f32 max-plus", "max-plus", "f32", 11.0)
    absolute("f32 min-plus", "min-plus", "f32", 11.0)
    absolute("i32 max-plus", "max-plus", "i32", 12.0)
    absolute("i16x2 max-plus", "max-plus", "i16x2", 20.0, "10¹² lanes/s")
    absolute("f64 max-plus", "max-plus", "f64", 2.7)

    for semiring, typ in f.pairs():  # every pair, ringmm's own kernel
        even, odd = f.ours(semiring, typ, "gemm", 4096), f.ours(semiring, typ, "gemm", 4097)
        if even and odd:
            ratio = odd["updates_per_s"] / even["updates_per_s"]
            rows.append((f"{semiring} {typ} 4097³ / 4096³", "≥ 0.90",
                         f"{ratio:.3f} ({rate(odd):.2f} / {rate(even):.2f})", ratio >= 0.90))

    ours, cublas = f.ours("plus-times", "f32", "gemm", 4096), f.one("cublas", "plus-times", "f32", "gemm", 4096)
    if ours and cublas:
        ratio = cublas["seconds"] / ours["seconds"]
        rows.append(("plus-times f32 4096³ vs cuBLAS SGEMM (pedantic FP32, same run)", "≥ 0.70 ×",
                     f"{ratio:.2f} × ({ours['flops_per_s'] / UNIT:.1f} vs {cublas['flops_per_s'] / UNIT:.1f} TFLOP/s)",
                     ratio >= 0.70))
    else:
        rows.append(("plus-times f32 4096³ vs cuBLAS", "≥ 0.70 ×", "not measured", False))

    for r in records:
        if r.get("backend") == "cuda" and r.get("product") == "batched" and r.get("batch") == 20:
            if r is not f.ours(r["semiring"], r["type"], "batched", r["m"], r["n"], r["k"], 20):
                continue
            base = f.ours(r["semiring"], r["type"], "gemm", 4096)
            if base and (r["m"], r["n"], r["k"]) == (1024, 1024, 1024):
                ratio = r["updates_per_s"] / base["updates_per_s"]
                rows.append((f"{r['semiring']} {r['type']} 20 × 1024³ / 4096³", "≥ 0.80",
                             f"{ratio:.2f} ({rate(r):.2f} / {rate(base):.2f})", ratio >= 0.80))

    for r in records:
        if r.get("backend") == "cuda" and r.get("product") == "syrk":
            if r is not f.ours(r["semiring"], r["type"], "syrk", r["m"], r["n"], r["k"]):
                continue
            # syrk's C = AᵀA with A k×n is the gemm n×n×k: compare the time of the same product.
            base = f.ours(r["semiring"], r["type"], "gemm", r["n"], r["n"], r["k"])
            if base:
                speedup = base["seconds"] / r["seconds"]
                rows.append((f"{r['semiring']} {r['type']} Aᵀ·A n={r['n']} k={r['k']} vs our gemm", "≥ 1.70 ×",
                             f"{speedup:.2f} × ({r['seconds'] * 1e3:.2f} vs {base['seconds'] * 1e3:.2f} ms)",
                             speedup >= 1.70))
    return rows


def vendor_rows(records):
    """plus-times f32/f64 as users get them (through cuBLAS) beside ringmm's kernel and cuBLAS itself."""
    f = Finder(records)
    out = []
    for r in records:
        if r.get("backend") != "cuda" or r.get("kernel") != "ringmm" or r.get("semiring") != "plus-times":
            continue
        shape = (r["m"], r["n"], r["k"], r.get("batch", 1))
        engine = f.one("cuda", "plus-times", r["type"], r["product"], *shape, kernel="engine")
        cublas = f.one("cublas", "plus-times", r["type"], r["product"], *shape)
        if engine and cublas:
            size = f"{r['batch']} × " if r.get("batch", 1) > 1 else ""
            out.append((f"plus-times {r['type']} {r['product']} {size}{r['m']}×{r['n']}×{r['k']}",
                        f"{r['flops_per_s'] / UNIT:.1f}", f"{engine['flops_per_s'] / UNIT:.1f}",
                        f"{cublas['flops_per_s'] / UNIT:.1f}"))
    return out


# The published tropical GEMM kernel behind CuTropicalGEMM.jl, f32 max-plus, 10¹² updates/s, as
# measured on the same H100 and recorded in ../shared/DESIGN.md (its f64 figure names no shape).
PUBLISHED_F32_MAX_PLUS = {(4096, 4096, 4096): 10.3, (8192, 8192, 8192): 10.7, (4097, 4097, 4097): 9.9,
                          (1000, 1000, 1000): 7.8, (8192, 8192, 32): 5.6, (131072, 16, 16): 0.85}


def published_rows(records):
    f = Finder(records)
    out = []
    for (m, n, k), theirs in PUBLISHED_F32_MAX_PLUS.items():
        r = f.ours("max-plus", "f32", "gemm", m, n, k)
        if r:
            out.append((f"{m}×{n}×{k}", f"{theirs:.2f}", f"{rate(r):.2f}", f"{rate(r) / theirs:.2f} ×"))
    return out


def markdown(rows, records, sources):
    device = next((r.get("device") for r in records if r.get("device")), "?")
    date = min((r.get("date", "") for r in records), default="")
    out = [f"Device: {device}; first record {date}; from {', '.join(sources)}.", "",
           "| target | required | measured | met |", "| --- | --- | --- | --- |"]
    out += [f"| {t} | {req} | {got} | {'yes' if ok else '**no**'} |" for t, req, got, ok in rows]
    published = published_rows(records)
    if published:
        out += ["", "f32 max-plus beside the published tropical kernel (CuTropicalGEMM.jl's, 64×64×32 tiles; "
                "DESIGN.md's figures, measured on the same H100), 10¹² updates/s:", "",
                "| shape | published | ringmm | ratio |", "| --- | --- | --- | --- |"]
        out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in published]
    vendor = vendor_rows(records)
    if vendor:
        out += ["", "plus-times f32/f64 as `gemm` runs them by default (through cuBLAS, `Context::vendor_blas`), "
                "ringmm's own kernel (`vendor_blas = false`) and the cuBLAS baseline of the same run, in TFLOP/s "
                "(syrk: FLOP of the computed triangle):", "",
                "| product | ringmm (default) | ringmm's kernel | cuBLAS baseline |", "| --- | --- | --- | --- |"]
        out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in vendor]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", type=pathlib.Path, help="records (default: the latest targets campaign)")
    parser.add_argument("--out", type=pathlib.Path, help="also write the table as Markdown here")
    args = parser.parse_args()
    files = args.files or [p for p in [campaigns.latest("targets")] if p]
    if not files:
        sys.exit("targets.py: no campaign of kind targets in lab/results")
    records = load(files)
    rows = check(records)
    text = markdown(rows, records, [f"`{campaigns.label(p)}`" for p in files])
    print(text, end="")
    if args.out:
        header = ("# CUDA engine: issue 3's targets\n\nGenerated by `lab/reports/targets.py` (lab/reports/make_docs.sh) from "
                  "`ringmm bench` records; do not edit by hand. Rates are 10¹² semiring updates per second (i16x2: lanes).\n\n")
        args.out.write_text(header + text)
    sys.exit(0 if rows and all(ok for *_, ok in rows) else 1)


if __name__ == "__main__":
    main()
