#!/usr/bin/env python3
"""The README's headline figure, docs/img/headline.png: every built-in pair at 4096³ on the GPU, its
default route beside its baseline, and the caption under it in README.md.

    python3 lab/reports/headline.py [--results lab/results] [--img docs/img] [--readme README.md]

The records come from one campaign: the latest of kind "headline" (`ringmm bench --backend cuda
--semiring all --type all --shapes 4096 --out FILE.json`, packed by lab/reports/campaigns.py), else
of the kinds that also time every pair at 4096³ (KINDS); of those, the newest campaign that covers
every pair of include/ringmm/builtins.def, else the one that covers most. A pair's bar is ringmm's
default call (backend cuda, kernel "ringmm": whatever route the engine chose, which its "choice"
names). Its baseline, from the same campaign: cuBLAS for plus-times f32/f64; cuBLAS's SGEMM (plus-times
f32) for log-plus, whose shift trick runs a plus-times GEMM; cuBLAS's bf16 GEMM for or-and where it
runs on tensor cores; else the pair's register-register ceiling (backend ceiling, product reg-reg),
the rate no SIMT kernel of that semiring can pass. The caption says which campaign it was.
"""
import argparse
import pathlib
import re
import sys

import campaigns

KINDS = ["headline", "shapes", "targets", "seeds"]  # searched in this order when dates tie
SIZE = 4096
T = 1e12
BEGIN, END = "<!-- headline: lab/reports/headline.py writes this caption -->", "<!-- /headline -->"


def builtin_pairs(root=campaigns.ROOT):
    """Every (semiring, type) pair the library builds, in builtins.def's order."""
    path = root / "include" / "ringmm" / "builtins.def"
    if not path.exists():
        return []
    text = path.read_text()
    ids = dict(re.findall(r'RINGMM_SEMIRING\((\w+), "([^"]+)"', text))
    return [(ids.get(s, s.replace("_", "-")), t) for s, t in re.findall(r"^RINGMM_BUILTIN\((\w+), (\w+),", text, re.M)]


def at_size(r):
    return r.get("product") == "gemm" and r.get("m") == r.get("n") == r.get("k") == SIZE and r.get("batch", 1) == 1


def default_calls(records):
    """{(semiring, type): record} of ringmm's default call at SIZE³ (the last of repeated ones)."""
    return {(r["semiring"], r["type"]): r for r in records
            if r.get("backend") == "cuda" and r.get("kernel") == "ringmm" and at_size(r)}


def choose(results, pairs):
    """(campaign path, records) of the campaign to draw, or (None, [])."""
    found = []
    for order, kind in enumerate(KINDS):
        path = campaigns.latest(kind, results)
        if not path:
            continue
        records = campaigns.read(path)
        covered = set(default_calls(records)) & set(pairs) if pairs else set(default_calls(records))
        newest = max((str(r.get("date", "")) for r in records), default="")
        found.append((len(covered), newest, -order, path, records))
    full = [f for f in found if pairs and f[0] == len(pairs)]
    pick = max(full, key=lambda f: (f[1], f[2])) if full else max(found, key=lambda f: f[:3], default=None)
    return (pick[3], pick[4]) if pick else (None, [])


def route(r):
    """The engine's route, from its choice: e.g. "tensor cores", "cuBLAS", "shift trick", "own kernel"."""
    choice = re.sub(r"\s*\((heuristic|tune cache|[^)]*)\)$", "", r.get("choice", "")).strip()
    if not choice:
        return "default"
    if choice.startswith("cublas"):
        return "via cuBLAS"
    if choice.startswith(("b", "small")) and "_" in choice or choice.startswith("small"):
        return "own SIMT kernel"
    return choice


def baseline(records, pair, call):
    """(label, rate, kind) of the pair's baseline in the same campaign, or (None, None, reason)."""
    semiring, typ = pair

    def cublas(s, t):
        rs = [r for r in records if r.get("backend") == "cublas" and r.get("semiring") == s and r.get("type") == t
              and at_size(r)]
        return rs[-1]["updates_per_s"] if rs else None

    if semiring == "plus-times" and typ in ("f32", "f64"):
        v = cublas("plus-times", typ)
        return ("cuBLAS " + {"f32": "SGEMM", "f64": "DGEMM"}[typ], v, "cublas")
    if semiring == "log-plus":
        return ("cuBLAS SGEMM (plus-times f32)", cublas("plus-times", "f32"), "sgemm")
    if semiring == "or-and" and "tensor" in call.get("choice", ""):
        v = cublas("plus-times", "bf16")
        if v:
            return ("cuBLAS bf16 GEMM (multiply-adds)", v, "bf16")
        return (None, None, "no tensor-core baseline recorded")
    ceil = [r for r in records if r.get("backend") == "ceiling" and r.get("product") == "reg-reg"
            and (r.get("semiring"), r.get("type")) == pair]
    return ("reg-reg ceiling", ceil[-1]["updates_per_s"], "ceiling") if ceil else (None, None, "no ceiling recorded")


