"""What the Python benchmarks share: the CUDA requirement, the timing rule (warm-up, then the median of
CUDA-event-timed repetitions, as `ringmm bench` times), the C++ figure from `ringmm bench`, and the
results file (the record schema of lab/results/README.md, in {"records": [...]} with the targets)."""

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def require_cuda():
    """torch and ringmm with a CUDA device, or exit saying what is missing."""
    try:
        import torch
    except ImportError:
        sys.exit("error: this benchmark needs torch (pip install torch)")
    import ringmm

    if not torch.cuda.is_available():
        sys.exit("error: this benchmark needs a CUDA device, and torch sees none")
    info = ringmm.info()
    if not info["cuda_devices"]:
        sys.exit(f"error: this build of ringmm cannot run on the GPU ({info['cuda_status']}); "
                 "build the package with its CUDA backend: RINGMM_PYTHON_CUDA=ON scripts/python.sh")
    return torch


def event_seconds(torch, run, reps, warmup=3):
    """Seconds of run(i) per repetition, each between two CUDA events on the current stream; the
    warm-up runs first, untimed."""
    for i in range(warmup):
        run(i)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    seconds = []
    for i in range(reps):
        start.record()
        run(i)
        stop.record()
        stop.synchronize()
        seconds.append(start.elapsed_time(stop) * 1e-3)
    return seconds


def median(values):
    return statistics.median(values)


def cpp_seconds(tool, size, reps, backend="cuda"):
    """The median seconds of ringmm's own f32 max-plus size³ product through the C++ API, from
    `ringmm bench`: on device buffers with CUDA events around each call, or with backend="cpu" on
    host buffers, each call timed by the host clock."""
    return cpp_record(tool, size, reps, backend)["seconds"]


def cpp_record(tool, size, reps, backend="cuda"):
    """`ringmm bench`'s record of the f32 max-plus size³ product on `backend` (cpp_seconds)."""
    if not os.access(tool, os.X_OK):
        sys.exit(f"error: no ringmm tool at {tool} (build it: cmake --build <build> --target ringmm-cli; "
                 "or pass --ringmm)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        command = [tool, "bench", "--backend", backend, "--semiring", "max-plus", "--type", "f32",
                   "--shapes", str(size), "--reps", str(reps), "--out", out]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"error: {' '.join(command)} failed:\n{run.stdout}{run.stderr}")
        with open(out) as f:
            records = json.load(f)
    ours = [r for r in records if r.get("backend") == backend and r.get("m") == size]
    if len(ours) != 1:
        sys.exit(f"error: ringmm bench wrote {len(ours)} {backend} records of {size}³, not one")
    return ours[0]


def host_seconds(run, reps, warmup=3):
    """Seconds of run(i) per repetition, each timed by the host clock as `ringmm bench` times the
    CPU backend; the warm-up runs first, untimed."""
    for i in range(warmup):
        run(i)
    clock = time.perf_counter_ns
    seconds = []
    for i in range(reps):
        start = clock()
        run(i)
        seconds.append((clock() - start) * 1e-9)
    return seconds


def record(kernel, torch, m, n, k, seconds, **extra):
    """One result in the record schema (suite "python"); updates_per_s counts m·n·k per call. The
    device is torch's CUDA device and the backend cuda unless extra names them (host figures)."""
    device = extra.pop("device", None) or torch.cuda.get_device_name()
    return dict(suite="python", device=device, backend=extra.pop("backend", "cuda"), kernel=kernel,
                semiring=extra.pop("semiring", "max-plus"), type=extra.pop("type", "f32"),
                product=extra.pop("product", "gemm"), m=m, n=n, k=k, batch=1, seconds=seconds,
                updates_per_s=m * n * k / seconds, date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **extra)


def target(name, value, limit, unit, met):
    return {"target": name, "value": value, "limit": limit, "unit": unit, "met": bool(met)}


def write_results(path, benchmark, torch, records, targets, device=None):
    """The results file; device (default: torch's CUDA device) names the machine, torch may be None."""
    import ringmm

    device = device or torch.cuda.get_device_name()
    payload = {"benchmark": benchmark, "device": device, "torch": torch.__version__ if torch else None,
               "ringmm": ringmm.__version__, "python": platform.python_version(), "targets": targets,
               "records": records}
    if path:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(payload, f, indent=1)
        print(f"wrote {path}")


def print_table(header, rows):
    widths = [max(len(str(x)) for x in column) for column in zip(header, *rows)]
    for line in [header] + rows:
        print("  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(line, widths))))


def print_targets(targets):
    for t in targets:
        verdict = "met" if t["met"] else "MISSED"
        print(f"target: {t['target']}: {t['value']:.3g} {t['unit']} (limit {t['limit']:g}) {verdict}")
