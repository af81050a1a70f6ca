#!/usr/bin/env python3
"""The cost of many small calls, the sign-known products and the narrow operands (issue 29), as a
Markdown page.

    python3 lab/reports/calls_table.py [--calls FILE] [--sign-known FILE] [--narrow FILE] [--out docs/perf/calls.md]

Without FILEs it reads the latest campaigns of kinds "calls", "sign-known" and "narrow"
(lab/reports/campaigns.py); all come from lab/device/calls_run.sh.
"""
import argparse
import pathlib

import campaigns


def shape(r):
    return f"{r['m']}³" if r["m"] == r["n"] == r["k"] else f"{r['m']}×{r['n']}×{r['k']}"


def us(seconds):
    return f"{seconds * 1e6:.2f}"


def calls_section(records, source):
    rows = [r for r in records if r["kernel"].startswith("ringmm calls")]
    lines = [
        "## Calls back to back",
        "",
        f"From `{source}`: `ringmm bench --calls 10000` on device buffers, {rows[0]['device']}. Host: the "
        "host's time per call from entry to return (the launch enqueued, not run); stream: the device's time per "
        "call, CUDA events around rounds of 200 calls on one stream; graph: the same 200 calls captured in one "
        "CUDA graph and replayed. Where stream exceeds host the calls are bound by the device; where they are "
        "equal, by the host. A graph is refused where the call checks its inputs on the device (a wait), unless "
        "`--trust-inputs`.",
        "",
        "| semiring | type | shape | part | host µs | stream µs | graph µs |",
        "| --- | --- | --- | --- | ---: | ---: | ---: |",
    ]
    for r in rows:
        graph = us(r["graph_seconds"]) if "graph_seconds" in r else "refused"
        lines.append(f"| {r['semiring']} | {r['type']} | {shape(r)} | {r['part']} | {us(r['host_seconds'])} | "
                     f"{us(r['seconds'])} | {graph} |")
    transfers = [r for r in records if r["part"] == "host-4096" and r["backend"] == "cuda"]
    if transfers:
        lines += [
            "",
            "Host → host (pageable) against device buffers, 4096³, the same run:",
            "",
            "| semiring | type | device ms | host → host ms | ratio |",
            "| --- | --- | ---: | ---: | ---: |",
        ]
        for r in transfers:
            lines.append(f"| {r['semiring']} | {r['type']} | {r['seconds'] * 1e3:.3f} | "
                         f"{r['seconds_with_transfers'] * 1e3:.3f} | "
                         f"{r['seconds_with_transfers'] / r['seconds']:.2f}× |")
    return lines


def sign_known_section(records, source):
    ringmm = {(r["semiring"], shape(r), r["part"]): r for r in records if r["backend"] == "cuda"}
    ceiling = next((r["updates_per_s"] for r in records if r["backend"] == "ceiling"), None)
    lines = [
        "",
        "## Sign-known tropical products",
        "",
        f"From `{source}`: `ringmm bench --semiring max-plus,min-plus --type f32 --reps 5`, on its random data "
        "(generic) and with `--sign-known` (max-plus on −|x|, min-plus on |x|), which takes the three-input "
        "minimum on bit patterns (gemm_kernel.cuh: sign_known). 10¹² updates/s; the generic update's "
        "register-register ceiling (FADD + FMNMX) is "
        + (f"{ceiling / 1e12:.2f}." if ceiling else "not recorded."),
        "",
        "| semiring | shape | generic | sign-known | gain |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for (semiring, size, part), r in ringmm.items():
        if part != "generic":
            continue
        known = ringmm.get((semiring, size, "known"))
        if not known:
            continue
        lines.append(f"| {semiring} | {size} | {r['updates_per_s'] / 1e12:.2f} | {known['updates_per_s'] / 1e12:.2f} | "
                     f"{known['updates_per_s'] / r['updates_per_s']:.2f}× |")
    return lines


ACCUMULATOR = {"bf16": "f32", "f16": "f32", "i8": "i32"}


def narrow_section(records, source):
    cuda = [r for r in records if r["backend"] == "cuda"]
    plain = {(r["semiring"], r["type"], shape(r)): r for r in cuda if r["type"] not in ACCUMULATOR}
    lines = [
        "",
        "## Narrow operands",
        "",
        f"From `{source}`: `ringmm bench --type f32,bf16,f16` and `--type i32,i8` (max-plus and min-plus, "
        f"--reps 5) on device buffers, {cuda[0]['device'] if cuda else 'no device'}. In that campaign's build the "
        "narrow operands were widened on the device into f32 (i32) copies and the accumulator type's product ran on "
        "them (ringmm/narrow.hpp); C is f32 (i32). i8 products have since run as 16-bit lane pairs: their rate is "
        "in [shapes.md](shapes.md) (speed campaigns from k on) and the performance log. 10¹² updates/s.",
        "",
        "| semiring | shape | type | rate | accumulator type | its rate | ratio |",
        "| --- | --- | --- | ---: | --- | ---: | ---: |",
    ]
    for r in cuda:
        if r["type"] not in ACCUMULATOR:
            continue
        wide = plain.get((r["semiring"], ACCUMULATOR[r["type"]], shape(r)))
        if not wide:
            continue
        lines.append(f"| {r['semiring']} | {shape(r)} | {r['type']} | {r['updates_per_s'] / 1e12:.2f} | "
                     f"{wide['type']} | {wide['updates_per_s'] / 1e12:.2f} | "
                     f"{r['updates_per_s'] / wide['updates_per_s']:.3f} |")
    return lines


def page(calls, calls_source, sign, sign_source, narrow=None, narrow_source=None):
    lines = [
        "# Many calls, sign-known products and narrow operands",
        "",
        "Generated by lab/reports/calls_table.py; the performance log says what was predicted and why the "
        "figures differ.",
        "",
    ]
    lines += calls_section(calls, calls_source)
    lines += sign_known_section(sign, sign_source)
    if narrow:
        lines += narrow_section(narrow, narrow_source)
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls")
    parser.add_argument("--sign-known")
    parser.add_argument("--narrow")
    parser.add_argument("--out")
    args = parser.parse_args()
    calls_path = args.calls or campaigns.latest("calls")
    sign_path = args.sign_known or campaigns.latest("sign-known")
    narrow_path = args.narrow or campaigns.latest("narrow")
    text = page(campaigns.read_all([calls_path]), campaigns.label(calls_path),
                campaigns.read_all([sign_path]), campaigns.label(sign_path),
                campaigns.read_all([narrow_path]) if narrow_path else None,
                campaigns.label(narrow_path) if narrow_path else None)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
