#!/usr/bin/env python3
"""Strong-scaling table of `ringmm summa` records: time, rate and efficiency per run.

    python3 bench/summa_table.py bench/results/summa-*.json [--markdown]

Efficiency E = T(1×1) / (P · T(grid)) against the 1×1 record of the same device, semiring, type
and size (times exclude host↔device staging, as `ringmm summa` reports them); recv/bound is the
mean bytes a rank received over the 2D lower bound (M·K + K·N)/√P.
"""
import argparse
import json
import pathlib


def load(paths):
    records = []
    for path in paths:
        data = json.loads(pathlib.Path(path).read_text())
        records += data if isinstance(data, list) else [data]
    return [r for r in records if r.get("suite") == "summa"]


def rows(records):
    key = lambda r: (r.get("device"), r["semiring"], r["type"], r["n"])
    base = {key(r): r["seconds"] for r in records if r["ranks"] == 1}
    out = []
    for r in sorted(records, key=lambda r: (r.get("device"), r["semiring"], r["type"], r["n"], r["ranks"],
                                            r["grid_rows"], r["variant"])):
        t1 = base.get(key(r))
        eff = t1 / (r["ranks"] * r["seconds"]) if t1 else None
        bound = r["bytes_received_mean"] / r["lower_bound_bytes"] if r["lower_bound_bytes"] else 0.0
        out.append([r.get("device", "?"), r["semiring"], r["type"], str(r["n"]), f"{r['grid_rows']}x{r['grid_cols']}",
                    r["variant"], str(r["block"]), f"{r['seconds'] * 1e3:.1f}", f"{r['updates_per_s'] / 1e12:.2f}",
                    "" if eff is None else f"{eff:.3f}", f"{bound:.3f}", f"{r.get('staging_seconds', 0) * 1e3:.0f}"])
    return out


HEAD = ["device", "semiring", "type", "n", "grid", "variant", "block", "ms", "10¹² upd/s", "efficiency",
        "recv/bound", "staging ms"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", type=pathlib.Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    table = rows(load(args.files))
    if args.markdown:
        print("| " + " | ".join(HEAD) + " |")
        print("|" + " --- |" * len(HEAD))
        for row in table:
            print("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(HEAD)] if table else []
        for row in [HEAD] + table:
            print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))


if __name__ == "__main__":
    main()
