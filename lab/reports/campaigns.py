#!/usr/bin/env python3
"""Recorded campaigns: one JSON Lines file per measuring session of one kind.

A campaign lives at lab/results/<kind>/<date>-<device>[-<tag>].jsonl, one record per line (schema:
lab/results/README.md). Its records carry "part" (and, for back-to-back comparisons, "run" and
"binary"): what the separate files of the session told apart. Names begin with the ISO date, so
the latest campaign of a kind is the last name in sort order; the generators read that one.

    python3 lab/reports/campaigns.py latest KIND            # prints the latest campaign's label()
    python3 lab/reports/campaigns.py pack KIND NAME FILE... # FILEs (one session's JSON) into one campaign

`pack` takes each file's part from its name: the stem after the longest prefix the files share
(or after --prefix), e.g. shapes-h100-2026-11-25-a-small.json → part "small"; NAME is
<date>-<device>[-<tag>], e.g. 2026-11-25-h100-a.
"""
import argparse
import csv
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
RESULTS = ROOT / "lab" / "results"


def campaigns(kind, results=RESULTS):
    """Every campaign of a kind, oldest first: by name without the extension, so that a day's
    untagged campaign (2026-11-28-h200) comes before its tagged ones (2026-11-28-h200-c), as a
    full file name would not ('.' sorts after '-')."""
    return sorted((pathlib.Path(results) / kind).glob("*.jsonl"), key=lambda p: p.stem)


def latest(kind, results=RESULTS):
    """The latest campaign of a kind (the last name in sort order), or None."""
    found = campaigns(kind, results)
    return found[-1] if found else None


def label(path):
    """How a generated page names a campaign: its path from the repository root where it lies inside it."""
    path = pathlib.Path(path).resolve()
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


def read(path):
    """The records of one file: a campaign (.jsonl), or a JSON list / {"records": [...]} / CSV of one run.

    Each record gets '_file', the run it came from: its "part" in a campaign (with "run" and "binary"
    where present), else the file's name; and '_campaign', the file's label()."""
    path = pathlib.Path(path)
    if path.suffix == ".jsonl":
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    elif path.suffix == ".csv":
        with path.open() as f:
            records = list(csv.DictReader(f))
    else:
        data = json.loads(path.read_text())
        records = data if isinstance(data, list) else data.get("records", [data])
    where = label(path)
    for r in records:
        tags = [str(r[k]) for k in ("run", "binary", "part") if k in r]
        r["_file"] = "-".join(tags) if tags else path.name
        r["_campaign"] = where
    return records


def read_all(paths):
    records = []
    for path in paths:
        records += read(path)
    return records


def write(path, records):
    """One record a line, keys in their recorded order, without the loader's '_' keys."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        for r in records:
            f.write(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}, ensure_ascii=False) + "\n")


def page_main(kind, page, description):
    """The command line of a generator of one Markdown page: `[FILE ...] [--out PAGE]`. Without FILEs
    it reads the latest campaign of `kind`; page(records, source) gives the text, which is printed
    and written to --out."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("files", nargs="*")
    parser.add_argument("--out")
    args = parser.parse_args()
    paths = args.files or [latest(kind)]
    if not paths or paths[0] is None:
        sys.exit(f"error: no {kind} campaign in lab/results/{kind}")
    text = page(read_all(paths), ", ".join(label(p) for p in paths))
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text, end="")


def pack(kind, name, files, prefix=None, results=RESULTS):
    stems = [pathlib.Path(p).stem for p in files]
    if prefix is None:
        prefix = os.path.commonprefix(stems) if len(stems) > 1 else stems[0].rsplit("-", 1)[0] + "-"
        prefix = prefix[: prefix.rfind("-") + 1]
    records = []
    for path, stem in zip(files, stems):
        part = stem[len(prefix):] if stem.startswith(prefix) else stem
        for r in read(path):
            r["part"] = part
            records.append(r)
    out = pathlib.Path(results) / kind / f"{name}.jsonl"
    write(out, records)
    return out, len(records)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("latest", help="print the latest campaign of a kind")
    p.add_argument("kind")
    p.add_argument("--results", type=pathlib.Path, default=RESULTS)
    p = sub.add_parser("pack", help="write one session's files as one campaign")
    p.add_argument("kind")
    p.add_argument("name", help="<date>-<device>[-<tag>]")
    p.add_argument("files", nargs="+", type=pathlib.Path)
    p.add_argument("--prefix", help="the file-name prefix before the part (default: the one the files share)")
    p.add_argument("--results", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args()
    if args.command == "latest":
        found = latest(args.kind, args.results)
        if not found:
            sys.exit(f"campaigns.py: no campaign of kind {args.kind} in {args.results}")
        print(label(found))
    else:
        out, n = pack(args.kind, args.name, args.files, args.prefix, args.results)
        print(f"wrote {out} ({n} records)")


if __name__ == "__main__":
    main()