COLORS = {"ours": "tab:blue", "ceiling": "0.75", "cublas": "tab:green", "sgemm": "mediumseagreen", "bf16": "olive"}
NAMES = {"ceiling": "the pair's reg-reg ceiling (SIMT limit)", "cublas": "cuBLAS, the same type",
         "sgemm": "cuBLAS SGEMM (log-plus's reference)", "bf16": "cuBLAS bf16 GEMM (or-and's tensor-core reference)"}


def draw(results, img, pairs=None):
    """Draws img/headline.png; returns (file name, caption) or (None, why not)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = builtin_pairs() if pairs is None else pairs
    path, records = choose(results, pairs)
    calls = default_calls(records)
    shown = [p for p in (pairs or sorted(calls)) if p in calls]
    if not shown:
        return None, "not measured yet: no campaign times the pairs at 4096³"
    missing = [p for p in pairs if p not in calls]
    device = calls[shown[0]].get("device", "the GPU")
    rows = []
    for p in shown:
        r = calls[p]
        label, base, kind = baseline(records, p, r)
        rows.append((p, r["updates_per_s"] / T, route(r), label, None if base is None else base / T, kind))

    fig, ax = plt.subplots(figsize=(11, 0.56 * len(rows) + 1.6))
    h = 0.38
    for i, (p, ours, how, label, base, kind) in enumerate(rows):
        y = len(rows) - 1 - i
        ax.barh(y + h / 2, ours, h, color=COLORS["ours"])
        note = f"{ours:.1f}  {how}"
        if base:
            ax.barh(y - h / 2, base, h, color=COLORS[kind])
            ax.text(base * 1.04, y - h / 2, f"{base:.1f}", va="center", fontsize=7, color="0.25")
            note += f"  ({100 * ours / base:.0f} % of {'ceiling' if kind == 'ceiling' else label.split(' (')[0]})"
        else:
            note += f"  (baseline: none, {kind})"
        ax.text(ours * 1.04, y + h / 2, note, va="center", fontsize=7.5)
    ax.set_yticks(range(len(rows)), [f"{s} {t}" for (s, t), *_ in reversed(rows)], fontsize=9)
    ax.set_xscale("log")
    ticks = [t for t in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
             if t <= 3 * max(max(r[1], r[4] or 0) for r in rows)]
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(1, 30 * max(max(r[1], r[4] or 0) for r in rows))
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(f"10¹² updates/s at {SIZE}³ (log scale; one update per i, j, k; i16x2: lanes)")
    ax.grid(alpha=0.3, axis="x")
    from matplotlib.patches import Patch

    kinds = sorted({r[5] for r in rows if r[4]}, key=list(NAMES).index)
    ax.legend(handles=[Patch(color=COLORS["ours"], label="ringmm, default route (which one: beside the bar)")]
              + [Patch(color=COLORS[k], label=NAMES[k]) for k in kinds], fontsize=8, loc="lower right")
    ax.set_title(f"ringmm's default call per semiring and type, {SIZE}³, {device}", fontsize=11)
    img = pathlib.Path(img)
    img.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(img / "headline.png", dpi=110)
    plt.close(fig)
    date = min(str(r.get("date", ""))[:10] for r in calls.values())
    caption = (f"ringmm's default call for every built-in semiring and type at {SIZE}³ on the {device} "
               f"({date}), beside its baseline: cuBLAS for plus-times f32/f64, cuBLAS's SGEMM for log-plus, "
               "cuBLAS's bf16 GEMM for or-and on tensor cores, and the pair's register-register ceiling (the "
               f"most a SIMT kernel of that semiring can reach) for the others. Drawn by `lab/reports/headline.py` "
               f"from `{campaigns.label(path)}`")
    if missing:
        caption += "; not in that campaign: " + ", ".join(f"{s} {t}" for s, t in missing)
    return "headline.png", caption + "."


def write_caption(readme, caption):
    """Replaces the README's lines between the headline markers with the caption."""
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        sys.exit(f"headline.py: {readme} has no {BEGIN} … {END} lines for the caption")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    readme.write_text(f"{head}{BEGIN}\n{caption} Each seed document's claim is set against our runs in "
                      f"[docs/seeds.md](docs/seeds.md).\n{END}{tail}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=pathlib.Path, default=campaigns.RESULTS)
    parser.add_argument("--img", type=pathlib.Path, default=campaigns.ROOT / "docs" / "img")
    parser.add_argument("--readme", type=pathlib.Path, help="write the caption into this README's headline lines")
    args = parser.parse_args()
    name, caption = draw(args.results, args.img)
    if not name:
        sys.exit(f"headline.py: {caption}")
    if args.readme:
        write_caption(args.readme, caption)
    print(f"wrote {args.img / name}: {caption}")


if __name__ == "__main__":
    main()
