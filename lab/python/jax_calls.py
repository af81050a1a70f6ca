#!/usr/bin/env python3
"""ringmm.jax on the GPU beside the C++ call: what a jitted call costs (issue 28: a jitted 64³
max-plus call ≤ 5 µs above the C++ call, and the 4096³ product within 2 % of the C++ rate).

    python lab/python/jax_calls.py --ringmm build/tools/ringmm [--calls 1000] [--reps 5] [--out jax-calls.json]

Figures, f32 max-plus, each the median over --reps runs after a warm-up:
  XLA scan       the same scan with an elementwise op as its step: XLA's own cost of a step;
  scan           one jitted lax.scan of --calls products x ← x ⊗ b (64³), wall time per call between
                 two synchronisations; once with XLA's default command buffers and once (a child
                 process, XLA_FLAGS) with custom calls captured in CUDA graphs;
  jit 4096³      one jitted product of 4096³, and a jitted loop of 10, wall time per product
                 between synchronisations;
  C++            `ringmm bench`'s time of the same product on device buffers (CUDA events around
                 each call: the C++ call as call_overhead.py compares it), before and after.
Needs JAX with a GPU, ringmm.jax built with CUDA, and the `ringmm` tool; exits with an error otherwise.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from common import cpp_record, median

GRAPH_FLAGS = "--xla_gpu_enable_command_buffer=FUSION,CUSTOM_CALL --xla_gpu_graph_min_graph_size=1"


def seconds_per_call(run, args, reps, calls):
    """Median over reps of the wall seconds of run(*args), between synchronisations, over `calls`."""
    run(*args).block_until_ready()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run(*args).block_until_ready()
        times.append((time.perf_counter() - start) / calls)
    return median(times)


def scan_seconds(calls, reps):
    """Wall seconds per product of a jitted scan of `calls` 64³ max-plus products, and whether XLA
    captured them in CUDA graphs."""
    import jax
    import jax.numpy as jnp

    import ringmm.jax as rj

    x = jax.random.uniform(jax.random.PRNGKey(0), (64, 64), jnp.float32, -4, 4)
    b = jax.random.uniform(jax.random.PRNGKey(1), (64, 64), jnp.float32, -4, 0)
    run = jax.jit(lambda x: jax.lax.scan(lambda y, _: (rj.matmul(y, b, "max_plus"), None), x, None, length=calls)[0])
    return seconds_per_call(run, (x,), reps, calls), rj.calls_in_graphs() > 0


def xla_scan_seconds(calls, reps):
    """Wall seconds per step of a jitted scan whose step is one XLA elementwise op on 64 x 64: what
    XLA's loop itself costs a step."""
    import jax
    import jax.numpy as jnp

    run = jax.jit(lambda x: jax.lax.scan(lambda y, _: (y * 0.5 + 1, None), x, None, length=calls)[0])
    return seconds_per_call(run, (jnp.zeros((64, 64), jnp.float32),), reps, calls)


def product_seconds(size, reps, chain=1):
    """Wall seconds per product of one jitted function of `chain` size³ products x ← x ⊗ b, written
    out (no XLA loop, whose every step waits for its predicate on the host)."""
    import jax
    import jax.numpy as jnp

    import ringmm.jax as rj

    a = jax.random.uniform(jax.random.PRNGKey(2), (size, size), jnp.float32, -4, 4)
    b = jax.random.uniform(jax.random.PRNGKey(3), (size, size), jnp.float32, -4, 0)

    def chained(x, b):
        for _ in range(chain):
            x = rj.matmul(x, b, "max_plus")
        return x

    return seconds_per_call(jax.jit(chained), (a, b), reps, chain)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ringmm", default="build/tools/ringmm", help="the ringmm tool (for the C++ figures)")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", help="write the records as JSON")
    parser.add_argument("--child-scan", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_scan:  # the scan under GRAPH_FLAGS, in a process of its own
        print(json.dumps(scan_seconds(args.calls, args.reps)))
        return

    import jax
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        sys.exit("error: JAX has no GPU here")
    import ringmm.jax  # noqa: F401  (fails clearly without the handlers)

    scan, scan_graphs = scan_seconds(args.calls, args.reps)
    child = subprocess.run([sys.executable, __file__, "--child-scan", "--calls", str(args.calls), "--reps",
                            str(args.reps)], capture_output=True, text=True,
                           env=dict(os.environ, XLA_FLAGS=GRAPH_FLAGS))
    if child.returncode != 0:
        sys.exit(f"error: the scan with {GRAPH_FLAGS} failed:\n{child.stderr[-3000:]}")
    graph_scan, graph_captured = json.loads(child.stdout.strip().splitlines()[-1])
    xla_step = xla_scan_seconds(args.calls, args.reps)
    cpp_big_before = cpp_record(args.ringmm, 4096, args.reps)
    big = product_seconds(4096, args.reps)
    chained = product_seconds(4096, args.reps, chain=10)
    cpp_small = cpp_record(args.ringmm, 64, 2000)
    cpp_big = cpp_record(args.ringmm, 4096, args.reps)
    records = [
        {"kernel": "ringmm.jax scan (XLA defaults)", "m": 64, "n": 64, "k": 64, "seconds": scan,
         "command_buffer": scan_graphs},
        {"kernel": f"ringmm.jax scan ({GRAPH_FLAGS})", "m": 64, "n": 64, "k": 64, "seconds": graph_scan,
         "command_buffer": graph_captured},
        {"kernel": "XLA scan of an elementwise op (XLA defaults)", "m": 64, "n": 64, "k": 64, "seconds": xla_step,
         "what": "XLA's loop step"},
        {"kernel": "ringmm bench (C++ API), events", "m": 64, "n": 64, "k": 64, "seconds": cpp_small["seconds"]},
        {"kernel": "ringmm bench (C++ API), events, before", "m": 4096, "n": 4096, "k": 4096,
         "seconds": cpp_big_before["seconds"]},
        {"kernel": "ringmm.jax jit, one product", "m": 4096, "n": 4096, "k": 4096, "seconds": big},
        {"kernel": "ringmm.jax jit, 10 products written out", "m": 4096, "n": 4096, "k": 4096, "seconds": chained},
        {"kernel": "ringmm bench (C++ API), events", "m": 4096, "n": 4096, "k": 4096, "seconds": cpp_big["seconds"]},
    ]
    extra_us = (min(scan, graph_scan) - cpp_small["seconds"]) * 1e6
    ratio = min(cpp_big["seconds"], cpp_big_before["seconds"]) / min(big, chained)
    targets = [
        {"name": "jitted 64^3 call above the C++ call", "value": extra_us, "limit": 5.0, "unit": "us",
         "met": extra_us <= 5.0},
        {"name": "jitted 4096^3 rate / C++ rate", "value": ratio, "limit": 0.98, "unit": "x", "met": ratio >= 0.98},
    ]
    print(f"device: {gpu.device_kind}; jax {jax.__version__}")
    print(f"{'case':58s} {'us/call':>10s} {'Tupd/s':>8s}")
    for r in records:
        rate = r["m"] * r["n"] * r["k"] / r["seconds"] / 1e12
        print(f"{r['kernel'] + ' ' + str(r['m']) + '^3':58s} {r['seconds'] * 1e6:10.2f} {rate:8.2f}")
    for t in targets:
        print(f"target {t['name']}: {t['value']:.3f} {t['unit']} (limit {t['limit']}) {'met' if t['met'] else 'MISSED'}")
    if args.out:  # one record per figure and per target, each naming the device (campaigns.py pack jax ...)
        run = {"device": gpu.device_kind, "jax": jax.__version__, "ringmm": ringmm.__version__}
        with open(args.out, "w") as f:
            json.dump({"benchmark": "jax-calls", **run, "records": [dict(r, **run) for r in records] +
                       [dict(t, kind="target", device=gpu.device_kind) for t in targets]}, f, indent=1)


if __name__ == "__main__":
    main()
